"""The compiled stepping loop of tree dynamics.

The compiled stepping loop of tree dynamics: :func:`tree_steps` runs a whole stretch of
fixed steps of :class:`~articulated.simulation.simulator.DynamicsSimulator` (forward
dynamics by ABA, modified ABA, CRBA or DCA; explicit Euler, semi-implicit Euler or RK4;
the compiled applied forces of :func:`~articulated.simulation.forces.compile_forces`;
recording into preallocated arrays) in one numba call, so that a step costs what its
forward-dynamics evaluations cost.

It computes what the Python integrators of :mod:`articulated.simulation.integrators` over
:func:`articulated.forward_dynamics` compute, step for step and operation for operation;
the test suite checks the two against each other on every method, integrator and force.
Those remain the path of what has no compiled step (``rk45``, float32, closed loops by SRM).
A user's own force runs in Python from inside the compiled step
(:mod:`articulated.simulation.hooks`). A failing step stops the loop before it, and the
simulator names the joint from what the step left in :data:`StepData`. Steps with contacts
or limits have their own compiled loop on these kernels,
:mod:`articulated.simulation.contact_loop`.

Bundles (named tuples, built once per simulator by :func:`loop_bundles`):

* :data:`StepModel` - the model's packed arrays and what the step does (method,
  integrator, ``dt``), the DCA's model bundle;
* :data:`StepData` - every workspace: the model's :class:`~articulated.data.Data` buffer,
  CRBA's ``M``, the applied forces ``tau, f_ext``, the integrator's stages ``W``, the new
  state ``q1, qd1``, the DCA's scratch and data;
* :data:`Records` - the recorded ``t, q, qd, T, V``;
* :data:`Run` - the stretch of steps a call runs and its record count.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..algorithms.aba import aba_passes
from ..algorithms.bundles import DCAInputs
from ..algorithms.crba import _crba_kernel, ltdl_factor, ltdl_solve
from ..algorithms.dca import dca_kernel
from ..algorithms.kinematics import (armature_energy, body_energy, body_gravity_potential,
                                     joint_xup, state_energy, velocity_step,
                                     world_pose_step)
from ..algorithms.rnea import _rnea_kernel
from .._byref import byref, deref
from ..config import inline, KERNEL
from ..configuration import _normalize_kernel, _qdot_kernel, integrate_joint
from ..data import data_arrays
from ..model import model_arrays
from .forces import body_force_potential, body_force_row, joint_force_potential, joint_forces
from .hooks import python_forces, python_potential

METHOD_CODES = {"aba": 0, "aba_modified": 1, "crba": 2, "dca": 3}
"""Forward-dynamics methods of the compiled loop (:func:`articulated.forward_dynamics`)."""
INTEGRATOR_CODES = {"euler": 0, "semi_implicit_euler": 1, "rk4": 2}
"""Integrators of the compiled loop (:mod:`articulated.simulation.integrators`)."""

OK, ERR_FORCE, ERR_DYNAMICS, ERR_STATE = 0, 1, 2, 3
"""Codes of :func:`tree_steps`: done, an applied force not finite, the accelerations not
finite, the new state not finite."""

StepModel = namedtuple("StepModel", (
    "model_i", "model_f", "jtype", "qadr", "vadr", "quat_qadr", "dof_parent", "method",
    "integrator", "dt", "dca_model"))
StepModel.__doc__ = """What a step of :func:`tree_steps` computes: the model's packed
arrays ``model_i, model_f`` (:func:`articulated.model.model_arrays`), its joint layout
``jtype, qadr, vadr`` (nb,), ``quat_qadr``, ``dof_parent`` (nv,) (CRBA's ``lambda``), the
codes ``method`` (:data:`METHOD_CODES`) and ``integrator`` (:data:`INTEGRATOR_CODES`), the
time step ``dt`` [s], and the DCA's ``DCAModel`` (of a one-body placeholder for the other
methods)."""

StepData = namedtuple("StepData", (
    "data", "M", "tau", "f_ext", "zero", "W", "q1", "qd1", "dca_scratch", "dca_data"))
StepData.__doc__ = """Workspaces of :func:`tree_steps`: the packed buffer ``data`` of the
model's :class:`~articulated.data.Data`; ``M`` (nv, nv) for CRBA ((0, 0) otherwise); the
applied forces ``tau`` (nv,) and ``f_ext`` (nb, 6) (body coordinates); ``zero`` (nv,)
zeros; the integrator's stages ``W`` (11, max(nq, nv)) (rows: 4 accelerations, 4 ``dq/dt``,
the stage configuration, its normalized copy, the stage velocity); the new state ``q1``
(nq,), ``qd1`` (nv,); the DCA's ``DCAScratch`` and ``DCAData``."""

