"""The compiled stepping loop of the full model with contacts and joint limits:
:func:`contact_steps` runs a stretch of steps of
:class:`~articulated.simulation.contact.ContactStepper` (semi-implicit Euler on ABA, the
compiled applied forces, substeps, detection, impulses, position projection, the energy
bound, statistics, records) in one numba call, so that a robot on a floor steps at the
cost of its kernels, with no Python between steps.

It is the only implementation of the step with contacts: the applied forces are those of
:func:`~articulated.simulation.stepping._evaluate`, as the compiled tree loop computes
them (a user's Python forces through its hook), and the mesh pairs other than mesh-plane
pairs (:func:`~articulated.algorithms.collision_mesh.mesh_plane_kernel`) go through coal
in Python from inside the detection stage (:mod:`articulated.simulation.hooks`).

Bundles: :data:`ContactStepBundle` (the stepper's kernels' arguments, the detector's mesh
pairs and the loop's scratch), built once per simulator by :func:`contact_loop_bundles`;
:data:`ContactBuffers` (the detector's and the response's buffers, which may grow, so
the stages return them).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..algorithms.aba import aba_passes
from ..algorithms.collision import Contacts, contact_buffer, detect_kernel, detect_primitives
from ..algorithms.collision_mesh import mesh_broad_phase, mesh_pairs_empty, mesh_plane_kernel
from ..algorithms.impulse import workspace_factor
from ..algorithms.projection import runaway_dof
from ..algorithms.response import (STAT_APPROACH, STAT_DEPTH, STAT_DETECT, STAT_ENERGY,
                                   STAT_FALLBACK, STAT_IMPACTS, STAT_KE_AFTER,
                                   STAT_KE_BEFORE, STAT_LIMITS, STAT_N, STAT_RESPONSE,
                                   STAT_SLIDING, STAT_STICKING, STAT_SWEEPS, STAT_RESIDUAL,
                                   STAT_SOLVER, NSTATS, energy_scale,
                                   options_at, respond)
from ..algorithms.kinematics import (_energy_kernel, _power_kernel, _velocities_kernel,
                                     _world_poses_kernel, steady_acceleration_step)
from ..algorithms.lookahead import FrameMotion, ShapeFrames, ahead_gaps, lookahead_buffers
from .._byref import byref
from .._views import mat3_rows
from ..config import JIT
from ..configuration import _integrate_kernel, _normalize_kernel
from ..data import data_arrays
from ..model import model_arrays
from .cycles import _cycles
from .contact import (MAX_SUBSTEPS, RK4_STIFF, SPLIT, body_substeps, carry_substeps,
                      contacts_arc_change, keep_scale, moved, rk4_stiffness, split_rest,
                      step_plan)
from .hooks import python_contacts
from .stepping import ERR_DYNAMICS, OK, _evaluate, commit_step, record_state, stop_requested

ERR_RUNAWAY = 4
"""Code of :func:`contact_steps`: the impulses or the projection moved a dof by more than
:data:`~articulated.algorithms.projection.MAX_STEP_DISPLACEMENT` (the dof in
``ContactStepBundle.bad[0]``)."""

DetectBundle = namedtuple("DetectBundle", (
    "nb", "model_i", "model_f", "buf", "gm", "poses", "mp", "hook"))
DetectBundle.__doc__ = """What the detection stage :func:`detect_bodies` reads: the body
count ``nb``, the packed model ``model_i, model_f`` and a workspace ``buf`` (the bodies'
world poses and velocities go there), the detector's
:class:`~articulated.algorithms.collision.GeomModel` ``gm``, ``GeomPoses`` ``poses`` and
:class:`~articulated.algorithms.collision_mesh.MeshPairs` ``mp``, and ``hook`` its coal
pairs (:func:`~articulated.simulation.hooks.python_contacts`; -1: none). Built by
:func:`detect_bundle`."""

ContactStepBundle = namedtuple("ContactStepBundle", (
    "det", "im", "sc", "lim", "opt", "theta", "arc", "qdd", "qs", "q1",
    "qd1", "v", "qc", "qdc", "qbar", "ka", "qu", "st", "tot", "bad", "nsub", "ab", "timed",
    "la", "buf1", "ab0", "v0"))
ContactStepBundle.__doc__ = """What :func:`contact_steps` needs besides the tree loop's bundles:
the detection stage's :data:`DetectBundle` ``det`` (on the tree loop's workspace);
the stepper's ``ImpulseModel`` ``im``, ``ImpulseScratch`` ``sc``, ``Limits`` ``lim`` and ``ResponseOptions``
``opt``; ``theta`` and ``arc`` the options ``max_rotation`` [rad] and ``max_arc_error``
[m] (<= 0: not used); scratch ``qdd, qs, qd1, v, qdc, qbar, ka`` (nv,), ``q1, qc, qu`` (nq,), the
statistics of a substep ``st`` and of the step ``tot`` (16,), ``bad`` (1,) int64 the
runaway dof, ``nsub`` (3,) int64 the substeps of the last step and those the next starts
in (:func:`~articulated.simulation.contact.carry_substeps`), ``ab`` (nb, 6) scratch of
:func:`_impulse_substeps`;
``timed`` (bool) whether detection and response are timed (in cycles of
:func:`~articulated.simulation.cycles._cycles`, else 0); the look-ahead's
:class:`~articulated.algorithms.lookahead.LookAhead` ``la`` and workspace ``buf1`` (the
bodies' poses at the end of the step), and ``ab0, v0`` (nb, 6) scratch of
:func:`_impulse_substeps`."""

ContactBuffers = namedtuple("ContactBuffers", ("broad", "out", "rb", "cbody", "gap"))
ContactBuffers.__doc__ = """The buffers of a step with contacts that grow as needed: the
detector's ``Broad`` ``broad`` and ``Contacts`` ``out``, the response's
``ResponseBuffers`` ``rb``, ``cbody`` (cap, 2) int64 the rigid piece of each
contact's bodies (adaptive dynamics; grows with ``out``; the full model's stays empty), and
``gap`` (cap,) [m] the contacts' look-ahead gaps
(:func:`~articulated.algorithms.lookahead.ahead_gaps`; grows with ``out``), which the
response takes for their gaps."""


@njit(**JIT)
def body_motion(db, q, qs):
    """World poses at ``q`` and body velocities for ``qs`` into the workspace ``db.buf``
    (O(n))."""
    _world_poses_kernel(db.model_i, db.model_f, q, db.buf)
    _velocities_kernel(db.model_i, db.model_f, q, qs, db.buf)


@njit(**JIT)
def _substeps(sm, sd, cl, q, qs, h):
    """``(k, ready)``: the substeps of the (sub)step of ``h`` [s] from ``q`` with velocities
    ``qs`` by the option ``max_rotation`` (:func:`~articulated.simulation.contact.body_substeps`;
    0, unsplit, without it; the contacts' stray, ``max_arc_error``, is measured by the look-ahead of
    :func:`_finish` instead), and whether the workspace holds the body motion at ``(q,
    qs)``."""
    if cl.theta <= 0.0:
        return 0, False
    body_motion(cl.det, q, qs)
    return body_substeps(sm.model_i, sm.model_f, sd.data, h, cl.theta), True


@njit(**JIT)
def _impulse_substeps(sm, sd, cl, out, n, h, q, qs):
    """:func:`~articulated.simulation.contact.step_plan` of the whole model's step of ``h``
    [s] from ``q`` whose impulses changed the joint velocities from ``qs`` to ``cl.qd1``
    (nv,): the bodies' angular velocities at ``cl.qd1``, and (``cl.arc > 0``)
    :func:`~articulated.simulation.contact.contacts_arc_change` over the ``n`` contacts in
    ``out`` from the motion at ``qs`` to that at ``cl.qd1`` (scratch ``cl.ab0, cl.v0,
    cl.ab`` (nb, 6)). Leaves the body velocities for ``cl.qd1`` in the workspace, whose
    joint transforms and world poses must be those at ``q``. O(nb + n)."""
    mv = model_arrays(sm.model_i, sm.model_f)
    nb = mv.parent.shape[0]
    dv = data_arrays(sd.data, nb, qs.shape[0])
    v = dv.v
    arc = cl.arc > 0.0 and n > 0
    if arc:
        _velocities_kernel(sm.model_i, sm.model_f, q, qs, sd.data)
        for b in range(nb):
            steady_acceleration_step(b, mv.parent, mv.vadr, mv.jnv, mv.S, qs, dv.Xup_E,
                                     dv.Xup_r, v, cl.ab0)
            for k in range(6):
                cl.v0[b, k] = v[b, k]
    _velocities_kernel(sm.model_i, sm.model_f, q, cl.qd1, sd.data)
    w2 = 0.0
    for b in range(nb):
        w2 = max(w2, v[b, 0] * v[b, 0] + v[b, 1] * v[b, 1] + v[b, 2] * v[b, 2])
    acc = 0.0
    if arc:
        for b in range(nb):
            steady_acceleration_step(b, mv.parent, mv.vadr, mv.jnv, mv.S, cl.qd1, dv.Xup_E,
                                     dv.Xup_r, v, cl.ab)
        gm = cl.det.gm
        acc = contacts_arc_change(out, n, gm.body, 0, gm.pos, gm.rb, cl.v0, cl.ab0, v, cl.ab,
                                  dv.oE)
    return step_plan(h, w2, acc, cl.theta, cl.arc)


@njit(**JIT)
def _look_ahead(sm, cl, q, qs, h, out, n, gap):
    """The look-ahead gaps (:func:`~articulated.algorithms.lookahead.ahead_gaps`) of the
    ``n`` contacts in ``out`` into ``gap``, detected at ``q`` with the body motion for
    ``qs`` in the workspace: the bodies' poses at ``q (+) h qs`` (into ``cl.buf1``;
    ``cl.qu`` scratch). Returns the largest depth at detection, ``max(-dist)`` [m]."""
    depth = 0.0
    for c in range(n):
        depth = max(depth, -out.dist[c])
    _integrate_kernel(sm.jtype, sm.qadr, sm.vadr, q, qs, h, cl.qu)
    if sm.quat_qadr.shape[0]:
        _normalize_kernel(sm.quat_qadr, cl.qu)
    _world_poses_kernel(sm.model_i, sm.model_f, cl.qu, cl.buf1)
    nb = sm.jtype.shape[0]
    dv = data_arrays(cl.det.buf, nb, qs.shape[0])
    d1 = data_arrays(cl.buf1, nb, qs.shape[0])
    gm = cl.det.gm
    ahead_gaps(gm, cl.det.poses, out, n, ShapeFrames(gm.body, 0, gm.R, gm.pos),
               FrameMotion(mat3_rows(dv.oE), dv.op, dv.v, mat3_rows(d1.oE), d1.op), h, cl.la,
               gap)
    return depth


@njit(**JIT)
def _mesh_contacts(db, out, n):
    """The mesh pairs' contacts after the ``n`` of the compiled pairs in ``out``: the
    mesh-plane pairs compiled, the others by coal through ``db.hook``. Returns the index
    after them (more than ``out`` holds: grow it and detect again)."""
    mp = db.mp
    nn = mesh_broad_phase(mp, db.poses, 0.0)
    npl = 0
    while npl < nn and mp.is_plane[mp.near[npl]]:      # the mesh-plane pairs come first
        npl += 1
    k = mesh_plane_kernel(mp, npl, db.gm, db.poses, out, n)
    if npl < nn and k <= out.dist.shape[0]:
        k = python_contacts(db.hook, out, k, npl, nn)
    return k


@njit(**JIT)
def detect_bodies(db, q, qs, h, ready, broad, out):
    """The detection stage on the whole model (:data:`DetectBundle` ``db``): the contacts at
    ``q`` (nq,) with speculative margins from the joint velocities ``qs`` (nv,) over ``h``
    [s]: every body's world pose and velocity (:func:`body_motion`, O(n); ``ready``: the
    workspace holds them already), the compiled pairs
    (:func:`~articulated.algorithms.collision.detect_primitives`), then the mesh pairs
    (compiled mesh-plane pairs, the others by coal through the hook); the buffers
    ``broad``, ``out`` grown as needed. Returns ``(n, broad, out)``."""
    if db.gm.body.shape[0] == 0:
        return 0, broad, out
    if not ready:
        body_motion(db, q, qs)
    dv = data_arrays(db.buf, db.nb, qs.shape[0])
    n, nc, broad, out = detect_primitives(db.gm, db.poses, broad, out, mat3_rows(dv.oE),
                                          dv.op, dv.v, h, 0.0)
    if db.mp.pairs.shape[0]:
        k = _mesh_contacts(db, out, n)
        if k > out.dist.shape[0]:
            out = contact_buffer(2 * k)
            n = detect_kernel(db.gm, db.poses, 0.0, broad.cand, nc, out)
            k = _mesh_contacts(db, out, n)
        n = k
    return n, broad, out


RK_C = (0.5, 0.5, 1.0)
"""The nodes of the classical Runge-Kutta method's stages 2-4 (fractions of the step)."""


