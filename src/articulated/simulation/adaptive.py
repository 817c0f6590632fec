"""Adaptive-dynamics simulation (Redon, Galoppo & Lin 2005, RGL): :class:`AdaptiveSimulator`,
what the factory ``articulated.Simulator(model, dt, method="adaptive", ...)`` builds.

Each step integrates the hybrid body (the active joints; rigidified joints have zero
velocity) with the semi-implicit Euler scheme ``qd += h qdd``, ``q (+)= h qd``. Every
``update_every`` steps (RGL: "every 1/f steps") the active-region update algorithm of RGL
Sec. 5.1 runs instead of the plain hybrid step:

1. conversion to the fully articulated state and the acceleration update region U by the
   acceleration metric (threshold ``eps_acc`` on the metric value or budget
   ``max_update``);
2. joint accelerations re-computed on the transient hybrid body (old active region + U);
3. velocity update, new active region by the velocity metric (threshold ``eps_vel`` or
   budget ``max_active = N_A``), rigidification impulses for the joints that leave it;
4. conversion to the new hybrid state.

The solver is :class:`articulated.algorithms.adaptive.AdaptiveDynamics`: the steps between
updates cost O(N_A log n); an active-region update recomputes only the nodes around the
active region (see the solver's module docstring). Steps run in one compiled loop,
:func:`_adaptive_steps` (with contacts or limits
:func:`~articulated.simulation.adaptive_contact.adaptive_contact_steps`); forces without a
compiled form and callable metric weights are called from inside it
(:mod:`articulated.simulation.hooks`). Only steps with mesh shapes in contact run one by
one in Python (:meth:`AdaptiveSimulator._python_step`).
"""

from __future__ import annotations

import math
import time
import weakref
import numpy as np
from numba import njit

from .._byref import byref, byref_each
from .._views import mat3_view
from ..algorithms.adaptive import AdaptiveDynamics
from ..algorithms.bundles import N_AJOINTS, REGION_STAMP, STAT_BAD
from ..algorithms.collision import Detector
from ..algorithms.contact_rows import Limits
from ..algorithms.impulse import Factor, ImpulseModel
from ..algorithms.response import STAT_N
from ..algorithms.hybrid import hybrid_kinematics, hybrid_step
from ..algorithms.hybrid_detection import hybrid_shapes
from ..algorithms.kinematics import _world_poses_kernel, body_velocities, energy
from ..algorithms.reduced import reduced_dynamics, reduced_kinematics
from ..algorithms.region import ERR_HYBRID, region_update_kernel
from ..config import KERNEL
from ..configuration import integrate_joints_inplace
from ..data import data_arrays
from ..geometry import CollisionModel
from ..model import Model, model_arrays
from .adaptive_contact import (ERR_DISPLACEMENT, ERR_FORCE, ERR_VELOCITY, AdaptiveData,
                               AdaptiveModel, AdaptiveRun, ContactLoop,
                               adaptive_contact_steps, detect_on_pieces, energy_bound_start,
                               hybrid_energy_bound, hybrid_substeps, keep_update_counts,
                               record_state, region_data)
from .contact import (CONTACT_STATS, ContactStepper, _merge_stats, runaway_message,
                      stats_log)
from .cycles import _cycle_rate, _cycles
from .forces import (FramesKinematics, apply_compiled_forces, apply_joint_forces,
                     compile_forces)
from .hooks import python_forces, python_weights, register
from .contact_loop import ContactBuffers
from .stepping import stop_requested
from .checkpoint import Checkpointer, RunStop, interrupted, object_state, set_object_state
from .trajectory import SimulationDiverged, Trajectory, nonfinite_joint, record_rows

