"""Contact response by impulses on an articulated body: the collision matrix ``K`` from test
impulses, Coulomb friction with sticking and sliding, restitution, sequential impulses over
many contacts, and position projection (Gayle, Lin & Manocha 2006, "GLM", sec. IV.A, after
Mirtich 1996, ch. 4).

**Impulse response** (GLM IV.A steps 1-3, 6-7). A spatial impulse ``p`` on a body changes
the joint velocities by ``dqd = M^-1 J^T p``. Like Mirtich we compute it from the articulated
inertias of the step's forward dynamics (step 1 reuses them: :func:`~articulated.algorithms.
aba.aba_kernel` leaves ``U D^-1`` and ``D^-1`` of every joint in ``Data``), by ABA's passes 2
and 3 with no velocity, gravity or joint force (RBDA Table 7.1):

* up, from the struck body to the root only (the path; everything else has no bias):
  ``u_i = -S_i^T pA_i``, ``pA_parent += X_i^T (pA_i + U_i D_i^-1 u_i)``, starting from
  ``pA = -p``; alongside, the rigidly carried impulse ``F_i`` gives ``(J^T p)_i = S_i^T F_i``;
* down, over every body: ``dqd_i = D_i^-1 u_i - (U_i D_i^-1)^T da_i``, ``da_i = X_i
  da_parent + S_i dqd_i``.

Both cost O(n) (O(depth) up); an equal-and-opposite pair on two bodies (self-collision, or
two bodies of a forest) runs in one pass and gives ``M^-1 (J_a - J_b)^T p`` (GLM's
"``K_A + K_B``" for separate bodies falls out of the same pass).

**Collision matrix** (GLM IV.A step 4). Three unit test impulses along the contact frame
``(n, t1, t2)`` (GLM Fig. 2, ``z = n``) give ``J^T`` (nv, 3) and ``W = M^-1 J^T`` (nv, 3);
``K = J W`` (3, 3) is the change of contact velocity per unit impulse.

**Rows by dofs** (where contacts outnumber the dofs: a chain lying on the floor). ``M^-1``
is symmetric, so entry ``v`` of ``W = M^-1 J_b^T p`` is ``p . (J_b M^-1 e_v)``: the
spatial velocity change of body b under a unit impulse on joint velocity ``v``, which the
same down pass gives for every body at once (Maxwell-Betti reciprocity). So ``nv`` joint
test impulses, read out at the struck bodies (:func:`_tables`, with ``J_b e_v``, the
motion of body b under a unit ``qd_v``, for ``J^T``), give the rows of every contact at
O(nv) each: O(nv nb + rows nv) in all instead of O(rows nb) with one test impulse per row.
:func:`contact_rows` takes them when the rows outnumber the dofs by :data:`DOF_RATIO` and
the tables fit the scratch; the two agree to rounding (tests/test_contact.py).

**Collision integration** (step 5). Each contact holds its accumulated impulse ``P =
(P_n, P_t1, P_t2)``. A visit (:func:`_visit`) first solves the normal row for the target
normal speed ``v*_n`` and clamps ``P_n >= 0``, then the tangential pair for zero slip
(the 2 x 2 block ``K_tt``) and keeps it if ``|P_t| <= mu P_n`` (sticking: inside Coulomb's
cone; at convergence, for a single contact, Mirtich's test ``k_x^2 + k_y^2 <= mu^2 k_z^2``).
Otherwise the contact slides: ``|P_t| = mu P_n`` against its slip velocity (maximal
dissipation) when it slips faster than ``slip_speed``, else along the sticking impulse
(its radial projection on the cone). The tangential rows carry a small constraint-force
mixing (``FRICTION_CFM``): a body resting on several contacts has many tangential impulse
distributions that hold it, and without it Gauss-Seidel keeps internal friction forces
that use up the cones (a box on a slope just below ``atan mu`` creeps). Restitution by
Poisson's hypothesis: impacts (approach faster than ``rest_speed``) are first compressed
to zero normal speed, then receive ``e`` times their compression impulse, then the sweeps
run again to stop what that made approach; for a single frictionless or sticking impact
this is Stronge's energetic restitution (``W_r = -e^2 W_c``) and the normal speed becomes
``-e v_n^-``. Known limit: where friction couples strongly into the normal (``K_nt``) the
slip turns during an impact and these sweeps can add kinetic energy (docs/contact.md).
Resting contacts are micro-collisions with ``e = 0``. Speculative contacts at gap
``d > 0`` may approach at ``d / h``.

**Many contacts** (GLM Fig. 3, VI): sequential impulses, warm-started from the last step's
impulses of the same contacts (:func:`warm_start`), until no visit changes its contact's
velocity by more than ``tol`` [m/s], or ``sweeps`` times. A visit on its own is O(nv) (one
dot product with ``J^T``, one update by ``W``). Contacts on one body pair (in adaptive
dynamics: on one rigid piece) are grouped (:class:`Blocks`); a group of at least
:data:`BLOCK_MIN` is solved on the pair's 6 x 6 block, as GLM VI suggests: its rows come from
six test impulses instead of three per contact, and a sweep reads and updates ``qd`` once
per group (O(nv)) with O(1) per contact (:func:`_visit_block`), the same Gauss-Seidel
iterate. A sweep costs O(groups nv + contacts).

**Drift** (Cline & Pai 2003, post-stabilization, GLM ref. [4]): after the position update,
a contact whose predicted gap ``d + h v_n`` is negative is pushed out by ``dq = W_n lambda``
with ``lambda >= 0`` from the normal rows ``K_nn`` (sequential, as the impulses); no
velocity bias is added. An impact inside the step is placed where it would be after
rebounding, pulled there if need be, but by no more than it would take on its own
(:func:`project_positions`).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL

FRICTION_CFM = 1e-3
"""Relative constraint-force mixing of the tangential rows (see :func:`_visit`)."""

ImpulseModel = namedtuple("ImpulseModel", ("parent", "vadr", "jnv", "S"))
ImpulseModel.__doc__ = """Model arrays the impulse passes read: ``parent, vadr, jnv`` (nb,)
int64, ``S`` (nv, 6) motion subspaces."""

Factor = namedtuple("Factor", ("Xup_E", "Xup_r", "UDinv", "Dinv", "oE", "op"))
Factor.__doc__ = """The step's articulated factorization (from ABA at the current ``q``):
``Xup_E`` (nb, 3, 3), ``Xup_r`` (nb, 3) body-to-parent transforms, ``UDinv`` (nv, 6) rows of
``U D^-1``, ``Dinv`` (nv, 6) blocks of ``D^-1``; world poses ``oE`` (nb, 3, 3) (world to
body rotation), ``op`` (nb, 3) [m]."""

IMPULSE_COLUMNS = 32
"""Test impulses that :func:`impulse_response` propagates side by side (at most; fewer on
trees so large that the scratch would pass :data:`IMPULSE_SCRATCH_BYTES`): each body's
transform and articulated factor is read once per 32 impulses, and its loops over the
impulses vectorize (GLM IV.A steps 4 and 7 for many contacts at once)."""

IMPULSE_SCRATCH_BYTES = 1 << 26
"""Memory of :func:`impulse_scratch` above which it takes fewer columns (64 MiB: 32 up to
about 10^4 bodies, one at 10^6)."""

ImpulseScratch = namedtuple("ImpulseScratch", ("ca", "cb", "fa", "fb", "dof", "sgn", "dst",
                                               "pA", "F", "da", "pa", "u", "mark", "jt", "w",
                                               "Tw", "Tm", "slot", "policy", "pspan"))
ImpulseScratch.__doc__ = """The test impulses of :func:`impulse_response` and its scratch,
``C`` columns (:func:`impulse_scratch`). Per impulse j: bodies ``ca, cb`` (C,) int64 (-1: none),
spatial impulses ``fa, fb`` (C, 6) on them ``[n; f]`` about the body origin in body
coordinates [N m s; N s], a joint impulse ``sgn`` (C,) on velocity index ``dof`` (C,) int64
(-1: none; its body must be ``ca[j]``, ``fa[j]`` zero), and ``dst`` (C,) int64 where the
caller puts the result. Results ``jt, w`` (nv, C): ``J^T p_j`` and ``M^-1 J^T p_j`` by
column. Scratch ``pA, F, da`` (nb, 6, C), ``pa`` (6, C), ``u`` (C,), ``mark`` (nb,) int64.
The rows by dofs (:func:`_tables`): ``Tw, Tm`` flat float64, read as (bodies, 6, nv): per
struck body ``b`` (its place ``slot[b]``, (nb,) int64, -1: none) ``J_b M^-1`` and ``J_b``
by column (spatial velocity of b per unit joint impulse, per unit joint velocity, in b's
coordinates); ``policy`` (1,) int64: 0 the cheaper (:data:`DOF_RATIO`), 1 always by test
impulses per row, 2 by dofs where the tables fit. ``pspan`` (nb,) int64: the dofs of each
body's path to the root end before it (:attr:`ContactRows.span`)."""

TABLE_BYTES = 1 << 26
"""Memory of the two tables of the rows by dofs (:func:`_tables`; 64 MiB: every body of a
tree with ``nb nv`` up to about 700,000, some 830 bodies of one dof each; fewer struck
bodies beyond)."""

DOF_RATIO = 2.0
"""The rows of a step are computed by dofs (:func:`_tables`, ``nv`` joint test impulses)
when their test impulses (three per contact, six per block) number more than ``DOF_RATIO
nv`` and the tables fit the scratch (:data:`TABLE_BYTES`). Measured on capsule chain-300
at rest (600 contacts): 1,800 rows on its 305 dofs took 7.3 ms by test impulses (4.1 us
each) and 3.7 ms by dofs (tables 2.2 ms, then about 0.4 us per row), even at 595 rows =
1.95 nv; on its reduced tree at N_A = 60, 360 block
rows on 65 dofs took 0.36 and 0.26 ms (tables 0.09 ms, test impulses about 0.5 us each),
even at about 2.9 nv. The joint test impulses cost more than a contact's (their paths run
from every body to the root, and the tables' motion pass and copies come on top)."""

ContactRows = namedtuple("ContactRows", ("JT", "W", "K", "Ki", "frame", "P", "target", "vn0",
                                         "gap", "impact", "Pc", "mu", "e", "dist", "key", "dof",
                                         "span"))
ContactRows.__doc__ = """The constraint rows of a step: contacts first, then joint limits
(capacity ``cap``). ``JT`` (cap, 3, nv) rows of the contact Jacobian in the contact frame,
``W`` (cap, 3, nv) ``M^-1 J^T`` (not written for a contact of a block: :class:`Blocks`),
``K`` (cap, 3, 3), ``Ki`` (cap, 4) the inverses a visit
uses (:func:`_inverses`), ``frame`` (cap, 3, 3) rows ``n, t1, t2``
(world; the identity for a limit), ``P`` (cap, 3) accumulated impulse [N s] (a limit: ``P_n``
[N m s or N s], the tangential parts zero), ``target`` (cap,) normal speed after the impulse
[m/s], ``vn0`` (cap,) normal speed before [m/s] (negative: approaching), ``gap`` (cap,) the
gap after the step that the position projection aims at [m], ``impact`` (cap,) int64: 1 an
impact, 2 an impact that closes a gap within the step (its ``gap`` is exact, see
:func:`contact_rows`), 0 resting; ``Pc`` (cap, 3) scratch (the compression and restitution
impulses); ``mu, e, dist`` (cap,) friction, restitution and signed gap [m] (a limit: rad or
m); ``key`` (cap,) int64 identity across steps (increasing); ``dof`` (cap,) int64 the
limited dof of a limit row, -1 for a contact; ``span`` (cap,) int64 the dofs before which
the row's ``JT`` may be non-zero (its bodies' paths to the root: the passes over ``JT`` stop
there, and the rows by dofs do not write it beyond: it may hold an earlier step's values).
(A joint limit is a frictionless unilateral row on one joint velocity, GLM IV.B; the same
sweeps solve both.)"""