@njit(**JIT)
def _smooth_rk4(sm, sd, cl, q, qd, h, qs):
    """The unconstrained motion of a substep of ``h`` [s] from ``(q, qd)`` by the classical
    Runge-Kutta method (RK4) on the forward dynamics, the applied forces of the step
    (``sd.tau``, ``sd.f_ext``) held: ``qs`` (nv,) the mean velocity ``vbar = (qd + 2 v2 +
    2 v3 + v4) / 6`` (so ``q (+) h vbar`` is RK4's position) and ``cl.ka`` (nv,) the end
    velocity less it, ``qd + h (a1 + 2 a2 + 2 a3 + a4) / 6 - vbar``. The impulses act on
    ``qs``; the substep ends at ``q (+) h (qs + dv)`` with the velocity of RK4 from ``(q, qd
    + dv)`` (:func:`_finish`). On entry ``cl.qdd`` holds ``a1`` and the
    workspace the factorization at ``(q, qd)``; both are restored on exit. Semi-implicit
    Euler treats the
    velocity-product terms explicitly and gains energy at a rate of about ``h omega^2``
    where joints turn at ``omega`` (a chain's whipping end); RK4's error is
    ``O((h omega)^5)`` per step. Returns the substep's ``h rho``
    (:func:`~articulated.simulation.contact.rk4_stiffness`), or -1 where the dynamics is
    not finite."""
    nv = qd.shape[0]
    nb = sm.jtype.shape[0]
    dv = data_arrays(sd.data, nb, nv)
    ka, vs, qst = cl.ka, cl.qbar, cl.q1
    for k in range(nv):
        ka[k] = cl.qdd[k]
        qs[k] = qd[k]
        vs[k] = qd[k]
    num = 0.0
    den = 0.0
    a1sq = 0.0
    for s in range(3):
        c = RK_C[s]
        w = 1.0 if s == 2 else 2.0
        _integrate_kernel(sm.jtype, sm.qadr, sm.vadr, q, vs, c * h, qst)
        if sm.quat_qadr.shape[0]:
            _normalize_kernel(sm.quat_qadr, qst)
        a = cl.qdd if s == 0 else dv.qdd
        if s == 1:      # a2 (in dv.qdd) against a1 (cl.qdd)
            for k in range(nv):
                den += (dv.qdd[k] - cl.qdd[k]) ** 2
                a1sq += cl.qdd[k] ** 2
        for k in range(nv):
            vs[k] = qd[k] + c * h * a[k]
        ok, _ = aba_passes(sm.model_i, sm.model_f, qst, vs, sd.tau, sd.f_ext, False,
                           sd.data, True, False)
        if not ok:
            return -1.0
        if s == 1:      # a3 (in dv.qdd) against a2 = (vs - qd) / (h / 2)
            for k in range(nv):
                num += (dv.qdd[k] - (vs[k] - qd[k]) / (c * h)) ** 2
        for k in range(nv):
            ka[k] += w * dv.qdd[k]
            qs[k] += w * vs[k]
    for k in range(nv):
        qs[k] /= 6.0
        ka[k] = qd[k] + h * ka[k] / 6.0 - qs[k]
    ok, _ = aba_passes(sm.model_i, sm.model_f, q, qd, sd.tau, sd.f_ext, False, sd.data,
                       True, False)
    return rk4_stiffness(num, den, a1sq) if ok else -1.0


