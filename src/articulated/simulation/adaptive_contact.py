"""Adaptive dynamics with contacts and joint limits in one compiled step loop (Gayle, Lin &
Manocha 2006, "GLM", sec. IV-V, on the hybrid body of Redon, Galoppo & Lin 2005, "RGL"):
:func:`adaptive_contact_steps`, what
:class:`~articulated.simulation.adaptive.AdaptiveSimulator` runs when it has contacts or
limits (a user's Python forces and coal's mesh pairs are called from inside it:
:mod:`articulated.simulation.hooks`).

A step from ``(q, qd)``, in stages: :func:`hybrid_forward` (step 1), then
:func:`hybrid_contacts` (steps 2-5: :func:`hybrid_contact_substep` per substep):

1. the hybrid body's frames and the compiled forces; every ``update_every`` steps (and,
   with ``update_on_impact``, after a step with an impact: GLM V.B) the
   active-region update (RGL Sec. 5.1, its rigidification impulses included) and the ABA
   of the new reduced tree (one rigid body per rigid piece, joined by the active joints:
   :mod:`articulated.algorithms.reduced`), else that ABA's accelerations give
   ``qd* = qd + h qdd`` on the active joints (GLM IV.A step 1: the factorization the
   impulses reuse);
2. detection at ``q`` with speculative margins from ``qd*`` on the rigid pieces
   (:func:`detect_on_pieces`, :mod:`articulated.algorithms.hybrid_detection`: GLM's
   hybrid hierarchy; each piece's shapes kept in its frame while the region stays, pairs
   inside a piece never tested, only the pieces near something placed: O(N_A) + those
   shapes; no contact while no joint is active);
3. a contact on body b acts on b's rigid piece (GLM: "contacts on rigid pieces act on
   their front node"), so its rows, ``K = J_h M_h^-1 J_h^T`` and the propagation of its
   impulse run on the reduced tree, O(N_A) (GLM IV.C); limits of active joints are rows,
   rigidified joints cannot cross theirs;
4. :func:`~articulated.algorithms.response.respond_kernel`: sequential impulses with
   friction and restitution, post-stabilization; with the contact option
   ``energy_bound``, :func:`hybrid_energy_bound` (O(N_A));
5. ``q (+)= h qd+ + dq`` on the active joints.

Detection gives each contact its look-ahead gap (:func:`_look_ahead`, contact option
``max_arc_error``: the gap at the end of the step under the unconstrained motion, as the
full model's). A step whose fastest rigid piece would turn by more than the contact option
``max_rotation``, or whose impulses change its contacts' paths by more than
``max_arc_error`` allows, runs steps 2-5 by RK4, in equal substeps
(:func:`hybrid_substeps`, :func:`hybrid_impulse_substeps`, as the full model's
:class:`~articulated.simulation.contact.ContactStepper`), each after the hybrid
body's ABA at its start with the step's applied forces held (the first: the step's
accelerations; on an update step those of its transient hybrid body under the
rigidification's projection, whose ``h qdd`` is taken off the update's velocities, so that
the substeps start from the projection of the velocities before the update:
:func:`~articulated.algorithms.region.region_update_kernel` projects both).

The per-region data of the response (the reduced tree's views, the model dof of each
reduced dof, the limits of the active joints, the piece of every body) are rebuilt when
the reduced tree changes (its stamp). Buffers that fill up grow inside the loop (a
contact is never dropped) and are returned to the caller.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .._byref import byref, byref_each
from .._views import mat3_rows, rows
from ..algorithms.bundles import N_AJOINTS, REGION_STAMP, STAT_BAD
from ..algorithms.collision import Contacts
from ..algorithms.contact_rows import Limits
from ..algorithms.impulse import ImpulseModel, workspace_factor
from ..algorithms.projection import runaway_dof
from ..algorithms.response import (STAT_DEPTH, STAT_DETECT, STAT_ENERGY, STAT_IMPACTS, STAT_KE_AFTER,
                                   STAT_KE_BEFORE, STAT_N, STAT_RESPONSE, energy_scale,
                                   options_at, respond)
from ..algorithms.hybrid import hybrid_kinematics
from ..algorithms.hybrid_detection import build_pieces, detect_hybrid, piece_poses
from ..algorithms.kinematics import (_energy_kernel, _power_kernel,
                                     _world_poses_kernel, body_gravity_potential,
                                     state_energy, steady_acceleration_step)
from ..algorithms.lookahead import FrameMotion, ShapeFrames, ahead_gaps
from ..algorithms.reduced import reduced_dynamics, reduced_kinematics, reduced_kinetic
from ..algorithms.region import ERR_HYBRID, region_update_kernel
from ..config import inline, JIT, KERNEL
from ..configuration import _integrate_kernel, integrate_joints_inplace
from ..data import data_arrays
from ..model import model_arrays
from ..spatial import get_mat3, get_vec3, inertia_times
from .contact import (MAX_SUBSTEPS, RK4_STIFF, SPLIT, carry_substeps, contacts_arc_change,
                      keep_scale, moved, rk4_stiffness, split_rest, step_plan)
from .contact_loop import RK_C, ContactBuffers, detect_bodies, merge_stats
from .cycles import _cycles
from .forces import apply_compiled_forces, apply_joint_forces
from .hooks import python_forces, python_weights
from .stepping import stop_requested

STAGE = dict(JIT, inline="always")
"""Flags of the stages of :func:`adaptive_contact_steps` that may grow buffers (NRT on):
numba copies each stage's IR into its caller and types it there, so that the loop is one
function to numba's reference-count pruning. A stage compiled on its own would take the
loop's bundles (hundreds of arrays) at every call and count their references, which no
LLVM inlining removes. Each stage is called from one place: a copy per call site would
be typed and optimized again, and LLVM's scalar replacement of the bundles' aggregates
costs about the square of the loop's size."""

ERR_FORCE = 3
"""Error code of the compiled adaptive loops: an applied force is not finite."""
ERR_VELOCITY = 4
"""Error code of the compiled adaptive loops: the joint velocities overflow (``qd . qd`` is
not finite, so neither is the kinetic energy)."""
ERR_DISPLACEMENT = 5
"""Error code of the compiled adaptive contact loop: the contact response moved a joint by
more than :data:`~articulated.algorithms.projection.MAX_STEP_DISPLACEMENT` in one step."""

ContactLoop = namedtuple("ContactLoop", (
    "det", "whole", "sc", "opt", "lim", "limr", "qsf", "vfull", "adof", "piece", "qsr",
    "qd1", "vr", "vb", "stamp", "qd0", "xr", "rq1", "ebound", "hs", "impact", "theta",
    "nsub", "sst", "qsave", "qdsave", "arc", "ab", "rkq", "rkd", "rkv", "rka", "la",
    "buf1", "ab0", "vb0"))
