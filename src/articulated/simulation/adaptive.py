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
(:mod:`articulated.simulation.hooks`), and so is coal for the mesh pairs that need it.
"""

from __future__ import annotations

import functools
import math
import time
import weakref
import numpy as np
from numba import njit

from .._byref import byref, byref_each
from ..algorithms.adaptive import AdaptiveDynamics
from ..algorithms.bundles import N_AJOINTS
from ..algorithms.collision import Detector
from ..algorithms.contact_rows import Limits
from ..algorithms.response import NSTATS, STAT_N
from ..algorithms.hybrid_detection import hybrid_shapes
from ..algorithms.kinematics import body_velocities, energy
from ..algorithms.lookahead import lookahead_buffers
from ..algorithms.region import ERR_HYBRID
from ..config import KERNEL
from ..configuration import integrate_joints_inplace
from ..geometry import CollisionModel
from ..model import Model
from .adaptive_contact import (ERR_DISPLACEMENT, ERR_FORCE, ERR_VELOCITY, AdaptiveData,
                               AdaptiveModel, AdaptiveRun, ContactLoop,
                               adaptive_contact_steps, end_step, hybrid_forward,
                               hybrid_velocities)
from .contact import CONTACT_STATS, ContactStepper, apgd_work, runaway_message, stats_log
from .cycles import _cycle_rate, _cycles
from .forces import FramesKinematics, compile_forces
from .hooks import register
from .contact_loop import ContactBuffers, detect_bundle
from .stepping import stop_requested
from .checkpoint import Checkpointer, RunStop, interrupted, object_state, set_object_state
from .trajectory import SimulationDiverged, Trajectory, record_rows

@njit(**KERNEL)
def _adaptive_steps(am, ad, fa, run):
    """The adaptive steps of the stretch ``run``
    (:data:`~articulated.simulation.adaptive_contact.AdaptiveRun`: ``nsteps`` steps from
    the simulator's step ``step0`` and time ``t0``, records into its free rows) in one
    compiled loop, with the model and options ``am``
    (:data:`~articulated.simulation.adaptive_contact.AdaptiveModel`), the solver's state
    and workspaces ``ad`` (:data:`~articulated.simulation.adaptive_contact.AdaptiveData`)
    and the forces ``fa`` (:class:`~articulated.simulation.forces.ForceArrays`). Each
    step: :func:`~articulated.simulation.adaptive_contact.hybrid_forward` (the forces at
    the step's ``q, qd`` and time ``t0 + s h``; every step whose global index is a
    multiple of ``update_every`` (and the first of a ``run.fresh`` stretch) the
    active-region update of RGL Sec. 5.1, the others the
    hybrid body's accelerations, RGL Sec. 4.3, and ``qd += h qdd``), then ``q (+)= h qd``
    on the active joints and the record after run step ``rec0 + s + 1`` divisible by
    ``every`` (:func:`~articulated.simulation.adaptive_contact.record_state`: O(N_A) on the
    reduced tree when it is current, else O(n); it leaves the reduced tree's kinematics,
    which the next step then takes as they are). ``ad.last`` (6,) int64 in/out: (active
    joints, update region, rigidified, and the region kernel's counts of passive nodes
    updated, evaluated, tensorized) of the last update. With ``timed``, ``run.cycles[s]``
    is the cycle count of step s, its record included. Returns ``(steps done, error,
    joint, records)``: error 0, the region kernel's codes, or :data:`ERR_FORCE`,
    :data:`ERR_VELOCITY` (the state is that before the failing step, except after a failed
    region update)."""
    ptr = (byref(ad.bk), byref_each(ad.hargs), byref(ad.red))
    counts = ad.bk.counts
    nrec = 0
    t = run.t0
    kept = False                        # the record left the reduced tree's kinematics at q, qd
    for s in range(run.nsteps):
        c0 = _cycles() if am.timed else 0
        update = (run.step0 + s) % am.update_every == 0 or (s == 0 and run.fresh)
        err, joint, _ = hybrid_forward(am, ad, fa, ptr, t, update, kept, False,
                                       s == 0 and run.fresh)
        if err == 0 and not update and not hybrid_velocities(am, ad):
            err = ERR_VELOCITY
        if err:
            return s, err, joint, nrec
        integrate_joints_inplace(ad.bk.ajoints, counts[N_AJOINTS], am.jtype, am.qadr, am.vadr,
                                 ad.q, ad.qd, am.h)
        nrec, kept = end_step(am, ad, run, s, nrec, c0)
        t += am.h
        if stop_requested(fa):
            return s + 1, 0, -1, nrec
    return run.nsteps, 0, -1, nrec


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
        hybrid body (Gayle, Lin & Manocha 2006, sec. IV-V;
        :mod:`~articulated.simulation.adaptive_contact`)
    limits : bool or None - enforce the joint limits of the active joints (GLM IV.B); None
        (default): ``model.enforce_limits``
    contact_options : dict, optional - options of
        :class:`~articulated.simulation.contact.ContactStepper`: ``max_rotation`` moves
        a step whose fastest rigid piece turns by more than it by RK4 (in substeps, the
        hybrid body's accelerations again at each, forces held; O(N_A) each,
        :func:`~articulated.simulation.adaptive_contact.hybrid_substeps`),
        ``max_arc_error`` gives the contacts their look-ahead gaps on the rigid pieces and
        splits a step whose impulses change their paths by more than it;
        ``energy_bound`` bounds the hybrid body's energy in O(N_A) on its reduced tree
        (:func:`~articulated.simulation.adaptive_contact.hybrid_energy_bound`)

    With none of ``max_active``, ``eps_vel`` (> 0), ``eps_acc`` (> 0), ``max_update`` the
    active region is everything that moves and the result is the full dynamics.
    Raises ValueError for bad settings.

    Cost: a step between region updates is O(N_A) plus O(log n) per force; a region update (every ``update_every`` steps) is
    O((N_A + N_U) log n); a recorded step adds the copy of ``q, qd`` and the kinetic
    energy, O(N_A) from the reduced tree (O(n) only when the step ended on a region
    change), written by the compiled loop into arrays preallocated for the run, so
    :meth:`run` with the default ``record_every = 1`` keeps the speed-up. The first step
    of a fresh simulator is a region update from the fully articulated state: it builds
    the linear-coefficient tensors of every node that becomes passive, O(n) once
    (measured in docs/results/adaptive.md).
    """

    def __init__(self, model: Model, dt: float, *, max_active=None,
                 eps_vel: float = 0.0, eps_acc: float = 0.0, max_update: int | None = None,
                 update_every: int = 20, weights=None, velocity_weights=None, forces=(),
                 q0=None, qd0=None, assembly="balanced", contacts=None, limits: bool | None = None,
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
        (one hybrid solve and an O(n) momentum pass, cheaper beyond two joints)."""
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
        self._fresh = True                              # the first step updates the region
        self.solver.prepare_region()
        self._contact = None
        if limits is None:
            limits = bool(model.enforce_limits and model.jnt_limited.any())
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

    def step(self) -> None:
        """Take one step in the compiled loop, as :meth:`run` takes it.

        An active-region update every ``update_every`` steps.

        Raises ValueError (state left at the last finite values, except after a failed
        region update) when an acceleration, force or the state becomes non-finite.
        """
        error = self._compiled_steps(1, 0, 1)[2]
        if error is not None:
            raise error

    def contact_list(self):
        """Return the contacts of the last step.

        As :meth:`ContactStepper.contact_list
        <articulated.simulation.contact.ContactStepper.contact_list>` (bodies of the
        model); ValueError without contacts.
        """
        if self._contact is None:
            raise ValueError("this simulator has no contacts (pass contacts=CollisionModel)")
        return self._contact.contact_list()

    def _restart(self):
        """Start again from a state set between runs (``q``, ``qd`` assigned) as a new
        simulator starts: every frame and node coefficient at it, fully articulated, the
        active region updated at the next step, the contact loop's per-region data and
        warm starts from scratch. Raises ValueError for a bad ``q`` or ``qd``."""
        m, s = self.model, self.solver
        self.q = m.check_configuration(self.q).copy()
        self.qd = m.check_vector(self.qd, "qd", m.nv).copy()
        s.set_state(self.q, self.qd)
        s.prepare_region()
        self.active = np.ones(m.nb, dtype=np.bool_)
        self.last = dict(active=m.nb, update_region=0, rigidified=0)
        self._fresh = True
        if self._contact is not None:
            self._contact.rb.n_prev[0] = 0
            if getattr(self, "_cloop", None) is not None:
                self._cloop.stamp[0] = -2       # every shape placed in its piece again
                self._cdet.n = 0

    def _contact_loop(self):
        """The :class:`~articulated.simulation.adaptive_contact.ContactLoop` of the compiled
        contact loop (built once)."""
        if getattr(self, "_cloop", None) is None:
            cs = self._contact
            m, d = self.model, cs.data
            lim = cs.limits
            # limits only: an empty detector keeps one compiled signature
            det = self._cdet = cs.detector or Detector(CollisionModel(m))
            hook = -1
            if det.mesh is not None and det.mesh.nplane < len(det.mesh.pairs):
                hook = register(functools.partial(det.mesh.coal_contacts, det.poses, det.gm),
                                self)
            nl, nq, nv, nb = len(lim.dof), m.nq, m.nv, m.nb
            theta, arc = cs.options["max_rotation"], cs.options["max_arc_error"]
            # update steps may split into substeps, and the energy bound's work starts from
            # the velocities before the update: the region update projects qddT too
            self.solver._split[0] = (theta is not None or arc is not None
                                     or bool(cs.options["energy_bound"]))
            # "auto" solves the hybrid body by sequential impulses: its rows span the
            # active joints only, and the contacts of a rigid piece share one block
            opt = (cs.opt._replace(apgd_work=apgd_work("sequential"))
                   if cs.options["solver"] == "auto" else cs.opt)
            self._cloop = ContactLoop(
                det=detect_bundle(det, nb, d.model_i, d.model_f, d.buf, hook),
                whole=det.mesh is not None, sc=cs.sc, opt=opt, lim=lim,
                limr=Limits(*(np.zeros(nl, a.dtype) for a in lim)), qsf=np.zeros(nv),
                vfull=np.zeros(nv), adof=np.zeros(nv, np.int64), piece=np.zeros(nb, np.int64),
                qsr=np.zeros(nv), qd1=np.zeros(nv), vr=np.zeros(nv), vb=np.zeros((nb, 6)),
                stamp=np.array([-2, 0], np.int64), qd0=np.zeros(nv), xr=np.zeros(nv),
                rq1=np.zeros(nq), ebound=np.array([0.0, -1.0, 0.0]),
                hs=hybrid_shapes(det.gm, nb),
                impact=np.array([int(self.update_on_impact), 0], np.int64),
                theta=-1.0 if theta is None else float(theta),
                nsub=np.array([1, 0, 0], np.int64),
                sst=np.zeros(NSTATS), qsave=np.zeros(nq), qdsave=np.zeros(nv),
                arc=-1.0 if arc is None else float(arc), ab=np.zeros((nb, 6)),
                rkq=np.zeros(nq), rkd=np.zeros(nv),
                rkv=np.zeros(nv), rka=np.zeros(nv), la=lookahead_buffers(len(det.gm.body)),
                buf1=np.zeros_like(d.buf), ab0=np.zeros((nb, 6)), vb0=np.zeros((nb, 6)))
            self._cbody = np.zeros((det.out.dist.shape[0], 2), np.int64)
            self._gap = np.zeros(det.out.dist.shape[0])
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
        if not (np.array_equal(s.q, self.q) and np.array_equal(s.qd, self.qd)):
            self._restart()
        s.tau[:] = self._tau
        st = s.passive_stats
        if rec is None:
            rec = _Records(m, 0)
        c = rec.count
        d = self._data
        rate = _cycle_rate()
        cycles = np.zeros(n if rate else 0, dtype=np.int64)
        crit = s._region_criteria(self.eps_acc, self.max_update, self.eps_vel,
                                  self.max_active, self.impulse_columns)
        last = np.array([self.last["active"], self.last["update_region"],
                         self.last["rigidified"], st["updated"], st["evaluated"],
                         st["tensorized"]], dtype=np.int64)
        am = AdaptiveModel(h=self.dt, update_every=self.update_every, crit=crit,
                           whook=self._weights_hook, timed=rate is not None, jtype=m.jnt_type,
                           qadr=m.jnt_qadr, vadr=m.jnt_vadr, jnv=m.jnt_nv, ubody=self._ubody,
                           rbody=self._rbody, full=(d.model_i, d.model_f, d.buf))
        ad = AdaptiveData(s.q, s.qd, s._qdd, s._stats, s.f_ext, s.tau, s._bk, s._Vw,
                          s.hybrid_args(), s._region_args(crit[6]), s._reduced_args(), last)
        run = AdaptiveRun(n, self.steps, k0, every, self.t, rec.q[c:], rec.qd[c:],
                          rec.sizes[c:], rec.kinetic[c:], cycles, self._fresh)
        if self._contact is None:
            done, err, joint, nrec = _adaptive_steps(am, ad, self._compiled, run)
        else:
            cs, cl = self._contact, self._contact_loop()
            det = self._cdet
            cstats = np.zeros((n, len(CONTACT_STATS.names)))
            done, err, joint, nrec, cb = adaptive_contact_steps(
                am, ad, self._compiled, run, cl, cstats,
                ContactBuffers(det.broad, det.out, cs.rb, self._cbody, self._gap))
            det.broad, det.out, cs.rb, self._cbody, self._gap = cb
            cs.substeps = int(cl.nsub[0])
            if done:        # the contacts of the last (sub)step, for contact_list()
                det.n = int(cl.sst[STAT_N] if cl.nsub[0] > 1 else cstats[done - 1, STAT_N])
            self._log_contacts(cstats[:done], rate)
        if nrec:                # after step k of the run: t = t_run + k dt (t_run: record 0)
            first = (-(k0 + 1)) % every
            rec.t[c:c + nrec] = rec.t[0] + (k0 + first + 1 + every * np.arange(nrec)) * self.dt
            rec.count += nrec
        if done:
            self._fresh = False
        self.q = s.q.copy()
        self.qd = s.qd.copy()
        t = self.t
        for _ in range(done):   # as the compiled loop's t += h: the same time, so the
            t += self.dt        # same trajectory, however a run is cut into stretches
        self.t = t
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
        """Run ``steps`` steps and return their :class:`Trajectory`.

        Records at the start and after every ``record_every``-th
        step (``1 + steps // record_every`` records) the state, its kinetic energy and the
        active-region sizes (:class:`Trajectory` fields ``kinetic``, ``active``,
        ``update_region``, ``rigidified``, ``wall`` per step).

        The steps run in one compiled loop (:func:`_adaptive_steps`, with contacts or limits
        :func:`~articulated.simulation.adaptive_contact.adaptive_contact_steps`; forces
        without a compiled form, callable metric weights and coal's mesh pairs are called
        from inside it), as :meth:`step` runs them; ``wall`` of a compiled stretch comes from the CPU's cycle counter (x86; elsewhere each of its steps gets the
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
        """Continue a run (:meth:`run`) from a checkpoint.

        From step ``start.done`` with the records ``start.trajectory``
        (:class:`~articulated.simulation.checkpoint.Resume`; None: a new run),
        checkpoints by ``ck`` (or None). ``progress`` is not used (no progress bar).
        """
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
            """The simulator's state at the run's start, its kinetic energy O(n)."""
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
                t0 = time.perf_counter()
                done, w, error = self._compiled_steps(limit, k, every, rec)
                took = time.perf_counter() - t0
                per = took / max(done, 1)
                wall[k:k + done] = per if w is None else w
                if error is not None:
                    raise diverged(k + done, error)
                k += done
                if ck is not None and (ck.due(k) or stop.requested):
                    ck.write(self, trajectory(k), k, k)
        if stop.requested and k < steps:
            return interrupted(trajectory(k), k, steps, None if ck is None else ck.path)
        return trajectory(steps)

    # ------------------------------------------------------------------ checkpoints
    def settings(self) -> dict:
        """Return the simulator's settings, as recorded in its trajectories.

        JSON values; metric weights as ``"array"`` or ``"callable"``.
        """
        ma = self.max_active
        weights = {k: (None if v is None else "callable" if callable(v) else "array")
                   for k, v in self._given.items() if k != "assembly"}
        a = self._given["assembly"]
        return dict(max_active=ma.tolist() if isinstance(ma, np.ndarray) else ma,
                    eps_vel=self.eps_vel, eps_acc=self.eps_acc, max_update=self.max_update,
                    update_every=self.update_every, update_on_impact=self.update_on_impact,
                    assembly=a if isinstance(a, str) else "custom", **weights)

    def checkpoint_settings(self) -> dict:
        """Return the keywords of :func:`articulated.Simulator` that rebuild this simulator.

        JSON, ``dt`` and ``method`` included. ValueError for what cannot be checkpointed
        (contacts and limits, callable metric weights, a custom assembly tree).
        """
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
        """Return ``(JSON dict, arrays)``, the state to checkpoint.

        The state (``q, qd, t``) and every array and scalar of
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
        """Set what :meth:`checkpoint_state` wrote.

        On a simulator built with the same settings; ValueError when they do not fit.
        """
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