@njit(**dict(JIT, inline="always"))
def _qdd_at(sm, sd, cl, q, qd):
    """ABA at ``(q, qd)`` into the workspace (its factorization and body motion) and its
    accelerations into ``cl.qdd``; False when it fails."""
    ok, _ = aba_passes(sm.model_i, sm.model_f, q, qd, sd.tau, sd.f_ext, False, sd.data,
                       True, False)
    if ok:
        dv = data_arrays(sd.data, sm.jtype.shape[0], qd.shape[0])
        for k in range(qd.shape[0]):
            cl.qdd[k] = dv.qdd[k]
    return ok


@njit(**dict(JIT, inline="always"))
def _finish(sm, sd, cl, q, qd, qs, h, ready, cb, check, smooth):
    """Steps 3-6 of :mod:`articulated.simulation.contact` over ``h`` [s] from ``(q, qd)``
    with the unconstrained velocities ``qs`` (nv,) into ``cl.q1, cl.qd1`` and the statistics
    ``cl.st`` (``ready``: the workspace holds the body motion at ``(q, qs)``; ``check``: an
    unsplit step, whose velocities after the impulses may ask for substeps: then
    :data:`~articulated.simulation.contact.SPLIT`, their number in ``cl.nsub[0]``).

    Both end at ``q (+) h (qs + dv) + dq`` (``dv = M^-1 J^T P`` the impulses' velocity
    change, ``dq`` post-stabilization's), the displacement the rows, the limits and the
    wake test predict. Semi-implicit Euler (not ``smooth``): ``qs = qd + h qdd``, the end
    velocity ``qs + dv``. A ``smooth`` substep (``qs`` RK4's mean velocity from :func:`_smooth_rk4`,
    ``cl.ka`` its end velocity less it): where there are impulses, its end velocity is
    RK4's from ``(q, qd + dv)``, the impulses taken at its start, not ``qs + dv +
    cl.ka``: an impulse computed in one configuration and added to the velocities of
    another can add energy where ``M(q)`` changes fast (a long chain folding onto itself,
    its links turning at hundreds of rad/s). Returns ``(code, cb)``."""
    st = cl.st
    c0 = _cycles() if cl.timed else 0
    n, broad, out = detect_bodies(cl.det, q, qs, h, ready, cb.broad, cb.out)
    c1 = _cycles() if cl.timed else 0
    st[STAT_N] = n
    st[STAT_DETECT] = c1 - c0
    gap = cb.gap
    if n > gap.shape[0]:
        gap = np.zeros(out.dist.shape[0])
    look = cl.arc > 0.0 and n > 0
    depth = _look_ahead(sm, cl, q, qs, h, out, n, gap) if look else 0.0
    nb = sm.jtype.shape[0]
    fac = workspace_factor(sd.data, nb, cl.qdd.shape[0])
    con = Contacts(out.geom, out.body, out.point, out.normal, gap if look else out.dist,
                   out.mu, out.e, out.key)
    nr, rb = respond(cl.im, fac, cl.sc, con, n, q, qs, cl.lim, options_at(cl.opt, h),
                     cb.rb, (cl.qd1, cl.v, st))
    if look:    # the depth at detection, not the look-ahead's
        st[STAT_DEPTH] = depth
    cb = ContactBuffers(broad, out, rb, cb.cbody, gap)
    if n or nr:     # (every contact dormant: no impulse)
        st[STAT_KE_BEFORE] = _energy_kernel(sm.model_i, sm.model_f, q, qs, sd.data)[0]
        st[STAT_KE_AFTER] = (_energy_kernel(sm.model_i, sm.model_f, q, cl.qd1, sd.data)[0]
                             if nr else st[STAT_KE_BEFORE])
    else:
        st[STAT_KE_BEFORE] = math.nan
        st[STAT_KE_AFTER] = math.nan
    st[STAT_RESPONSE] = (_cycles() - c1) if cl.timed else 0
    if check and nr and (cl.theta > 0.0 or cl.arc > 0.0):
        # the velocities after the impulses ask for substeps: split
        k = _impulse_substeps(sm, sd, cl, out, n, h, q, qs)
        if k > (1 if smooth else 0):
            cl.nsub[0] = k
            return SPLIT, cb
    if smooth:
        nv = qd.shape[0]
        kick = False
        for k in range(nv):
            kick |= cl.qd1[k] != qs[k]
        if kick:    # qs becomes the substep's start velocity with the impulses, qd + dv
            for k in range(nv):
                qs[k] = qd[k] + cl.qd1[k] - qs[k]
            if not _qdd_at(sm, sd, cl, q, qs):
                return ERR_DYNAMICS, cb
            if _smooth_rk4(sm, sd, cl, q, qs, h, cl.qd1) < 0.0:
                return ERR_DYNAMICS, cb
        for k in range(nv):
            cl.qd1[k] += cl.ka[k]
    bad = runaway_dof(cl.v)
    if bad >= 0:
        cl.bad[0] = bad
        return ERR_RUNAWAY, cb
    _integrate_kernel(sm.jtype, sm.qadr, sm.vadr, q, cl.v, 1.0, cl.q1)
    if sm.quat_qadr.shape[0]:
        _normalize_kernel(sm.quat_qadr, cl.q1)
    return OK, cb