ContactLoop.__doc__ = """What :func:`adaptive_contact_steps` needs besides the adaptive loop's
bundles: the whole model's detection stage ``det``
(:data:`~articulated.simulation.contact_loop.DetectBundle`: the packed model, a workspace
``buf`` for the bodies' poses in their pieces' frames at region changes and the whole
model's energies for the energy bound, the detector's shapes and mesh pairs) and ``whole`` (bool): detect on the
whole model (mesh shapes: coal reads every shape's world pose) instead of the rigid
pieces; the impulse scratch ``sc`` and
:class:`~articulated.algorithms.response.ResponseOptions` ``opt``; the model's
:class:`~articulated.algorithms.contact_rows.Limits` ``lim`` and room ``limr`` (a Limits of
the same length) for those of the active joints in reduced numbering; scratch ``qsf,
vfull`` (nv,) (the unconstrained velocities and the step's displacement in the model's
dofs), ``adof`` (nv,) int64 (the model dof of each reduced dof), ``piece`` (nb,) int64 (the
reduced body of each body, -1 welded to the world), ``qsr, qd1, vr`` (nv,) reduced-space
velocities and displacement, ``vb`` (nb, 6) body velocities of the reduced tree; ``stamp``
(2,) int64 the reduced-tree stamp the per-region data were built for and their number of
limits; ``qd0, xr`` (nv,) and ``rq1`` (nq,) scratch of the energy bound and ``ebound`` (3,)
its state: the total energy [J] at the end of step ``ebound[1]`` and the gravity potential
[J] of the bodies welded to the world (:func:`energy_bound_start`,
:func:`hybrid_energy_bound`); ``hs`` the shapes by rigid piece
(:class:`~articulated.algorithms.hybrid_detection.HybridShapes`, rebuilt with the
per-region data); ``impact`` (2,) int64: whether the simulator updates the active region
after a step with an impact (``update_on_impact``), and whether the last step had one;
``theta`` the contact option ``max_rotation`` [rad] (<= 0: not used), ``nsub`` (3,) int64
the substeps of the last step and those the next starts in
(:func:`~articulated.simulation.contact.carry_substeps`), ``sst`` (16,) the statistics of
a substep and ``qsave``
(nq,), ``qdsave`` (nv,) the state at the start of a split step (restored when one of its
substeps fails), ``arc`` the contact option ``max_arc_error`` [m] (<= 0: not used) and
``ab`` (nb, 6) the steady accelerations of the rigid pieces (:func:`hybrid_impulse_substeps`); ``rkq`` (nq,), ``rkd, rkv, rka`` (nv,) scratch of
:func:`hybrid_rk4` (read and written on the active joints only); the look-ahead's
:class:`~articulated.algorithms.lookahead.LookAhead` ``la`` and workspace ``buf1`` (the
pieces' or bodies' poses at the end of the step, :func:`_look_ahead`), and ``ab0, vb0``
(nb, 6) scratch of :func:`hybrid_impulse_substeps`."""


AdaptiveModel = namedtuple("AdaptiveModel", (
    "h", "update_every", "crit", "whook", "timed", "jtype", "qadr", "vadr", "jnv", "ubody",
    "rbody", "full"))
AdaptiveModel.__doc__ = """What the adaptive loops step (:func:`adaptive_contact_steps`,
:func:`~articulated.simulation.adaptive._adaptive_steps`): the step ``h`` [s], an
active-region update every ``update_every`` steps with the criteria ``crit`` (the solver's
``_region_criteria``), ``whook`` the hook of callable metric weights (-1: none), ``timed``
(cycle counts per step), the joint layout ``jtype, qadr, vadr, jnv`` (nb,), the bodies
with applied forces ``ubody`` (hybrid steps) and ``rbody`` (region updates), and ``full``
= (model_i, model_f, workspace buffer) of the whole model (O(n) energies)."""

AdaptiveData = namedtuple("AdaptiveData", (
    "q", "qd", "qdd", "stats", "f_ext", "tau", "bk", "Vw", "hargs", "rargs", "red", "last"))
AdaptiveData.__doc__ = """The solver's state and workspaces for the adaptive loops: ``q``
(nq,), ``qd``, ``qdd`` (nv,) (in/out), its statistics ``stats``, the applied forces
``f_ext`` (nb, 6) and ``tau`` (nv,), the engine's bookkeeping ``bk``, the velocity-metric
weights ``Vw``, the hybrid body's, region update's and reduced tree's argument bundles
``hargs``, ``rargs``, ``red``, and ``last`` (6,) int64 (in/out): the active joints, update
region, rigidified joints and the region kernel's counts of passive nodes updated,
evaluated, tensorized of the last update."""

HybridData = namedtuple("HybridData", (
    "q", "qd", "qdd", "stats", "f_ext", "bk", "red", "qddT", "active"))
HybridData.__doc__ = """What the contact stages of :func:`adaptive_contact_steps` read of
:data:`AdaptiveData` (built once per call: a stage called with the whole ``AdaptiveData``
would take every array of the region update's bundles, with their reference counts, at
every call): the state ``q, qd, qdd``, the solver's statistics ``stats``, ``f_ext``, the
engine's bookkeeping ``bk``, the reduced tree ``red``, the transient hybrid body's
accelerations ``qddT`` and the active joints ``active`` (nb,) bool of the region update."""

AdaptiveRun = namedtuple("AdaptiveRun", (
    "nsteps", "step0", "rec0", "every", "t0", "q", "qd", "sizes", "T", "cycles", "fresh"))
AdaptiveRun.__doc__ = """A stretch of an adaptive run: ``nsteps`` steps from the
simulator's step ``step0`` (global index) and time ``t0`` [s], step 0 being step ``rec0``
of the caller's run; after run step k divisible by ``every`` the state goes into the free
record rows ``q``, ``qd``, the region sizes into ``sizes`` (rows, 3) and the kinetic energy
into ``T``; ``cycles`` (nsteps,) int64 the cycle count of each step when timed; ``fresh``
(bool): the stretch starts a simulator (new, or from a state set between runs), whose
first step updates the active region whatever its index."""


@njit(**JIT)
def region_data(cl, bk, red, na, jnv, vadr, active, q):
    """Rebuild the per-region data of ``cl`` for the current reduced tree (``na`` active
    joints) at the configuration ``q``: ``adof``, ``piece``, the active limits ``limr``
    (count in ``stamp[1]``), the shapes by rigid piece (``cl.hs``,
    :func:`~articulated.algorithms.hybrid_detection.build_pieces`) and, with the energy
    bound, the gravity potential of the bodies welded to the world (``ebound[2]``,
    constant while the region stays). Only what a region change moved is computed again:
    the shapes of the bodies whose piece frame (their piece's front body) changed since
    the last build, from their poses in it
    (:func:`~articulated.algorithms.hybrid_detection.piece_poses`; a body that keeps its
    frame has not moved in it: the joints inside a piece are rigid), and the potential
    when the set of welded bodies changed; all of it when ``cl.stamp[0]`` is -2. O(n)
    integer passes plus the bodies placed again, once per active-region change."""
    k = 0
    for u in range(na):
        J = bk.ajoints[u]
        for r in range(jnv[J]):
            cl.adof[k] = vadr[J] + r
            k += 1
    mi = rows(red.red_i, 7, na)
    rv = mi[3]
    hs = cl.hs
    full = cl.stamp[0] == -2
    welded = full       # the set of bodies welded to the world changed
    for b in range(cl.piece.shape[0]):
        p = bk.near[b]
        cl.piece[b] = red.ridx[p] if p >= 0 else -1
        welded = welded or (hs.front[b] == -1) != (p == -1)
        hs.redo[b] = full or hs.front[b] != p
        hs.front[b] = p
    nl = 0
    lim, lr = cl.lim, cl.limr
    for l in range(lim.dof.shape[0]):
        j = lim.joint[l]
        if not active[j]:
            continue
        r = red.ridx[j]
        lr.dof[nl] = rv[r]
        lr.body[nl] = r
        lr.qadr[nl] = lim.qadr[l]
        lr.lo[nl] = lim.lo[l]
        lr.hi[nl] = lim.hi[l]
        lr.joint[nl] = j
        nl += 1
    cl.stamp[0] = red.rstamp[0]
    cl.stamp[1] = nl
    nb = cl.piece.shape[0]
    potential = cl.opt.energy_bound and welded
    if potential:
        for b in range(nb):
            hs.redo[b] = hs.redo[b] or cl.piece[b] < 0
    dv = data_arrays(cl.det.buf, nb, cl.adof.shape[0])
    if cl.det.gm.body.shape[0] or potential:
        piece_poses(cl.det.model_i, cl.det.model_f, q, bk.near, hs.redo, dv.oE, dv.op)
    if cl.det.gm.body.shape[0]:  # the shapes in their pieces' frames
        build_pieces(hs, cl.det.gm, cl.piece, bk.ajoints, na, mat3_rows(dv.oE), dv.op)
    if potential:   # (piece_poses: the world poses of the welded bodies)
        mv = model_arrays(cl.det.model_i, cl.det.model_f)
        mass, hb, gravity = mv.mass, mv.h, mv.gravity
        C = 0.0
        for b in range(nb):
            if cl.piece[b] < 0:
                C = body_gravity_potential(b, mass, hb, gravity, dv.oE, dv.op, C)
        cl.ebound[2] = C