@njit(**KERNEL)
def _adaptive_steps(am, ad, fa, run):
    """The adaptive steps of the stretch ``run``
    (:data:`~articulated.simulation.adaptive_contact.AdaptiveRun`) in one compiled loop,
    with the model and options ``am`` (:data:`~articulated.simulation.adaptive_contact.
    AdaptiveModel`), the solver's state and workspaces ``ad``
    (:data:`~articulated.simulation.adaptive_contact.AdaptiveData`) and the forces ``fa``
    (their fields below by name): ``nsteps`` steps; every step whose global index
    ``step0 + s`` is a multiple of ``update_every`` runs the active-region update
    (:func:`articulated.algorithms.region.region_update_kernel`, criteria ``crit``,
    arguments ``rargs``; external forces on ``rbody``), the others the forward dynamics
    of the hybrid body (RGL Sec. 4.3, by ABA on the reduced tree: its kinematics,
    :func:`~articulated.algorithms.reduced.reduced_kinematics`, or after a region change
    :func:`~articulated.algorithms.hybrid.hybrid_kinematics`, then
    :func:`~articulated.algorithms.reduced.reduced_dynamics` with its buffers ``red``;
    forces on ``ubody``) and ``qd += h qdd``; the compiled forces ``fa``
    (:class:`~articulated.simulation.forces.ForceArrays`) are applied at every step (step s
    at time ``t0 + s h`` [s], accumulated as the simulator's ``t``): its
    joint forces at the step's ``q, qd`` into ``tau`` (the solver's, before the
    kinematics), its body forces at the step's poses and velocities (into the solver's
    ``f_ext``), then ``q (+)= h qd`` on the active joints. ``q``, ``qd``: the solver's
    state arrays (in/out). ``last`` (6,) int64 in/out: (active joints, update region,
    rigidified, and the region kernel's counts of passive nodes updated, evaluated,
    tensorized) of the last update; after step
    ``rec0 + s + 1`` of the caller's run (``rec0``: the index of step 0 within the run)
    divisible by ``record_every`` the state and ``last[:3]`` are copied into ``qrec``,
    ``qdrec``, ``srec`` (at most their rows) and its kinetic energy into ``Trec``: O(N_A)
    on the reduced tree (:func:`~articulated.algorithms.reduced.reduced_kinetic`) when it
    is current, else O(n) from ``full`` = (model_i, model_f, workspace buffer)
    (:func:`~articulated.algorithms.kinematics.state_energy`); a record on the reduced tree
    leaves its kinematics, which the next step then takes as they are. With ``timed``,
    ``cycles[s]`` is the cycle count of step s, its record included. Returns ``(steps
    done, error, joint, records)``: error 0, the region kernel's codes, or
    :data:`ERR_FORCE`, :data:`ERR_VELOCITY` (the state is that before the failing step,
    except after a failed region update)."""
    nsteps, step0, rec0, record_every, t0 = run.nsteps, run.step0, run.rec0, run.every, run.t0
    qrec, qdrec, srec, Trec, cycles = run.q, run.qd, run.sizes, run.T, run.cycles
    h, update_every, crit, timed, full = am.h, am.update_every, am.crit, am.timed, am.full
    jtype, qadr, vadr, jnv, ubody, rbody = am.jtype, am.qadr, am.vadr, am.jnv, am.ubody, am.rbody
    q, qd, qdd, stats, f_ext, tau = ad.q, ad.qd, ad.qdd, ad.stats, ad.f_ext, ad.tau
    bk, Vw, hargs, rargs, red, last = ad.bk, ad.Vw, ad.hargs, ad.rargs, ad.red, ad.last
    eps, budget_u, eps_vel, keep, budgets, per_tree, columns, whook = crit
    pose = hargs.pose
    near, ajoints, counts = bk.near, bk.ajoints, bk.counts
    nu = ubody.shape[0]
    hp = byref_each(hargs)          # by reference to the kernels below
    bkp = byref(bk)
    rp = byref(red)
    rstamp = red.rstamp
    nrec = 0
    t = t0
    kept = False                        # the record left the reduced tree's kinematics at q, qd
    for s in range(nsteps):
        c0 = _cycles() if timed else 0
        update = (step0 + s) % update_every == 0
        if not apply_joint_forces(fa, q, qd, tau, t):
            return s, ERR_FORCE, -1, nrec
        kin = update or rstamp[0] != counts[REGION_STAMP]
        if kin:
            hybrid_kinematics(bkp, hp)
        elif not kept:                  # else left by the record of the step before
            reduced_kinematics(bkp, hp.pose, rp, nu, ubody)     # poses of the forces' bodies
        if not apply_compiled_forces(fa, near, Vw, pose, f_ext, t):
            return s, ERR_FORCE, -1, nrec
        if fa.hook >= 0 and not python_forces(fa, t, q, qd, tau, f_ext):
            return s, ERR_FORCE, -1, nrec
        if update:
            if whook >= 0:
                python_weights(whook)
            res = region_update_kernel(h, eps, budget_u, eps_vel, keep, budgets, per_tree,
                                       rbody.shape[0], rbody, columns, hp, rp, rargs)
            if res[5] != 0:
                return s, res[5], res[6], nrec
            keep_update_counts(last, counts, res)
        else:
            reduced_dynamics(bkp, nu, ubody, f_ext, hp.pose, rp, stats, kin)
            if stats[STAT_BAD] >= 0:
                return s, ERR_HYBRID, int(stats[STAT_BAD]), nrec
            ss = 0.0
            for u in range(counts[N_AJOINTS]):
                J = ajoints[u]
                for r in range(jnv[J]):
                    x = qd[vadr[J] + r] + h * qdd[vadr[J] + r]
                    ss += x * x
            if not math.isfinite(ss):
                return s, ERR_VELOCITY, -1, nrec
            for u in range(counts[N_AJOINTS]):
                J = ajoints[u]
                for r in range(jnv[J]):
                    qd[vadr[J] + r] += h * qdd[vadr[J] + r]
        integrate_joints_inplace(ajoints, counts[N_AJOINTS], jtype, qadr, vadr, q, qd, h)
        kept = False
        if (rec0 + s + 1) % record_every == 0 and nrec < qrec.shape[0]:
            kept = record_state(nrec, q, qd, last, qrec, qdrec, srec, Trec, bk, red, full,
                                pose, ubody)
            nrec += 1
        if timed:
            cycles[s] = _cycles() - c0
        t += h
        if stop_requested(fa):
            return s + 1, 0, -1, nrec
    return nsteps, 0, -1, nrec


class _Records:
    """The records of an adaptive run, preallocated for the whole run: ``t`` (rows,) [s],
    ``q`` (rows, nq), ``qd`` (rows, nv), ``kinetic`` (rows,) [J], ``sizes`` (rows, 3)
    int64 (active joints, update region, rigidified); ``count`` rows written. The compiled
    loop writes its records into the free rows (:meth:`AdaptiveSimulator._compiled_steps`),
    so a recorded step costs no Python."""

    NAMES = ("t", "q", "qd", "kinetic", "active", "update_region", "rigidified")

    def __init__(self, model, rows):
        self.t = np.zeros(rows)
        self.q = np.zeros((rows, model.nq))
        self.qd = np.zeros((rows, model.nv))
        self.kinetic = np.zeros(rows)
        self.sizes = np.zeros((rows, 3), dtype=np.int64)
        self.count = 0

    def add(self, t, q, qd, T, sizes):
        """Append one record (a step on the Python path, or the run's start)."""
        c = self.count
        self.t[c] = t
        self.q[c] = q
        self.qd[c] = qd
        self.kinetic[c] = T
        self.sizes[c] = sizes
        self.count = c + 1

    def restore(self, traj):
        """Continue the records of ``traj`` (a resumed run)."""
        c = self.count = len(traj)
        for name in self.NAMES:
            x = getattr(traj, name)
            if name in ("t", "q", "qd", "kinetic"):
                getattr(self, name)[:c] = x
            else:
                self.sizes[:c, self.NAMES.index(name) - 4] = x

    def fields(self) -> dict:
        """The records so far as :class:`Trajectory` fields (:func:`~articulated.simulation.
        trajectory.record_rows`: copies unless the records are full)."""
        c = self.count
        out = {name: record_rows(getattr(self, name), c) for name in self.NAMES[:4]}
        for k, name in enumerate(self.NAMES[4:]):
            out[name] = self.sizes[:c, k].copy()
        return out