@njit(**JIT)
def contact_buffers(cap, nv):
    """Zeroed :class:`ContactRows` for ``cap`` rows of a model with ``nv`` dofs."""
    return ContactRows(np.zeros((cap, 3, nv)), np.zeros((cap, 3, nv)), np.zeros((cap, 3, 3)),
                       np.zeros((cap, 4)), np.zeros((cap, 3, 3)), np.zeros((cap, 3)),
                       np.zeros(cap), np.zeros(cap), np.zeros(cap), np.zeros(cap, np.int64),
                       np.zeros((cap, 3)), np.zeros(cap), np.zeros(cap), np.zeros(cap),
                       np.zeros(cap, np.int64),
                       np.full(cap, -1, np.int64), np.zeros(cap, np.int64))


Limits = namedtuple("Limits", ("dof", "qadr", "body", "lo", "hi", "joint"))
Limits.__doc__ = """The limited joints of a model (``nl`` of them, all 1-dof, in increasing
joint order): ``dof``, ``qadr``, ``body``, ``joint`` (nl,) int64 their velocity index (in
the dof space of the tree the impulses run on: the model's, or a hybrid body's reduced
tree), position index in the model's ``q``, body (of that tree) and joint index (the
model's); ``lo, hi`` (nl,) float64 the range [rad or m] (``-inf``/``inf``: no limit)."""


def model_limits(model):
    """:class:`Limits` of ``model`` (every joint with ``jnt_limited``)."""
    j = np.flatnonzero(model.jnt_limited).astype(np.int64)
    return Limits(model.jnt_vadr[j].copy(), model.jnt_qadr[j].copy(), j.copy(),
                  model.jnt_range[j, 0].copy(), model.jnt_range[j, 1].copy(), j.copy())