Run = namedtuple("Run", ("k0", "n", "steps", "every", "count"))
Run.__doc__ = """A stretch of a run: steps ``k0 + 1 .. k0 + n`` of a run of ``steps`` steps,
recording after step k when ``k % every == 0`` or ``k == steps``; ``count`` (1,) int64
the records written (in/out)."""

Records = namedtuple("Records", ("t", "q", "qd", "T", "V"))
Records.__doc__ = """Recorded states: ``t`` (k,) [s], ``q`` (k, nq), ``qd`` (k, nv), kinetic
``T`` and potential ``V`` (k,) [J] (gravity and the conservative applied forces)."""


@inline
def _kinematics(sm, sd, q, qd, energy, kinetic):
    """Joint transforms, velocities (ABA pass 1, RBDA eq. 7.34) and world poses of every
    body at ``q, qd`` into the workspace; with ``energy`` also returns the state's gravity
    energy ``V`` and, with ``kinetic``, its kinetic energy ``T`` (else 0) as ``(T, V)`` [J]
    (:func:`~articulated.algorithms.kinematics.body_energy`, as :func:`~articulated.
    algorithms.kinematics.state_energy` sums them)."""
    mv = model_arrays(sm.model_i, sm.model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    Xtree_rot, axis, Xtree_E, Xtree_r, S = mv.Xtree_rot, mv.axis, mv.Xtree_E, mv.Xtree_r, mv.S
    nb = parent.shape[0]
    dv = data_arrays(sd.data, nb, S.shape[0])
    Xup_E, Xup_r, v, c, oE, op = dv.Xup_E, dv.Xup_r, dv.v, dv.c, dv.oE, dv.op
    T = 0.0
    V = 0.0
    for i in range(nb):
        E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
        vi = velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)
        world_pose_step(i, parent, E, r, oE, op)
        if energy and kinetic:
            T, V = body_energy(i, mv.mass, mv.h, mv.Ibar, mv.gravity, vi, oE, op, T, V)
        elif energy:
            V = body_gravity_potential(i, mv.mass, mv.h, mv.gravity, oE, op, V)
    if energy and kinetic:
        T += armature_energy(mv.armature, qd)
    return T, V


@inline
def _world_pose(oE, op, b):
    """Body b's rotation body -> world (``oE[b]^T``, a row-major 9-tuple) and origin (a
    3-tuple) from the workspace's world poses."""
    R = (oE[b, 0], oE[b, 3], oE[b, 6], oE[b, 1], oE[b, 4], oE[b, 7], oE[b, 2], oE[b, 5],
         oE[b, 8])
    return R, (op[b, 0], op[b, 1], op[b, 2])


@inline
def _body_forces(sm, sd, fa, t):
    """The compiled body forces of ``fa`` at time ``t`` [s] into ``sd.f_ext`` (rows of their
    bodies cleared first) at the workspace's poses and velocities (:func:`_kinematics`).
    Returns False when a force is not finite."""
    dv = data_arrays(sd.data, sm.jtype.shape[0], sd.tau.shape[0])
    v, oE, op = dv.v, dv.oE, dv.op
    f_ext = sd.f_ext
    for i in range(fa.body.shape[0]):
        for a in range(6):
            f_ext[fa.body[i], a] = 0.0
    for i in range(fa.body.shape[0]):
        b = fa.body[i]
        R, p = _world_pose(oE, op, b)
        # world velocity about the world origin: [R w; R v_O + p x R w]
        w0 = R[0] * v[b, 0] + R[1] * v[b, 1] + R[2] * v[b, 2]
        w1 = R[3] * v[b, 0] + R[4] * v[b, 1] + R[5] * v[b, 2]
        w2 = R[6] * v[b, 0] + R[7] * v[b, 1] + R[8] * v[b, 2]
        u0 = R[0] * v[b, 3] + R[1] * v[b, 4] + R[2] * v[b, 5]
        u1 = R[3] * v[b, 3] + R[4] * v[b, 4] + R[5] * v[b, 5]
        u2 = R[6] * v[b, 3] + R[7] * v[b, 4] + R[8] * v[b, 5]
        V = (w0, w1, w2, u0 + p[1] * w2 - p[2] * w1, u1 + p[2] * w0 - p[0] * w2,
             u2 + p[0] * w1 - p[1] * w0)
        if not body_force_row(i, fa.kind, fa.params, R, p, V, True, f_ext, b, t):
            return False
    return True


