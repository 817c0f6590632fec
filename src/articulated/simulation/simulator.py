"""The stepping loop of tree dynamics: :class:`DynamicsSimulator`.

The stepping loop of tree dynamics: :class:`DynamicsSimulator` (state, applied forces,
integrator, recording, energy), what the factory :func:`articulated.Simulator` builds for
the forward-dynamics methods; it records a
:class:`~articulated.simulation.trajectory.Trajectory`."""

from __future__ import annotations

import functools
import math
import re
import sys
import time
import weakref

import numpy as np

from ..algorithms._inputs import check_dtype
from ..algorithms.forward_dynamics import METHODS, forward_dynamics
from ..algorithms.kinematics import energy
from ..configuration import _normalize_kernel
from ..model import Model
from .forces import Force, StateKinematics, compile_forces
from ..algorithms.collision import Detector
from ..algorithms.response import STAT_N
from ..geometry import CollisionModel
from .contact import CONTACT_STATS, ContactStepper, runaway_message, stats_log
from .contact_loop import ERR_RUNAWAY, ContactBuffers, contact_loop_bundles, contact_steps
from .cycles import _cycle_rate
from .integrators import INTEGRATORS, STEPPERS, _layout, _qdot, _unit
from .stepsize import ATOL, RTOL
from .hooks import register
from .stepping import (ERR_FORCE, ERR_STATE, INTEGRATOR_CODES, METHOD_CODES, OK, Records, Run,
                       loop_bundles, record_state, records, tree_steps)
from .trajectory import SimulationDiverged, Trajectory, record_rows, nonfinite_joint as _describe
from .checkpoint import Checkpointer, RunStop, interrupted
from .watch import EnergyWatch


class _NonFinite(Exception):
    """Internal: a non-finite value appeared at a dynamics evaluation or after a step."""

    def __init__(self, detail, joint=None):
        super().__init__(detail)
        self.detail = detail
        self.joint = joint


class _Recorder:
    def __init__(self, sim):
        self.sim = sim
        self.t, self.q, self.qd, self.T, self.V = [], [], [], [], []

    def add(self, t, q, qd):
        T, V = self.sim._energy(q, qd)
        self.t.append(t)
        self.q.append(q.copy())
        self.qd.append(qd.copy())
        self.T.append(T)
        self.V.append(V)

    def restore(self, traj):
        """Continue the records of ``traj`` (a resumed run)."""
        self.t, self.q, self.qd = list(traj.t), list(traj.q), list(traj.qd)
        self.T, self.V = list(traj.kinetic), list(traj.potential)

    def trajectory(self, nfev, wall):
        s = self.sim
        m = s.model
        return Trajectory.of(
            m, t=np.array(self.t, dtype=np.float64),
            q=np.array(self.q, dtype=np.float64).reshape(-1, m.nq),
            qd=np.array(self.qd, dtype=np.float64).reshape(-1, m.nv),
            kinetic=np.array(self.T, dtype=np.float64),
            potential=np.array(self.V, dtype=np.float64),
            nfev=int(nfev), wall_time=float(wall), integrator=s.integrator, method=s.method,
            dt=s.dt, contacts=(None if s._contact is None
                               else np.array(s._contact_log, dtype=CONTACT_STATS)),
            settings=s.settings())