def impulse_scratch(nb, nv, columns=None):
    """A zeroed :class:`ImpulseScratch` (``slot`` and ``dof`` -1) for ``nb`` bodies, ``nv``
    dofs and ``columns`` test impulses at a time (default :data:`IMPULSE_COLUMNS`, fewer
    where the scratch, about ``8 C (18 nb + 2 nv)`` bytes, would pass
    :data:`IMPULSE_SCRATCH_BYTES`; the results do not depend on it, each impulse's
    arithmetic being its own), and the tables of the rows by dofs (at most
    :data:`TABLE_BYTES`; the pages a step does not touch are not used)."""
    fit = IMPULSE_SCRATCH_BYTES // (8 * (18 * nb + 2 * nv))
    C = columns or max(1, min(IMPULSE_COLUMNS, fit))
    T = min(6 * nb * nv, TABLE_BYTES // 16)
    return ImpulseScratch(np.zeros(C, np.int64), np.zeros(C, np.int64), np.zeros((C, 6)),
                          np.zeros((C, 6)), np.full(C, -1, np.int64), np.zeros(C),
                          np.zeros(C, np.int64), np.zeros((nb, 6, C)), np.zeros((nb, 6, C)),
                          np.zeros((nb, 6, C)), np.zeros((6, C)), np.zeros(C),
                          np.zeros(nb, np.int64), np.zeros((nv, C)), np.zeros((nv, C)),
                          np.zeros(T), np.zeros(T), np.full(nb, -1, np.int64),
                          np.zeros(1, np.int64), np.zeros(nb, np.int64))


BLOCK_MIN = 3
"""Contacts on one body pair from which they are a block: :func:`contact_rows` computes
their rows from the pair's six unit impulse responses and the sweeps solve them on the
pair's 6 x 6 block (fewer contacts: three test impulses each, visited one by one)."""

Blocks = namedtuple("Blocks", ("count", "gid", "first", "order", "pair", "slot", "G", "KG", "JT6",
                               "W6", "K6", "span", "mark", "V", "Vg", "Fg", "sorted"))
Blocks.__doc__ = """Contacts grouped by body pair (GLM IV.C: the contacts of one rigid piece
act on its node; VI: "contacts of one rigid piece may be solved together on its 6 x 6
block"). ``count`` (2,) int64: groups, contacts grouped; per contact ``gid`` (cap,) its
group and ``G`` (cap, 3, 6) its rows ``n, t1, t2`` as spatial impulses in the basis of its
group (body coordinates of the group's first body, about its origin, GLM Fig. 2) and ``KG``
(cap, 3, 6) ``G K6`` (what a unit impulse along each row does to the block's velocity); per group
``first`` (cap + 1,) and ``order`` (cap,) its contacts ``order[first[g]:first[g + 1]]`` in
detection order, ``pair`` (cap, 2) its bodies (-1: the world), ``slot`` (cap,) its block
(-1: fewer than :data:`BLOCK_MIN` contacts); per block ``JT6, W6`` (bcap, 6, nv) ``J^T E_k``
and ``M^-1 J^T E_k`` for the six unit impulses ``E_k`` of the basis, ``K6`` (bcap, 6, 6)
their ``J W^T`` (the pair's inverse apparent inertia), ``span`` (bcap,) int64 the dofs before
which ``JT6`` may be non-zero (the pair's paths to the root); scratch ``mark`` (nb,), ``V`` (2, 6),
``Vg`` (2, bcap, 6) the blocks' velocities ``(J^T E_k) . x`` and ``Fg`` (bcap, 6) their
collected impulses (zero between uses), ``sorted`` (cap,) int64 the groups by their deeper
body (the order their test impulses are propagated in). A block contact's own rows ``JT, W`` of
:class:`ContactRows` are not written: they are ``G_c JT6`` and ``G_c W6``, and every pass
works on the block's six instead (O(1) per contact, O(nv) per block)."""


@njit(**JIT)
def block_buffers(cap, nb, nv):
    """Zeroed :class:`Blocks` for ``cap`` contacts of a tree with ``nb`` bodies, ``nv``
    dofs."""
    bcap = cap // BLOCK_MIN + 1
    return Blocks(np.zeros(2, np.int64), np.zeros(cap, np.int64), np.zeros(cap + 1, np.int64),
                  np.zeros(cap, np.int64), np.zeros((cap, 2), np.int64),
                  np.zeros(cap, np.int64), np.zeros((cap, 3, 6)), np.zeros((cap, 3, 6)),
                  np.zeros((bcap, 6, nv)), np.zeros((bcap, 6, nv)), np.zeros((bcap, 6, 6)),
                  np.zeros(bcap, np.int64), np.zeros(nb, np.int64), np.zeros((2, 6)),
                  np.zeros((2, bcap, 6)),
                  np.zeros((bcap, 6)), np.zeros(cap, np.int64))


@inline
def _lever(oE, op, b, x):
    """The world point ``x`` in body b's coordinates (its lever arm ``x_b``)."""
    d0, d1, d2 = x[0] - op[b, 0], x[1] - op[b, 1], x[2] - op[b, 2]
    return (oE[b, 0, 0] * d0 + oE[b, 0, 1] * d1 + oE[b, 0, 2] * d2,
            oE[b, 1, 0] * d0 + oE[b, 1, 1] * d1 + oE[b, 1, 2] * d2,
            oE[b, 2, 0] * d0 + oE[b, 2, 1] * d1 + oE[b, 2, 2] * d2)


@inline
def _body_impulse(oE, b, r, u, s, out):
    """``out`` = the spatial impulse ``[r x f; f]`` in body b's coordinates of the world
    impulse ``s u`` applied at the point ``r`` of body b (:func:`_lever`)."""
    for i in range(3):
        out[3 + i] = s * (oE[b, i, 0] * u[0] + oE[b, i, 1] * u[1] + oE[b, i, 2] * u[2])
    out[0] = r[1] * out[5] - r[2] * out[4]
    out[1] = r[2] * out[3] - r[0] * out[5]
    out[2] = r[0] * out[4] - r[1] * out[3]


@inline
def _transfer(oE, op, a, b, e, s, out):
    """``out`` = ``s e`` in body b's coordinates about its origin, for a spatial impulse
    ``e = [n; f]`` in body a's coordinates about a's origin."""
    f = (oE[a, 0, 0] * e[3] + oE[a, 1, 0] * e[4] + oE[a, 2, 0] * e[5],
         oE[a, 0, 1] * e[3] + oE[a, 1, 1] * e[4] + oE[a, 2, 1] * e[5],
         oE[a, 0, 2] * e[3] + oE[a, 1, 2] * e[4] + oE[a, 2, 2] * e[5])
    d = (op[a, 0] - op[b, 0], op[a, 1] - op[b, 1], op[a, 2] - op[b, 2])
    n = (oE[a, 0, 0] * e[0] + oE[a, 1, 0] * e[1] + oE[a, 2, 0] * e[2]
         + d[1] * f[2] - d[2] * f[1],
         oE[a, 0, 1] * e[0] + oE[a, 1, 1] * e[1] + oE[a, 2, 1] * e[2]
         + d[2] * f[0] - d[0] * f[2],
         oE[a, 0, 2] * e[0] + oE[a, 1, 2] * e[1] + oE[a, 2, 2] * e[2]
         + d[0] * f[1] - d[1] * f[0])
    for i in range(3):
        out[i] = s * (oE[b, i, 0] * n[0] + oE[b, i, 1] * n[1] + oE[b, i, 2] * n[2])
        out[3 + i] = s * (oE[b, i, 0] * f[0] + oE[b, i, 1] * f[1] + oE[b, i, 2] * f[2])


@inline
def _xT_cols(E, r, i, f, out, m):
    """``out[:, j] += Xup_i^T f[:, j]`` for the force 6-vectors ``f[:, j]``, ``j < m`` (RBDA
    eq. 2.25 transposed; ``f, out`` (6, C))."""
    E00, E01, E02 = E[i, 0, 0], E[i, 0, 1], E[i, 0, 2]
    E10, E11, E12 = E[i, 1, 0], E[i, 1, 1], E[i, 1, 2]
    E20, E21, E22 = E[i, 2, 0], E[i, 2, 1], E[i, 2, 2]
    rx, ry, rz = r[i, 0], r[i, 1], r[i, 2]
    for j in range(m):
        f0, f1, f2, f3, f4, f5 = f[0, j], f[1, j], f[2, j], f[3, j], f[4, j], f[5, j]
        g0 = E00 * f3 + E10 * f4 + E20 * f5
        g1 = E01 * f3 + E11 * f4 + E21 * f5
        g2 = E02 * f3 + E12 * f4 + E22 * f5
        out[0, j] += E00 * f0 + E10 * f1 + E20 * f2 + ry * g2 - rz * g1
        out[1, j] += E01 * f0 + E11 * f1 + E21 * f2 + rz * g0 - rx * g2
        out[2, j] += E02 * f0 + E12 * f1 + E22 * f2 + rx * g1 - ry * g0
        out[3, j] += g0
        out[4, j] += g1
        out[5, j] += g2


@inline
def _x_cols(E, r, i, p, a, m):
    """``a[i, :, j] = Xup_i a[p, :, j]`` for the motion 6-vectors of body i's parent p,
    ``j < m`` (RBDA eq. 2.25; ``a`` (nb, 6, C)); zero for ``p < 0``."""
    if p < 0:
        for k in range(6):
            for j in range(m):
                a[i, k, j] = 0.0
        return
    E00, E01, E02 = E[i, 0, 0], E[i, 0, 1], E[i, 0, 2]
    E10, E11, E12 = E[i, 1, 0], E[i, 1, 1], E[i, 1, 2]
    E20, E21, E22 = E[i, 2, 0], E[i, 2, 1], E[i, 2, 2]
    rx, ry, rz = r[i, 0], r[i, 1], r[i, 2]
    for j in range(m):
        x0, x1, x2 = a[p, 0, j], a[p, 1, j], a[p, 2, j]
        y0 = a[p, 3, j] - ry * x2 + rz * x1
        y1 = a[p, 4, j] - rz * x0 + rx * x2
        y2 = a[p, 5, j] - rx * x1 + ry * x0
        a[i, 0, j] = E00 * x0 + E01 * x1 + E02 * x2
        a[i, 1, j] = E10 * x0 + E11 * x1 + E12 * x2
        a[i, 2, j] = E20 * x0 + E21 * x1 + E22 * x2
        a[i, 3, j] = E00 * y0 + E01 * y1 + E02 * y2
        a[i, 4, j] = E10 * y0 + E11 * y1 + E12 * y2
        a[i, 5, j] = E20 * y0 + E21 * y1 + E22 * y2


@njit(**KERNEL)
def impulse_response(im, fac, sc, m, nv):
    """``sc.jt[:, j] = J^T p_j`` and ``sc.w[:, j] = M^-1 J^T p_j`` (nv,) for the ``m`` (at
    most the scratch's columns) test impulses loaded in ``sc`` (:class:`ImpulseScratch`): impulse j is
    ``sc.fa[j]`` on body ``sc.ca[j]``, ``sc.fb[j]`` on body ``sc.cb[j]`` and the joint
    impulse ``sc.sgn[j]`` on velocity index ``sc.dof[j]``. Passes 2-3 of ABA on the
    step's factorization (module docstring), the impulses side by side: up over the union
    of their paths to the root, down over every body; O(m nb)."""
    parent, vadr, jnv, S = im.parent, im.vadr, im.jnv, im.S
    E = fac.Xup_E
    r = fac.Xup_r
    UDinv, Dinv = fac.UDinv, fac.Dinv
    pA, F, da, pa, u, mark, jt, w = sc.pA, sc.F, sc.da, sc.pa, sc.u, sc.mark, sc.jt, sc.w
    nb = parent.shape[0]
    # the union of the paths; zero it, then load the impulses (pA = -p, F = p)
    for i in range(nb):
        mark[i] = 0
    joint = 0
    for j in range(m):
        joint += sc.dof[j] >= 0
        for side in range(2):
            i = sc.ca[j] if side == 0 else sc.cb[j]
            while i >= 0 and mark[i] == 0:
                mark[i] = 1
                i = parent[i]
    for i in range(nb):
        if mark[i]:
            for k in range(6):
                for j in range(m):
                    pA[i, k, j] = 0.0
                    F[i, k, j] = 0.0
    for j in range(m):
        a, b = sc.ca[j], sc.cb[j]
        for k in range(6):
            if a >= 0:
                pA[a, k, j] -= sc.fa[j, k]
                F[a, k, j] += sc.fa[j, k]
            if b >= 0:
                pA[b, k, j] -= sc.fb[j, k]
                F[b, k, j] += sc.fb[j, k]
    for v in range(nv):
        for j in range(m):
            w[v, j] = 0.0
            jt[v, j] = 0.0
    # up the union of the paths, deepest body first (parent[i] < i)
    for i in range(nb - 1, -1, -1):
        if not mark[i]:
            continue
        va = vadr[i]
        n = jnv[i]
        for k in range(6):
            for j in range(m):
                pa[k, j] = pA[i, k, j]
        for q in range(n):
            s0, s1, s2 = S[va + q, 0], S[va + q, 1], S[va + q, 2]
            s3, s4, s5 = S[va + q, 3], S[va + q, 4], S[va + q, 5]
            for j in range(m):
                u[j] = -(s0 * pA[i, 0, j] + s1 * pA[i, 1, j] + s2 * pA[i, 2, j]
                         + s3 * pA[i, 3, j] + s4 * pA[i, 4, j] + s5 * pA[i, 5, j])
                jt[va + q, j] = (s0 * F[i, 0, j] + s1 * F[i, 1, j] + s2 * F[i, 2, j]
                                 + s3 * F[i, 3, j] + s4 * F[i, 4, j] + s5 * F[i, 5, j])
            if joint:
                for j in range(m):
                    if sc.dof[j] == va + q:
                        u[j] += sc.sgn[j]
                        jt[va + q, j] += sc.sgn[j]
            for k in range(6):
                U = UDinv[va + q, k]
                for j in range(m):
                    pa[k, j] += U * u[j]
            for c in range(n):
                D = Dinv[va + c, q]
                for j in range(m):
                    w[va + c, j] += D * u[j]
        p = parent[i]
        if p >= 0:
            _xT_cols(E, r, i, pa, pA[p], m)
            _xT_cols(E, r, i, F[i], F[p], m)
    # down: every body
    for i in range(nb):
        p = parent[i]
        va = vadr[i]
        _x_cols(E, r, i, p, da, m)
        for d in range(jnv[i]):
            U0, U1, U2 = UDinv[va + d, 0], UDinv[va + d, 1], UDinv[va + d, 2]
            U3, U4, U5 = UDinv[va + d, 3], UDinv[va + d, 4], UDinv[va + d, 5]
            for j in range(m):
                w[va + d, j] -= (U0 * da[i, 0, j] + U1 * da[i, 1, j] + U2 * da[i, 2, j]
                                 + U3 * da[i, 3, j] + U4 * da[i, 4, j] + U5 * da[i, 5, j])
        for d in range(jnv[i]):
            for k in range(6):
                sk = S[va + d, k]
                for j in range(m):
                    da[i, k, j] += sk * w[va + d, j]


@inline
def _flush(im, fac, sc, m, nv, rows, blk):
    """The responses of the ``m`` impulses loaded in ``sc``, each copied where its ``dst``
    says: ``3 c + d`` row c's direction d (``rows.JT, rows.W``), ``-(6 s + k) - 1`` block s's
    unit impulse k (``blk.JT6, blk.W6``)."""
    if m == 0:
        return
    impulse_response(im, fac, sc, m, nv)
    for j in range(m):
        t = sc.dst[j]
        if t >= 0:
            c, d = t // 3, t % 3
            for v in range(nv):
                rows.JT[c, d, v] = sc.jt[v, j]
                rows.W[c, d, v] = sc.w[v, j]
        else:
            t = -t - 1
            b, k = t // 6, t % 6
            for v in range(nv):
                blk.JT6[b, k, v] = sc.jt[v, j]
                blk.W6[b, k, v] = sc.w[v, j]


@njit(**KERNEL)
def _tables(im, fac, sc, nv, nt):
    """The tables of the rows by dofs (module docstring) for the ``nt`` bodies with a place
    ``sc.slot[b] >= 0``: ``Tw[b, :, v] = J_b M^-1 e_v`` from ``nv`` joint test impulses
    (:func:`impulse_response`, as many at a time as the scratch has columns; the spatial
    velocity change of body b in its coordinates, the down pass's ``da``) and ``Tm[b, :, v]
    = J_b e_v`` (the motion of body b under a unit joint velocity ``v``, ``X_b<-i S_v`` for
    v on body i at or above b, zero elsewhere: by the same down pass without the
    articulated terms; written only below ``pspan[b]``, the rest of a row is zero and
    never read: :func:`_from_tables`). O(nv nb)."""
    parent, vadr, jnv, S = im.parent, im.vadr, im.jnv, im.S
    E, r = fac.Xup_E, fac.Xup_r
    nb = parent.shape[0]
    C = sc.dst.shape[0]
    slot, Tw, Tm, mo = sc.slot, sc.Tw, sc.Tm, sc.F
    for v0 in range(0, nv, C):
        m = min(C, nv - v0)
        for i in range(nb):
            for d in range(jnv[i]):
                j = vadr[i] + d - v0
                if 0 <= j < m:
                    sc.ca[j] = i
        for j in range(m):
            sc.cb[j] = -1
            sc.dof[j] = v0 + j
            sc.sgn[j] = 1.0
            for k in range(6):
                sc.fa[j, k] = 0.0
                sc.fb[j, k] = 0.0
        impulse_response(im, fac, sc, m, nv)
        # the motions J_b e_v: down from the joints of the batch (the scratch F is free);
        # zero above its first body (parent[i] < i: no body before it is below a joint of
        # the batch)
        i0 = nb
        for j in range(m):
            i0 = min(i0, sc.ca[j])
        for i in range(nb):
            t = slot[i]
            if i < i0:                  # (its motion row is zero from pspan[i] <= v0 on)
                if t >= 0:
                    for k in range(6):
                        o = (6 * t + k) * nv + v0
                        for j in range(m):
                            Tw[o + j] = sc.da[i, k, j]
                continue
            _x_cols(E, r, i, parent[i] if parent[i] >= i0 else -1, mo, m)
            for d in range(jnv[i]):
                j = vadr[i] + d - v0
                if 0 <= j < m:
                    for k in range(6):
                        mo[i, k, j] += S[vadr[i] + d, k]
            if t >= 0:
                mt = min(m, sc.pspan[i] - v0)   # J_b e_v = 0 for v >= pspan[b]
                for k in range(6):
                    o = (6 * t + k) * nv + v0
                    for j in range(m):
                        Tw[o + j] = sc.da[i, k, j]
                    for j in range(mt):
                        Tm[o + j] = mo[i, k, j]
    for j in range(min(C, nv)):  # the scratch's default: no joint impulse
        sc.dof[j] = -1


@inline
def _read_out(T, o, nv, n, f, out, accumulate):
    """``out[v] (+)= f . T[o + k nv + v]`` over k (the six rows of one body's table that
    start at ``o``, each ``nv`` long), ``v < n``; a copy of row k where ``f`` is the unit
    impulse ``E_k`` (a block's on one body)."""
    unit = -1
    for k in range(6):
        if f[k] != 0.0:
            unit = k if unit == -1 and f[k] == 1.0 else -2
    if unit >= 0 and not accumulate:
        t = T[o + unit * nv:o + unit * nv + n]
        for v in range(n):
            out[v] = t[v]
        return
    t0, t1, t2 = T[o:o + n], T[o + nv:o + nv + n], T[o + 2 * nv:o + 2 * nv + n]
    t3, t4 = T[o + 3 * nv:o + 3 * nv + n], T[o + 4 * nv:o + 4 * nv + n]
    t5 = T[o + 5 * nv:o + 5 * nv + n]
    f0, f1, f2, f3, f4, f5 = f[0], f[1], f[2], f[3], f[4], f[5]
    if accumulate:
        for v in range(n):
            out[v] += f0 * t0[v] + f1 * t1[v] + f2 * t2[v] + f3 * t3[v] + f4 * t4[v] + f5 * t5[v]
    else:
        for v in range(n):
            out[v] = f0 * t0[v] + f1 * t1[v] + f2 * t2[v] + f3 * t3[v] + f4 * t4[v] + f5 * t5[v]


@inline
def _from_tables(sc, j, nv, rows, blk):
    """The rows of the test impulse loaded in ``sc``'s column j, read out of the tables of
    :func:`_tables` and put where its ``dst`` says (as :func:`_flush`): ``J^T p = J_a^T
    f_a + J_b^T f_b`` and ``M^-1 J^T p`` entry by entry, ``f . (J e_v)`` and ``f . (J M^-1
    e_v)``; ``J^T p`` only below the row's span (``max pspan`` of its bodies: zero beyond,
    never read), each body's part below its own ``pspan`` (its motion table's extent)."""
    t = sc.dst[j]
    if t >= 0:
        c, d = t // 3, t % 3
        JT, W = rows.JT[c, d], rows.W[c, d]
    else:
        t = -t - 1
        b, k = t // 6, t % 6
        JT, W = blk.JT6[b, k], blk.W6[b, k]
    ns = 0
    for side in range(2):
        i = sc.ca[j] if side == 0 else sc.cb[j]
        if i >= 0:
            ns = max(ns, sc.pspan[i])
    first = True
    for side in range(2):
        i = sc.ca[j] if side == 0 else sc.cb[j]
        if i >= 0:
            f = sc.fa[j] if side == 0 else sc.fb[j]
            o = 6 * sc.slot[i] * nv
            n = sc.pspan[i]
            _read_out(sc.Tw, o, nv, nv, f, W, not first)
            _read_out(sc.Tm, o, nv, n, f, JT, not first)
            if first:
                for v in range(n, ns):
                    JT[v] = 0.0
            first = False


@inline
def _next(im, fac, sc, m, nv, rows, blk, by_dofs):
    """After loading test impulse ``m`` in ``sc``: its rows from the tables now (rows by
    dofs; the next goes to column 0 again) or, by test impulses, the batch propagated and
    put in place when the scratch is full (:func:`_flush`). Returns the next column."""
    if by_dofs:
        _from_tables(sc, m, nv, rows, blk)
        return 0
    m += 1
    if m == sc.dst.shape[0]:
        _flush(im, fac, sc, m, nv, rows, blk)
        m = 0
    return m


@inline
def _frame(normal, c, frame):
    """Rows n, t1, t2 of contact c's frame (GLM Fig. 2: z = n)."""
    n = (normal[c, 0], normal[c, 1], normal[c, 2])
    if abs(n[0]) < 0.9:
        t = (0.0, n[2], -n[1])
    else:
        t = (-n[2], 0.0, n[0])
    L = 1.0 / math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    t = (t[0] * L, t[1] * L, t[2] * L)
    s = (n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0])
    for k in range(3):
        frame[c, 0, k] = n[k]
        frame[c, 1, k] = t[k]
        frame[c, 2, k] = s[k]