@inline
def _potentials(sm, sd, fa, q):
    """Potential energy [J] of the conservative applied forces (world point forces,
    springs, PD joint springs; the Python forces' ``potential``) at the workspace's poses."""
    dv = data_arrays(sd.data, sm.jtype.shape[0], sd.tau.shape[0])
    V = joint_force_potential(fa, q)
    if fa.hook >= 0:
        V += python_potential(fa, q)
    for i in range(fa.body.shape[0]):
        R, p = _world_pose(dv.oE, dv.op, fa.body[i])
        V += body_force_potential(i, fa.kind, fa.params, R, p)
    return V


@njit(**KERNEL)
def _evaluate(bp, q, qd, out, rec, row, t):
    """``out`` (nv,) = qdd at ``q, qd`` and time ``t`` [s] under the applied forces ``fa``:
    the forces (joint forces, then body forces at the state's poses; or all of them in
    Python, :func:`~articulated.simulation.hooks.python_forces`), then the forward dynamics of
    ``sm.method``, as :func:`articulated.forward_dynamics` computes them. With ``row >=
    0`` the energies of the state go into ``rec.T[row], rec.V[row]`` from the same
    kinematics pass (the kinetic energy of the ABA methods from ABA's pass 2, which forms
    each ``I_i v_i`` anyway). Returns :data:`OK`, :data:`ERR_FORCE` or :data:`ERR_DYNAMICS`.
    ``bp``: a :func:`~articulated._byref.byref` pointer to ``(sm, sd, fa)``, made once by
    the calling loop (one word per call instead of every array's)."""
    sm, sd, fa = deref(bp)
    tau = sd.tau
    if joint_forces(fa, q, qd, tau, t) >= 0:
        return ERR_FORCE
    if fa.hook >= 0 and not python_forces(fa, t, q, qd, tau, sd.f_ext):
        return ERR_FORCE
    kin = fa.body.shape[0] > 0 or row >= 0
    m = sm.method
    aba = m == 0 or m == 1
    if kin:
        # ABA's pass 2 forms I v: the kinetic energy comes from there
        T, V = _kinematics(sm, sd, q, qd, row >= 0, not aba)
        if row >= 0:
            rec.T[row] = T
            rec.V[row] = V + _potentials(sm, sd, fa, q)
        if not _body_forces(sm, sd, fa, t):
            return ERR_FORCE
    nv = out.shape[0]
    if aba:
        # pass 1 is the one of _kinematics when that ran (same helpers, same values)
        ok, T = aba_passes(sm.model_i, sm.model_f, q, qd, tau, sd.f_ext, m == 1, sd.data,
                           not kin, row >= 0)
        if row >= 0:
            rec.T[row] = T
        dv = data_arrays(sd.data, sm.jtype.shape[0], nv)
        for k in range(nv):
            out[k] = dv.qdd[k]
        return OK if ok else ERR_DYNAMICS
    if m == 2:
        # RBDA sec. 6.5: C by RNEA at qdd = 0, M by CRBA, sparse L^T D L solve
        _rnea_kernel(sm.model_i, sm.model_f, q, qd, sd.zero, sd.f_ext, True, sd.data)
        _crba_kernel(sm.model_i, sm.model_f, q, sd.data, sd.M)
        ltdl_factor(sd.M, sm.dof_parent)
        dv = data_arrays(sd.data, sm.jtype.shape[0], nv)
        for k in range(nv):
            out[k] = tau[k] - dv.tau[k]
        ltdl_solve(sd.M, sm.dof_parent, out)
    else:
        dca_kernel(sm.dca_model, DCAInputs(q, qd, tau, sd.f_ext, False), sd.dca_scratch,
                   sd.dca_data)
        for k in range(nv):
            out[k] = sd.dca_data.qdd[k]
    for k in range(nv):
        if not math.isfinite(out[k]):
            return ERR_DYNAMICS
    return OK


@inline
def _integrate(sm, q, v, dt, out):
    """``out = q (+) v dt`` (:func:`articulated.configuration.integrate_joint` per joint)."""
    for i in range(sm.jtype.shape[0]):
        integrate_joint(i, sm.jtype, sm.qadr, sm.vadr, q, v, dt, out)