@njit(**JIT)
def _keep_kinetic(sm, sd, cl, q, h, dq):
    """Post-stabilization moves positions, not velocities, and the kinetic energy of the
    same joint velocities depends on the configuration (``M(q)``): where the projection's
    ``dq`` (nv,) raises the kinetic energy of the end velocities ``cl.qd1`` at ``cl.q1``
    above that at the unprojected end ``q (+) (cl.v - dq)`` by more than
    :data:`~articulated.simulation.contact.KEEP_SLACK`, ``cl.qd1`` is scaled back to it
    (:func:`~articulated.simulation.contact.keep_scale`). A fast chain's projected links
    would otherwise gain energy at every step they are pushed out."""
    if not moved(dq):
        return
    for k in range(dq.shape[0]):
        cl.qbar[k] = cl.v[k] - dq[k]
    _integrate_kernel(sm.jtype, sm.qadr, sm.vadr, q, cl.qbar, 1.0, cl.qu)
    if sm.quat_qadr.shape[0]:
        _normalize_kernel(sm.quat_qadr, cl.qu)
    T0 = _energy_kernel(sm.model_i, sm.model_f, cl.qu, cl.qd1, sd.data)[0]
    T1 = _energy_kernel(sm.model_i, sm.model_f, cl.q1, cl.qd1, sd.data)[0]
    scale = keep_scale(T0, T1)
    if scale < 1.0:
        for k in range(dq.shape[0]):
            cl.qd1[k] *= scale