@inline
def _inverses(rows, c):
    """Row c's ``Ki``: ``1 / K_nn`` and the inverse ``(i11, i12, i22)`` of its tangential
    pair with constraint-force mixing, ``K_tt + r D`` (see :func:`_visit_row`); zeros where
    they do not exist (a row of zeros); a visit uses them only where positive."""
    K = rows.K
    rows.Ki[c, 0] = 1.0 / K[c, 0, 0] if K[c, 0, 0] > 0.0 else 0.0
    a11 = K[c, 1, 1] + FRICTION_CFM * K[c, 1, 1]
    a22 = K[c, 2, 2] + FRICTION_CFM * K[c, 2, 2]
    a12 = K[c, 1, 2]
    det = a11 * a22 - a12 * a12
    if det > 0.0:
        rows.Ki[c, 1] = a22 / det
        rows.Ki[c, 2] = -a12 / det
        rows.Ki[c, 3] = a11 / det
    else:
        for k in range(1, 4):
            rows.Ki[c, k] = 0.0


@inline
def _target(rows, c, vn, h, rest_speed):
    """Target normal speed, gap aimed at and impact flag of row c (its ``dist`` and ``e``
    set), from its normal speed ``vn`` before the impulses (see :func:`contact_rows`)."""
    dist = rows.dist[c]
    rows.vn0[c] = vn
    rows.gap[c] = 0.0
    if vn < -rest_speed and dist + h * vn < 0.0:  # an impact within this step
        rows.target[c] = 0.0  # compression; restitution in solve_impulses
        rows.impact[c] = 1
        if dist > 0.0:  # it closes the gap at tau = dist / |vn|, then rebounds
            rows.gap[c] = rows.e[c] * (-h * vn - dist)
            rows.impact[c] = 2
    else:  # resting, or a speculative row: approach by at most the gap
        rows.target[c] = -max(dist, 0.0) / h
        rows.impact[c] = 0
    for d in range(3):
        rows.P[c, d] = 0.0


@inline
def _gram(A, B, n, out):
    """``out[i, j] = A[i, :n] . B[j, :n]``: ``K = J W^T`` of a row (3 x 3) or a block
    (6 x 6), ``A = J^T`` zero beyond ``n`` (its span); ``K = J M^-1 J^T`` is symmetric, so
    the upper triangle is computed and mirrored."""
    for i in range(out.shape[0]):
        for j in range(i, out.shape[1]):
            x = 0.0
            for k in range(n):
                x += A[i, k] * B[j, k]
            out[i, j] = x
            out[j, i] = x


@inline
def _gather(A, x, n, a, V, accumulate):
    """``V (+)= a A[:, :n] x[:n]`` (6,) for a block's rows ``A`` (6, nv), ``x`` (nv,) and
    ``A`` zero beyond column ``n``."""
    for k in range(6):
        y = 0.0
        for m in range(n):
            y += A[k, m] * x[m]
        V[k] = a * y + (V[k] if accumulate else 0.0)


@inline
def _spread(W, F, out):
    """``out += W^T F`` (nv,) for a block's rows ``W`` (6, nv) and ``F`` (6,)."""
    for m in range(out.shape[0]):
        y = 0.0
        for k in range(6):
            y += W[k, m] * F[k]
        out[m] += y


@inline
def _block_update(G, KG, d0, d1, d2, F, V):
    """One contact's impulse change ``dP = (d0, d1, d2)`` in its block: ``F += G^T dP``
    (the group's impulse) and ``V += (K6 G^T) dP`` (the pair's velocity; ``KG = G K6``,
    ``K6`` symmetric), with its rows ``G`` and ``KG`` (3, 6)."""
    for k in range(6):
        F[k] += G[0, k] * d0 + G[1, k] * d1 + G[2, k] * d2
        V[k] += KG[0, k] * d0 + KG[1, k] * d1 + KG[2, k] * d2


@inline
def _slot_of(blk, c):
    """The block of row c, -1 when it has its own rows ``JT, W`` (a contact of a small
    group, a contact inside one body, a limit)."""
    return blk.slot[blk.gid[c]] if c < blk.count[1] else -1


@inline
def _block_speeds(blk, x, out):
    """``out[s] = (J^T E_k) . x`` (6,) of every block s of the step, for ``x`` (nv,)."""
    for g in range(blk.count[0]):
        s = blk.slot[g]
        if s >= 0:
            _gather(blk.JT6[s], x, blk.span[s], 1.0, out[s], False)


@inline
def _row_speed(rows, blk, c, d, x, Vs):
    """``J_c x`` along row c's direction d (0 normal, 1-2 tangents), from its block's
    velocities ``Vs`` (:func:`_block_speeds` of ``x``) or its own ``JT``."""
    s = _slot_of(blk, c)
    v = 0.0
    if s >= 0:
        for k in range(6):
            v += blk.G[c, d, k] * Vs[s, k]
    else:
        for k in range(rows.span[c]):
            v += rows.JT[c, d, k] * x[k]
    return v


@inline
def _row_impulse(rows, blk, c, P0, P1, P2, x):
    """``x += W_c P`` for row c's impulse ``P`` (normal, tangents): at once for a row of
    its own, collected in its block's ``Fg`` otherwise (applied by
    :func:`_spread_blocks`)."""
    s = _slot_of(blk, c)
    if s >= 0:
        for k in range(6):
            blk.Fg[s, k] += blk.G[c, 0, k] * P0 + blk.G[c, 1, k] * P1 + blk.G[c, 2, k] * P2
    else:
        for k in range(x.shape[0]):
            x[k] += rows.W[c, 0, k] * P0 + rows.W[c, 1, k] * P1 + rows.W[c, 2, k] * P2


@inline
def _spread_blocks(blk, x):
    """``x += W6^T Fg`` for every block, emptying ``Fg`` (see :func:`_row_impulse`)."""
    for g in range(blk.count[0]):
        s = blk.slot[g]
        if s >= 0:
            _spread(blk.W6[s], blk.Fg[s], x)
            for k in range(6):
                blk.Fg[s, k] = 0.0


@inline
def _group(con, nc, blk):
    """Group contacts ``0..nc-1`` by body pair into ``blk`` (groups in the order of their
    first contact, contacts in detection order); returns the number of groups."""
    for c in range(nc):
        a, b = con.body[c, 0], con.body[c, 1]
        blk.mark[a if a >= 0 else b] = -1
    ng = 0
    blk.first[0] = 0
    for c in range(nc):
        a, b = con.body[c, 0], con.body[c, 1]
        key = a if a >= 0 else b
        g = blk.mark[key]  # the groups of this key, chained through slot
        while g >= 0 and (blk.pair[g, 0] != a or blk.pair[g, 1] != b):
            g = blk.slot[g]
        if g < 0:
            g = ng
            ng += 1
            blk.pair[g, 0] = a
            blk.pair[g, 1] = b
            blk.first[g + 1] = 0
            blk.slot[g] = blk.mark[key]
            blk.mark[key] = g
        blk.gid[c] = g
        blk.first[g + 1] += 1
    for g in range(ng):
        blk.first[g + 1] += blk.first[g]
        blk.slot[g] = blk.first[g]  # fill cursor
    for c in range(nc):
        g = blk.gid[c]
        blk.order[blk.slot[g]] = c
        blk.slot[g] += 1
    blk.count[0] = ng
    blk.count[1] = nc
    return ng