@inline
def _reduced_velocities(mv, E, r, qd, vb):
    """Body velocities ``vb`` (N_A, 6) ``[omega; v_O]`` (body coordinates) of reduced-tree
    velocities ``qd`` (nv',): ``v_k = X_k v_parent + S_k qd_k`` on the reduced tree's
    transforms ``E`` (N_A, 3, 3), ``r`` (N_A, 3) and joint axes ``mv.S``; O(N_A)."""
    for k in range(mv.parent.shape[0]):
        p = mv.parent[k]
        w = (0.0, 0.0, 0.0)
        u = (0.0, 0.0, 0.0)
        if p >= 0:
            w0, w1, w2 = vb[p, 0], vb[p, 1], vb[p, 2]
            x0 = vb[p, 3] - (r[k, 1] * w2 - r[k, 2] * w1)
            x1 = vb[p, 4] - (r[k, 2] * w0 - r[k, 0] * w2)
            x2 = vb[p, 5] - (r[k, 0] * w1 - r[k, 1] * w0)
            w = (E[k, 0, 0] * w0 + E[k, 0, 1] * w1 + E[k, 0, 2] * w2,
                 E[k, 1, 0] * w0 + E[k, 1, 1] * w1 + E[k, 1, 2] * w2,
                 E[k, 2, 0] * w0 + E[k, 2, 1] * w1 + E[k, 2, 2] * w2)
            u = (E[k, 0, 0] * x0 + E[k, 0, 1] * x1 + E[k, 0, 2] * x2,
                 E[k, 1, 0] * x0 + E[k, 1, 1] * x1 + E[k, 1, 2] * x2,
                 E[k, 2, 0] * x0 + E[k, 2, 1] * x1 + E[k, 2, 2] * x2)
        for a in range(3):
            vb[k, a] = w[a]
            vb[k, 3 + a] = u[a]
        va = mv.vadr[k]
        for d in range(mv.jnv[k]):
            for a in range(6):
                vb[k, a] += mv.S[va + d, a] * qd[va + d]


@njit(**JIT)
def _reduced_kinetic_of(mv, fac, qd, vb):
    """``1/2 qd^T M_h qd`` [J] of reduced-tree velocities ``qd`` (nv',): the body velocities
    of :func:`_reduced_velocities` into ``vb`` and ``T = 1/2 sum v_k . I_k v_k`` (RBDA eq.
    7.34) on the reduced tree's transforms ``fac`` and inertias ``mv``; O(N_A). Equals the
    whole model's kinetic energy (rigidified joints have zero velocity)."""
    _reduced_velocities(mv, fac.Xup_E, fac.Xup_r, qd, vb)
    T = 0.0
    for k in range(mv.parent.shape[0]):
        vk = (vb[k, 0], vb[k, 1], vb[k, 2], vb[k, 3], vb[k, 4], vb[k, 5])
        Iv = inertia_times(mv.mass[k], get_vec3(mv.h, k), get_mat3(mv.Ibar, k), vk)
        for a in range(6):
            T += 0.5 * vk[a] * Iv[a]
    return T


@njit(**JIT)
def detect_on_pieces(cl, red, na, nvr, qsr, h, broad, out, ready=False):
    """Detection on the hybrid body (:func:`~articulated.algorithms.hybrid_detection.
    detect_hybrid`) at the reduced tree's world poses (in ``red.red_d``: computed at
    ``red.rq`` before the call) with margins from the reduced velocities ``qsr`` (nv',),
    the shapes by piece ``cl.hs`` and the detector's ``cl.det.gm``, ``cl.det.poses``; ``ready``:
    ``cl.vb`` holds the pieces' twists for ``qsr`` already (:func:`hybrid_substeps`).
    Returns ``(contacts, broad, out)`` (the buffers in use). O(N_A) + the shapes of the
    pieces that come near something."""
    mi = rows(red.red_i, 7, na)
    dr = data_arrays(red.red_d, na, nvr)
    if not ready:
        _reduced_velocities(model_arrays(mi, red.red_f), mat3_rows(dr.Xup_E), dr.Xup_r, qsr,
                            cl.vb)
    n, _, broad, out = detect_hybrid(cl.hs, cl.det.gm, cl.det.poses, broad, out, mat3_rows(dr.oE),
                                     dr.op, cl.vb, h, 0.0)
    return n, broad, out


@njit(**KERNEL)
def energy_bound_start(cl, q, qd, step):
    """The total energy ``T + V`` [J] at the start of adaptive step ``step`` (global index)
    for :func:`hybrid_energy_bound`, into ``cl.ebound[0]``: kept from the end of the step
    before (O(1)) unless that was not step ``step - 1`` of this simulator (its first step,
    or after a step with no active joint), then from the whole model at ``q, qd`` (O(n),
    once). Called before the active-region update."""
    if cl.ebound[1] != step:
        T, V = _energy_kernel(cl.det.model_i, cl.det.model_f, q, qd, cl.det.buf)
        cl.ebound[0] = T + V
        cl.ebound[1] = step


@njit(**KERNEL)
def hybrid_energy_bound(cl, red, na, nqr, h, qd1, v, step):
    """The energy bound (contact option ``energy_bound``) of adaptive step ``step`` (or of
    one of its substeps, of ``h`` [s]) on the hybrid body, O(N_A): the total energy ``E``
    at its start (``cl.ebound[0]``: :func:`energy_bound_start`, or the end of the substep
    before) against its end, the energy of the reduced tree (one rigid body per rigid
    piece) at ``red.rq (+) v`` ((nqr,), (nv',)) moving at ``qd1`` plus the gravity
    potential of the bodies welded to the world (``cl.ebound[2]``); the applied forces'
    work ``W = h Q . (qd0 + qd1) / 2`` at ``red.rq`` with ``qd0 = cl.qd0`` the velocities
    at its start (on an update step those before the update, under the rigidification's
    projection; the reduced tree's joint torques ``red.rtau`` and piece forces ``red.rf``,
    as the ABA used them); ``qd1`` scaled in place by
    :func:`~articulated.algorithms.response.energy_scale`, and the end energy kept for the
    next (sub)step. Returns the energy taken out [J]. Rigidified joints have zero velocity,
    so this is the full model's bound (:func:`~articulated.simulation.contact_loop._bound`)
    on the hybrid body; a region
    update's rigidification impulses fall inside its step. Uses ``cl.det.buf`` (free after
    detection) as the workspace."""
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    nvr = mv.vadr[na - 1] + mv.jnv[na - 1]
    rq = red.rq[:nqr]
    qd0 = cl.qd0[:nvr]
    x = cl.xr[:nvr]
    rq1 = cl.rq1[:nqr]
    for i in range(nvr):
        x[i] = 0.5 * (qd0[i] + qd1[i])
    W = h * _power_kernel(mi, red.red_f, rq, x, red.rtau[:nvr], red.rf[:na], cl.det.buf)
    _integrate_kernel(mv.jtype, mv.qadr, mv.vadr, rq, v, 1.0, rq1)
    T1, V1 = _energy_kernel(mi, red.red_f, rq1, qd1, cl.det.buf)
    V1 += cl.ebound[2]
    scale = energy_scale(cl.ebound[0], W, T1, V1)
    cl.ebound[0] = T1 * scale * scale + V1
    cl.ebound[1] = step + 1
    if scale == 1.0:
        return 0.0
    for i in range(nvr):
        qd1[i] *= scale
    return T1 * (1.0 - scale * scale)