@njit(**JIT)
def _bound(sm, sd, cl, q, qd, h, E):
    """The energy bound (contact option ``energy_bound``) over ``h`` [s] from ``(q, qd)``
    (total energy ``E`` [J]) to ``(cl.q1, cl.qd1)``: where ``T1 + V1 > E + W`` (``W`` the
    applied forces' work, trapezoidal), ``cl.qd1`` is scaled in place by ``sqrt((T1 -
    excess) / T1)`` (at least 0); the energy taken out into ``cl.st``."""
    cl.st[STAT_ENERGY] = 0.0
    if not cl.opt.energy_bound:
        return
    T1, V1 = _energy_kernel(sm.model_i, sm.model_f, cl.q1, cl.qd1, sd.data)
    for k in range(qd.shape[0]):
        cl.qbar[k] = 0.5 * (qd[k] + cl.qd1[k])
    W = h * _power_kernel(sm.model_i, sm.model_f, q, cl.qbar, sd.tau, sd.f_ext, sd.data)
    scale = energy_scale(E, W, T1, V1)
    if scale < 1.0:
        for k in range(qd.shape[0]):
            cl.qd1[k] *= scale
        cl.st[STAT_ENERGY] = T1 * (1.0 - scale * scale)


@njit(**JIT)
def merge_stats(tot, st):
    """The statistics ``st`` of a later substep merged into those of the step ``tot``: the
    largest counts, depth and approach, residual and solver, the impacts, removed energies and times summed,
    the sticking and sliding counts of the last substep and the kinetic energies of the
    last substep with a response."""
    for i in (STAT_N, STAT_LIMITS, STAT_SWEEPS, STAT_FALLBACK, STAT_DEPTH, STAT_APPROACH,
              STAT_RESIDUAL, STAT_SOLVER):
        tot[i] = max(tot[i], st[i])
    for i in (STAT_IMPACTS, STAT_ENERGY, STAT_DETECT, STAT_RESPONSE):
        tot[i] += st[i]
    tot[STAT_STICKING] = st[STAT_STICKING]
    tot[STAT_SLIDING] = st[STAT_SLIDING]
    if not math.isnan(st[STAT_KE_BEFORE]):
        tot[STAT_KE_BEFORE] = st[STAT_KE_BEFORE]
        tot[STAT_KE_AFTER] = st[STAT_KE_AFTER]