@inline
def _unit(sm, Y, Yu):
    """``Yu`` = Y with its quaternions normalized (``Y`` itself when there are none), as
    :func:`articulated.simulation.integrators._unit`."""
    if sm.quat_qadr.shape[0] == 0:
        return Y
    for k in range(Y.shape[0]):
        Yu[k] = Y[k]
    _normalize_kernel(sm.quat_qadr, Yu)
    return Yu


@inline
def _step(sm, sd, fa, bp, q, qd, rec, row, t):
    """One step of ``sm.integrator`` from ``q, qd`` at time ``t`` [s] (the stages of RK4 at
    ``t + dt / 2``, ``t + dt``) into ``sd.q1, sd.qd1`` (the energies
    of ``q, qd`` into row ``row`` of ``rec`` when >= 0, see :func:`_evaluate`), exactly as
    :func:`~articulated.simulation.integrators.euler_step`,
    :func:`~articulated.simulation.integrators.semi_implicit_euler_step` and
    :func:`~articulated.simulation.integrators.rk4_step` compute it. Returns a code of
    :data:`OK` ... :data:`ERR_STATE`. Inlined into :func:`tree_steps`, its one caller: a
    call would pass the bundles' arrays word by word at every step."""
    nq = q.shape[0]
    nv = qd.shape[0]
    dt = sm.dt
    W = sd.W
    q1, qd1 = sd.q1, sd.qd1
    Y, Yu, V = W[8, :nq], W[9, :nq], W[10, :nv]
    for k in range(nq):             # every evaluation reads the stage rows (one typing)
        Y[k] = q[k]
    for k in range(nv):
        V[k] = qd[k]
    code = _evaluate(bp, Y, V, W[0, :nv], rec, row, t)
    if code != OK:
        return code
    if sm.integrator == 0 or sm.integrator == 1:
        for k in range(nv):
            qd1[k] = qd[k] + dt * W[0, k]
        _integrate(sm, q, qd if sm.integrator == 0 else qd1, dt, q1)
    else:
        h2 = 0.5 * dt
        _qdot_kernel(sm.jtype, sm.qadr, sm.vadr, Y, V, W[4, :nq])
        for s in range(1, 4):
            c = dt if s == 3 else h2
            kq = W[3 + s, :nq]
            kv = W[s - 1, :nv]
            for k in range(nq):
                Y[k] = q[k] + c * kq[k]
            for k in range(nv):
                V[k] = qd[k] + c * kv[k]
            code = _evaluate(bp, _unit(sm, Y, Yu), V, W[s, :nv], rec, -1, t + c)
            if code != OK:
                return code
            _qdot_kernel(sm.jtype, sm.qadr, sm.vadr, Y, V, W[4 + s, :nq])
        s6 = dt / 6.0
        for k in range(nq):
            q1[k] = q[k] + s6 * (W[4, k] + 2.0 * (W[5, k] + W[6, k]) + W[7, k])
        if sm.quat_qadr.shape[0]:
            _normalize_kernel(sm.quat_qadr, q1)
        for k in range(nv):
            qd1[k] = qd[k] + s6 * (W[0, k] + 2.0 * (W[1, k] + W[2, k]) + W[3, k])
    for k in range(nq):
        if not math.isfinite(q1[k]):
            return ERR_STATE
    for k in range(nv):
        if not math.isfinite(qd1[k]):
            return ERR_STATE
    return OK


@njit(**KERNEL)
def record_state(sm, sd, fa, t, q, qd, rec, row):
    """Record ``t, q, qd`` and their energies into row ``row`` of ``rec``: kinetic and
    gravity energy (:func:`~articulated.algorithms.kinematics.state_energy`) plus the
    potentials of the conservative compiled forces (world point forces, springs, PD joint
    springs), as :meth:`DynamicsSimulator.energy
    <articulated.simulation.simulator.DynamicsSimulator.energy>`."""
    T, V = state_energy(sm.model_i, sm.model_f, q, qd, sd.data)
    rec.T[row] = T
    rec.V[row] = V + _potentials(sm, sd, fa, q)
    _record(t, q, qd, rec, row)


@inline
def _record(t, q, qd, rec, row):
    rec.t[row] = t
    for k in range(q.shape[0]):
        rec.q[row, k] = q[k]
    for k in range(qd.shape[0]):
        rec.qd[row, k] = qd[k]