@njit(**KERNEL)
def hybrid_keep_kinetic(cl, red, na, nqr, qd1, v, dq):
    """:func:`~articulated.simulation.contact_loop._keep_kinetic` on the hybrid body, O(N_A):
    where post-stabilization's ``dq`` (nv',) raises the kinetic energy of the reduced
    velocities ``qd1`` (nv',) at ``red.rq (+) v`` above that at ``red.rq (+) (v - dq)``,
    ``qd1`` is scaled back to it (in place; :func:`~articulated.simulation.contact.keep_scale`).
    Uses ``cl.det.buf`` as the workspace."""
    if not moved(dq):
        return
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    rq = red.rq[:nqr]
    rq1 = cl.rq1[:nqr]
    x = cl.xr[:dq.shape[0]]
    for i in range(dq.shape[0]):
        x[i] = v[i] - dq[i]
    _integrate_kernel(mv.jtype, mv.qadr, mv.vadr, rq, x, 1.0, rq1)
    T0 = _energy_kernel(mi, red.red_f, rq1, qd1, cl.det.buf)[0]
    _integrate_kernel(mv.jtype, mv.qadr, mv.vadr, rq, v, 1.0, rq1)
    T1 = _energy_kernel(mi, red.red_f, rq1, qd1, cl.det.buf)[0]
    scale = keep_scale(T0, T1)
    if scale < 1.0:
        for i in range(qd1.shape[0]):
            qd1[i] *= scale


@inline
def keep_update_counts(last, counts, res):
    """``last`` (6,) int64 of the compiled adaptive loops after an active-region update:
    the active joints (``counts``) and the region kernel's ``res[:5]`` (update region,
    rigidified, passive nodes updated, evaluated, tensorized)."""
    last[0] = counts[N_AJOINTS]
    last[1] = res[0]
    last[2] = res[1]
    last[3] = res[2]
    last[4] = res[3]
    last[5] = res[4]


@njit(**KERNEL)
def record_state(run, k, q, qd, last, bk, red, pose, ubody, full):
    """Record ``k`` of the compiled adaptive loops into the free rows of ``run``
    (:data:`AdaptiveRun`): the state ``q, qd`` into ``run.q[k]``, ``run.qd[k]``, the
    region sizes ``last[:3]`` into ``run.sizes[k]`` and the kinetic energy into
    ``run.T[k]``: O(N_A) on the hybrid body's reduced tree ``red`` when it is current
    (the engine's bookkeeping ``bk``; its kinematics at ``q, qd``,
    :func:`~articulated.algorithms.reduced.reduced_kinematics` with the poses ``pose`` of
    the forces' bodies ``ubody``, then :func:`~articulated.algorithms.reduced.
    reduced_kinetic`), else O(n) from ``full`` = (model_i, model_f, workspace buffer). Returns whether it left the reduced tree's
    kinematics at ``q, qd``, which the next step then does not compute again (the same
    operations on the same state). A compiled function of its own: the reduced tree's
    bundles are dereferenced here, where no reference counting runs (the contact loop is
    compiled with NRT)."""
    for a in range(q.shape[0]):
        run.q[k, a] = q[a]
    for a in range(qd.shape[0]):
        run.qd[k, a] = qd[a]
    for a in range(3):
        run.sizes[k, a] = last[a]
    if red.rstamp[0] == bk.counts[REGION_STAMP]:
        bkp = byref(bk)
        rp = byref(red)
        reduced_kinematics(bkp, byref(pose), rp, ubody.shape[0], ubody)
        run.T[k] = reduced_kinetic(bkp, rp)
        return True
    run.T[k] = state_energy(full[0], full[1], q, qd, full[2])[0]
    return False


@inline
def end_step(am, ad, run, s, nrec, c0):
    """The end of step ``s`` of a compiled adaptive loop: its record after run step ``rec0
    + s + 1`` divisible by ``every`` (:func:`record_state`, while rows are free) and its
    cycle count (from ``c0``) when timed. Returns ``(records, kept)``: ``kept`` whether the
    record left the reduced tree's kinematics at the new state."""
    kept = False
    if (run.rec0 + s + 1) % run.every == 0 and nrec < run.q.shape[0]:
        kept = record_state(run, nrec, ad.q, ad.qd, ad.last, ad.bk, ad.red, ad.hargs.pose,
                            am.ubody, am.full)
        nrec += 1
    if am.timed:
        run.cycles[s] = _cycles() - c0
    return nrec, kept


@njit(**dict(KERNEL, forceinline=True))
def hybrid_forward(am, ad, fa, ptr, t, update, kept, solve, fresh):
    """Stage 1 of an adaptive step at time ``t`` [s] (both compiled adaptive loops): the
    applied forces ``fa`` (:class:`~articulated.simulation.forces.ForceArrays`: joint
    forces at ``ad.q, ad.qd`` into ``ad.tau``; the hybrid body's kinematics,
    :func:`~articulated.algorithms.hybrid.hybrid_kinematics` after a region change or on an
    ``update`` step, else :func:`~articulated.algorithms.reduced.reduced_kinematics` unless
    the record of the step before ``kept`` them; body forces at those poses into
    ``ad.f_ext``; a user's Python forces through the hook), then on an ``update`` step the
    active-region update (RGL Sec. 5.1, :func:`~articulated.algorithms.region.
    region_update_kernel` with ``am.crit``; callable metric weights first through
    ``am.whook``) and, with ``solve`` or on the other steps, the reduced tree's ABA
    (:func:`~articulated.algorithms.reduced.reduced_dynamics`: ``ad.qdd`` on the active
    joints, RGL Sec. 4.3). ``am``: :data:`AdaptiveModel`, ``ad``: :data:`AdaptiveData`,
    ``ptr`` = (``byref(ad.bk)``, ``byref_each(ad.hargs)``, ``byref(ad.red)``) made by the
    calling loop. ``fresh``: the first step of a new or restarted simulator (the region
    kernel then copies the coefficients of the state set, unless the metric weights are
    callable). Returns ``(error, joint, kin)``: error 0, :data:`ERR_FORCE`, the region
    kernel's codes or ``ERR_HYBRID`` with the joint (-1: none), and whether the hybrid
    kinematics ran (the pieces' world poses are then not current)."""
    bkp, hp, rp = ptr
    bk = ad.bk
    counts = bk.counts
    nu = am.ubody.shape[0]
    if not apply_joint_forces(fa, ad.q, ad.qd, ad.tau, t):
        return ERR_FORCE, -1, False
    kin = update or ad.red.rstamp[0] != counts[REGION_STAMP]
    if kin:
        hybrid_kinematics(bkp, hp)
    elif not kept:                      # else left by the record of the step before
        reduced_kinematics(bkp, hp.pose, rp, nu, am.ubody)     # poses of the forces' bodies
    if not apply_compiled_forces(fa, bk.near, ad.Vw, ad.hargs.pose, ad.f_ext, t):
        return ERR_FORCE, -1, kin
    if fa.hook >= 0 and not python_forces(fa, t, ad.q, ad.qd, ad.tau, ad.f_ext):
        return ERR_FORCE, -1, kin
    if update:
        if am.whook >= 0:
            python_weights(am.whook)
        res = region_update_kernel(am.h, am.crit, am.rbody, hp, rp, ad.rargs,
                                   fresh and am.whook < 0)
        if res[5] != 0:
            return res[5], res[6], kin
        keep_update_counts(ad.last, counts, res)
        if not solve:
            return 0, -1, kin
    reduced_dynamics(bkp, nu, am.ubody, ad.f_ext, hp.pose, rp, ad.stats, kin)
    if ad.stats[STAT_BAD] >= 0:
        return ERR_HYBRID, int(ad.stats[STAT_BAD]), kin
    return 0, -1, kin