@njit(**KERNEL)
def contact_rows(im, fac, sc, con, nc, qd, h, rest_speed, rows, blk):
    """``J^T``, ``W``, ``K``, the frame, the targets and zero impulses of contacts
    ``0..nc-1`` (``con``: :class:`~articulated.algorithms.collision.Contacts`) at joint
    velocities ``qd`` (the unconstrained ``qd + h qdd``) and step ``h`` [s], and their
    groups by body pair in ``blk`` (:class:`Blocks`).

    A contact of a group with fewer than :data:`BLOCK_MIN` contacts gets its rows from three
    test impulses (GLM IV.A step 4: O(n) each). The rows of a block's contacts are
    combinations of the pair's six unit impulse responses (six test impulses for the
    whole group, then O(1) per contact): ``J^T u = sum_k g_k J^T E_k`` for the impulse
    ``g`` (6,) of the contact direction ``u`` in the basis, and ``K = G K6 G^T``. The test
    impulses of all groups go through :func:`impulse_response` side by side, as many at a
    time as the scratch ``sc`` has columns (:data:`IMPULSE_COLUMNS`); where they number
    more than :data:`DOF_RATIO` ``nv`` and the tables fit, the rows are read out of ``nv``
    joint test impulses instead (rows by dofs, module docstring; ``sc.policy`` may force
    either way).

    An impact (approach faster than ``rest_speed`` that closes the gap ``d`` within the
    step) is compressed to zero normal speed, then restituted (:func:`solve_impulses`:
    ``-e v_n^-`` for a single frictionless contact); when ``d > 0`` the
    contact happened at ``tau = d / |v_n^-|`` inside the step, and the position projection
    places it at the gap ``e (h |v_n^-| - d)`` it has after rebounding for ``h - tau`` (a
    time-of-impact correction: without it a ball would rebound from up to ``|v| h`` above
    the floor). Other contacts may approach by at most their gap: ``-max(d, 0) / h``.

    A contact whose two bodies are one (two bodies of one rigid piece of a hybrid body, or
    both welded to the world) gets rows of zeros: no joint moves one side against the
    other (GLM VI: "pairs inside one rigid piece are skipped while it is rigid"); it takes
    no impulse and no projection (its ``K`` from test impulses would be rounding, 1e-27,
    and the projection's ``d / K`` moved a 60-link pile's joints by 439 rad)."""
    nv = qd.shape[0]
    ng = _group(con, nc, blk)
    for c in range(nc):
        _frame(con.normal, c, rows.frame)
    # the groups by their deeper body (counting sort, parent[i] < i), so that the test
    # impulses propagated together have nearly the same path to the root
    cnt = blk.mark
    nbr = im.parent.shape[0]
    for i in range(nbr):
        cnt[i] = 0
        p = im.parent[i]
        sc.pspan[i] = max(im.vadr[i] + im.jnv[i], sc.pspan[p] if p >= 0 else 0)
    for g in range(ng):
        cnt[max(blk.pair[g, 0], blk.pair[g, 1])] += 1
    at = 0
    for i in range(nbr):
        k = cnt[i]
        cnt[i] = at
        at += k
    for g in range(ng):
        i = max(blk.pair[g, 0], blk.pair[g, 1])
        blk.sorted[cnt[i]] = g
        cnt[i] += 1
    # by dofs or by test impulses per row (DOF_RATIO): count the rows' test impulses and
    # give each struck body a place in the tables
    nimp = 0
    nt = 0
    for i in range(nbr):
        sc.slot[i] = -1
    for g in range(ng):
        a, b = blk.pair[g, 0], blk.pair[g, 1]
        if a == b:
            continue
        size = blk.first[g + 1] - blk.first[g]
        nimp += 6 if size >= BLOCK_MIN else 3 * size
        for i in (a, b):
            if i >= 0 and sc.slot[i] < 0:
                sc.slot[i] = nt
                nt += 1
    policy = sc.policy[0]
    by_dofs = (policy != 1 and nt > 0 and 6 * nt * nv <= sc.Tw.shape[0]
               and (policy == 2 or nimp > DOF_RATIO * nv))
    if by_dofs:
        _tables(im, fac, sc, nv, nt)
    # the test impulses, C at a time (or one by one, read out of the tables): six unit
    # impulses per block (on its first body, the opposite on its second, in the first
    # one's coordinates), three per contact of a small group (along its frame, at its point)
    m = 0
    nblock = 0
    for o in range(ng):
        g = blk.sorted[o]
        a, b = blk.pair[g, 0], blk.pair[g, 1]
        if blk.first[g + 1] - blk.first[g] >= BLOCK_MIN and a != b:
            blk.slot[g] = nblock
            key = a if a >= 0 else b
            for k in range(6):
                for i in range(6):
                    sc.fa[m, i] = 1.0 if i == k else 0.0
                if b >= 0:
                    _transfer(fac.oE, fac.op, key, b, sc.fa[m], -1.0, sc.fb[m])
                sc.ca[m] = a
                sc.cb[m] = b
                sc.dof[m] = -1
                sc.dst[m] = -(6 * nblock + k) - 1
                m = _next(im, fac, sc, m, nv, rows, blk, by_dofs)
            blk.span[nblock] = max(sc.pspan[a] if a >= 0 else 0, sc.pspan[b] if b >= 0 else 0)
            for k in range(6):
                blk.Fg[nblock, k] = 0.0
            nblock += 1
            continue
        blk.slot[g] = -1
        if a == b:
            continue
        for oc in range(blk.first[g], blk.first[g + 1]):
            c = blk.order[oc]
            x = (con.point[c, 0], con.point[c, 1], con.point[c, 2])
            ra = _lever(fac.oE, fac.op, a, x) if a >= 0 else x
            rb = _lever(fac.oE, fac.op, b, x) if b >= 0 else x
            for d in range(3):
                u = (rows.frame[c, d, 0], rows.frame[c, d, 1], rows.frame[c, d, 2])
                if a >= 0:
                    _body_impulse(fac.oE, a, ra, u, 1.0, sc.fa[m])
                if b >= 0:
                    _body_impulse(fac.oE, b, rb, u, -1.0, sc.fb[m])
                sc.ca[m] = a
                sc.cb[m] = b
                sc.dof[m] = -1
                sc.dst[m] = 3 * c + d
                m = _next(im, fac, sc, m, nv, rows, blk, by_dofs)
    if not by_dofs:
        _flush(im, fac, sc, m, nv, rows, blk)
    for g in range(ng):
        s = blk.slot[g]
        if s >= 0:
            _gram(blk.JT6[s], blk.W6[s], blk.span[s], blk.K6[s])
    Vs = blk.Vg[0]
    _block_speeds(blk, qd, Vs)
    for c in range(nc):
        ba = con.body[c, 0]
        bb = con.body[c, 1]
        s = blk.slot[blk.gid[c]]
        rows.span[c] = 0 if ba == bb else max(sc.pspan[ba] if ba >= 0 else 0,
                                              sc.pspan[bb] if bb >= 0 else 0)
        if ba == bb:
            for d in range(3):
                for k in range(nv):
                    rows.JT[c, d, k] = 0.0
                    rows.W[c, d, k] = 0.0
                for k in range(3):
                    rows.K[c, d, k] = 0.0
        elif s >= 0:  # its rows stay those of the block (Blocks): G_c JT6, G_c W6
            key = ba if ba >= 0 else bb
            x = (con.point[c, 0], con.point[c, 1], con.point[c, 2])
            r = _lever(fac.oE, fac.op, key, x)
            for d in range(3):
                u = (rows.frame[c, d, 0], rows.frame[c, d, 1], rows.frame[c, d, 2])
                _body_impulse(fac.oE, key, r, u, 1.0, blk.G[c, d])
            for d2 in range(3):
                T = blk.KG[c, d2]
                for k in range(6):
                    t = 0.0
                    for l in range(6):
                        t += blk.K6[s, k, l] * blk.G[c, d2, l]
                    T[k] = t
                for d1 in range(3):
                    t = 0.0
                    for k in range(6):
                        t += blk.G[c, d1, k] * T[k]
                    rows.K[c, d1, d2] = t
        else:
            _gram(rows.JT[c], rows.W[c], rows.span[c], rows.K[c])
        vn = _row_speed(rows, blk, c, 0, qd, Vs)
        rows.mu[c] = con.mu[c]
        rows.e[c] = con.e[c]
        rows.dist[c] = con.dist[c]
        rows.key[c] = con.key[c]
        rows.dof[c] = -1
        _inverses(rows, c)
        _target(rows, c, vn, h, rest_speed)


@njit(**KERNEL)
def limit_rows(im, fac, sc, lim, q, qd, dv, h, rest_speed, e, key0, rows, n0, present):
    """Append the rows of the joint limits that may be reached within the step (GLM IV.B,
    Kokkevis 2004) at rows ``n0, n0+1, ...``; returns the number appended.

    A limit ``lo <= q_k`` (``q_k <= hi``) is the unilateral row ``s qd_k`` with ``s = 1``
    (``-1``) and gap ``d = q_k - lo`` (``hi - q_k``) [rad or m]; its row impulse ``P >= 0``
    is the joint impulse ``s P`` and ``K = (M^-1)_kk`` (one test impulse on the hybrid
    body). It enters when
    ``min(d, d + s dv_k) <= 0`` for the predicted displacement ``dv`` (nv,) of the step
    (speculative: ``h qd*`` first; the caller calls again with the displacement after the
    impulses and the position projection, which move the other joints too) and is solved
    with the contacts; its target and impact state come from ``qd`` (nv,), the velocity
    before the impulses: a single impact with restitution ``e`` gets the joint impulse
    ``j = s P = -(1 + e) qd_k / (M^-1)_kk`` (Kokkevis). Keys: ``key0 + 2 joint + side``.
    ``present`` (2 nl,) int64 marks the rows already there (zero it for a new step)."""
    nv = qd.shape[0]
    n = n0
    for l in range(lim.dof.shape[0]):
        k = lim.dof[l]
        x = q[lim.qadr[l]]
        for side in range(2):
            s = 1.0 if side == 0 else -1.0
            d = x - lim.lo[l] if side == 0 else lim.hi[l] - x
            if present[2 * l + side] or not min(d, d + s * dv[k]) <= 0.0:
                continue  # (also skips the infinite sides)
            present[2 * l + side] = 1
            c = n
            n += 1
            for a in range(3):
                for b in range(3):
                    rows.frame[c, a, b] = 1.0 if a == b else 0.0
            for r in range(1, 3):
                for m in range(nv):
                    rows.JT[c, r, m] = 0.0
                    rows.W[c, r, m] = 0.0
            for m in range(6):
                sc.fa[0, m] = 0.0
            sc.ca[0] = lim.body[l]
            sc.cb[0] = -1
            sc.dof[0] = k
            sc.sgn[0] = s
            impulse_response(im, fac, sc, 1, nv)
            sc.dof[0] = -1
            for m in range(nv):
                rows.JT[c, 0, m] = sc.jt[m, 0]
                rows.W[c, 0, m] = sc.w[m, 0]
            rows.span[c] = k + 1
            _gram(rows.JT[c], rows.W[c], k + 1, rows.K[c])
            rows.mu[c] = 0.0
            rows.e[c] = e
            rows.dist[c] = d
            rows.key[c] = key0 + 2 * lim.joint[l] + side
            rows.dof[c] = k
            _inverses(rows, c)
            _target(rows, c, s * qd[k], h, rest_speed)
    return n - n0


@inline
def _visit_row(rows, c, v0, v1, v2, slip, monotone):
    """One Gauss-Seidel visit of row c: the normal row, then the tangential pair, each on
    its accumulated impulse and projected (``P_n >= 0``; ``|P_t| <= mu P_n``), from the
    row's velocity ``(v0, v1, v2)`` (normal, tangents) before the visit. Updates
    ``rows.P[c]``; returns the change ``(d0, d1, d2, state)`` with state 0 separating, 1
    sticking, 2 sliding (the caller applies it: :func:`_visit`, :func:`_visit_block`).

    With ``monotone`` the visit ends with an exact line search of its energy on the segment
    to that candidate: the sweeps then never increase ``E(P) = T(qd(P)) - sum target_c
    P_n,c + 1/2 sum r_c |P_t,c|^2`` (``T`` the kinetic energy, ``r`` the friction rows'
    mixing), since a visit changes ``E`` by ``g.dP + 1/2 dP^T (K + R) dP`` (``g`` its
    gradient), so sweeps from zero impulses never raise the kinetic energy (``target <=
    0``). Coulomb's friction (against the slip after the normal impulse) is not the
    minimizer of ``E`` over the cone (that would make sliding contacts lift off at
    ``v_n = mu |v_t|``), which is why this is the fallback of :func:`solve_impulses`,
    not the default."""
    K = rows.K
    mu = rows.mu[c]
    target = rows.target[c]
    Pn, Pt1, Pt2 = rows.P[c, 0], rows.P[c, 1], rows.P[c, 2]
    # normal row: reach the target normal speed, never pull
    n_new = Pn + (target - v0) * rows.Ki[c, 0] if rows.Ki[c, 0] > 0.0 else 0.0
    if n_new < 0.0:
        n_new = 0.0
    dn = n_new - Pn
    w1 = v1 + K[c, 1, 0] * dn
    w2 = v2 + K[c, 2, 0] * dn
    # tangential pair: the sticking impulse (zero slip) if inside the cone, else slide
    t1 = 0.0
    t2 = 0.0
    state = 0 if n_new == 0.0 else 1
    lim = mu * n_new
    r1 = FRICTION_CFM * K[c, 1, 1]
    r2 = FRICTION_CFM * K[c, 2, 2]
    if lim > 0.0:
        # the pair's rows with constraint-force mixing: (K_tt + r D) P_t = K_tt P_t - v_t,
        # D = diag K_tt; it picks the smallest tangential impulses among the many that hold
        # a body with several contacts (no internal friction forces that would use up the
        # cones), at a slip of r D P_t (~1e-3 of the velocity the impulse removes)
        i11, i12, i22 = rows.Ki[c, 1], rows.Ki[c, 2], rows.Ki[c, 3]  # (_inverses)
        if i11 > 0.0:
            b1 = w1 + r1 * Pt1
            b2 = w2 + r2 * Pt2
            t1 = Pt1 - (i11 * b1 + i12 * b2)
            t2 = Pt2 - (i12 * b1 + i22 * b2)
        tt = math.sqrt(t1 * t1 + t2 * t2)
        if tt > lim:
            vt = math.sqrt(w1 * w1 + w2 * w2)
            if vt > slip:  # sliding: against the slip (maximal dissipation)
                t1 = -lim * w1 / vt
                t2 = -lim * w2 / vt
            else:  # at the cone's edge: radial projection of the sticking impulse
                t1 *= lim / tt
                t2 *= lim / tt
            state = 2
    d0 = dn
    d1 = t1 - Pt1
    d2 = t2 - Pt2
    if monotone:
        d0, d1, d2, state = _line_search(K, c, v0 - target, v1, v2, Pn, Pt1, Pt2, d0, d1, d2,
                                         r1, r2, lim, n_new, state)
    rows.P[c, 0] = Pn + d0
    rows.P[c, 1] = Pt1 + d1
    rows.P[c, 2] = Pt2 + d2
    return d0, d1, d2, state