class _Progress:
    """A rich progress bar, started only on a terminal and for a long run."""

    def __init__(self, mode, total):
        self.total = total
        self.mode = mode
        self.possible = bool(mode) if mode is not None else sys.stdout.isatty()
        self.bar = None
        self.task = None
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, done):
        if not self.possible:
            return
        now = time.perf_counter()
        if self.bar is None:
            elapsed = now - self.t0
            long = (self.mode is True or self.total > 1000
                    or (done > 0 and elapsed > 0.25 and elapsed / done * self.total > 2.0))
            if not long:
                return
            from rich.progress import (BarColumn, Progress, TaskProgressColumn, TextColumn,
                                       TimeRemainingColumn)
            self.bar = Progress(TextColumn("simulating"), BarColumn(), TaskProgressColumn(),
                                TimeRemainingColumn(), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("sim", total=self.total)
        if now - self.last > 0.1 or done >= self.total:
            self.last = now
            self.bar.update(self.task, completed=done)

    def close(self):
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _positive(x, what):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a real number, got {x!r}") from None
    if not (math.isfinite(x) and x > 0.0):
        raise ValueError(f"{what} must be finite and > 0, got {x}")
    return x


def _count(x, what, minimum):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{what} must be an integer, got {x!r}")
    if x < minimum:
        raise ValueError(f"{what} must be >= {minimum}, got {x}")
    return int(x)


_NO_PIECES = np.zeros((0, 2), np.int64)
"""The contacts' rigid pieces of :data:`~articulated.simulation.contact_loop.ContactBuffers`
(adaptive dynamics only): none for the full model."""


class DynamicsSimulator:
    """Time integration of an articulated body under gravity and applied forces.

    By a forward-dynamics algorithm and a time integrator. Usually built by the factory
    :func:`articulated.Simulator` (same arguments), which builds the adaptive and
    quasi-static simulators for the other ``method`` values.

    Parameters
    ----------
    model : Model
    dt : float
        Time step [s], > 0 (for ``rk45`` the recording interval unit; the solver chooses its
        own steps).
    integrator : {"rk4", "euler", "semi_implicit_euler", "rk45"}, optional
        Default ``"rk4"`` (``"semi_implicit_euler"`` with ``contacts``) ``"euler"``:
        explicit Euler, order 1 (the papers' choice: Redon, Galoppo & Lin 2005, sec. 7);
        ``"semi_implicit_euler"``: order 1, bounded energy error for a constant mass matrix
        (fast-spinning light links gain energy: :mod:`~articulated.simulation.integrators`);
        ``"rk4"``: classical Runge-Kutta, order 4; ``"rk45"``: adaptive Dormand-Prince 5(4)
        (scipy ``RK45``, the solver of ``solve_ivp(method="RK45")``) with ``rtol``,
        ``atol``. Quaternion joints are integrated on the manifold and stay unit (see
        :mod:`articulated.simulation.integrators`).
    method : {"aba", "aba_modified", "crba", "dca", "srm"}
        Forward-dynamics algorithm (:func:`articulated.forward_dynamics`); ``"srm"``: a
        model with loop joints by the sequential regularization method
        (:class:`articulated.simulation.srm.SRMSolver`; ``integrator`` then is "rk2", "rk4"
        or "euler"; applied forces are evaluated once per step and held over it; ``nfev``
        counts steps).
    srm : dict, optional
        Options of :class:`~articulated.simulation.srm.SRMSolver` (``iterations``, ``eps``,
        ``alpha``, ``form``) for ``method="srm"``; its step-size control is asked for by
        ``rtol`` / ``atol``.
    forces : iterable of force objects (:mod:`articulated.simulation.forces`)
        Applied forces, after those of the model file (``model.forces``: an MJCF file's
        joint springs, dampers and actuators).
    q0 : (nq,) float64, optional
        Initial configuration (default ``model.neutral()``).
    qd0 : (nv,) float64, optional
        Initial joint velocities (default zero).
    rtol, atol : float > 0, optional
        Tolerances of ``rk45`` (default :data:`~articulated.simulation.stepsize.RTOL` =
        1e-6, :data:`~articulated.simulation.stepsize.ATOL` = 1e-8) and, for
        ``method="srm"``, of its step-size control: with either given, SRM steps by step
        doubling with steps of at most ``dt`` chosen to meet them, and ``dt`` is the
        recording unit (the records still lie at ``t + k record_every dt``); without, SRM
        steps at ``dt`` (:meth:`articulated.simulation.srm.SRMSolver.advance`; ``nfev`` then
        counts SRM steps: three per tried step, whole and two halves).
    dtype : float64 or float32
        Arithmetic of the forward dynamics (the state is integrated in float64; float32
        reproduces the single-precision study of Ascher, Pai & Cloutier 1997).
    contacts : CollisionModel, optional
        Shapes of this model and static obstacles: the step becomes forward dynamics,
        detection and impulses with friction and restitution (Gayle, Lin & Manocha 2006;
        :mod:`articulated.simulation.contact`); needs ``method="aba"`` and
        ``integrator="semi_implicit_euler"`` (the default then).
    contact_options : dict, optional
        Options of :class:`~articulated.simulation.contact.ContactStepper` (``tol``,
        ``sweeps``, ``rest_speed``, ``slip_speed``, ``warm_start``, ``project``,
        ``depth_tol``, ``allow_initial_penetration``, ``limit_e``, ...).
    limits : bool or None
        Enforce the joint limits ``model.jnt_range`` by impulses (GLM IV.B, Kokkevis 2004),
        with or without contacts; same stepping as contacts. None (default):
        ``model.enforce_limits`` (on for MJCF models whose file limits a joint, off
        otherwise).
    energy_drift : float > 0 or None
        Threshold of the energy watch (default 0.01): when every applied force conserves
        energy (no contacts, limits, damping or driving forces), :meth:`run` warns once
        (:class:`~articulated.simulation.watch. EnergyDriftWarning`, with the step, the
        drift and a suggested step size) when the relative drift of the recorded total
        energy passes it; None: off.
    model_forces : bool
        Add ``model.forces`` (default True); False: only ``forces``.

    Attributes
    ----------
    t : float
        Time [s].
    q : (nq,) float64
        Configuration (a copy; assign to set it, validated).
    qd : (nv,) float64
        Joint velocities (a copy; assign to set it, validated).
    forces : list
        The applied forces.
    nfev : int
        Forward-dynamics evaluations since construction.

    Raises
    ------
    ValueError
        ``dt <= 0`` or non-finite, unknown integrator or method, ``q0``/``qd0`` of the wrong
        shape, non-finite, or with non-unit quaternions, non-positive tolerances, a force
        that does not fit the model.
    TypeError
        ``model`` is not a Model, unsupported dtype.

    Notes
    -----
    Example
    -------
    >>> sim = DynamicsSimulator(model, dt=1e-3, integrator="rk4", forces=[Spring(
    ...     "tip", (0, 0, 0), anchor=(1, 0, 0), stiffness=50.0)])
    >>> traj = sim.run(1000, record_every=10)
    >>> traj.total.max() - traj.total.min()   # energy drift [J]
    """

    def __init__(self, model: Model, dt: float, integrator: str | None = None,
                 method: str = "aba", *, forces=(), q0=None, qd0=None,
                 rtol: float | None = None, atol: float | None = None,
                 dtype=np.float64, srm=None, contacts=None,
                 contact_options=None, limits: bool | None = None, energy_drift: float | None = 0.01,
                 model_forces: bool = True):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        self.model = model
        self.dt = _positive(dt, "dt")
        self._srm = None
        self._contact = None
        self._gap = np.zeros(0)      # the contacts' look-ahead gaps (grows)
        if limits is None:
            limits = bool(model.enforce_limits and model.jnt_limited.any())
        if integrator is None:
            integrator = "rk4" if contacts is None and not limits else "semi_implicit_euler"
        if contacts is not None or limits:
            if integrator != "semi_implicit_euler" or method != "aba":
                raise ValueError(
                    f"contacts and joint limits are stepped by impulses with "
                    f"integrator='semi_implicit_euler' "
                    f"and method='aba' (got integrator={integrator!r}, method={method!r})")
            if dtype is not np.float64 and np.dtype(dtype) != np.float64:
                raise ValueError("contacts are computed in float64")
            self._contact = ContactStepper(model, contacts, self.dt, limits=bool(limits),
                                           **dict(contact_options or {}))
        elif contact_options:
            raise ValueError("contact_options given without contacts or limits")
        if method == "srm":  # closed loops: sequential regularization (simulation/srm.py)
            from .srm import SRMSolver

            self._srm = SRMSolver(model, self.dt, integrator=integrator, rtol=rtol, atol=atol,
                                  **dict(srm or {}))
        elif integrator not in INTEGRATORS:
            raise ValueError(f"unknown integrator {integrator!r}; expected one of {INTEGRATORS}")
        elif method not in METHODS:
            raise ValueError(f"unknown forward-dynamics method {method!r}; expected one of {METHODS}")
        self.integrator = integrator
        self.method = method
        self.rtol = _positive(RTOL if rtol is None else rtol, "rtol")
        self.atol = _positive(ATOL if atol is None else atol, "atol")
        controlled = integrator == "rk45" or (self._srm is not None and self._srm.adaptive)
        self._watch = EnergyWatch(energy_drift, self.dt, integrator,
                                  (self.rtol, self.atol) if controlled else None)
        self.dtype = check_dtype(dtype)
        self._L = _layout(model)
        self._step_fn = STEPPERS.get(integrator)
        self._tau = np.zeros(model.nv)
        self._f_ext = np.zeros((model.nb, 6))
        self.forces = []
        self._calls = []
        self._loop = None
        self.nfev = 0
        self.t = 0.0
        self.q = model.neutral() if q0 is None else q0
        self.qd = np.zeros(model.nv) if qd0 is None else qd0
        for f in (tuple(model.forces) if model_forces else ()) + tuple(forces):
            self.add_force(f)
        if self._contact is not None:
            self._contact.check_initial(self._q)
            self._contact_log = []

    # ------------------------------------------------------------------ state
    @property
    def q(self) -> np.ndarray:
        """Current configuration (nq,) float64 (a copy; assign to set it, checked)."""
        return self._q.copy()

    @q.setter
    def q(self, value):
        q = self.model.check_vector(value, "q", self.model.nq)
        if not np.isfinite(q).all():
            self.model.diagnose_nonfinite(q=q)
        q = self.model.check_configuration(q).copy()
        if self._L.quat_qadr.shape[0]:
            _normalize_kernel(self._L.quat_qadr, q)  # within QUAT_TOL: make it exact
        self._q = q

    @property
    def qd(self) -> np.ndarray:
        """Current joint velocities (nv,) float64 (a copy; assign to set them, checked)."""
        return self._qd.copy()

    @qd.setter
    def qd(self, value):
        qd = self.model.check_vector(value, "qd", self.model.nv)
        if not np.isfinite(qd).all():
            self.model.diagnose_nonfinite(qd=qd)
        self._qd = qd.copy()

    def set_state(self, q=None, qd=None, t=None) -> None:
        """Set any of the configuration, velocities and time (validated as in ``__init__``)."""
        if q is not None:
            self.q = q
        if qd is not None:
            self.qd = qd
        if t is not None:
            t = float(t)
            if not math.isfinite(t):
                raise ValueError(f"t must be finite, got {t}")
            self.t = t

    @property
    def ctrl(self) -> np.ndarray:
        """Controls (nu,) float64 of the simulator's :class:`~articulated.simulation.forces.
        Actuators` (a copy; set it to drive the next steps; MuJoCo's ``data.ctrl``).

        Raises ValueError on assignment for a wrong shape or a non-finite value, and
        AttributeError when the simulator has no actuators."""
        return self._actuators().ctrl.copy()

    @ctrl.setter
    def ctrl(self, value):
        act = self._actuators()
        u = np.asarray(value, dtype=np.float64)
        if u.shape != (act.nu,):
            raise ValueError(f"ctrl must have shape ({act.nu},), got {u.shape}")
        if not np.isfinite(u).all():
            bad = int(np.flatnonzero(~np.isfinite(u))[0])
            raise ValueError(f"ctrl of actuator {act.names[bad]!r} is not finite: {u[bad]}")
        act.ctrl[:] = u
        loop = self._loop
        if loop is not None and len(loop) > 1 and loop[2].hook < 0:
            fa, new = loop[2], compile_forces(self.model, self.forces)
            if new.joint != fa.joint or new.pd_gains.shape != fa.pd_gains.shape:
                self._loop = None
            else:                   # the compiled loop reads the new controls
                fa.tau[:] = new.tau
                fa.pd_gains[:] = new.pd_gains

    def _actuators(self):
        from .forces import Actuators

        for f in self.forces:
            if isinstance(f, Actuators):
                return f
        raise AttributeError("this simulator has no actuators (add an "
                             "articulated.Actuators force, or load a model whose file has "
                             "them)")

    def add_force(self, force) -> None:
        """Add an applied force (an object with ``apply(model, t, q, qd, tau, f_ext)``).

        Raises TypeError if it has no ``apply`` method, ValueError if it does not fit the
        model (unknown body or joint, wrong sizes).
        """
        if not callable(getattr(force, "apply", None)):
            raise TypeError(f"a force needs an apply(model, t, q, qd, tau, f_ext) method, got {force!r}")
        if callable(getattr(force, "bind", None)):
            force.bind(self.model)
        self.forces.append(force)
        self._calls.append((force, isinstance(force, Force)))
        self._loop = None

    # ------------------------------------------------------------------ dynamics
    def generalized_forces(self, t, q, qd):
        """Return the applied forces ``(tau (nv,), f_ext (nb, 6))`` at a state.

        Internal buffers, overwritten by the next call. Joint forces [N m | N]; body forces
        ``[n; f]`` about each body origin in body coordinates.
        """
        tau = self._tau
        f_ext = self._f_ext
        tau[:] = 0.0
        f_ext[:] = 0.0
        if self._calls:
            kin = StateKinematics(self.model, q, qd)
            for force, native in self._calls:
                if native:
                    force.apply(self.model, t, q, qd, tau, f_ext, kin=kin)
                else:
                    force.apply(self.model, t, q, qd, tau, f_ext)
        return tau, f_ext

    def _accel(self, t, q, qd):
        """qdd at a state: applied forces + forward dynamics. Raises _NonFinite."""
        m = self.model
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            raise _NonFinite(*_describe(m, q, qd, "state"))
        tau, f_ext = self.generalized_forces(t, q, qd)
        self._accel_check(tau, f_ext)
        self.nfev += 1
        try:
            qdd = forward_dynamics(m, q, qd, tau, f_ext, method=self.method, dtype=self.dtype)
        except ValueError as e:
            named = re.search(r"at joint '([^']*)'", str(e))    # the algorithms' reports
            raise _NonFinite(f"forward dynamics failed ({e}) at max |qd| = "
                             f"{float(np.abs(qd).max(initial=0.0)):.3g}, max |tau| = "
                             f"{float(np.abs(tau).max(initial=0.0)):.3g}",
                             named.group(1) if named else None) from e
        if self.dtype != np.float64:
            qdd = qdd.astype(np.float64)
        return qdd

    def _accel_check(self, tau, f_ext):
        """Raise _NonFinite naming the joint or body of a non-finite applied force."""
        m = self.model
        if not np.isfinite(tau).all():
            k = int(np.flatnonzero(~np.isfinite(tau))[0])
            j = m.joint_name[m.dof_body[k]]
            raise _NonFinite(f"the applied joint force tau[{k}] (joint {j!r}) is {float(tau[k])!r} "
                             f"(forces: {self.forces!r})", j)
        if not np.isfinite(f_ext).all():
            b = int(np.argwhere(~np.isfinite(f_ext))[0][0])
            raise _NonFinite(f"the applied body force f_ext[{b}] (body {m.body_name[b]!r}) is "
                             f"not finite (forces: {self.forces!r})", m.joint_name[b])

    def _energy(self, q, qd):
        T, V = energy(self.model, q, qd)
        return T, V + self._potential(q)

    def _potential(self, q):
        """Potential energy [J] of the applied forces that have one, at ``q``."""
        V = 0.0
        if self.forces:
            kin = StateKinematics(self.model, q)
            for force, native in self._calls:
                pot = getattr(force, "potential", None)
                if pot is not None:
                    V += float(pot(self.model, q, kin=kin) if native else pot(self.model, q))
        return V

    def energy(self):
        """Return ``(T, V)`` [J] of the current state.

        Kinetic energy, and potential energy (gravity plus the conservative applied forces).
        """
        return self._energy(self._q, self._qd)

    # ------------------------------------------------------------------ stepping
    def contact_list(self):
        """Return the contacts of the last step.

        See :meth:`ContactStepper.contact_list
        <articulated.simulation.contact.ContactStepper.contact_list>`; ValueError without
        ``contacts``.
        """
        if self._contact is None:
            raise ValueError("this simulator has no contacts (pass contacts=CollisionModel)")
        return self._contact.contact_list()

    def _step_fixed(self):
        if self._srm is not None:  # applied forces sampled at the step start, held over it
            srm = self._srm
            made = srm.steps_made
            try:
                if srm.adaptive:
                    q1, qd1 = srm.advance(self._q, self._qd, self.t, self.t + self.dt,
                                          self.generalized_forces if self._calls else None)
                else:
                    tau, f_ext = self.generalized_forces(self.t, self._q, self._qd)
                    q1, qd1 = srm.step(self._q, self._qd, tau, f_ext if self._calls else None)
            except RuntimeError as e:
                raise _NonFinite(str(e)) from e
            finally:
                self.nfev += srm.steps_made - made
        else:
            q1, qd1 = self._step_fn(self.model, self._accel, self.t, self._q, self._qd, self.dt)
        if not (np.isfinite(q1).all() and np.isfinite(qd1).all()):
            raise _NonFinite(*_describe(self.model, q1, qd1, "new state"))
        self._q = q1
        self._qd = qd1
        self.t = self.t + self.dt

    @property
    def srm_solver(self):
        """The :class:`~articulated.simulation.srm.SRMSolver` of ``method="srm"``, else None.

        Its ``control`` counts accepted and rejected steps.
        """
        return self._srm

    def step(self) -> None:
        """Advance the state by one time step ``dt``.

        The same step as ``run(1)``, without a run's records, energy watch and progress
        bar: in a loop of single steps (a controller setting ``ctrl`` between them) the
        Python around each compiled step costs tens of microseconds, not hundreds.

        Raises SimulationDiverged (state left at the last finite values) if the state or
        an applied force becomes non-finite.
        """
        loop = None if self.integrator == "rk45" else self._compiled()
        if loop is not None:
            self._step_compiled(*loop)
            return
        if self.integrator == "rk45":
            self.run(1, progress=False)
            return
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                self._step_fixed()
        except _NonFinite as e:
            rec = _Recorder(self)
            rec.add(self.t, self._q, self._qd)
            raise self._diverged(e, rec.trajectory(0, 0.0), 1, 1) from e.__cause__

    def run(self, steps: int, record_every: int = 1, progress=None, *, checkpoint=None,
            checkpoint_every: int | None = None) -> Trajectory:
        """Integrate ``steps`` time steps and record the states.

        Parameters
        ----------
        steps : int >= 0
            Number of steps of ``dt`` (the run covers ``[t, t + steps dt]``).
        record_every : int >= 1
            Record every this many steps; the initial state and the final state are always
            recorded (the records lie at ``t + k record_every dt`` plus the end).
        progress : bool or None
            Show a rich progress bar; None: only when stdout is a terminal and the run is
            long (> 1000 steps or > 2 s expected).
        checkpoint : str or os.PathLike, optional
            Write a checkpoint ``.npz`` there before the first step, every
            ``checkpoint_every`` steps, at the end and on Ctrl-C;
            :func:`articulated.Simulator.resume <articulated.simulation.checkpoint.resume>`
            finishes the run from it, bit for bit
            (:mod:`articulated.simulation.checkpoint`).
        checkpoint_every : int >= 1, optional
            Steps between checkpoints (None: start, end and Ctrl-C only).

        Returns
        -------
        Trajectory
            Times, states, energies, ``nfev`` and wall time of this run; ``interrupted`` is
            True when Ctrl-C ended it early (the records so far).

        Notes
        -----
        For ``rk45`` the adaptive solver covers the whole interval (its own step sizes) and
        the records are its dense-output values at the record times (``t_eval`` of
        ``solve_ivp``), quaternions normalized.

        The steps run in one compiled loop when every applied force has a compiled form
        (:func:`~articulated.simulation.forces.compile_forces`), the dtype is float64 and
        the integrator is not ``rk45`` (with contacts or limits also: no mesh pair but
        mesh-plane ones); otherwise step by step in Python, with the same results.

        When every applied force conserves energy (and there are no contacts or limits),
        the total energy of the records is watched: an
        :class:`~articulated.simulation.watch.EnergyDriftWarning` (once per simulator)
        reports the step, the drift and a smaller step size when the relative drift passes
        ``energy_drift``.

        Raises
        ------
        SimulationDiverged
            The state or an applied force became non-finite, forward dynamics failed on it,
            or the adaptive step size collapsed; ``.trajectory`` holds the records so far,
            ``.joint`` the joint that went first, ``.q, .qd`` and the simulator the last
            finite state.
        CheckpointError
            A checkpoint could not be written (``.trajectory``: the records so far; the
            simulator holds the state reached).
        ValueError
            ``steps < 0``, ``record_every < 1``, ``checkpoint_every < 1``, or a checkpoint
            with settings that cannot be checkpointed (``rk45``, contacts).
        """
        steps = _count(steps, "steps", 0)
        record_every = _count(record_every, "record_every", 1)
        ck = None
        if checkpoint is not None:
            ck = Checkpointer(self, checkpoint, checkpoint_every, steps, record_every)
        elif checkpoint_every is not None:
            raise ValueError("checkpoint_every given without checkpoint")
        return self.continue_run(steps, record_every, progress, ck, None)

    def continue_run(self, steps, every, progress, ck, start):
        """Continue a run from step ``start.done`` (what :meth:`run` and resume call).

        A run of ``steps`` steps with the records ``start.trajectory``
        (:class:`~articulated.simulation.checkpoint.Resume`; None: a new run), checkpoints
        by ``ck`` (or None).
        """
        if self.integrator != "rk45" and self._compiled() is not None:
            return self._run_compiled(steps, every, progress, ck, start)
        return self._run_python(steps, every, progress, ck, start)

    def _watching(self) -> bool:
        """Whether the energy watch applies (:meth:`run`): conservative forces only, no
        contacts or limits."""
        return (self._watch.tol is not None and self._contact is None
                and all(getattr(f, "conserves_energy", False) for f in self.forces))

    def _watch_records(self, first, t, T, V, every, steps, E0):
        """The energy watch on records ``first ..`` (their times and energies)."""
        if self._watching() and len(t):
            k = np.minimum(np.arange(first, first + len(t)) * every, steps)
            self._watch.check(k, t, T, V, E0)

    def _run_python(self, steps, every, progress, ck, start):
        """:meth:`run` step by step in Python (rk45, SRM, float32)."""
        rec = _Recorder(self)
        if start is None:
            rec.add(self.t, self._q, self._qd)
            k0, nfev_prev, wall_prev = 0, 0, 0.0
        else:
            rec.restore(start.trajectory)
            k0, nfev_prev, wall_prev = start.done, start.nfev, start.wall_time
        E0 = rec.T[0] + rec.V[0]
        nfev0 = self.nfev
        w0 = time.perf_counter()
        t_start = self.t

        def trajectory():
            return rec.trajectory(nfev_prev + self.nfev - nfev0,
                                  wall_prev + time.perf_counter() - w0)

        bar = _Progress(progress, steps)
        k = k0
        stop = RunStop()
        with stop:
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    if self.integrator == "rk45":
                        k = self._run_rk45(steps, every, rec, bar, stop)
                    else:
                        if ck is not None and start is None:
                            ck.write(self, trajectory(), 0, 0, self._watch)
                        while k < steps and not stop.requested:
                            k += 1
                            self._step_fixed()
                            if k % every == 0 or k == steps:
                                rec.add(self.t, self._q, self._qd)
                                self._watch_records(len(rec.t) - 1, rec.t[-1:], rec.T[-1:],
                                                    rec.V[-1:], every, steps, E0)
                            bar.update(k)
                            if ck is not None and (ck.due(k) or stop.requested):
                                ck.write(self, trajectory(), k, nfev_prev + self.nfev - nfev0,
                                         self._watch)
            except _NonFinite as e:
                if self.integrator == "rk45":
                    k = min(steps, int((self.t - t_start) / self.dt) + 1)
                raise self._diverged(e, trajectory(), k, steps) from e.__cause__
            finally:
                bar.close()
        traj = trajectory()
        if self.integrator == "rk45" and len(rec.t) > 1:
            self._watch_records(1, np.array(rec.t[1:]), rec.T[1:], rec.V[1:], every, steps, E0)
        if stop.requested and k < steps:
            return interrupted(traj, k, steps, None if ck is None else ck.path)
        return traj

    def _run_rk45(self, steps, record_every, rec, bar, stop):
        """Adaptive RK45 over [t, t + steps dt]; returns the number of whole dt covered
        (fewer when ``stop.requested``: Ctrl-C)."""
        from scipy.integrate import RK45

        if steps == 0:
            return 0
        m = self.model
        L = self._L
        nq = m.nq
        t0 = self.t
        t_end = t0 + steps * self.dt
        n_rec = (steps - 1) // record_every
        t_rec = list(t0 + self.dt * record_every * np.arange(1, n_rec + 1)) + [t_end]

        def fun(t, y):
            q = y[:nq]
            qd = y[nq:]
            qu = _unit(L, q)
            qdd = self._accel(t, qu, qd)
            return np.concatenate([_qdot(L, q, qd), qdd])

        y0 = np.concatenate([self._q, self._qd])
        solver = RK45(fun, t0, y0, t_end, rtol=self.rtol, atol=self.atol)
        i = 0
        while solver.status == "running":
            msg = solver.step()
            if solver.status == "failed":
                raise _NonFinite(f"the adaptive RK45 solver failed at t = {solver.t:.6g} s: {msg}")
            y = solver.y
            if not np.isfinite(y).all():
                raise _NonFinite(*_describe(m, y[:nq], y[nq:], "state"))
            if i < len(t_rec) and t_rec[i] <= solver.t:
                sol = solver.dense_output()
                while i < len(t_rec) and t_rec[i] <= solver.t:
                    yi = y.copy() if t_rec[i] == solver.t else sol(t_rec[i])
                    qi = yi[:nq].copy()
                    if L.quat_qadr.shape[0]:
                        _normalize_kernel(L.quat_qadr, qi)
                    rec.add(t_rec[i], qi, yi[nq:].copy())
                    i += 1
            q = y[:nq].copy()
            if L.quat_qadr.shape[0]:
                _normalize_kernel(L.quat_qadr, q)
            self._q = q
            self._qd = y[nq:].copy()
            self.t = float(solver.t)
            bar.update(min(steps, int((solver.t - t0) / self.dt)))
            if stop.requested and solver.status == "running":
                return min(steps, int((solver.t - t0) / self.dt))
        self.t = t_end
        return steps

    def _divergence_advice(self):
        """What a diverged run may change, among what this simulator accepts."""
        if self._contact is not None:   # contacts and limits step by impulses only
            return ("try a smaller dt, contact_options={'energy_bound': True} or a smaller "
                    "'max_rotation' (substeps), or check the applied forces")
        if self._srm is not None:
            return "try a smaller dt or tighter rtol/atol, or check the applied forces"
        return "try a smaller dt, another integrator, or check the applied forces"

    def _diverged(self, e, traj, step, steps):
        where = (f"t = {self.t:.6g} s" if self.integrator == "rk45"
                 else f"step {step} of {steps} (t = {self.t:.6g} -> {self.t + self.dt:.6g} s)")
        first = f" Joint {e.joint!r} went first." if e.joint is not None else ""
        msg = (f"simulation diverged at {where} with integrator {self.integrator!r}, "
               f"dt = {self.dt:g} s: {e.detail}.{first} The {len(traj)} state(s) recorded so "
               f"far are in the exception's .trajectory and the last finite state (t = "
               f"{self.t:.6g} s) in its .q, .qd; {self._divergence_advice()}.")
        return SimulationDiverged(msg, trajectory=traj, t=self.t, step=step, joint=e.joint,
                                  q=self._q, qd=self._qd)

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_settings(self) -> dict:
        """Return the settings a checkpoint rebuilds this simulator with.

        JSON values; keywords of :func:`articulated.Simulator`. ValueError for what cannot
        be checkpointed (``rk45``, contacts and limits).
        """
        if self.integrator == "rk45":
            raise ValueError("a run with integrator='rk45' cannot be checkpointed (the "
                             "adaptive solver's step-size history is not kept): use a "
                             "fixed-step integrator")
        if self._contact is not None:
            raise ValueError("a run with contacts or joint limits cannot be checkpointed "
                             "(the impulse solver's warm start is not kept)")
        return dict(self.settings(), dt=self.dt)

    def settings(self) -> dict:
        """The simulator's settings (JSON values), as recorded in its trajectories."""
        out = dict(method=self.method, integrator=self.integrator, rtol=self.rtol,
                   atol=self.atol, dtype=np.dtype(self.dtype).name,
                   energy_drift=self._watch.tol)
        if self._srm is not None:
            s = self._srm
            out["srm"] = dict(iterations=s.iterations, eps=s.eps, alpha=s.alpha, form=s.form)
            out.update(rtol=s.rtol, atol=s.atol)      # None: fixed step
        return out

    def checkpoint_state(self):
        """Return ``(JSON dict, arrays)``: the state the next step depends on.

        ``q, qd, t``, SRM's multipliers, and the evaluation count.
        """
        arrays = dict(q=self._q, qd=self._qd, t=np.array([self.t]))
        if self._srm is not None:
            arrays.update(srm_lam=self._srm.lam, srm_dlam=self._srm.dlam)
            if self._srm.adaptive:
                arrays.update(srm_control=self._srm.control.state(),
                              srm_steps=np.array([self._srm.steps_made]))
        return dict(nfev=self.nfev), arrays

    def restore_state(self, meta, arrays) -> None:
        """Set what :meth:`checkpoint_state` wrote.

        ``q`` and ``qd`` were given to the constructor.
        """
        self.t = float(arrays["t"][0])
        self.nfev = int(meta["nfev"])
        if self._srm is not None:
            self._srm.lam[:] = arrays["srm_lam"]
            self._srm.dlam[:] = arrays["srm_dlam"]
            if self._srm.adaptive:
                self._srm.control.set_state(arrays["srm_control"])
                self._srm.steps_made = int(arrays["srm_steps"][0])

    # ------------------------------------------------------------------ compiled loop
    def _compiled(self):
        """``(StepModel, StepData, ForceArrays, ContactStepBundle or None)`` of the compiled loop
        (:mod:`articulated.simulation.stepping`; with contacts or limits
        :mod:`articulated.simulation.contact_loop`), or None for the steps that only the
        Python integrators take (rk45, SRM, float32). Forces without a compiled form and
        coal's mesh pairs are called from the compiled stages
        (:mod:`articulated.simulation.hooks`)."""
        if self._loop is None:
            self._loop = (False,)
            if (self._srm is None and self.dtype == np.float64
                    and self.method in METHOD_CODES and self.integrator in INTEGRATOR_CODES):
                fa = compile_forces(self.model, self.forces)
                if fa is None:
                    hook = self._python_forces = _PythonForces(self)
                    fa = compile_forces(self.model, [])._replace(
                        hook=register(hook, self), hq=np.zeros(self.model.nq),
                        hqd=np.zeros(self.model.nv), hstop=hook.hstop)
                if self._contact is None:
                    self._loop = loop_bundles(self.model, self.method, self.integrator,
                                              self.dt) + (fa, None)
                else:
                    self._loop = self._contact_bundles(fa)
        return None if len(self._loop) == 1 else self._loop[:4]

    def _contact_bundles(self, fa):
        """The compiled loop's bundles with contacts or limits, and the detector."""
        cs = self._contact
        det = cs.detector or Detector(CollisionModel(self.model))
        sm, sd = loop_bundles(self.model, "aba", "semi_implicit_euler", self.dt)
        d = cs.data                     # the stepper's workspace (its Factor views)
        sm = sm._replace(model_i=d.model_i, model_f=d.model_f)
        sd = sd._replace(data=d.buf)
        hook = -1
        if det.mesh is not None and det.mesh.nplane < len(det.mesh.pairs):
            hook = register(functools.partial(det.mesh.coal_contacts, det.poses, det.gm), self)
        cl = contact_loop_bundles(cs, det, sd, _cycle_rate() is not None, hook)
        return sm, sd, fa, cl, det

    def _step_compiled(self, sm, sd, fa, cl):
        """:meth:`step` by the compiled loop: one step from the simulator's state, no record
        (:data:`~articulated.simulation.stepping.Records` of no rows); the state is left as it
        was when the step fails (SimulationDiverged with the start's record)."""
        fast = getattr(self, "_fast_step", None)
        if fast is None:
            count = np.zeros(1, dtype=np.int64)
            fast = self._fast_step = (records(self.model, 0), Run(0, 1, 1, 1, count))
        rec, run = fast
        q, qd = self._q.copy(), self._qd.copy()
        t = np.array([self.t])
        if fa.hook >= 0:
            self._python_forces.hstop[0] = 0
            self._python_forces.stop = None
        if cl is None:
            done, code = tree_steps(sm, sd, fa, q, qd, t, run, rec)
        else:
            self._contact_log = []
            done, code = self._contact_steps(sm, sd, fa, cl, q, qd, t, run, rec)
        if code != OK:
            first = records(self.model, 1)
            record_state(sm, sd, fa, self.t, self._q, self._qd, first, 0)
            traj = self._compiled_trajectory(first, 1, 0, 0.0, cl)
            raise self._diverged(self._failure(code, sd, cl), traj, 1, 1)
        self.nfev += 4 if self.integrator == "rk4" else 1
        self._q, self._qd, self.t = q, qd, float(t[0])

    def _compiled_trajectory(self, rec, c, nfev, wall, cl):
        """The :class:`~articulated.simulation.trajectory.Trajectory` of the first ``c``
        rows of the compiled loop's records ``rec`` (``nfev`` evaluations, ``wall`` [s];
        with contacts, the contact log)."""
        return Trajectory.of(self.model, t=record_rows(rec.t, c), q=record_rows(rec.q, c),
                             qd=record_rows(rec.qd, c), kinetic=record_rows(rec.T, c),
                             potential=record_rows(rec.V, c), nfev=nfev, wall_time=wall,
                             integrator=self.integrator, method=self.method, dt=self.dt,
                             contacts=(None if cl is None else
                                       np.array(self._contact_log, dtype=CONTACT_STATS)),
                             settings=self.settings())

    def _run_compiled(self, steps, every, progress, ck, start):
        """:meth:`run` by the compiled loop :func:`~articulated.simulation.stepping.
        tree_steps` (with contacts or limits :func:`~articulated.simulation.contact_loop.
        contact_steps`), in stretches of about 0.2 s (progress bar, Ctrl-C) that end at the
        checkpoints; a stretch boundary changes no operation of the run."""
        sm, sd, fa, cl = self._compiled()
        n_rec = 1 + steps // every + (1 if steps % every else 0)
        rec = records(self.model, n_rec)
        count = np.zeros(1, dtype=np.int64)
        evals = 4 if self.integrator == "rk4" else 1
        if start is None:
            record_state(sm, sd, fa, self.t, self._q, self._qd, rec, 0)
            count[0] = 1
            k, wall_prev = 0, 0.0
        else:
            tr = start.trajectory
            c = len(tr)
            for name, x in zip(Records._fields, (tr.t, tr.q, tr.qd, tr.kinetic, tr.potential)):
                getattr(rec, name)[:c] = x
            count[0] = c
            k, wall_prev = start.done, start.wall_time
        E0 = rec.T[0] + rec.V[0]
        q, qd = self._q.copy(), self._qd.copy()
        t = np.array([self.t])
        bar = _Progress(progress, steps)
        w0 = time.perf_counter()
        if cl is not None:
            self._contact_log = []
        if fa.hook >= 0:
            self._python_forces.hstop[0] = 0

        def trajectory():
            return self._compiled_trajectory(rec, int(count[0]), k * evals,
                                             wall_prev + time.perf_counter() - w0, cl)

        n = min(steps - k, 8)
        code = OK
        stop = RunStop()
        if fa.hook >= 0:
            self._python_forces.stop = stop
        with stop:
            try:
                if ck is not None and start is None:
                    ck.write(self, trajectory(), 0, 0, self._watch)
                while k < steps and not stop.requested:
                    if ck is not None:
                        n = min(n, ck.next(k) - k)
                    c0 = int(count[0])
                    t1 = time.perf_counter()
                    run = Run(k, n, steps, every, count)
                    if cl is None:
                        done, code = tree_steps(sm, sd, fa, q, qd, t, run, rec)
                    else:
                        done, code = self._contact_steps(sm, sd, fa, cl, q, qd, t, run, rec)
                    k += done
                    self.nfev += done * evals
                    self._q, self._qd, self.t = q.copy(), qd.copy(), float(t[0])
                    c1 = int(count[0])
                    self._watch_records(c0, rec.t[c0:c1], rec.T[c0:c1], rec.V[c0:c1], every,
                                        steps, E0)
                    if code != OK:
                        break
                    bar.update(k)
                    if ck is not None and (ck.due(k) or stop.requested):
                        ck.write(self, trajectory(), k, k * evals, self._watch)
                    per = (time.perf_counter() - t1) / max(done, 1)
                    n = min(steps - k, max(1, int(0.2 / max(per, 1e-9))))
            finally:
                bar.close()
                # (a Python force's exception: the state of the last committed step)
                self._q, self._qd, self.t = q.copy(), qd.copy(), float(t[0])
        if code != OK:
            raise self._diverged(self._failure(code, sd, cl), trajectory(), k + 1, steps)
        if stop.requested and k < steps:
            return interrupted(trajectory(), k, steps, None if ck is None else ck.path)
        return trajectory()

    def _failure(self, code, sd, cl):
        """The :class:`_NonFinite` of a compiled step that failed with ``code``, naming the
        joint from what the step left in its buffers (the state is that before it)."""
        m = self.model
        if code == ERR_FORCE:
            try:
                self._accel_check(sd.tau, sd.f_ext)
            except _NonFinite as e:
                return e
            return _NonFinite(f"an applied force is not finite (forces: {self.forces!r})")
        if code == ERR_STATE:
            return _NonFinite(*_describe(m, sd.q1, sd.qd1, "the new state"))
        if code == ERR_RUNAWAY:
            joint = m.joint_name[int(m.dof_body[int(cl.bad[0])])]
            return _NonFinite(runaway_message(joint), joint)
        qdd = sd.W[:4, :m.nv] if cl is None else cl.qdd[None]
        bad = np.argwhere(~np.isfinite(qdd))
        joint = m.joint_name[int(m.dof_body[int(bad[0][1])])] if len(bad) else None
        where = f" (joint {joint!r} first)" if joint is not None else ""
        return _NonFinite(f"forward dynamics gave non-finite accelerations{where} at max "
                          f"|qd| = {float(np.abs(self._qd).max(initial=0.0)):.3g}, max |tau| "
                          f"= {float(np.abs(sd.tau).max(initial=0.0)):.3g}", joint)

    def _contact_steps(self, sm, sd, fa, cl, q, qd, t, run, rec):
        """:func:`~articulated.simulation.contact_loop.contact_steps` for the stretch
        ``run``; its statistics appended to the contact log (cycles to seconds), its grown
        buffers and last statistics kept by the stepper and detector
        (:meth:`contact_list`). Returns ``(steps done, code)``."""
        cs = self._contact
        det = self._loop[4]
        cstats = np.zeros((run.n, len(CONTACT_STATS.names)))
        done, code, cb = contact_steps(sm, sd, fa, cl, q, qd, t, run, rec, cstats,
                                       ContactBuffers(det.broad, det.out, cs.rb, _NO_PIECES,
                                                      self._gap))
        det.broad, det.out, cs.rb = cb[:3]
        self._gap = cb.gap
        if done:
            log = stats_log(cstats[:done], _cycle_rate() if cl.timed else None)
            self._contact_log.extend(log)
            cs.last = log[-1].copy()
            cs.substeps = int(cl.nsub[0])
            det.n = int(cl.st[STAT_N])      # the last (sub)step's contacts (contact_list)
        return done, code

    def __repr__(self):
        return (f"DynamicsSimulator({self.model!r}, dt={self.dt}, "
                f"integrator={self.integrator!r}, method={self.method!r}, t={self.t:.6g}, "
                f"forces={len(self.forces)})")


class _PythonForces:
    """The applied forces of a simulator evaluated in Python, for the compiled stages
    (:mod:`articulated.simulation.hooks`): holds the simulator weakly."""

    def __init__(self, sim):
        self._sim = weakref.ref(sim)
        self.stop = None                            # the RunStop of the current run
        self.hstop = np.zeros(1, np.int64)          # ForceArrays.hstop

    def forces(self, t, q, qd, tau, f_ext):
        a, b = self._sim().generalized_forces(t, q, qd)
        tau[:] = a
        f_ext[:] = b
        if self.stop is not None and self.stop.requested:
            self.hstop[0] = 1

    def potential(self, q):
        return self._sim()._potential(q)