@inline
def hybrid_velocities(am, ad):
    """``qd += h qdd`` on the active joints (RGL: semi-implicit Euler on the hybrid body);
    False, with ``qd`` unchanged, when the result is not finite."""
    ajoints, na = ad.bk.ajoints, ad.bk.counts[N_AJOINTS]
    qd, qdd, h = ad.qd, ad.qdd, am.h
    ss = 0.0
    for u in range(na):
        J = ajoints[u]
        for r in range(am.jnv[J]):
            x = qd[am.vadr[J] + r] + h * qdd[am.vadr[J] + r]
            ss += x * x
    if not math.isfinite(ss):
        return False
    for u in range(na):
        J = ajoints[u]
        for r in range(am.jnv[J]):
            qd[am.vadr[J] + r] += h * qdd[am.vadr[J] + r]
    return True


@njit(**dict(JIT, forceinline=True))
def hybrid_substeps(cl, red, na, ajoints, jnv, h):
    """How an adaptive step of ``h`` [s] whose unconstrained velocities are in ``cl.qsf``
    is taken (:func:`~articulated.simulation.contact.step_plan`, as the full model's
    :func:`~articulated.simulation.contact_loop._substeps`): 0 (semi-implicit Euler) unless
    a rigid piece of the hybrid body (the reduced tree's bodies, at the joint transforms of
    the step's kinematics: its ABA's pass 1,
    :func:`~articulated.algorithms.reduced.reduced_kinematics`, or the record of the step
    before) turns by more than the contact option ``max_rotation`` (``cl.theta``), else
    the RK4 substeps. 0 without it or without an active joint. O(N_A). Otherwise it leaves
    the reduced velocities in ``cl.qsr`` and the pieces' twists in ``cl.vb`` (which the
    detection of an unsplit step reuses)."""
    if cl.theta <= 0.0 or na == 0:
        return 0
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    nvr = mi[3, na - 1] + jnv[ajoints[na - 1]]
    dr = data_arrays(red.red_d, na, nvr)
    for i in range(nvr):
        cl.qsr[i] = cl.qsf[cl.adof[i]]
    _reduced_velocities(mv, mat3_rows(dr.Xup_E), dr.Xup_r, cl.qsr[:nvr], cl.vb)
    w2 = 0.0
    for k in range(na):
        w2 = max(w2, cl.vb[k, 0] * cl.vb[k, 0] + cl.vb[k, 1] * cl.vb[k, 1]
                 + cl.vb[k, 2] * cl.vb[k, 2])
    return step_plan(h, w2, 0.0, cl.theta, 0.0)


@njit(**dict(JIT, forceinline=True))
def hybrid_impulse_substeps(cl, red, na, nvr, h, out, n, qs, qd1):
    """:func:`~articulated.simulation.contact.step_plan` of an adaptive step (or substep)
    of ``h`` [s] whose impulses changed the reduced velocities from ``qs`` to ``qd1``
    (nvr,), as the full model's
    :func:`~articulated.simulation.contact_loop._impulse_substeps`: the rigid pieces' angular
    velocities at ``qd1`` and (``cl.arc > 0``)
    :func:`~articulated.simulation.contact.contacts_arc_change` over the (sub)step's
    contacts (``n`` in ``out``), each shape in its piece's frame, at the pieces'
    world poses of the step in ``red.red_d``. Leaves the pieces' twists for ``qd1`` in
    ``cl.vb``. O(N_A + contacts)."""
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    dr = data_arrays(red.red_d, na, nvr)
    E, r = mat3_rows(dr.Xup_E), dr.Xup_r
    arc = cl.arc > 0.0 and n > 0
    if arc:
        _reduced_velocities(mv, E, r, qs, cl.vb0)
        for k in range(na):
            steady_acceleration_step(k, mv.parent, mv.vadr, mv.jnv, mv.S, qs, dr.Xup_E,
                                     dr.Xup_r, cl.vb0, cl.ab0)
    _reduced_velocities(mv, E, r, qd1, cl.vb)
    w2 = 0.0
    for k in range(na):
        w2 = max(w2, cl.vb[k, 0] * cl.vb[k, 0] + cl.vb[k, 1] * cl.vb[k, 1]
                 + cl.vb[k, 2] * cl.vb[k, 2])
    acc = 0.0
    if arc:
        for k in range(na):
            steady_acceleration_step(k, mv.parent, mv.vadr, mv.jnv, mv.S, qd1, dr.Xup_E,
                                     dr.Xup_r, cl.vb, cl.ab)
        # a shape's slot is its piece + 1 (0: welded to the world, -1: static)
        acc = contacts_arc_change(out, n, cl.hs.slot, 1, cl.hs.lp, cl.det.gm.rb,
                                  cl.vb0, cl.ab0, cl.vb, cl.ab, dr.oE)
    return step_plan(h, w2, acc, cl.theta, cl.arc)


@njit(**dict(JIT, forceinline=True))
def _look_ahead(am, ad, cl, out, n, na, nvr, nqr, hk, gap):
    """The look-ahead gaps (:func:`~articulated.algorithms.lookahead.ahead_gaps`) of the
    ``n`` contacts in ``out`` into ``gap``, detected at ``ad.q`` with the unconstrained velocities
    ``cl.qsf`` (``cl.qsr`` reduced) over ``hk`` [s]: on the rigid pieces, the reduced
    tree's poses at ``rq (+) hk qsr`` (``cl.rq1`` scratch); with ``cl.whole``, the bodies'
    at ``q (+) hk qsf`` (``cl.rkq`` scratch); into ``cl.buf1``. Returns the largest depth
    at detection, ``max(-dist)`` [m]."""
    depth = 0.0
    for c in range(n):
        depth = max(depth, -out.dist[c])
    gm = cl.det.gm
    if cl.whole:
        _integrate_kernel(am.jtype, am.qadr, am.vadr, ad.q, cl.qsf, hk, cl.rkq)
        _world_poses_kernel(cl.det.model_i, cl.det.model_f, cl.rkq, cl.buf1)
        nb = am.jtype.shape[0]
        dv = data_arrays(cl.det.buf, nb, cl.qsf.shape[0])
        d1 = data_arrays(cl.buf1, nb, cl.qsf.shape[0])
        ahead_gaps(gm, cl.det.poses, out, n, ShapeFrames(gm.body, 0, gm.R, gm.pos),
                   FrameMotion(mat3_rows(dv.oE), dv.op, dv.v, mat3_rows(d1.oE), d1.op), hk,
                   cl.la, gap)
        return depth
    red = ad.red
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    _integrate_kernel(mv.jtype, mv.qadr, mv.vadr, red.rq[:nqr], cl.qsr[:nvr], hk,
                      cl.rq1[:nqr])
    _world_poses_kernel(mi, red.red_f, cl.rq1[:nqr], cl.buf1)
    dr = data_arrays(red.red_d, na, nvr)
    d1 = data_arrays(cl.buf1, na, nvr)
    ahead_gaps(gm, cl.det.poses, out, n, ShapeFrames(cl.hs.slot, 1, cl.hs.lR, cl.hs.lp),
               FrameMotion(mat3_rows(dr.oE), dr.op, cl.vb, mat3_rows(d1.oE), d1.op), hk,
               cl.la, gap)
    return depth


