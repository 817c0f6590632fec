"""Test impulses on an articulated body.

Test impulses on an articulated body: the joint-velocity change of a spatial impulse
from the articulated factorization of the step's forward dynamics (Gayle, Lin & Manocha
2006, "GLM", sec. IV.A steps 1-3 and 6-7, after Mirtich 1996, ch. 4), one contact at a
time or for every body at once from ``nv`` joint test impulses.

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

**Rows by dofs** (where contacts outnumber the dofs: a chain lying on the floor). ``M^-1``
is symmetric, so entry ``v`` of ``W = M^-1 J_b^T p`` is ``p . (J_b M^-1 e_v)``: the
spatial velocity change of body b under a unit impulse on joint velocity ``v``, which the
same down pass gives for every body at once (Maxwell-Betti reciprocity). So ``nv`` joint
test impulses, read out at the struck bodies (:func:`_tables`, with ``J_b e_v``, the
motion of body b under a unit ``qd_v``, for ``J^T``), give the rows of every contact at
O(nv) each: O(nv nb + rows nv) in all instead of O(rows nb) with one test impulse per row.
:func:`contact_rows` takes them when the rows outnumber the dofs by :data:`DOF_RATIO` and
the tables fit the scratch; the two agree to rounding (tests/test_contact.py).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .._views import mat3_rows
from ..config import inline, KERNEL, VIEWS
from ..data import data_arrays

ImpulseModel = namedtuple("ImpulseModel", ("parent", "vadr", "jnv", "S"))

ImpulseModel.__doc__ = """Model arrays the impulse passes read: ``parent, vadr, jnv`` (nb,)
int64, ``S`` (nv, 6) motion subspaces."""

Factor = namedtuple("Factor", ("Xup_E", "Xup_r", "UDinv", "Dinv", "oE", "op"))

Factor.__doc__ = """The step's articulated factorization (from ABA at the current ``q``):
``Xup_E`` (nb, 3, 3), ``Xup_r`` (nb, 3) body-to-parent transforms, ``UDinv`` (nv, 6) rows of
``U D^-1``, ``Dinv`` (nv, 6) blocks of ``D^-1``; world poses ``oE`` (nb, 3, 3) (world to
body rotation), ``op`` (nb, 3) [m]. Compiled code takes it from
:func:`workspace_factor`."""


@njit(**VIEWS)
def workspace_factor(data_f, nb, nv):
    """The :data:`Factor` of the packed workspace ``data_f`` of a model with ``nb`` bodies
    and ``nv`` dofs (:func:`articulated.data.data_arrays`), as views, inside compiled code.

    Views typed in compiled code have one layout whatever the model's size, where views
    made in Python are C-contiguous for one body or one dof and strided otherwise (numba
    would compile the contact response once for each)."""
    d = data_arrays(data_f, nb, nv)
    return Factor(mat3_rows(d.Xup_E), d.Xup_r, d.UDinv, d.Dinv, mat3_rows(d.oE), d.op)

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
nv`` and the tables fit the scratch (:data:`TABLE_BYTES`). The joint test impulses cost
more than a contact's (their paths run from every body to the root, and the tables' motion
pass and copies come on top), hence the ratio above 1."""

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