@inline
def _dv(K, c, d0, d1, d2):
    """``|K_c dP|^2``: how much (squared) a change ``dP`` of row c's impulse changes its own
    velocity."""
    x = K[c, 0, 0] * d0 + K[c, 0, 1] * d1 + K[c, 0, 2] * d2
    y = K[c, 1, 0] * d0 + K[c, 1, 1] * d1 + K[c, 1, 2] * d2
    z = K[c, 2, 0] * d0 + K[c, 2, 1] * d1 + K[c, 2, 2] * d2
    return x * x + y * y + z * z


@inline
def _visit(rows, c, qd, slip, monotone):
    """:func:`_visit_row` of row c on its own: its velocity from ``J qd``, the change
    ``W dP`` applied to ``qd`` (O(nv)). Returns ``(|K dP|^2, state)`` (the change of the
    row's own velocity, squared [m^2/s^2 or rad^2/s^2])."""
    nv = qd.shape[0]
    v0 = 0.0
    v1 = 0.0
    v2 = 0.0
    for k in range(rows.span[c]):
        v0 += rows.JT[c, 0, k] * qd[k]
        v1 += rows.JT[c, 1, k] * qd[k]
        v2 += rows.JT[c, 2, k] * qd[k]
    d0, d1, d2, state = _visit_row(rows, c, v0, v1, v2, slip, monotone)
    for k in range(nv):
        qd[k] += rows.W[c, 0, k] * d0 + rows.W[c, 1, k] * d1 + rows.W[c, 2, k] * d2
    return _dv(rows.K, c, d0, d1, d2), state


@inline
def _visit_block(rows, blk, g, qd, slip, monotone, states):
    """:func:`_visit_row` of every contact of block group g in turn on the pair's 6 x 6
    block: the pair's velocity ``V = (J^T E_k) . qd`` (6,) once, each contact's velocity
    ``G_c V``, its change ``G_c^T dP`` kept in ``V += K6 G_c^T dP``, and ``qd += W6^T F`` once
    with the group's total ``F``: O(nv) per group instead of per contact, the same
    Gauss-Seidel iterate. Returns the largest ``|K dP|^2`` of its contacts [m^2/s^2]."""
    s = blk.slot[g]
    V = blk.V[0]
    F = blk.V[1]
    change = 0.0
    _gather(blk.JT6[s], qd, blk.span[s], 1.0, V, False)
    F[:] = 0.0
    for i in range(blk.first[g], blk.first[g + 1]):
        c = blk.order[i]
        G = blk.G[c]
        v0 = 0.0
        v1 = 0.0
        v2 = 0.0
        for k in range(6):
            v0 += G[0, k] * V[k]
            v1 += G[1, k] * V[k]
            v2 += G[2, k] * V[k]
        d0, d1, d2, st = _visit_row(rows, c, v0, v1, v2, slip, monotone)
        states[c] = st
        _block_update(G, blk.KG[c], d0, d1, d2, F, V)
        change = max(change, _dv(rows.K, c, d0, d1, d2))
    _spread(blk.W6[s], F, qd)
    return change


@inline
def _line_search(K, c, g0, v1, v2, Pn, Pt1, Pt2, d0, d1, d2, r1, r2, lim, n_new, state):
    """The step of :func:`_visit` toward its candidate ``P + d`` shortened to the minimum
    of its energy change on the segment, or replaced by the normal step alone (the
    tangential impulse scaled into the new cone) where that lowers the energy more."""
    g1 = v1 + r1 * Pt1
    g2 = v2 + r2 * Pt2
    slope = g0 * d0 + g1 * d1 + g2 * d2
    Kd0 = K[c, 0, 0] * d0 + K[c, 0, 1] * d1 + K[c, 0, 2] * d2
    Kd1 = K[c, 1, 0] * d0 + (K[c, 1, 1] + r1) * d1 + K[c, 1, 2] * d2
    Kd2 = K[c, 2, 0] * d0 + K[c, 2, 1] * d1 + (K[c, 2, 2] + r2) * d2
    curv = d0 * Kd0 + d1 * Kd1 + d2 * Kd2
    step = 1.0
    if slope >= 0.0:
        step = 0.0
    elif curv > 0.0 and -slope < curv:
        step = -slope / curv
    if step < 1.0:  # the candidate overshoots: a normal step alone may do better
        e1 = d0 * g0 + 0.5 * d0 * d0 * K[c, 0, 0]  # energy change of the normal step
        tt = math.sqrt(Pt1 * Pt1 + Pt2 * Pt2)
        sc = min(1.0, lim / tt) if tt > 0.0 else 1.0  # keep P_t in the new cone
        f1 = Pt1 * (sc - 1.0)
        f2 = Pt2 * (sc - 1.0)
        en = (e1 + g1 * f1 + g2 * f2 + d0 * (K[c, 1, 0] * f1 + K[c, 2, 0] * f2)
              + 0.5 * (f1 * (K[c, 1, 1] + r1) * f1 + 2.0 * f1 * K[c, 1, 2] * f2
                       + f2 * (K[c, 2, 2] + r2) * f2))
        ec = step * slope + 0.5 * step * step * curv
        if en < ec and en <= 0.0:
            step = 1.0
            d1 = f1
            d2 = f2
            state = 0 if n_new == 0.0 else 2
        else:
            d0 *= step
            d1 *= step
            d2 *= step
    return d0, d1, d2, state


@njit(**KERNEL)
def _sweeps(rows, nc, qd, tol, sweeps, slip, states, monotone, blk):
    """Gauss-Seidel sweeps over rows ``0..nc-1`` toward their ``rows.target`` normal
    speeds, on the accumulators ``rows.P``: the contacts group by group (``blk``; a block
    group on its 6 x 6 block, :func:`_visit_block`), then the rows after them (limits),
    until no visit of a sweep changes its row's velocity by more than ``tol`` [m/s], or
    ``sweeps`` times. The groups go in their order on even sweeps and in reverse on odd
    ones (the contacts inside a group and the rows after them always in their order): a
    chain of 300 capsules resting on a plane, 600 contacts in 60 blocks, converged to
    ``tol`` in 8 sweeps instead of 13. Returns the sweeps run."""
    done = 0
    ng, ncon = blk.count[0], blk.count[1]
    for s in range(sweeps):
        change = 0.0
        for t in range(ng):
            g = t if s % 2 == 0 else ng - 1 - t
            if blk.slot[g] >= 0:
                change = max(change, _visit_block(rows, blk, g, qd, slip, monotone, states))
                continue
            if blk.pair[g, 0] == blk.pair[g, 1]:
                # inside one body: rows of zeros (contact_rows), no impulse, not visited
                for i in range(blk.first[g], blk.first[g + 1]):
                    c = blk.order[i]
                    states[c] = 0
                    for d in range(3):
                        rows.P[c, d] = 0.0
                continue
            for i in range(blk.first[g], blk.first[g + 1]):
                c = blk.order[i]
                dv, st = _visit(rows, c, qd, slip, monotone)
                states[c] = st
                change = max(change, dv)
        for c in range(ncon, nc):
            dv, st = _visit(rows, c, qd, slip, monotone)
            states[c] = st
            change = max(change, dv)
        done = s + 1
        if change <= tol * tol:  # (squared changes: _dv)
            break
    return done


@inline
def _work(rows, nc, P, qa, qb, blk):
    """``sum_c P_c . J_c (qa + qb) / 2``: the kinetic energy gained from ``qa`` to ``qb``
    when ``qb - qa = sum_c W_c P_c`` (since ``M W_c = J_c^T``); and ``sum |P_c . J_c qa|``."""
    s = 0.0
    a = 0.0
    _block_speeds(blk, qa, blk.Vg[0])
    _block_speeds(blk, qb, blk.Vg[1])
    for c in range(nc):
        for d in range(3):
            x = _row_speed(rows, blk, c, d, qa, blk.Vg[0])
            y = _row_speed(rows, blk, c, d, qb, blk.Vg[1])
            s += 0.5 * P[c, d] * (x + y)
            a += abs(P[c, d] * x)
    return s, a


@njit(**KERNEL)
def _solve(rows, nc, qd, qd0, work, tol, sweeps, slip, states, monotone, blk):
    """One solve from the current accumulators (see :func:`solve_impulses`)."""
    done = _sweeps(rows, nc, qd, tol, sweeps, slip, states, monotone, blk)
    nv = qd.shape[0]
    # restitution kick k_c = e_c P_c of the impacts; its energy change is s a + s^2 b / 2
    kicks = 0
    for k in range(nv):
        work[k] = 0.0
    for c in range(nc):
        e = rows.e[c] if rows.impact[c] != 0 else 0.0
        for d in range(3):
            rows.Pc[c, d] = e * rows.P[c, d]
        if e > 0.0:
            kicks += 1
            _row_impulse(rows, blk, c, rows.Pc[c, 0], rows.Pc[c, 1], rows.Pc[c, 2], work)
    _spread_blocks(blk, work)
    s = 0.0
    if kicks:
        # the energy the compression removed (T(qd0) - T(qd)) bounds what the kick may add
        gain, _ = _work(rows, nc, rows.P, qd0, qd, blk)
        a, _ = _work(rows, nc, rows.Pc, qd, qd, blk)
        b, _ = _work(rows, nc, rows.Pc, work, work, blk)  # kick^T J M^-1 J^T kick
        D = -gain
        s = 1.0
        if a + 0.5 * b > D:
            disc = a * a + 2.0 * b * D
            s = 0.0
            if b > 0.0 and disc >= 0.0:
                s = min(1.0, max(0.0, (-a + math.sqrt(disc)) / b))
        for k in range(nv):
            qd[k] += s * work[k]
    for c in range(nc):
        for d in range(3):
            rows.Pc[c, d] = rows.P[c, d] + s * rows.Pc[c, d]
            rows.P[c, d] = 0.0
    if kicks:
        done += _sweeps(rows, nc, qd, tol, sweeps, slip, states, monotone, blk)
    for c in range(nc):
        for d in range(3):
            rows.P[c, d] += rows.Pc[c, d]
    return done