@njit(**STAGE)
def _hybrid_detect(am, ad, cl, cb, hk, posed, ready):
    """Step 2 of the module docstring over ``hk`` [s] from ``ad.q`` with the unconstrained
    velocities ``cl.qsf``: the reduced tree's world poses (unless ``posed``), its
    velocities ``cl.qsr``, and the contacts on the rigid pieces
    (:func:`detect_on_pieces`; ``ready``: ``cl.vb`` holds the pieces' twists) or, with
    ``cl.whole``, on the whole model (:func:`~articulated.simulation.contact_loop.
    detect_bodies`: coal's mesh pairs read every shape's pose), then each contact's pieces
    into ``cb.cbody``; with the contact option ``max_arc_error`` the contacts' look-ahead
    gaps into ``cb.gap`` (:func:`_look_ahead`). Returns ``(n, nvr, nqr, depth, cb)``:
    ``depth`` the largest depth at detection [m] (-1: no look-ahead)."""
    red, ajoints = ad.red, ad.bk.ajoints
    na = ad.bk.counts[N_AJOINTS]
    mi = rows(red.red_i, 7, na)
    nvr = mi[3, na - 1] + am.jnv[ajoints[na - 1]]
    nqr = mi[2, na - 1] + red.nq[ajoints[na - 1]]
    if not posed:
        _world_poses_kernel(mi, red.red_f, red.rq[:nqr], red.red_d)
    for i in range(nvr):
        cl.qsr[i] = cl.qsf[cl.adof[i]]
    broad, out, cbody = cb.broad, cb.out, cb.cbody
    n = 0
    if cl.whole:
        n, broad, out = detect_bodies(cl.det, ad.q, cl.qsf, hk, False, broad, out)
    elif cl.det.gm.body.shape[0]:
        n, broad, out = detect_on_pieces(cl, red, na, nvr, cl.qsr[:nvr], hk, broad, out,
                                         ready)
    if n > cbody.shape[0]:
        cbody = np.zeros((out.body.shape[0], 2), np.int64)
    for c in range(n):
        for side in range(2):
            b = out.body[c, side]
            cbody[c, side] = cl.piece[b] if b >= 0 else -1
    gap = cb.gap
    if n > gap.shape[0]:
        gap = np.zeros(out.dist.shape[0])
    depth = -1.0
    if cl.arc > 0.0 and n:
        depth = _look_ahead(am, ad, cl, out, n, na, nvr, nqr, hk, gap)
    return n, nvr, nqr, depth, ContactBuffers(broad, out, cb.rb, cbody, gap)


@njit(**STAGE)
def _hybrid_respond(am, ad, cl, cb, sst, n, nvr, hk, check, smooth):
    """Steps 3-4 of the module docstring: the ``n`` contacts (on the rigid pieces,
    ``cb.cbody``) and the limits of the active joints as rows on the reduced tree, the
    impulses of :func:`~articulated.algorithms.response.respond_kernel` over ``hk`` [s]
    from the reduced velocities ``cl.qsr`` into ``cl.qd1`` and the displacement ``cl.vr``
    (nvr,), statistics into ``sst``. Returns ``(error, reduced dof, cb)``: error 0,
    :data:`ERR_VELOCITY` or :data:`ERR_DISPLACEMENT` with the runaway reduced dof, or
    (``check``) :data:`~articulated.simulation.contact.SPLIT` where the velocities after
    the impulses ask for substeps (:func:`hybrid_impulse_substeps`; their number into
    ``cl.nsub[0]``), or for RK4 in an unsplit step (not ``smooth``)."""
    red = ad.red
    na = ad.bk.counts[N_AJOINTS]
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    im = ImpulseModel(mv.parent, mv.vadr, mv.jnv, mv.S)
    fac = workspace_factor(red.red_d, na, nvr)
    out = cb.out
    look = cl.arc > 0.0 and n > 0      # the look-ahead gaps (_hybrid_detect)
    con = Contacts(out.geom, cb.cbody, out.point, out.normal, cb.gap if look else out.dist,
                   out.mu, out.e, out.key)
    nl = cl.stamp[1]
    lr = cl.limr
    lim = Limits(lr.dof[:nl], lr.qadr[:nl], lr.body[:nl], lr.lo[:nl], lr.hi[:nl],
                 lr.joint[:nl])
    qsr, qd1, vr = cl.qsr[:nvr], cl.qd1[:nvr], cl.vr[:nvr]
    nr, rb = respond(im, fac, cl.sc, con, n, ad.q, qsr, lim, options_at(cl.opt, hk), cb.rb,
                     (qd1, vr, sst))
    cb = ContactBuffers(cb.broad, cb.out, rb, cb.cbody, cb.gap)
    if n or nr:     # (every contact dormant: no impulse)
        sst[STAT_KE_BEFORE] = _reduced_kinetic_of(mv, fac, qsr, cl.vb)
        sst[STAT_KE_AFTER] = (_reduced_kinetic_of(mv, fac, qd1, cl.vb) if nr
                              else sst[STAT_KE_BEFORE])
    if check and nr and (cl.theta > 0.0 or cl.arc > 0.0):
        # the velocities after the impulses ask for substeps: split
        k = hybrid_impulse_substeps(cl, red, na, nvr, hk, cb.out, n, qsr, qd1)
        if k > (1 if smooth else 0):
            cl.nsub[0] = k
            return SPLIT, -1, cb
    ss = 0.0
    for i in range(nvr):
        ss += qd1[i] * qd1[i] + vr[i] * vr[i]
    if not math.isfinite(ss):
        return ERR_VELOCITY, -1, cb
    bad = runaway_dof(vr)
    if bad >= 0:
        return ERR_DISPLACEMENT, bad, cb
    return 0, -1, cb


@njit(**STAGE)
def hybrid_contact_substep(am, ad, cl, cb, ptr, step, hk, zero, ahead, posed, ready, split):
    """Steps 2-5 of the module docstring over ``hk`` [s] (a step or a substep of adaptive
    step ``step``) from ``ad.q, ad.qd`` with the unconstrained velocities ``cl.qsf``:
    detection (:func:`_hybrid_detect`), the impulses (:func:`_hybrid_respond`), the energy
    bound (:func:`hybrid_energy_bound`; its work from the velocities at the start, ``qd -
    hk qddT`` when ``ahead``: ``qd`` holds the region update's new velocities, and
    ``qddT``, the transient hybrid body's accelerations under the rigidification's
    projection, is what it added), ``qd = qd+`` (``zero``: after a region update, zero
    outside the active joints) and ``q (+)= hk qd+ + dq`` on the active joints; ``posed``:
    the pieces' world poses are current; ``ready``: their twists too; then
    :func:`hybrid_keep_kinetic` and the energy bound. ``split``: 0 an unsplit step
    (semi-implicit Euler, whose impulses may ask for RK4 or substeps: then
    :data:`~articulated.simulation.contact.SPLIT`), 1 a substep whose impulses may split
    the rest of the step, 2 one that may not (the step has :data:`MAX_SUBSTEPS`). A substep
    was moved by :func:`hybrid_rk4` (``cl.qsf`` its mean velocity, ``cl.rka`` its end
    velocity less it);
    where it has impulses its end velocity is that of :func:`hybrid_rk4` from ``(q, qd +
    dv)``, the impulses taken at its start, as the whole model's substeps
    (:func:`~articulated.simulation.contact_loop._finish`). ``ptr``: the pointers of
    :func:`hybrid_rk4`. Statistics into ``cl.sst`` (16,) (times in cycles when
    ``am.timed``). Returns ``(error, joint, cb)``."""
    q, qd = ad.q, ad.qd
    sst = cl.sst
    smooth = split > 0
    ajoints, na = ad.bk.ajoints, ad.bk.counts[N_AJOINTS]
    cd = _cycles() if am.timed else 0
    n = nvr = nqr = 0
    depth = -1.0
    if na:      # nothing moves without an active joint: no contact then
        n, nvr, nqr, depth, cb = _hybrid_detect(am, ad, cl, cb, hk, posed, ready)
    c1 = _cycles() if am.timed else 0
    sst[STAT_N] = n
    sst[STAT_DETECT] = c1 - cd
    for k in range(1, 11):
        sst[k] = 0.0
    sst[STAT_ENERGY] = 0.0
    sst[STAT_KE_BEFORE] = math.nan
    sst[STAT_KE_AFTER] = math.nan
    if na == 0:
        for k in range(qd.shape[0]):
            qd[k] = 0.0
        cl.ebound[1] = -1.0
        sst[STAT_RESPONSE] = (_cycles() - c1) if am.timed else 0
        return 0, -1, cb
    err, bad, cb = _hybrid_respond(am, ad, cl, cb, sst, n, nvr, hk, split < 2, smooth)
    if depth >= 0.0:    # the depth at detection, not the look-ahead's
        sst[STAT_DEPTH] = depth
    if err == SPLIT:
        return err, -1, cb
    if err:
        joint = -1
        for u in range(na):
            J = ajoints[u]
            if bad >= 0 and am.vadr[J] <= cl.adof[bad] < am.vadr[J] + am.jnv[J]:
                joint = J
        return err, joint, cb
    qd1, vr = cl.qd1[:nvr], cl.vr[:nvr]
    if cl.opt.energy_bound:     # the work's start velocities
        qddT = ad.qddT
        for i in range(nvr):
            k = cl.adof[i]
            cl.qd0[i] = qd[k] - hk * qddT[k] if ahead else qd[k]
    if smooth:      # its end velocity, RK4's from (q, qd + dv) where dv != 0
        kick = False
        for i in range(nvr):
            kick |= qd1[i] != cl.qsr[i]
        if kick:
            for i in range(nvr):
                qd[cl.adof[i]] += qd1[i] - cl.qsr[i]
            if _reduced_qdd(am, ad, ptr) >= 0 or hybrid_rk4(am, ad, cl, ptr, hk) < 0.0:
                return ERR_HYBRID, int(ad.stats[STAT_BAD]), cb
            for i in range(nvr):
                qd1[i] = cl.qsf[cl.adof[i]]
        for i in range(nvr):
            qd1[i] += cl.rka[cl.adof[i]]
    hybrid_keep_kinetic(cl, ad.red, na, nqr, qd1, vr, cb.rb.dq[:nvr])
    if cl.opt.energy_bound:
        sst[STAT_ENERGY] = hybrid_energy_bound(cl, ad.red, na, nqr, hk, qd1, vr, step)
    # 5. qd = qd+, q (+)= h qd+ + dq on the active joints
    if zero:
        for k in range(qd.shape[0]):
            qd[k] = 0.0
    for i in range(nvr):
        qd[cl.adof[i]] = qd1[i]
        cl.vfull[cl.adof[i]] = vr[i]
    integrate_joints_inplace(ajoints, na, am.jtype, am.qadr, am.vadr, q, cl.vfull, 1.0)
    sst[STAT_RESPONSE] = (_cycles() - c1) if am.timed else 0
    return 0, -1, cb