@njit(**JIT)
def _energy(sm, sd, cl, q, qd):
    """``T + V`` [J] at ``(q, qd)`` where the energy bound needs it (0 without it)."""
    if not cl.opt.energy_bound:
        return 0.0
    T, V = _energy_kernel(sm.model_i, sm.model_f, q, qd, sd.data)
    return T + V


@njit(**dict(JIT, inline="always"))
def _contact_step(sm, sd, fa, bp, cl, q, qd, t, rec, row, cb):
    """One step from ``(q, qd)`` at time ``t`` [s] into ``cl.q1, cl.qd1``, its statistics
    into ``cl.tot`` (the applied forces of :func:`~articulated.simulation.stepping._evaluate`,
    held over the substeps; the energies of ``q, qd`` into row ``row`` of the records
    ``rec`` when >= 0, from its kinematics pass): split into ``cl.nsub[0]`` equal
    substeps by the options ``max_rotation`` and ``max_arc_error``, each moved by
    :func:`_smooth_rk4`, then :func:`_finish`, :func:`_keep_kinetic` and :func:`_bound`
    (an unsplit step: semi-implicit Euler, then the same). A step or
    substep whose impulses leave velocities
    that ask for substeps (an impulse through a kinked chain can turn its light links by a
    radian in a step, which the first-order step does not follow) is taken again, the rest
    of the step split as they ask (at most :data:`MAX_SUBSTEPS` in all). ``bp``: the
    pointer ``byref((sm, sd, fa))`` that :func:`_evaluate` takes. Returns ``(code, cb)``."""
    nq = q.shape[0]
    nv = qd.shape[0]
    E = _energy(sm, sd, cl, q, qd)
    code = _evaluate(bp, q, qd, cl.qdd, rec, row, t)
    if code != OK:
        return code, cb
    qs = cl.qs
    for k in range(nv):
        qs[k] = qd[k] + sm.dt * cl.qdd[k]
    ns, ready = _substeps(sm, sd, cl, q, qs, sm.dt)
    ns = max(ns, cl.nsub[1])    # as many as the last steps' impulses asked for
    whole = ns == 0     # unsplit, unless the impulses ask for substeps
    ns = max(ns, 1)
    hk = sm.dt / ns
    asked = False
    qc, qdc = cl.qc, cl.qdc
    for k in range(nq):
        qc[k] = q[k]
    for k in range(nv):
        qdc[k] = qd[k]
    i = 0
    fresh = True    # cl.qdd and the workspace's factorization are those at (qc, qdc)
    while i < ns:
        if not whole:
            if not fresh:
                E = _energy(sm, sd, cl, qc, qdc)
                if not _qdd_at(sm, sd, cl, qc, qdc):
                    return ERR_DYNAMICS, cb
            hr = _smooth_rk4(sm, sd, cl, qc, qdc, hk, qs)
            if hr < 0.0:
                return ERR_DYNAMICS, cb
            if hr > RK4_STIFF and ns < MAX_SUBSTEPS:
                # too stiff for RK4 at this substep: the rest split (the workspace and
                # cl.qdd are those at (qc, qdc) again)
                ns, hk = split_rest(ns, i, hk, min(math.ceil(hr / RK4_STIFF), MAX_SUBSTEPS))
                fresh = True
                continue
        code, cb = _finish(sm, sd, cl, qc, qdc, qs, hk, whole and ready, cb,
                           True if whole else ns < MAX_SUBSTEPS, not whole)
        if code == SPLIT:
            asked = True
            if whole:       # taken again in the substeps its impulses ask for
                whole = False
                ns = cl.nsub[0]
                hk = sm.dt / ns
            else:           # this substep's impulses ask for shorter ones: the rest split
                ns, hk = split_rest(ns, i, hk, cl.nsub[0])
            fresh = True
            continue
        if code != OK:
            return code, cb
        _keep_kinetic(sm, sd, cl, qc, hk, cb.rb.dq)
        _bound(sm, sd, cl, qc, qdc, hk, E)
        for k in range(nq):
            qc[k] = cl.q1[k]
        for k in range(nv):
            qdc[k] = cl.qd1[k]
        if i == 0:
            for j in range(cl.tot.shape[0]):
                cl.tot[j] = cl.st[j]
        else:
            merge_stats(cl.tot, cl.st)
        i += 1
        fresh = False
    cl.nsub[0] = ns
    carry_substeps(cl.nsub, ns, asked)
    return OK, cb