@njit(**KERNEL)
def solve_impulses(rows, nc, qd, qd0, work, tol, sweeps, slip, states, blk):
    """Sequential impulses over rows ``0..nc-1``, ``qd`` (nv,) updated in place from the
    accumulators ``rows.P`` (zero, or warm-started: then ``qd = qd0 + sum W_c P_c``):

    1. compression: sweeps (:func:`_sweeps`: contact by contact in the groups of ``blk``
       (:class:`Blocks`, from :func:`contact_rows`), a block on its 6 x 6 block, then the
       rows after the contacts) until no visit changes its row's velocity by more than
       ``tol`` [m/s], or ``sweeps`` times; impacts aim at zero normal speed;
    2. restitution (Poisson's hypothesis): each impact gets ``e`` times its compression
       impulse (normal and friction, so it stays in the cone) on top, scaled down if needed
       so that the kinetic energy stays below its value before the compression; then the
       compression sweeps run again from fresh accumulators to stop what that made approach.

    For one frictionless or sticking impact this is Stronge's energetic restitution
    (``W_r = -e^2 W_c``, normal speed ``-e v_n^-``) and the scaling is not needed.

    Energy: the kinetic energy an impulse adds is exactly ``sum_c P_c . J_c (qd0 + qd) / 2``
    (since ``M W_c = J_c^T``). Coulomb's visits are not guaranteed to lower it (where
    friction couples into the normal and the slip turns during an impact, GS can feed
    energy in); a solve that ends with more kinetic energy than ``qd0`` had is discarded
    and repeated from zero impulses with the energy-monotone visits, so the impulses of a
    step never add kinetic energy. A contact outside its cone slides against its slip
    velocity when that exceeds ``slip`` [m/s]. ``qd0`` (nv,) the velocity before any
    impulse, ``work`` (nv,) scratch; ``states`` (nc,) receives each row's state (0
    separating, 1 sticking, 2 sliding). Returns ``(sweeps run, fallback)`` with fallback 1
    when the monotone solve was needed."""
    done = _solve(rows, nc, qd, qd0, work, tol, sweeps, slip, states, False, blk)
    gain, scale = _work(rows, nc, rows.P, qd0, qd, blk)
    if gain <= 1e-13 * scale:
        return done, 0
    for k in range(qd.shape[0]):
        qd[k] = qd0[k]
    for c in range(nc):
        for d in range(3):
            rows.P[c, d] = 0.0
    done += _solve(rows, nc, qd, qd0, work, tol, sweeps, slip, states, True, blk)
    return done, 1


@njit(**KERNEL)
def warm_start(rows, nc, prev_key, prev_P, n_prev, qd, mu_scale, blk):
    """Start rows ``0..nc-1`` from the impulses of the last step: a row whose key (same
    pair and feature, or same limit) was there takes that world impulse ``prev_P``
    (n_prev, 3), expressed in its new frame and projected on its friction cone; ``qd``
    receives ``W P``. Both key lists are increasing: a merge, O(nc + n_prev). Returns the
    number warm-started. ``blk``: the step's :class:`Blocks`. (Warm starting: the
    Gauss-Seidel sweeps then go on converging from step to step, which resting stacks and
    sticking on slopes need.)"""
    j = 0
    hits = 0
    for c in range(nc):
        key = rows.key[c]
        while j < n_prev and prev_key[j] < key:
            j += 1
        if j >= n_prev or prev_key[j] != key:
            continue
        P = (0.0, 0.0, 0.0)
        Pn = (rows.frame[c, 0, 0] * prev_P[j, 0] + rows.frame[c, 0, 1] * prev_P[j, 1]
              + rows.frame[c, 0, 2] * prev_P[j, 2])
        if Pn <= 0.0:
            continue
        t1 = (rows.frame[c, 1, 0] * prev_P[j, 0] + rows.frame[c, 1, 1] * prev_P[j, 1]
              + rows.frame[c, 1, 2] * prev_P[j, 2])
        t2 = (rows.frame[c, 2, 0] * prev_P[j, 0] + rows.frame[c, 2, 1] * prev_P[j, 1]
              + rows.frame[c, 2, 2] * prev_P[j, 2])
        tt = math.sqrt(t1 * t1 + t2 * t2)
        lim = rows.mu[c] * Pn
        if tt > lim:
            t1 = t1 * lim / tt
            t2 = t2 * lim / tt
        P = (Pn * mu_scale, t1 * mu_scale, t2 * mu_scale)
        for d in range(3):
            rows.P[c, d] = P[d]
        _row_impulse(rows, blk, c, P[0], P[1], P[2], qd)
        hits += 1
    _spread_blocks(blk, qd)
    return hits


@njit(**KERNEL)
def save_impulses(rows, nc, prev_key, prev_P):
    """Keep the keys and world impulses ``F^T P`` of rows ``0..nc-1`` for
    :func:`warm_start` of the next step."""
    for c in range(nc):
        prev_key[c] = rows.key[c]
        for k in range(3):
            prev_P[c, k] = (rows.frame[c, 0, k] * rows.P[c, 0] + rows.frame[c, 1, k] * rows.P[c, 1]
                            + rows.frame[c, 2, k] * rows.P[c, 2])


@inline
def _project_row(rows, c, g, lam):
    """One projection visit of row c at predicted gap error ``g`` [m]: its new multiplier
    ``lam[c, 0]``, at least its bound ``lam[c, 1]`` (zero, or below zero for an exact
    impact row: :func:`project_positions`); returns the change ``d lambda``."""
    new = max(lam[c, 0] - g / rows.K[c, 0, 0], lam[c, 1])
    dl = new - lam[c, 0]
    lam[c, 0] = new
    return dl


@inline
def _project_block(rows, blk, g, qd, h, lam, dq):
    """The projection visits of block group g's contacts on the pair's 6 x 6 block (as
    :func:`_visit_block`); returns the largest ``|d lambda| K_nn`` [m]."""
    s = blk.slot[g]
    V = blk.V[0]
    F = blk.V[1]
    change = 0.0
    _gather(blk.JT6[s], qd, blk.span[s], h, V, False)
    _gather(blk.JT6[s], dq, blk.span[s], 1.0, V, True)
    F[:] = 0.0
    for i in range(blk.first[g], blk.first[g + 1]):
        c = blk.order[i]
        if rows.K[c, 0, 0] <= 0.0:
            continue
        gap = rows.dist[c] - rows.gap[c]
        for k in range(6):
            gap += blk.G[c, 0, k] * V[k]
        dl = _project_row(rows, c, gap, lam)
        if dl == 0.0:
            continue
        _block_update(blk.G[c], blk.KG[c], dl, 0.0, 0.0, F, V)
        change = max(change, abs(dl) * rows.K[c, 0, 0])
    _spread(blk.W6[s], F, dq)
    return change


@inline
def _project_one(rows, c, qd, h, lam, dq):
    """The projection visit of row c on its own (O(nv)); returns ``|d lambda| K_nn``."""
    nv = qd.shape[0]
    if rows.K[c, 0, 0] <= 0.0:
        return 0.0
    g = rows.dist[c] - rows.gap[c]
    for k in range(rows.span[c]):
        g += rows.JT[c, 0, k] * (h * qd[k] + dq[k])
    dl = _project_row(rows, c, g, lam)
    if dl != 0.0:
        for k in range(nv):
            dq[k] += rows.W[c, 0, k] * dl
    return abs(dl) * rows.K[c, 0, 0]


@inline
def _release_unstruck(rows, nr):
    """An impact inside the step (``impact == 2``: placed exactly where it would be after
    rebounding) that took no normal impulse in the solve did not happen: another row's
    impulse turned it away before it closed its gap. Its projection row becomes a plain
    unilateral one aiming at gap 0 (``impact = 1``), so that the projection never pulls
    a separating contact back onto its surface (two such rows of one capsule on a
    cylinder, the exact one 3.9 mm away, left the other 1.4 mm deep)."""
    for c in range(nr):
        if rows.impact[c] == 2 and rows.P[c, 0] <= 0.0:
            rows.impact[c] = 1
            rows.gap[c] = 0.0


@inline
def _clamp_limits(lim, q, v):
    """The step's displacement ``v`` (nv,) cut back to the joint limits ``lim`` where the
    sweeps or the projection, stopped at their caps, left a limit row short of its bound
    (measured: 3.6e-4 rad past a limit in a step of pendulum-200 with 5 limit rows); the
    velocities are left alone (the next step's limit row takes the approach)."""
    for l in range(lim.dof.shape[0]):
        k = lim.dof[l]
        x = q[lim.qadr[l]]
        if x + v[k] < lim.lo[l]:
            v[k] = lim.lo[l] - x
        elif x + v[k] > lim.hi[l]:
            v[k] = lim.hi[l] - x


MAX_STEP_DISPLACEMENT = math.pi
"""Largest displacement of one dof in one step [rad or m] that a contact step may give
(:func:`runaway_dof`): beyond it the impulses or the position projection diverged, and the
simulators stop with an error naming the joint rather than go on from nonsense."""


@njit(**JIT)
def runaway_dof(v):
    """The first dof whose step displacement ``v[k]`` is beyond
    :data:`MAX_STEP_DISPLACEMENT` or not finite, -1 if none."""
    for k in range(v.shape[0]):
        if not abs(v[k]) <= MAX_STEP_DISPLACEMENT:
            return k
    return -1


@njit(**KERNEL)
def project_positions(rows, nc, qd, h, sweeps, lam, dq, blk, tol):
    """Post-stabilization (Cline & Pai 2003): ``dq`` (nv,) with ``J_n dq >= gap* - (d + h
    v_n)`` for every row (its gap after the step predicted from the new ``qd``, against
    the aimed ``rows.gap``), by sequential projection on the normal rows in the groups of
    :func:`_sweeps` (``blk``, always in their order), ``lambda >= 0``, until no visit moves
    its row by more than ``tol`` [m], or ``sweeps`` times. ``lam`` (nc, 2) scratch: the
    multipliers and their lower bounds.

    An impact inside the step (``impact == 2``) aims at ``=``: it is placed where it would
    be after closing its gap and rebounding, so its row may also pull, but by no more than
    it would on its own (``lambda >= -(d + h v_n - gap*) / K_nn``). Without that bound two
    nearly parallel rows of one pair can ask for opposite things: in scene (a) of the
    contact bench (docs/contact.md) a capsule struck a cylinder at 6 m/s with two rows of
    condition 600 in ``K_nn``; the exact row 2.2 mm away pulled, the resting one 0.3 mm
    away pushed, and 20 sweeps left it 1.54 mm deep (1,000 converged, with multipliers
    80x larger that turned the piece). With the bound the projection stops in 4 sweeps,
    the resting row at its surface and the exact one 1.9 mm short of its own. Returns the
    largest predicted depth before the projection [m]."""
    nv = qd.shape[0]
    for k in range(nv):
        dq[k] = 0.0
    worst = 0.0
    needed = False
    _block_speeds(blk, qd, blk.Vg[0])
    for c in range(nc):
        vn = _row_speed(rows, blk, c, 0, qd, blk.Vg[0])
        g = rows.dist[c] + h * vn
        worst = min(worst, g)
        lam[c, 0] = 0.0
        lam[c, 1] = 0.0
        if rows.impact[c] == 2:
            needed = True
            if rows.K[c, 0, 0] > 0.0:
                lam[c, 1] = -max(g - rows.gap[c], 0.0) / rows.K[c, 0, 0]
        elif g < rows.gap[c]:
            needed = True
    if not needed:
        return 0.0
    ng, ncon = blk.count[0], blk.count[1]
    for s in range(sweeps):
        change = 0.0
        for g in range(ng):
            if blk.slot[g] >= 0:
                change = max(change, _project_block(rows, blk, g, qd, h, lam, dq))
                continue
            for i in range(blk.first[g], blk.first[g + 1]):
                change = max(change, _project_one(rows, blk.order[i], qd, h, lam, dq))
        for c in range(ncon, nc):
            change = max(change, _project_one(rows, c, qd, h, lam, dq))
        if change <= tol:
            break
    return -worst


# ------------------------------------------------------------------- one response

Response = namedtuple("Response", ("rows", "blocks", "states", "lam", "prev_key", "prev_P",
                                   "n_prev", "dq", "work", "present"))