@inline
def _split_start(am, ad, cl, update):
    """The start of a step split into substeps: its state kept in ``cl.qsave, cl.qdsave``
    (restored when a substep fails); on an ``update`` step the substeps start from the
    region update's velocities ``cl.qsf`` less the ``h qdd`` of its transient hybrid body
    (both under the rigidification's projection: ``qddT``), which become ``qd``, ``qdd``
    on the active joints."""
    q, qd, qdd = ad.q, ad.qd, ad.qdd
    for k in range(q.shape[0]):
        cl.qsave[k] = q[k]
    for k in range(qd.shape[0]):
        cl.qdsave[k] = qd[k]
    if update:
        ajoints, qddT = ad.bk.ajoints, ad.qddT
        for u in range(ad.bk.counts[N_AJOINTS]):
            for r in range(am.jnv[ajoints[u]]):
                k = am.vadr[ajoints[u]] + r
                qd[k] = cl.qsf[k] - am.h * qddT[k]
                qdd[k] = qddT[k]


@inline
def _reduced_qdd(am, ad, ptr):
    """The reduced tree's poses and accelerations at the hybrid body's current state
    (:func:`~articulated.algorithms.reduced.reduced_kinematics`, then
    :func:`~articulated.algorithms.reduced.reduced_dynamics`: ``ad.qdd`` on the active
    joints); returns the first joint whose acceleration is not finite, or -1."""
    bkp, hp, rp = ptr
    reduced_kinematics(bkp, hp.pose, rp, am.ubody.shape[0], am.ubody)
    reduced_dynamics(bkp, am.ubody.shape[0], am.ubody, ad.f_ext, hp.pose, rp, ad.stats,
                     False)
    return int(ad.stats[STAT_BAD])


@inline
def hybrid_rk4(am, ad, cl, ptr, hk):
    """:func:`~articulated.simulation.contact_loop._smooth_rk4` on the hybrid body: the
    unconstrained motion of a substep of ``hk`` [s] by RK4 on the reduced tree's ABA (the
    applied forces held), O(N_A) per stage: ``cl.qsf`` the mean velocity ``vbar`` and
    ``cl.rka`` the end velocity less it, on the active dofs. On entry ``ad.qdd`` holds the
    accelerations at ``(q, qd)``; the state, its accelerations and the reduced tree's
    factorization at ``(q, qd)`` are restored on exit. Returns the substep's ``h rho``
    (:func:`~articulated.simulation.contact.rk4_stiffness` on the active dofs), or -1
    where the reduced tree's ABA fails (``ad.stats[STAT_BAD]``)."""
    q, qd, qdd = ad.q, ad.qd, ad.qdd
    ajoints, na = ad.bk.ajoints, ad.bk.counts[N_AJOINTS]
    jnv, vadr, qadr, rnq = am.jnv, am.vadr, am.qadr, ad.red.nq
    q0, qd0, vs, ka = cl.rkq, cl.rkd, cl.rkv, cl.rka
    for u in range(na):
        J = ajoints[u]
        for d in range(rnq[J]):
            q0[qadr[J] + d] = q[qadr[J] + d]
        for r in range(jnv[J]):
            k = vadr[J] + r
            qd0[k] = qd[k]
            vs[k] = qd[k]
            ka[k] = qdd[k]
            cl.qsf[k] = qd[k]
    bad = -1.0
    num = 0.0
    den = 0.0
    a1sq = 0.0
    for s in range(4):
        if s < 3:
            c = RK_C[s]
            w = 1.0 if s == 2 else 2.0
            for u in range(na):
                J = ajoints[u]
                for d in range(rnq[J]):
                    q[qadr[J] + d] = q0[qadr[J] + d]
            integrate_joints_inplace(ajoints, na, am.jtype, qadr, vadr, q, vs, c * hk)
            for u in range(na):
                J = ajoints[u]
                for r in range(jnv[J]):
                    k = vadr[J] + r
                    vs[k] = qd0[k] + c * hk * qdd[k]
                    qd[k] = vs[k]
        else:       # the start again: its accelerations and factorization
            for u in range(na):
                J = ajoints[u]
                for d in range(rnq[J]):
                    q[qadr[J] + d] = q0[qadr[J] + d]
                for r in range(jnv[J]):
                    qd[vadr[J] + r] = qd0[vadr[J] + r]
        jb = _reduced_qdd(am, ad, ptr)
        if jb >= 0 and bad < 0.0:
            bad = jb
        if s < 2:       # the stiffness: a2 against a1 (still in ka), a3 against a2
            for u in range(na):
                J = ajoints[u]
                for r in range(jnv[J]):
                    k = vadr[J] + r
                    if s == 0:
                        den += (qdd[k] - ka[k]) ** 2
                        a1sq += ka[k] ** 2
                    else:
                        num += (qdd[k] - (vs[k] - qd0[k]) / (RK_C[1] * hk)) ** 2
        if s < 3:
            for u in range(na):
                J = ajoints[u]
                for r in range(jnv[J]):
                    k = vadr[J] + r
                    ka[k] += w * qdd[k]
                    cl.qsf[k] += w * vs[k]
    for u in range(na):
        J = ajoints[u]
        for r in range(jnv[J]):
            k = vadr[J] + r
            cl.qsf[k] /= 6.0
            ka[k] = qd0[k] + hk * ka[k] / 6.0 - cl.qsf[k]
    ad.stats[STAT_BAD] = bad
    return rk4_stiffness(num, den, a1sq) if bad < 0.0 else -1.0