class AdaptiveSimulator:
    """Adaptive dynamics with hybrid bodies (see the module docstring).

    Parameters
    ----------
    model : Model
    dt : float > 0 - time step [s]
    max_active : int or sequence of int, optional - N_A, the active-region budget (joints):
        one for the whole model, or one per tree of the model (the trees in the order of
        their root bodies; RGL Fig. 1: a budget per character of a crowd)
    eps_vel : float >= 0 - velocity-metric threshold of the new active region
    eps_acc : float >= 0 - acceleration-metric threshold of the update region
    max_update : int, optional - budget of the acceleration update region (joints). Default:
        with ``max_active`` given and ``eps_acc = 0``, the active budget (its sum over the
        trees): RGL Table 1 runs ``N_U = N_A``, and an unbounded update region re-computes
        every joint whose acceleration metric is not zero, O(n) per region update, which
        loses the speed-up; otherwise unbounded (``eps_acc`` alone bounds it)
    update_every : int >= 1 - steps between active-region updates (RGL f = 1 / update_every)
    update_on_impact : bool - also update the active region at the step after one with a
        contact impact (GLM V.B: the region then follows the impact at once instead of
        up to ``update_every`` steps later); needs ``contacts`` (ValueError otherwise).
        Each such update costs a region update (O((N_A + N_U) log n))
    weights, velocity_weights : (nb, 6, 6) or callable ``(q) -> (nb, 6, 6)``, optional - SPD
        metric weights (identity; callables: configuration-dependent, evaluated at every
        active-region update, see :class:`AdaptiveDynamics`)
    forces : iterable of :class:`articulated.Force`
    q0, qd0 : initial state (neutral, zero); assembly : assembly-tree kind or tree
    contacts : CollisionModel, optional - contact with friction and restitution on the
        hybrid body (Gayle, Lin & Manocha 2006, sec. IV-V; see :meth:`_contact_step`)
    limits : bool - enforce the joint limits of the active joints (GLM IV.B)
    contact_options : dict, optional - options of
        :class:`~articulated.simulation.contact.ContactStepper`: ``max_rotation`` and
        ``max_arc_error`` split a step whose fastest rigid piece turns by more than the
        one, or whose shapes in contact would stray by more than the other, into substeps
        (the hybrid body's accelerations again at each, forces held; O(N_A) each,
        :func:`~articulated.simulation.adaptive_contact.hybrid_substeps`);
        ``energy_bound`` bounds the hybrid body's energy in O(N_A) on its reduced tree
        (:func:`~articulated.simulation.adaptive_contact.hybrid_energy_bound`)

    With none of ``max_active``, ``eps_vel`` (> 0), ``eps_acc`` (> 0), ``max_update`` the
    active region is everything that moves and the result is the full dynamics.
    Raises ValueError for bad settings.

    Cost (pendulum-300, one tip force; docs/benchmarks.md): a step between region updates
    is O(N_A) plus O(log n) per force; a region update (every ``update_every`` steps) is
    O((N_A + N_U) log n); a recorded step adds the copy of ``q, qd`` and the kinetic
    energy, O(N_A) from the reduced tree (O(n) only when the step ended on a region
    change), written by the compiled loop into arrays preallocated for the run, so
    :meth:`run` with the default ``record_every = 1`` keeps the speed-up. The first step
    of a fresh simulator is a region update from the fully articulated state: it builds
    the linear-coefficient tensors of every node that becomes passive, O(n) once (about
    20-30 us per node: 6-10 ms on pendulum-300, which a 400-step run pays as 15-25 us
    per step).
    """

    def __init__(self, model: Model, dt: float, *, max_active=None,
                 eps_vel: float = 0.0, eps_acc: float = 0.0, max_update: int | None = None,
                 update_every: int = 20, weights=None, velocity_weights=None, forces=(),
                 q0=None, qd0=None, assembly="balanced", contacts=None, limits: bool = False,
                 contact_options=None, update_on_impact: bool = False):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a finite number > 0, got {dt!r}")
        for name, x in (("eps_vel", eps_vel), ("eps_acc", eps_acc)):
            if not (math.isfinite(x) and x >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
        if max_update is not None and int(max_update) < 0:
            raise ValueError(f"max_update must be >= 0, got {max_update!r}")
        if max_active is not None:
            n_trees = int(np.count_nonzero(model.body_parent < 0))
            if np.ndim(max_active) == 0:
                max_active = int(max_active)
            else:
                max_active = np.asarray(max_active)
                if max_active.shape != (n_trees,) or not np.all(max_active == np.round(
                        max_active)):
                    raise ValueError(f"max_active per tree must be {n_trees} integers (one "
                                     f"per tree of the model), got {max_active!r}")
                max_active = max_active.astype(np.int64)
            if np.any(np.asarray(max_active) < 0):
                raise ValueError(f"max_active must be >= 0, got {max_active!r}")
        if int(update_every) < 1:
            raise ValueError(f"update_every must be >= 1, got {update_every!r}")
        if update_on_impact and contacts is None:
            raise ValueError("update_on_impact=True needs contacts (a CollisionModel): an "
                             "impact is a contact's")
        self.model = model
        self.dt = float(dt)
        self.max_active = max_active
        self.eps_vel = float(eps_vel)
        self.eps_acc = float(eps_acc)
        if max_update is None and max_active is not None and self.eps_acc == 0.0:
            max_update = int(np.sum(max_active))    # RGL Table 1: N_U = N_A
        self.max_update = None if max_update is None else int(max_update)
        self.update_every = int(update_every)
        self.update_on_impact = bool(update_on_impact)
        self.impulse_columns = 2
        """Rigidification of at most this many joints assembles RGL's K^R from unit test
        impulses (two hybrid solves per column); more use the equivalent momentum projection
        (one hybrid solve and an O(n) momentum pass, cheaper beyond two joints: measured on
        pendulum-300)."""
        self.solver = AdaptiveDynamics(model, assembly, weights=weights,
                                       velocity_weights=velocity_weights)
        self._given = dict(weights=weights, velocity_weights=velocity_weights,
                           assembly=assembly)
        self._data = model.data()    # the O(n) energies of records that need them
        self.q = model.neutral() if q0 is None else model.check_configuration(q0).copy()
        self.qd = np.zeros(model.nv) if qd0 is None else model.check_vector(qd0, "qd0",
                                                                          model.nv).copy()
        self.active = np.ones(model.nb, dtype=np.bool_)
        self.forces = []
        self._tau = np.zeros(model.nv)
        self._f_ext = np.zeros((model.nb, 6))
        self._bodies = np.zeros(0, dtype=np.int64)
        self._joints = np.zeros(0, dtype=np.int64)
        self._all = False
        self._set_forces()
        self._weights_hook = (register(_Weights(self), self)
                              if any(fn is not None for fn in self.solver._weight_fns) else -1)
        for f in forces:
            self.add_force(f)
        self.t = 0.0
        self.steps = 0
        self.last = dict(active=model.nb, update_region=0, rigidified=0)
        self.solver.set_state(self.q, self.qd)         # frames at q0 for the first forces
        self.solver.prepare_region()
        self._contact = None
        if contacts is not None or limits:
            self._contact = ContactStepper(model, contacts, self.dt, limits=bool(limits),
                                           **(contact_options or {}))
            self._contact.check_initial(self.q)
            self._contact_log = []
        elif contact_options:
            raise ValueError("contact_options given without contacts or limits")

    def add_force(self, force):
        """Add an applied force (:class:`articulated.Force`); returns it."""
        if not hasattr(force, "apply"):
            raise TypeError(f"a force needs an apply(model, t, q, qd, tau, f_ext) method, "
                            f"got {force!r}")
        if hasattr(force, "bind"):
            force.bind(self.model)
        self.forces.append(force)
        bodies, joints = (force.support(self.model) if hasattr(force, "support")
                          else (None, None))
        if bodies is None or joints is None:
            self._all = True
        else:
            self._bodies = np.union1d(self._bodies, np.asarray(bodies, dtype=np.int64))
            self._joints = np.union1d(self._joints, np.asarray(joints, dtype=np.int64))
        self._set_forces()
        return force

    def _set_forces(self):
        """The forces' ``ForceArrays`` for the compiled loops: their compiled forms, or all of
        them evaluated in Python from inside the loops (:mod:`articulated.simulation.hooks`),
        and the bodies they push (all bodies for a Python force without ``support``)."""
        m = self.model
        self._compiled = compile_forces(m, self.forces)
        self._rbody = self._bodies
        if self._compiled is not None:
            self._ubody = np.unique(self._compiled.body)
            return
        hook = self._python_forces = _AdaptiveForces(self)
        self._compiled = compile_forces(m, [])._replace(
            hook=register(hook, self), hq=np.zeros(m.nq), hqd=np.zeros(m.nv), hstop=hook.hstop)
        self._ubody = np.arange(m.nb) if self._all else self._bodies
        self._rbody = self._ubody

    def _forces(self):
        """Applied forces into the persistent ``tau``, ``f_ext`` (only the rows the forces
        touch are cleared, from :meth:`articulated.Force.support`)."""
        if self._compiled.hook < 0:
            # compiled forces (RGL Sec. 6: poses and velocities from the hierarchical frames)
            s = self.solver
            s.q[:] = self.q
            s.qd[:] = self.qd
            args = s.hybrid_args()
            hybrid_step(s._bk, 0, self._ubody, s.f_ext, args, 0, s._stats, False)
            if not (apply_joint_forces(self._compiled, self.q, self.qd, self._tau, self.t)
                    and apply_compiled_forces(self._compiled, s._near, s._Vw, args.pose,
                                              self._f_ext, self.t)):
                raise ValueError(f"an applied force is not finite at t = {self.t:.6g}")
            return self._tau, self._f_ext
        if not self._apply_python_forces(self.t, self.q, self.qd, self._tau, self._f_ext):
            raise ValueError(f"an applied force is not finite at t = {self.t:.6g}")
        return self._tau, self._f_ext

    def _apply_python_forces(self, t, q, qd, tau, f_ext):
        """The forces' ``apply`` at ``(t, q, qd)`` into ``tau``, ``f_ext`` (only the rows
        they touch cleared first, from :meth:`articulated.Force.support`), body poses from
        the solver's hierarchical frames (:class:`FramesKinematics`, at the solver's ``q``,
        which differs from ``q`` only on active joints). Returns False when a value is not
        finite."""
        m = self.model
        if self._all:
            tau[:] = 0.0
            f_ext[:] = 0.0
        else:
            f_ext[self._bodies] = 0.0
            for j in self._joints:
                tau[m.jnt_vadr[j]:m.jnt_vadr[j] + m.jnt_nv[j]] = 0.0
        kin = FramesKinematics(self.solver, m.nb, lambda: body_velocities(m, q, qd))
        for f in self.forces:
            f.apply(m, t, q, qd, tau, f_ext, kin)
        rows = f_ext if self._all else f_ext[self._bodies]
        taus = tau if self._all else tau[np.isin(m.dof_body, self._joints)] \
            if self._joints.size else tau[:0]
        return bool(np.isfinite(rows).all() and np.isfinite(taus).all())

    def _region_update(self, tau, f_ext):
        """RGL Sec. 5.1 steps 1-4 (:meth:`AdaptiveDynamics.region_update`); returns the new
        joint velocities."""
        s = self.solver
        qd, U, rigid = s.region_update(
            self.q, self.qd, tau, f_ext, self.dt, eps_acc=self.eps_acc,
            max_update=self.max_update, eps_vel=self.eps_vel, max_active=self.max_active,
            bodies=None if self._all else self._bodies,
            impulse_columns=self.impulse_columns)
        self.active = s.active.copy()
        self.last = dict(active=int(self.active.sum()), update_region=int(U.size),
                         rigidified=int(rigid.size))
        return qd

    def _compiled_stretch(self, limit: int) -> int:
        """How many of the next ``limit`` steps run in the compiled loops: all of them,
        unless a shape is a mesh and there are contacts (then :meth:`_python_step`)."""
        if self._contact is not None and self._has_meshes():
            return 0
        return limit

    def step(self) -> None:
        """One step (an active-region update every ``update_every`` steps), by the path
        :meth:`run` takes for it: the compiled loop :func:`_adaptive_steps` for one step
        when it can (see :meth:`_compiled_stretch`), else :meth:`_python_step`.

        Raises ValueError (state left at the last finite values, except after a failed
        region update) when an acceleration, force or the state becomes non-finite.
        """
        if self._compiled_stretch(1):
            error = self._compiled_steps(1, 0, 1)[2]
            if error is not None:
                raise error
        else:
            self._python_step()

    def _python_step(self) -> None:
        """One step in Python: forces through :meth:`articulated.Force.apply` (or their
        compiled form, evaluated here), the active-region update of
        :meth:`AdaptiveDynamics.region_update` or the hybrid-body accelerations of
        :meth:`AdaptiveDynamics.hybrid_accelerations`, then ``q (+)= h qd`` on the active
        joints."""
        m, h = self.model, self.dt
        self.solver.sync_frames(self.q)                 # world poses at this step's q
        tau, f_ext = self._forces()
        if self._contact is not None:
            q, qd = self._contact_step(tau, f_ext)
        elif self.steps % self.update_every == 0:
            qd = self._region_update(tau, f_ext)
            q = self.q.copy()                           # qd is zero outside the new region
            J = self.solver._ajoints
            integrate_joints_inplace(J, J.size, m.jnt_type, m.jnt_qadr, m.jnt_vadr, q, qd, h)
        else:
            # multilevel forward dynamics of the hybrid body (RGL Sec. 4.3): O(N_A log n)
            s = self.solver
            qdd = s.hybrid_accelerations(self.q, self.qd, tau, f_ext,
                                         None if self._all else self._bodies)
            qd = self.qd + h * qdd
            q = self.q.copy()
            J = s._ajoints
            integrate_joints_inplace(J, J.size, m.jnt_type, m.jnt_qadr, m.jnt_vadr, q, qd, h)
        if not (np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(qd @ qd)):
            detail, joint = nonfinite_joint(m, q, qd, "the new state")
            e = ValueError(f"the adaptive simulation became non-finite at t = {self.t:.6g}: "
                           f"{detail}")
            e.joint = joint
            raise e
        self.q, self.qd = q, qd
        self.t += h
        self.steps += 1

    def _contact_step(self, tau, f_ext):
        """One step with contacts and limits on the hybrid body (GLM sec. IV-V): the
        hybrid body's accelerations (every ``update_every`` steps after the active-region
        update, whose rigidification impulses come first), ``qd* = qd + h qdd``, detection
        at ``q``, then the impulses of :meth:`ContactStepper.respond` on the reduced tree
        of the hybrid body (:mod:`articulated.algorithms.reduced`: one rigid body per
        rigid piece, the active joints; its articulated factorization is the one the
        step's ABA left): a contact on body b acts on b's piece (GLM: "contacts on rigid
        pieces act on their front node"), so ``J_h``, ``K = J_h M_h^-1 J_h^T`` and the
        impulse propagation cost O(N_A); limits of rigidified joints are not rows (their
        velocity is zero: they cannot cross). A step whose fastest rigid piece would turn
        by more than the contact option ``max_rotation``, or whose shapes in contact would
        stray by more than ``max_arc_error``, runs from detection on as equal substeps
        (:meth:`_contact_substep` each; :mod:`articulated.simulation.adaptive_contact`).
        Returns ``(q, qd)``."""
        m, h, s, cs = self.model, self.dt, self.solver, self._contact
        bodies = None if self._all else self._bodies
        cl = self._contact_loop()
        if cs.options["energy_bound"]:
            energy_bound_start(cl, self.q, self.qd, self.steps)
        impact = cl.impact
        update = self.steps % self.update_every == 0 or impact[1] != 0
        impact[1] = 0
        if update:
            qs = self._region_update(tau, f_ext)
            qdd = s.hybrid_accelerations(self.q, qs, tau, f_ext, bodies)  # the new reduced tree
        else:
            qdd = s.hybrid_accelerations(self.q, self.qd, tau, f_ext, bodies)
            qs = self.qd + h * qdd
        red = s._reduced_args()
        na = int(s._bk.counts[N_AJOINTS])
        q = self.q.copy()
        cs.substeps = 1
        if na == 0:                                     # nothing moves: no contact
            for name in CONTACT_STATS.names:
                cs.last[name] = math.nan if name.startswith("ke_") else 0
            self._contact_log.append(cs.last.copy())
            cl.ebound[1] = -1.0
            self._cdet.n = 0                            # as the compiled loop: no contact
            return q, np.zeros(m.nv)
        aj, im, fac, adof, lim, piece = self._reduced_rows(red, na)
        cl.qsf[:] = qs
        det = self._cdet
        cl.ncon[0] = det.n                  # the contacts of the step before
        k = int(hybrid_substeps(cl, red, na, aj, m.jnt_nv, h, det.out, False)[0])
        cs.substeps = k
        if k == 1:
            q, qd = self._contact_substep(q, qs if update else self.qd, qs, h, update, red,
                                          na)
        else:
            # equal substeps (max_rotation, max_arc_error), the forces held; an update
            # step starts from the region update's velocities less the h qdd of its
            # transient hybrid body (both under the rigidification's projection)
            hk = h / k
            qd = (qs if update else self.qd).copy()
            if update:
                qdd = s._rargs.buf.qddT.copy()
                qd[adof] = qs[adof] - h * qdd[adof]
            total = None
            for i in range(k):
                if i:
                    qdd = s.hybrid_accelerations(q, qd, tau, f_ext, bodies)
                qs = qd.copy()
                qs[adof] = qd[adof] + hk * qdd[adof]
                q, qd = self._contact_substep(q, qd, qs, hk, update and i == 0, red, na)
                total = cs.last.copy() if total is None else _merge_stats(total, cs.last)
            cs.last = total
        if impact[0] and cs.last["impacts"] > 0:     # GLM V.B: the region follows an impact
            impact[1] = 1
        self._contact_log.append(cs.last.copy())
        return q, qd

    def _contact_substep(self, q, qd, qs, h, zero, red, na):
        """Steps 2-5 of :mod:`articulated.simulation.adaptive_contact` over ``h`` [s] (a
        step or a substep) from ``(q, qd)`` with the unconstrained velocities ``qs`` (nv,),
        as :func:`~articulated.simulation.adaptive_contact.adaptive_contact_steps`: detection
        on the rigid pieces, the impulses on the reduced tree, the energy bound, ``q (+)= h
        qd+ + dq`` on the active joints (``zero``: after a region update, ``qd`` is zero outside
        the active joints). Returns new ``(q, qd)``; statistics in the stepper's ``last``."""
        m, cs = self.model, self._contact
        aj, im, fac, adof, lim, piece = self._reduced_rows(red, na)
        mi = red.red_i[:7 * na].reshape(7, na)
        nqr = int(mi[2, na - 1] + m.jnt_nq[aj[na - 1]])
        _world_poses_kernel(mi, red.red_f, red.rq[:nqr], red.red_d)
        if self._has_meshes():  # coal's narrow phase reads every shape's world pose
            n = cs.detect(q, qs, h)
        else:
            t0 = time.perf_counter()
            det = cs.detector
            n = 0
            if det is not None:
                n, det.broad, det.out = detect_on_pieces(self._contact_loop(), red, na,
                                                         len(adof), qs[adof], h, det.broad,
                                                         det.out)
                det.n = n
            cs.last["n"] = n
            cs.last["detect_time"] = time.perf_counter() - t0
        con = None
        if n:
            con = cs.detector.out
            b = con.body[:n]
            con = con._replace(body=np.where(b >= 0, piece[np.maximum(b, 0)], -1))

        def kinetic(x):
            full = np.zeros(m.nv)
            full[adof] = x
            return cs._kinetic(q, full)

        qd1, v = cs.respond(q, qs[adof], n, im, fac, lim, kinetic, con, h=h)
        joint = cs.check_displacement(v, adof)
        if joint is not None:
            e = ValueError(f"{cs.failure} (t = {self.t:.6g})")
            e.joint = joint
            raise e
        cs.last["energy_removed"] = 0.0
        if cs.options["energy_bound"]:
            cl = self._contact_loop()
            cl.qd0[:len(adof)] = qd[adof]
            cs.last["energy_removed"] = hybrid_energy_bound(cl, red, na, nqr, h, qd1, v,
                                                            self.steps)
        qd = np.zeros(m.nv) if zero else qd.copy()
        qd[adof] = qd1
        v_full = np.zeros(m.nv)
        v_full[adof] = v
        q = q.copy()
        integrate_joints_inplace(aj, na, m.jnt_type, m.jnt_qadr, m.jnt_vadr, q, v_full, 1.0)
        return q, qd

    def _reduced_rows(self, red, na):
        """What the contact response needs of the current reduced tree, built once per
        active region (``red.rstamp``): the active joints, the :class:`ImpulseModel` and
        :class:`Factor` views of its packed model and workspace, the model dof of each
        reduced dof, the :class:`Limits` of the active limited joints in reduced numbering,
        and the reduced body (piece) of every body (-1: welded to the world)."""
        stamp = int(red.rstamp[0])
        if getattr(self, "_rrows", (None,))[0] != stamp:
            m, s = self.model, self.solver
            aj = s._bk.ajoints[:na].copy()
            mi = red.red_i[:7 * na].reshape(7, na)
            mv = model_arrays(mi, red.red_f)
            nvr = int(mv.vadr[na - 1] + mv.jnv[na - 1])
            dv = data_arrays(red.red_d, na, nvr)
            fac = Factor(mat3_view(dv.Xup_E, na), dv.Xup_r, dv.UDinv, dv.Dinv,
                         mat3_view(dv.oE, na), dv.op)
            im = ImpulseModel(mv.parent, mv.vadr, mv.jnv, mv.S)
            # the per-region data of the compiled loop, by the same function
            cl = self._contact_loop()
            region_data(cl, s._bk, red, na, m.jnt_nv, m.jnt_vadr, s.active, self.q)
            adof = cl.adof[:nvr].copy()
            lim = Limits(*(a[:cl.stamp[1]].copy() for a in cl.limr))
            piece = cl.piece.copy()
            self._rrows = (stamp, (aj, im, fac, adof, lim, piece))
        return self._rrows[1]

    def contact_list(self):
        """The contacts of the last step (:meth:`ContactStepper.contact_list
        <articulated.simulation.contact.ContactStepper.contact_list>`; bodies of the
        model); ValueError without contacts."""
        if self._contact is None:
            raise ValueError("this simulator has no contacts (pass contacts=CollisionModel)")
        return self._contact.contact_list()

    def _has_meshes(self):
        """Whether a shape is a mesh (coal, in Python: the compiled contact loop cannot run)."""
        det = self._contact.detector
        return det is not None and det.mesh is not None

    def _contact_loop(self):
        """The :class:`~articulated.simulation.adaptive_contact.ContactLoop` of the compiled
        contact loop and of the Python step's per-region data (built once)."""
        if getattr(self, "_cloop", None) is None:
            cs = self._contact
            m, d = self.model, cs.data
            lim = cs.limits
            # limits only: an empty detector keeps one compiled signature
            det = self._cdet = cs.detector or Detector(CollisionModel(m))
            nl = len(lim.dof)
            theta, arc = cs.options["max_rotation"], cs.options["max_arc_error"]
            # update steps may split into substeps: the region update projects qddT too
            self.solver._split[0] = theta is not None or arc is not None
            self._cloop = ContactLoop(
                d.model_i, d.model_f, d.buf, det.gm, det.poses, cs.sc, cs.opt, lim,
                Limits(*(np.zeros(nl, a.dtype) for a in lim)), np.zeros(m.nv), np.zeros(m.nv),
                np.zeros(m.nv, np.int64), np.zeros(m.nb, np.int64),
                np.zeros((det.out.dist.shape[0], 2), np.int64), np.zeros(m.nv),
                np.zeros(m.nv), np.zeros(m.nv), np.zeros((m.nb, 6)),
                np.array([-2, 0], np.int64), np.zeros(m.nv), np.zeros(m.nv),
                np.zeros(m.nq), np.array([0.0, -1.0, 0.0]), hybrid_shapes(det.gm, m.nb),
                np.array([int(self.update_on_impact), 0], np.int64),
                -1.0 if theta is None else float(theta), np.ones(1, np.int64), np.zeros(14),
                np.zeros(m.nq), np.zeros(m.nv), -1.0 if arc is None else float(arc),
                np.zeros((m.nb, 6)), np.zeros(1, np.int64))
        return self._cloop

    def _log_contacts(self, cstats, rate):
        """Append the statistics rows of compiled steps (cycle counts to seconds) to the
        contact log and make the last one the stepper's ``last``."""
        if not len(cstats):
            return
        rec = stats_log(cstats, rate)
        self._contact_log.extend(rec)
        self._contact.last = rec[-1].copy()

    def _compiled_steps(self, n, k0, every, rec=None):
        """Up to ``n`` steps in the compiled loop :func:`_adaptive_steps` (region updates
        included), recording (after every step ``k0 + s + 1`` of the run divisible by
        ``every``) into the free rows of ``rec`` (a :class:`_Records`, or None: no records);
        returns ``(steps done, wall per step (n,) or None, error)`` with error None or a
        ValueError."""
        s, m = self.solver, self.model
        s.q[:] = self.q
        s.qd[:] = self.qd
        s.tau[:] = self._tau
        st = s.passive_stats
        if rec is None:
            rec = _Records(m, 0)
        c = rec.count
        d = self._data
        rate = _cycle_rate()
        cycles = np.zeros(n if rate else 0, dtype=np.int64)
        crit = s._region_criteria(self.eps_acc, self.max_update, self.eps_vel,
                                  self.max_active, self.impulse_columns) + (self._weights_hook,)
        last = np.array([self.last["active"], self.last["update_region"],
                         self.last["rigidified"], st["updated"], st["evaluated"],
                         st["tensorized"]], dtype=np.int64)
        am = AdaptiveModel(self.dt, self.update_every, crit, rate is not None, m.jnt_type,
                           m.jnt_qadr, m.jnt_vadr, m.jnt_nv, self._ubody, self._rbody,
                           (d.model_i, d.model_f, d.buf))
        ad = AdaptiveData(s.q, s.qd, s._qdd, s._stats, s.f_ext, s.tau, s._bk, s._Vw,
                          s.hybrid_args(), s._region_args(crit[6]), s._reduced_args(), last)
        run = AdaptiveRun(n, self.steps, k0, every, self.t, rec.q[c:], rec.qd[c:],
                          rec.sizes[c:], rec.kinetic[c:], cycles)
        if self._contact is None:
            done, err, joint, nrec = _adaptive_steps(am, ad, self._compiled, run)
        else:
            cs, cl = self._contact, self._contact_loop()
            det = self._cdet
            cstats = np.zeros((n, len(CONTACT_STATS.names)))
            cl.ncon[0] = det.n              # the contacts of the step before (substeps)
            done, err, joint, nrec, cb, cbody = adaptive_contact_steps(
                am, ad, self._compiled, run, cl, cstats,
                ContactBuffers(det.broad, det.out, cs.rb))
            det.broad, det.out, cs.rb = cb
            self._cloop = cl._replace(cbody=cbody)
            cs.substeps = int(cl.nsub[0])
            if done:        # the contacts of the last (sub)step, for contact_list()
                det.n = int(cl.sst[STAT_N] if cl.nsub[0] > 1 else cstats[done - 1, STAT_N])
            self._log_contacts(cstats[:done], rate)
        if nrec:                # after step k of the run: t = t_run + k dt (t_run: record 0)
            first = (-(k0 + 1)) % every
            rec.t[c:c + nrec] = rec.t[0] + (k0 + first + 1 + every * np.arange(nrec)) * self.dt
            rec.count += nrec
        self.q = s.q.copy()
        self.qd = s.qd.copy()
        self.t += done * self.dt
        self.steps += done
        self.active = s.active.copy()
        self.last = dict(active=int(last[0]), update_region=int(last[1]),
                         rigidified=int(last[2]))
        s.passive_stats = dict(updated=int(last[3]), evaluated=int(last[4]),
                               tensorized=int(last[5]))
        error = None
        if err:
            what = {ERR_FORCE: "an applied force", ERR_VELOCITY: "the joint velocity",
                    ERR_HYBRID: "the hybrid-body acceleration"}.get(
                        err, "the fully articulated acceleration")
            where = f" at joint {m.joint_name[joint]!r}" if joint >= 0 else ""
            if err == ERR_DISPLACEMENT:
                error = ValueError(f"{runaway_message(m.joint_name[joint])} (t = {self.t:.6g})")
            else:
                error = ValueError(f"{what} is not finite{where} at t = {self.t:.6g}")
            error.joint = m.joint_name[joint] if joint >= 0 else None
        wall = cycles[:done] / rate if rate else None
        return done, wall, error

    def run(self, steps: int, record_every: int = 1, *, checkpoint=None,
            checkpoint_every: int | None = None) -> Trajectory:
        """Run ``steps`` steps, recording at the start and after every ``record_every``-th
        step (``1 + steps // record_every`` records) the state, its kinetic energy and the
        active-region sizes (:class:`Trajectory` fields ``kinetic``, ``active``,
        ``update_region``, ``rigidified``, ``wall`` per step).

        The steps run in one compiled loop (:func:`_adaptive_steps`; forces without a
        compiled form and callable metric weights are called from inside it), except
        those with mesh shapes in contact (:meth:`_python_step`, see
        :meth:`_compiled_stretch`), as :meth:`step` runs them; ``wall`` of a compiled stretch
        comes from the CPU's cycle counter (x86; elsewhere each of its steps gets the
        stretch's mean time). The compiled loop runs in stretches of about 0.2 s that end
        at the checkpoints (a stretch boundary changes no operation).

        ``checkpoint``, ``checkpoint_every``: as
        :meth:`DynamicsSimulator.run <articulated.simulation.simulator.DynamicsSimulator.run>`
        (:mod:`articulated.simulation.checkpoint`; the whole solver state is written, about
        40 kB per body: 12 MB for pendulum-300). Ctrl-C ends the run with the records so
        far (``interrupted``).

        The total energy is not watched here: rigidification impulses remove kinetic
        energy by design (RGL Sec. 5.4).

        Raises ValueError for steps or record_every < 1, :class:`articulated.
        SimulationDiverged` (the trajectory recorded so far, the joint that went first
        when known, the state before the failing step) when a step fails on non-finite
        values, :class:`~articulated.simulation.checkpoint.CheckpointError` when a
        checkpoint cannot be written."""
        if int(steps) < 1 or int(record_every) < 1:
            raise ValueError("steps and record_every must be >= 1")
        steps, every = int(steps), int(record_every)
        ck = None
        if checkpoint is not None:
            ck = Checkpointer(self, checkpoint, checkpoint_every, steps, every)
        elif checkpoint_every is not None:
            raise ValueError("checkpoint_every given without checkpoint")
        return self.continue_run(steps, every, None, ck, None)

    def continue_run(self, steps, every, progress, ck, start):
        """:meth:`run` from step ``start.done`` with the records ``start.trajectory``
        (:class:`~articulated.simulation.checkpoint.Resume`; None: a new run),
        checkpoints by ``ck`` (or None). ``progress`` is not used (no progress bar)."""
        wall = np.zeros(steps)
        rec = _Records(self.model, 1 + steps // every)
        if start is None:
            k, wall_prev = 0, 0.0
        else:
            tr = start.trajectory
            rec.restore(tr)
            k, wall_prev = start.done, start.wall_time
            wall[:k] = tr.wall[:k]
        log0 = len(self._contact_log) if self._contact is not None else 0

        def contacts():
            if self._contact is None:
                return None
            return np.array(self._contact_log[log0:], dtype=CONTACT_STATS)

        def trajectory(n):
            return Trajectory.of(
                self.model, **rec.fields(), wall=wall[:n], contacts=contacts(), nfev=n,
                wall_time=wall_prev + float(wall[k0:n].sum()),
                integrator="semi_implicit_euler", method="adaptive", dt=self.dt,
                settings=self.settings())

        def record():
            """The simulator's state (a step on the Python path), its kinetic energy O(n)."""
            rec.add(self.t, self.q, self.qd,
                    energy(self.model, self.q, self.qd, data=self._data)[0],
                    [self.last[n] for n in ("active", "update_region", "rigidified")])

        def diverged(k, e):
            return SimulationDiverged(
                f"adaptive run stopped at step {k + 1}: {e}. The records so far are in the "
                f"exception's .trajectory, the state before the failing step in .q, .qd.",
                trajectory=trajectory(k), t=self.t, step=k + 1,
                joint=getattr(e, "joint", None), q=self.q, qd=self.qd)

        if start is None:
            record()
        k0 = k
        t_run = rec.t[0]         # compiled steps: t = t_run + k dt, whatever the stretches
        stop = RunStop()
        if self._compiled.hook >= 0:
            self._python_forces.stop = stop
            self._python_forces.hstop[0] = 0
        per = None
        with stop:
            if ck is not None and start is None:
                ck.write(self, trajectory(0), 0, 0)
            while k < steps and not stop.requested:
                limit = steps - k if ck is None else ck.next(k) - k
                if per is not None:
                    limit = min(limit, max(1, int(0.2 / max(per, 1e-9))))
                n = self._compiled_stretch(limit)
                if n:
                    t0 = time.perf_counter()
                    done, w, error = self._compiled_steps(n, k, every, rec)
                    took = time.perf_counter() - t0
                    per = took / max(done, 1)
                    wall[k:k + done] = per if w is None else w
                    self.t = t_run + (k + done) * self.dt
                    if error is not None:
                        raise diverged(k + done, error)
                    k += done
                else:
                    t0 = time.perf_counter()
                    try:
                        self._python_step()
                    except ValueError as e:          # non-finite accelerations or state
                        raise diverged(k, e) from e
                    wall[k] = time.perf_counter() - t0
                    if (k + 1) % every == 0:
                        record()
                    k += 1
                if ck is not None and (ck.due(k) or stop.requested):
                    ck.write(self, trajectory(k), k, k)
        if stop.requested and k < steps:
            return interrupted(trajectory(k), k, steps, None if ck is None else ck.path)
        return trajectory(steps)

    # ------------------------------------------------------------------ checkpoints
    def settings(self) -> dict:
        """The simulator's settings (JSON values; metric weights as ``"array"`` or
        ``"callable"``), as recorded in its trajectories."""
        ma = self.max_active
        weights = {k: (None if v is None else "callable" if callable(v) else "array")
                   for k, v in self._given.items() if k != "assembly"}
        a = self._given["assembly"]
        return dict(max_active=ma.tolist() if isinstance(ma, np.ndarray) else ma,
                    eps_vel=self.eps_vel, eps_acc=self.eps_acc, max_update=self.max_update,
                    update_every=self.update_every, update_on_impact=self.update_on_impact,
                    assembly=a if isinstance(a, str) else "custom", **weights)

    def checkpoint_settings(self) -> dict:
        """Keywords of :func:`articulated.Simulator` that rebuild this simulator (JSON),
        ``dt`` and ``method`` included. ValueError for what cannot be checkpointed
        (contacts and limits, callable metric weights, a custom assembly tree)."""
        out = dict(self.settings(), dt=self.dt, method="adaptive")
        if self._contact is not None:
            raise ValueError("a run with contacts or joint limits cannot be checkpointed "
                             "(the impulse solver's warm start is not kept)")
        if "callable" in (out["weights"], out["velocity_weights"]):
            raise ValueError("an adaptive run with callable metric weights cannot be "
                             "checkpointed (pass the weights as arrays)")
        if out["assembly"] == "custom":
            raise ValueError("an adaptive run with a custom assembly tree cannot be "
                             "checkpointed (use assembly='balanced' or 'serial')")
        return out

    _STATE_SKIP = ("forces", "_given")

    def _build_lazy(self):
        """Build the solver's lazily made bundles, so that a fresh simulator and this one
        are laid out alike (:func:`~articulated.simulation.checkpoint.object_state`)."""
        s = self.solver
        s.hybrid_args()
        s._reduced_args()
        s._region_args(self.impulse_columns)

    def checkpoint_state(self):
        """``(JSON dict, arrays)``: the state (``q, qd, t``) and every array and scalar of
        the simulator and its solver (:func:`~articulated.simulation.checkpoint.
        object_state`), so that the continuation repeats the same operations; metric
        weight arrays under ``weights``, ``velocity_weights``."""
        self._build_lazy()
        scalars, arrays = object_state(self, self._STATE_SKIP)
        out = {f"sim{k}": v for k, v in arrays.items()}
        out.update(q=self.q, qd=self.qd, t=np.array([self.t]))
        for k in ("weights", "velocity_weights"):
            if self._given[k] is not None:
                out[k] = np.asarray(self._given[k], dtype=np.float64)
        return dict(scalars=scalars), out

    def restore_state(self, meta, arrays) -> None:
        """Set what :meth:`checkpoint_state` wrote, on a simulator built with the same
        settings. ValueError when they do not fit."""
        self._build_lazy()
        mine = {k[len("sim"):]: v for k, v in arrays.items() if k.startswith("sim.")}
        set_object_state(self, meta["scalars"], mine, self._STATE_SKIP)

    def __repr__(self):
        return (f"AdaptiveSimulator(nb={self.model.nb}, dt={self.dt:g}, "
                f"max_active={self.max_active}, update_every={self.update_every}, "
                f"t={self.t:.6g}, active={int(self.active.sum())})")


class _AdaptiveForces:
    """The applied forces of an adaptive simulator evaluated in Python, for the compiled
    loops (:mod:`articulated.simulation.hooks`): holds the simulator weakly."""

    def __init__(self, sim):
        self._sim = weakref.ref(sim)
        self.stop = None                            # the RunStop of the current run
        self.hstop = np.zeros(1, np.int64)          # ForceArrays.hstop

    def forces(self, t, q, qd, tau, f_ext):
        sim = self._sim()
        sim.solver.sync_frames(q)   # the hierarchical frames at q, which the forces read
        if not sim._apply_python_forces(t, q, qd, tau, f_ext):
            tau[0] = math.nan                       # python_forces reports it
        if self.stop is not None and self.stop.requested:
            self.hstop[0] = 1

    def potential(self, q):
        return 0.0


class _Weights:
    """The configuration-dependent metric weights of an adaptive simulator, evaluated at
    its solver's ``q`` before each active-region update of the compiled loops."""

    def __init__(self, sim):
        self._sim = weakref.ref(sim)

    def __call__(self):
        s = self._sim().solver
        s._evaluate_weights(s.q)