Response.__doc__ = """The growing buffers of :func:`respond_kernel` (capacity ``cap`` rows):
``rows`` :class:`ContactRows`, ``blocks`` :class:`Blocks`, ``states`` (cap,) int64 (the
sweeps' contact states), ``lam`` (cap, 2) projection multipliers and their bounds,
``prev_key`` (cap,) int64 and ``prev_P`` (cap, 3) the last step's keys and world impulses
(warm start), ``n_prev`` (1,) int64 their number, ``dq`` and ``work`` (nv,) scratch,
``present`` (2 nl,) int64 the limit rows already added this step."""

ResponseOptions = namedtuple("ResponseOptions", (
    "h", "tol", "sweeps", "rest_speed", "slip_speed", "warm_start", "project",
    "project_sweeps", "limit_e", "key0", "energy_bound"))
ResponseOptions.__doc__ = """The scalars of :func:`respond_kernel`: step ``h`` [s], ``tol``
[m/s], ``sweeps``, ``rest_speed`` and ``slip_speed`` [m/s], ``warm_start`` and ``project``
(bool), ``project_sweeps``, ``limit_e`` (restitution of the limits), ``key0`` (the first
limit key), and ``energy_bound`` (bool; applied by the steppers after the response, not by
:func:`respond_kernel`); see :class:`articulated.simulation.contact.ContactStepper`."""

@inline
def options_at(o, h):
    """The :class:`ResponseOptions` ``o`` for a (sub)step of ``h`` [s] (``o`` itself when
    ``h`` is its step)."""
    if h == o.h:
        return o
    return ResponseOptions(h, o.tol, o.sweeps, o.rest_speed, o.slip_speed, o.warm_start,
                           o.project, o.project_sweeps, o.limit_e, o.key0, o.energy_bound)


STAT_N, STAT_LIMITS, STAT_IMPACTS, STAT_STICKING, STAT_SLIDING, STAT_SWEEPS, STAT_FALLBACK, \
    STAT_DEPTH, STAT_APPROACH, STAT_KE_BEFORE, STAT_KE_AFTER, STAT_DETECT, STAT_RESPONSE, \
    STAT_ENERGY = range(14)
"""Slots of a step's statistics vector (14,) float64, in the order of
:data:`articulated.simulation.contact.CONTACT_STATS`."""

BOUND_SLACK = 1e-12
"""Relative slack of the energy bound (contact option ``energy_bound``): an excess below
``BOUND_SLACK (|E| + |W| + T)`` is rounding and left alone."""


@njit(**JIT)
def energy_scale(E, W, T1, V1):
    """The energy bound of a (sub)step (contact option ``energy_bound``): the factor ``s``
    in [0, 1] by which ``qd+`` is scaled so that the total energy at its end, ``T1 + V1``
    [J], is at most its start ``E`` plus the applied forces' work ``W`` [J]: ``s =
    sqrt((T1 - excess) / T1)`` (at least 0) with ``excess = T1 + V1 - E - W``, the
    projection onto the energy level in the mass-matrix metric (Hairer, Lubich & Wanner,
    Geometric Numerical Integration, IV.4); 1 where there is no excess beyond
    :data:`BOUND_SLACK`. The energy taken out is ``T1 (1 - s^2)``."""
    excess = T1 + V1 - (E + W)
    if excess > BOUND_SLACK * (abs(E) + abs(W) + T1) and T1 > 0.0:
        return math.sqrt(max(T1 - excess, 0.0) / T1)
    return 1.0


@njit(**JIT)
def response_buffers(cap, nb, nv, nlim):
    """Zeroed :class:`Response` for ``cap`` rows of a tree with ``nb`` bodies, ``nv`` dofs
    and ``nlim`` limited joints."""
    return Response(contact_buffers(cap, nv), block_buffers(cap, nb, nv),
                    np.zeros(cap, np.int64), np.zeros((cap, 2)), np.zeros(cap, np.int64),
                    np.zeros((cap, 3)), np.zeros(1, np.int64), np.zeros(nv), np.zeros(nv),
                    np.zeros(2 * nlim, np.int64))


@njit(**JIT)
def grow_response(old, cap, nb):
    """A :class:`Response` like ``old`` with room for ``cap`` rows (``nb`` bodies of the
    tree), keeping the last step's impulses (for the warm start)."""
    nv = old.dq.shape[0]
    rb = response_buffers(cap, nb, nv, old.present.shape[0] // 2)
    n = min(old.n_prev[0], cap)
    rb.n_prev[0] = n
    for c in range(n):
        rb.prev_key[c] = old.prev_key[c]
        for k in range(3):
            rb.prev_P[c, k] = old.prev_P[c, k]
    return rb


@njit(**KERNEL)
def respond_kernel(im, fac, sc, con, n, q, qs, lim, opt, rb, qd1, v, st):
    """The impulses of one step (GLM IV.A-B, VI): contact rows of the ``n`` contacts ``con``
    (:class:`~articulated.algorithms.collision.Contacts`, bodies numbered as in ``im``),
    the rows of the limits ``lim`` that the step could reach, warm start, sequential
    impulses (:func:`solve_impulses`), post-stabilization (:func:`project_positions`); the
    limits that the impulses or the projection made reachable (they move every joint)
    join and the step is solved again (at most once per limited joint).

    ``q`` (nq,) the model's configuration (limit positions); ``qs`` (nv',) the
    unconstrained velocities ``qd + h qdd`` in the dof space of ``im``/``fac`` (the whole
    model's or a hybrid body's reduced tree). Writes ``qd1`` (nv',) the velocities after
    the impulses and ``v`` (nv',) the step's displacement ``h qd1 + dq``, and the slots
    :data:`STAT_LIMITS` .. :data:`STAT_APPROACH` of ``st`` (14,). ``rb`` (:class:`Response`)
    must hold ``n + 2 nl`` rows. Returns the number of rows solved (0: no impulse)."""
    h = opt.h
    nvr = qs.shape[0]
    rows = rb.rows
    blk = rb.blocks
    dq = rb.dq[:nvr]
    for k in range(nvr):
        dq[k] = 0.0
        qd1[k] = qs[k]
        v[k] = qs[k] * h
    blk.count[0] = 0
    blk.count[1] = 0
    if n:
        contact_rows(im, fac, sc, con, n, qs, h, opt.rest_speed, rows, blk)
    nlim = lim.dof.shape[0]
    nl = 0
    if nlim:
        for k in range(2 * nlim):
            rb.present[k] = 0
        nl = limit_rows(im, fac, sc, lim, q, qs, v, h, opt.rest_speed, opt.limit_e, opt.key0,
                        rows, n, rb.present)
    nr = n + nl
    for k in range(STAT_LIMITS, STAT_APPROACH + 1):
        st[k] = 0.0
    if nr:
        sweeps = 0
        fallback = 0
        n_prev = rb.n_prev[0]
        for _ in range(nlim + 1):
            for k in range(nvr):
                qd1[k] = qs[k]
            for c in range(nr):
                for d in range(3):
                    rows.P[c, d] = 0.0
            if opt.warm_start and n_prev:
                warm_start(rows, nr, rb.prev_key, rb.prev_P, n_prev, qd1, 1.0, blk)
            s1, f1 = solve_impulses(rows, nr, qd1, qs, rb.work[:nvr], opt.tol, opt.sweeps,
                                    opt.slip_speed, rb.states, blk)
            sweeps += s1
            fallback |= f1
            _release_unstruck(rows, nr)
            if opt.project:
                project_positions(rows, nr, qd1, h, opt.project_sweeps, rb.lam, dq, blk,
                                  opt.tol * h)
            for k in range(nvr):
                v[k] = qd1[k] * h + dq[k]
            more = 0
            if nlim:
                more = limit_rows(im, fac, sc, lim, q, qs, v, h, opt.rest_speed, opt.limit_e,
                                  opt.key0, rows, nr, rb.present)
            if not more:
                break
            nl += more
            nr += more
        if nlim:
            _clamp_limits(lim, q, v)
        save_impulses(rows, nr, rb.prev_key, rb.prev_P)
        sticking = 0
        sliding = 0
        depth = 0.0
        approach = 0.0
        for c in range(n):
            sticking += rb.states[c] == 1
            sliding += rb.states[c] == 2
            depth = max(depth, -rows.dist[c])
            approach = max(approach, -rows.vn0[c])
        impacts = 0
        for c in range(nr):
            impacts += rows.impact[c] > 0
        st[STAT_LIMITS] = nl
        st[STAT_IMPACTS] = impacts
        st[STAT_STICKING] = sticking
        st[STAT_SLIDING] = sliding
        st[STAT_SWEEPS] = sweeps
        st[STAT_FALLBACK] = fallback
        st[STAT_DEPTH] = depth
        st[STAT_APPROACH] = approach
    rb.n_prev[0] = nr
    return nr


# ----------------------------------------------------------------------- public API

def collision_matrix(model, q, body, point, normal, other=None):
    """The collision matrix of one contact (Mirtich 1996; GLM IV.A step 4), by three test
    impulses on the articulated factorization at ``q`` (all joints active).

    Parameters
    ----------
    model : Model
    q : (nq,) float64 - configuration
    body : str or int - body a (the normal points from b to a)
    point : (3,) float - contact point, world coordinates [m]
    normal : (3,) float - contact normal, world coordinates (normalized here)
    other : str, int or None - body b (None: a static obstacle)

    Returns
    -------
    K : (3, 3) float64 - change of the relative contact velocity (of a's point minus b's)
        per unit impulse [m/s per N s], in the contact frame ``(n, t1, t2)``:
        ``K = F (J_a - J_b) M^-1 (J_a - J_b)^T F^T``
    J : (3, nv) float64 - ``F (J_a - J_b)``: rows of the contact Jacobian in that frame
    F : (3, 3) float64 - rows ``n, t1, t2`` of the contact frame (world)

    Raises ValueError for an unknown body, ``other == body``, or a non-finite or zero
    point/normal.
    """
    from ..algorithms.kinematics import _world_poses_kernel
    from .aba import aba_kernel
    from .collision import Contacts

    a = model.body_id(body)
    b = -1 if other is None else model.body_id(other)
    if a == b:
        raise ValueError(f"body {model.body_name[a]!r}: a contact needs two different bodies")
    x = np.asarray(point, dtype=np.float64)
    n = np.asarray(normal, dtype=np.float64)
    if x.shape != (3,) or n.shape != (3,) or not (np.isfinite(x).all() and np.isfinite(n).all()) \
            or np.linalg.norm(n) == 0.0:
        raise ValueError("point and normal must be finite (3,) vectors, the normal non-zero")
    q = model.check_configuration(q)
    d = model.data()
    z = np.zeros(model.nv)
    aba_kernel(d.model_i, d.model_f, q, z, z, np.zeros((0, 6)), False, d.buf, True)
    _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
    con = Contacts(np.zeros((1, 2), np.int64), np.array([[a, b]], np.int64), x[None].copy(),
                   (n / np.linalg.norm(n))[None].copy(), np.zeros(1), np.zeros(1), np.zeros(1),
                   np.zeros(1, np.int64))
    ma = model.arrays()
    nb, nv = model.nb, model.nv
    rows = contact_buffers(1, nv)
    sc = impulse_scratch(nb, nv)
    contact_rows(ImpulseModel(ma.parent, ma.vadr, ma.jnv, ma.S),
                 Factor(d.Xup_E, d.Xup_r, d.UDinv, d.Dinv, d.oE, d.op), sc, con, 1, z, 1.0, 0.0,
                 rows, block_buffers(1, nb, nv))
    return rows.K[0].copy(), rows.JT[0].copy(), rows.frame[0].copy()