@inline
def _unconstrained(am, ad, cl, update):
    """The unconstrained velocities ``cl.qsf = qd + h qdd`` on the active joints, ``qd``
    elsewhere (``qd`` alone after a region ``update``: it holds the update's velocities)."""
    qd, qdd = ad.qd, ad.qdd
    ajoints, na = ad.bk.ajoints, ad.bk.counts[N_AJOINTS]
    for k in range(qd.shape[0]):
        cl.qsf[k] = qd[k]
    if not update:
        for u in range(na):
            for r in range(am.jnv[ajoints[u]]):
                k = am.vadr[ajoints[u]] + r
                cl.qsf[k] += am.h * qdd[k]


@njit(**STAGE)
def hybrid_contacts(am, ad, cl, cb, ptr, st, step, update, kin):
    """Steps 2-5 of adaptive step ``step`` after :func:`hybrid_forward` (``kin``: its hybrid
    kinematics ran; ``update``: a region-update step): the unconstrained velocities ``qsf =
    qd + h qdd`` on the active joints (``qd`` after an update), the per-region data when
    the reduced tree changed (:func:`region_data`), the substeps (:func:`hybrid_substeps`)
    and each by :func:`hybrid_contact_substep` (the reduced tree's ABA again at each later
    one, the applied forces held; an unsplit step whose impulses ask for substeps is taken
    again in them), statistics into ``st`` (16,). A failing substep leaves the state of
    the step's start. The unsplit step and the substeps share one call of
    :func:`hybrid_contact_substep` (:data:`STAGE`). Returns ``(error, joint, cb)``."""
    q, qd = ad.q, ad.qd
    bk, red = ad.bk, ad.red
    ajoints, na = bk.ajoints, bk.counts[N_AJOINTS]
    bkp, hp, rp = ptr
    _unconstrained(am, ad, cl, update)
    if na and cl.stamp[0] != red.rstamp[0]:
        region_data(cl, bk, red, na, am.jnv, am.vadr, ad.active, q)
    # the pieces' world poses at q: reduced_kinematics (or the record) left them; after
    # hybrid_kinematics and the ABA's pass 1 they are not computed
    ns = hybrid_substeps(cl, red, na, ajoints, am.jnv, am.h)
    if na:
        ns = max(ns, cl.nsub[1])    # as many as the last steps' impulses asked for
    posed = not kin
    whole = ns == 0     # unsplit, unless the impulses ask for substeps
    asked = False
    ns = max(ns, 1)
    ready = cl.theta > 0.0 and na > 0       # cl.vb: the substeps'
    hk = am.h / ns
    if not whole:
        _split_start(am, ad, cl, update)
    sub = 0
    fresh = True    # qdd and the reduced tree's factorization are those at (q, qd)
    while sub < ns:
        err, joint = 0, -1
        if not whole and not fresh:
            reduced_kinematics(bkp, hp.pose, rp, am.ubody.shape[0], am.ubody)
            reduced_dynamics(bkp, am.ubody.shape[0], am.ubody, ad.f_ext, hp.pose, rp,
                             ad.stats, False)
            if ad.stats[STAT_BAD] >= 0:
                err, joint = ERR_HYBRID, int(ad.stats[STAT_BAD])
        if err == 0 and not whole:
            hr = hybrid_rk4(am, ad, cl, ptr, hk)
            if hr < 0.0:
                err, joint = ERR_HYBRID, int(ad.stats[STAT_BAD])
            elif hr > RK4_STIFF and ns < MAX_SUBSTEPS:
                # too stiff for RK4 at this substep: the rest split (the state and the
                # reduced tree's factorization are those at its start again)
                ns, hk = split_rest(ns, sub, hk, min(math.ceil(hr / RK4_STIFF), MAX_SUBSTEPS))
                fresh = True
                continue
        if err == 0:
            err, joint, cb = hybrid_contact_substep(
                am, ad, cl, cb, ptr, step, hk, update and sub == 0, whole and update,
                sub == 0 and posed, whole and ready,
                0 if whole else (1 if ns < MAX_SUBSTEPS else 2))
        if whole:
            if err != SPLIT:
                for j in range(st.shape[0]):
                    st[j] = cl.sst[j]
                cl.nsub[0] = 1
                if err == 0:
                    carry_substeps(cl.nsub, 1, False)
                return err, joint, cb
            asked = True
            whole = False       # taken again in the substeps its impulses ask for
            ns = cl.nsub[0]
            hk = am.h / ns
            _unconstrained(am, ad, cl, update)
            posed = False
            _split_start(am, ad, cl, update)
            continue
        if err == SPLIT:    # this substep's impulses ask for shorter ones: the rest split
            asked = True
            ns, hk = split_rest(ns, sub, hk, cl.nsub[0])
            fresh = True
            continue
        if err:
            for k in range(q.shape[0]):
                q[k] = cl.qsave[k]
            for k in range(qd.shape[0]):
                qd[k] = cl.qdsave[k]
            return err, joint, cb
        if sub == 0:
            for j in range(st.shape[0]):
                st[j] = cl.sst[j]
        else:
            merge_stats(st, cl.sst)
        sub += 1
        fresh = False
    cl.nsub[0] = ns
    carry_substeps(cl.nsub, ns, asked)
    return 0, -1, cb


@njit(**JIT)
def adaptive_contact_steps(am, ad, fa, run, cl, cstats, cb):
    """The adaptive steps of the stretch ``run`` with contacts and limits (module
    docstring); ``am``, ``ad``, ``fa``, ``run`` as for
    :func:`~articulated.simulation.adaptive._adaptive_steps` (same meaning), then ``cl``
    (:class:`ContactLoop`), ``cstats`` (nsteps, 16) the statistics of every step (order of
    :data:`~articulated.simulation.contact.CONTACT_STATS`; the times in cycles of
    :func:`~articulated.simulation.cycles._cycles` when ``timed``, else zero) and the
    buffers ``cb`` (:data:`~articulated.simulation.contact_loop.ContactBuffers`). Each step:
    :func:`hybrid_forward` (forces, region update, the reduced tree's ABA), then
    :func:`hybrid_contacts`, then the record. Returns ``(steps done, error, joint,
    records, cb)`` (the buffers in use). Compiled with NRT (the buffers may grow), so it
    calls the kernels that take bundles by reference (:mod:`articulated._byref`) only
    through their own compiled functions, never inlined: a dereferenced bundle must not be
    reference-counted."""
    ptr = (byref(ad.bk), byref_each(ad.hargs), byref(ad.red))
    hd = HybridData(ad.q, ad.qd, ad.qdd, ad.stats, ad.f_ext, ad.bk, ad.red, ad.rargs.buf.qddT,
                    ad.rargs.st.active)
    nrec = 0
    t = run.t0
    kept = False                        # the record left the reduced tree's kinematics at q, qd
    for s in range(run.nsteps):
        c0 = _cycles() if am.timed else 0
        step = run.step0 + s
        update = step % am.update_every == 0 or cl.impact[1] != 0 or (s == 0 and run.fresh)
        cl.impact[1] = 0
        if cl.opt.energy_bound:
            energy_bound_start(cl, ad.q, ad.qd, step)
        err, joint, kin = hybrid_forward(am, ad, fa, ptr, t, update, kept, True,
                                         s == 0 and run.fresh)
        if err == 0:
            err, joint, cb = hybrid_contacts(am, hd, cl, cb, ptr, cstats[s], step, update, kin)
        if err:
            return s, err, joint, nrec, cb
        if cl.impact[0] and cstats[s, STAT_IMPACTS] > 0:   # GLM V.B: the region follows
            cl.impact[1] = 1
        nrec, kept = end_step(am, ad, run, s, nrec, c0)
        t += am.h
        if stop_requested(fa):
            return s + 1, 0, -1, nrec, cb
    return run.nsteps, 0, -1, nrec, cb