@njit(**JIT)
def contact_steps(sm, sd, fa, cl, q, qd, t, run, rec, cstats, cb):
    """The steps of the stretch ``run`` (:data:`~articulated.simulation.stepping.Run`)
    with contacts from the state ``q`` (nq,), ``qd`` (nv,), ``t`` (1,) [s] (in/out), each
    by :func:`_contact_step`, committed only when it succeeded; its statistics into row s
    of ``cstats`` (n, 16); records as in
    :func:`~articulated.simulation.stepping.tree_steps`. Returns ``(steps done, code,
    cb)``: on an error code the state is that before the failing step."""
    pending = -1
    done = run.n
    bp = byref((sm, sd, fa))      # _evaluate's bundles: one pointer per call
    for s in range(run.n):
        code, cb = _contact_step(sm, sd, fa, bp, cl, q, qd, t[0], rec, pending, cb)
        if code != OK:
            if pending >= 0:        # the failing step may have stopped before the energies
                record_state(sm, sd, fa, t[0], q, qd, rec, pending)
            return s, code, cb
        for i in range(cl.tot.shape[0]):
            cstats[s, i] = cl.tot[i]
        pending = commit_step(q, qd, cl.q1, cl.qd1, t, sm.dt, run.k0 + s + 1, run, rec)
        if stop_requested(fa):
            done = s + 1
            break
    if pending >= 0:
        record_state(sm, sd, fa, t[0], q, qd, rec, pending)
    return done, OK, cb