@inline
def commit_step(q, qd, q1, qd1, t, dt, k, run, rec):
    """The bookkeeping after step ``k`` of the run of ``run`` (:data:`Run`) succeeded (the
    tree and contact loops): ``q, qd = q1, qd1``, ``t[0] += dt``, and when ``k % every ==
    0`` or ``k == steps`` the new state recorded into row ``count[0]`` of ``rec`` (while
    rows are left), ``count[0]`` counting. Returns that row, whose energies are pending
    (the next step's kinematics pass or :func:`record_state` fills them), or -1."""
    count = run.count
    for i in range(q.shape[0]):
        q[i] = q1[i]
    for i in range(qd.shape[0]):
        qd[i] = qd1[i]
    t[0] = t[0] + dt
    if (k % run.every == 0 or k == run.steps) and count[0] < rec.t.shape[0]:
        _record(t[0], q, qd, rec, count[0])
        count[0] += 1
        return count[0] - 1
    return -1


@inline
def stop_requested(fa):
    """Whether a Python force saw Ctrl-C (``fa.hstop``, cleared here): the loops stop after
    the step."""
    if fa.hstop[0] == 0:
        return False
    fa.hstop[0] = 0
    return True


@njit(**KERNEL)
def tree_steps(sm, sd, fa, q, qd, t, run, rec):
    """The steps of the stretch ``run`` (:data:`Run`) from the state ``q`` (nq,), ``qd``
    (nv,), ``t`` (1,) [s] (in/out): each step by :func:`_step`, committed only when it
    succeeded; after step k with ``k % every == 0`` or ``k == steps`` the new state is
    recorded into row ``count[0]`` of ``rec`` (while rows are left), ``count[0]``
    counting. A record's energies come from the next step's kinematics pass (the first
    evaluation of every integrator is at the step's initial state), or at the end of the
    stretch from :func:`record_state`. The stretch ends early after a step in which a
    Python force saw Ctrl-C (:func:`stop_requested`). Returns ``(steps done, code)``: on
    an error code the state is that before the failing step."""
    pending = -1
    done = run.n
    bp = byref((sm, sd, fa))
    for s in range(run.n):
        code = _step(sm, sd, fa, bp, q, qd, rec, pending, t[0])
        if code != OK:
            if pending >= 0:        # the failing step may have stopped before the energies
                record_state(sm, sd, fa, t[0], q, qd, rec, pending)
            return s, code
        pending = commit_step(q, qd, sd.q1, sd.qd1, t, sm.dt, run.k0 + s + 1, run, rec)
        if stop_requested(fa):
            done = s + 1
            break
    if pending >= 0:
        record_state(sm, sd, fa, t[0], q, qd, rec, pending)
    return done, OK


_PLACEHOLDER_DCA = []


def _placeholder_dca():
    """The DCA of a one-body model: its bundles have the types of every DCA's, so that the
    loop compiles once for all methods."""
    if not _PLACEHOLDER_DCA:
        from ..algorithms.dca_solver import DCA
        from ..models import pendulum

        _PLACEHOLDER_DCA.append(DCA(pendulum(1)))
    return _PLACEHOLDER_DCA[0]


def loop_bundles(model, method, integrator, dt):
    """``(StepModel, StepData)`` of a simulator (see the module docstring); ValueError for a
    method or integrator without a compiled form."""
    if method not in METHOD_CODES or integrator not in INTEGRATOR_CODES:
        raise ValueError(f"no compiled loop for method {method!r} with integrator "
                         f"{integrator!r}")
    from ..algorithms.dca_solver import dca_solver

    d = model.data()
    dca = dca_solver(model) if method == "dca" else _placeholder_dca()
    sm = StepModel(d.model_i, d.model_f, model.jnt_type, model.jnt_qadr, model.jnt_vadr,
                   model.quat_qadr, model.dof_parent, METHOD_CODES[method],
                   INTEGRATOR_CODES[integrator], float(dt), dca.kernel_model)
    nq, nv = model.nq, model.nv
    sd = StepData(d.buf, np.zeros((nv, nv)) if method == "crba" else np.zeros((0, 0)),
                  np.zeros(nv), np.zeros((model.nb, 6)), np.zeros(nv),
                  np.zeros((11, max(nq, nv, 1))), np.zeros(nq), np.zeros(nv),
                  dca.kernel_scratch, dca.kernel_data)
    return sm, sd


def records(model, k):
    """Empty :data:`Records` of k rows."""
    return Records(np.zeros(k), np.zeros((k, model.nq)), np.zeros((k, model.nv)), np.zeros(k),
                   np.zeros(k))