def detect_bundle(det, nb, model_i, model_f, buf, hook):
    """The :data:`DetectBundle` of a :class:`~articulated.algorithms.collision.Detector`
    ``det`` on the packed model ``model_i, model_f`` of ``nb`` bodies and the workspace
    ``buf``; ``hook``: its coal pairs (-1: none)."""
    mp = mesh_pairs_empty(det.gm.rb) if det.mesh is None else det.mesh.mp
    return DetectBundle(nb=int(nb), model_i=model_i, model_f=model_f, buf=buf, gm=det.gm,
                        poses=det.poses, mp=mp, hook=int(hook))


def contact_loop_bundles(stepper, det, sd, timed, hook):
    """The :data:`ContactStepBundle` of a :class:`~articulated.simulation.contact.ContactStepper`
    with detector ``det`` (its own, or an empty one for limits only); ``sd``: the tree
    loop's ``StepData`` on the stepper's workspace; ``timed``: time detection and
    response; ``hook``: the detector's coal pairs (-1: none)."""
    m = stepper.model
    nq, nv = m.nq, m.nv
    d = stepper.data
    theta, arc = stepper.options["max_rotation"], stepper.options["max_arc_error"]
    return ContactStepBundle(
        det=detect_bundle(det, m.nb, d.model_i, d.model_f, sd.data, hook), im=stepper.im,
        sc=stepper.sc, lim=stepper.limits, opt=stepper.opt,
        theta=-1.0 if theta is None else float(theta), arc=-1.0 if arc is None else float(arc),
        qdd=np.zeros(nv), qs=np.zeros(nv), q1=np.zeros(nq), qd1=np.zeros(nv), v=np.zeros(nv),
        qc=np.zeros(nq), qdc=np.zeros(nv), qbar=np.zeros(nv), ka=np.zeros(nv), qu=np.zeros(nq),
        st=np.zeros(NSTATS), tot=np.zeros(NSTATS), bad=np.zeros(1, np.int64),
        nsub=np.array([1, 0, 0], np.int64),
        ab=np.zeros((m.nb, 6)), timed=bool(timed),
        la=lookahead_buffers(len(stepper.geom.arrays()["body"]) if stepper.geom is not None else 0),
        buf1=np.zeros_like(d.buf), ab0=np.zeros((m.nb, 6)), v0=np.zeros((m.nb, 6)))
