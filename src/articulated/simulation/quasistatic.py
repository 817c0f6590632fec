"""Quasi-static simulation: :class:`QuasiStaticSimulator`.

Quasi-static simulation: :class:`QuasiStaticSimulator`, what the factory
``articulated.Simulator(model, dt, method="quasistatic-adaptive" | "quasistatic")`` builds.

Forward quasi-statics (Redon & Lin 2005, RL, Sec. 3): the bodies' velocities are zero at
every instant; each step computes the joint accelerations ``qdd`` under the
acceleration-independent forces (gravity, applied body forces, joint forces) and moves the
configuration by one semi-implicit Euler step from rest, ``q <- q (+) h^2 qdd``
(``qd = h qdd``, then ``q (+)= h qd``; the velocity is dropped again). So ``q`` moves only
where ``qdd`` was computed, which is what makes the simplified state update of RL Sec. 5.2
possible.

``method="quasistatic-adaptive"``: the error-bounded approximation of RL Sec. 4
(:class:`articulated.algorithms.quasistatics.AdaptiveQuasiStatics`): per step, the partial
back-substitution computes the joints needed for ``eps_max`` in the chosen error measure
(or ``max_joints`` of them), only those joints move, and the coefficients are updated
lazily along the paths of the moved joints and of the bodies whose applied force changed,
O(N_U log(N / N_U)). World poses needed by world-frame forces come from the hierarchical
frames in O(log n) per body. When every applied force is a compiled body force
(:class:`~articulated.PointForce`, :class:`~articulated.Spring`) the steps run in one
compiled loop (:mod:`articulated.simulation.quasistatic_loop`); other forces are called
from Python each step. ``method="quasistatic"``: the full DCA every step (the
reference of RL's benchmarks).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..algorithms.dca_solver import DCA
from ..algorithms.metric import ERROR_MEASURES
from ..algorithms.quasistatics import AdaptiveQuasiStatics
from ..configuration import integrate_joints_inplace
from ..model import Model
from .cycles import _cycle_rate
from .forces import FramesKinematics
from .quasistatic_loop import (BAD_FORCE, BAD_NODE, METRIC_EVERY, body_forces, metric_due,
                               qs_loop_bundle, quasistatic_steps)
from .trajectory import SimulationDiverged, Trajectory

QUASI_STATIC_METHODS = ("quasistatic-adaptive", "quasistatic")


class _DCAKinematics:
    """``kin`` for the full-DCA reference: every pose from forward kinematics."""

    def __init__(self, model, q):
        from .forces import StateKinematics

        self._k = StateKinematics(model, q)
        self.v = np.zeros((model.nb, 6))

    @property
    def R(self):
        return self._k.R

    @property
    def p(self):
        return self._k.p


class QuasiStaticSimulator:
    """Quasi-static stepping, adaptive (RL) or by the full DCA (see the module docstring).

    Parameters
    ----------
    model : Model
    dt : float > 0
        Step h [s].
    method : {"quasistatic-adaptive", "quasistatic"}
    eps_max : float >= 0
        Error bound of the adaptive method (RL Definition 2).
    error : one of :data:`articulated.algorithms.metric.ERROR_MEASURES`
    max_joints : int, optional
        Joint budget per step instead of (or on top of) eps_max.
    weights : (nb, 6, 6), optional
        SPD joint weights of the acceleration metric.
    q0 : (nq,) float64, optional
        Initial configuration (neutral by default).
    forces : iterable of :class:`articulated.Force`, optional
        Applied forces (:meth:`add_force` each).
    assembly : assembly-tree kind or tree (balanced by default)
    metric_every : int >= 1
        Refresh period of the total-acceleration coefficients (RL eq. 9) of the nodes a
        step recomputes. In between, those nodes' joints are computed whatever their
        metric (a superset of RL's choice), at the cost of the DCA coefficients alone;
        every step's certified bound is RL's. 1: RL's solve at every step. Without
        effect under a joint budget (``max_joints``), which needs the metric every step.

    Notes
    -----
    Attributes: ``t`` [s], ``q`` (current configuration, read-only view), ``last`` (dict
    of the last step's statistics: joints, bound, nodes, wall).

    Raises ValueError for a bad dt, method, measure, eps_max, budget, metric_every or q0.
    """

    def __init__(self, model: Model, dt: float, *, method: str = "quasistatic-adaptive",
                 eps_max: float = 2.0 ** -19, error: str = "relative_joint",
                 max_joints: int | None = None, weights=None, q0=None, forces=(),
                 assembly="balanced", metric_every: int = METRIC_EVERY):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        if method not in QUASI_STATIC_METHODS:
            raise ValueError(f"unknown quasi-static method {method!r}; expected one of "
                             f"{QUASI_STATIC_METHODS}")
        if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a finite number > 0, got {dt!r}")
        if error not in ERROR_MEASURES:
            raise ValueError(f"unknown error measure {error!r}; expected one of "
                             f"{ERROR_MEASURES}")
        if not (math.isfinite(eps_max) and eps_max >= 0):
            raise ValueError(f"eps_max must be a finite number >= 0, got {eps_max!r}")
        if max_joints is not None and int(max_joints) < 0:
            raise ValueError(f"max_joints must be >= 0, got {max_joints!r}")
        if not (isinstance(metric_every, (int, np.integer)) and metric_every >= 1):
            raise ValueError(f"metric_every must be an integer >= 1, got {metric_every!r}")
        self.model = model
        self.dt = float(dt)
        self.method = method
        self.eps_max = float(eps_max)
        self.error = error
        self.max_joints = None if max_joints is None else int(max_joints)
        self.metric_every = int(metric_every)
        self._step = np.zeros(1, np.int64)     # steps taken (the metric's refresh phase)
        self.t = 0.0
        self.forces = []
        q = model.neutral() if q0 is None else model.check_configuration(q0).copy()
        self._tau = np.zeros(model.nv)
        self._f_ext = np.zeros((model.nb, 6))
        self._bodies = np.zeros(0, dtype=np.int64)
        self._joints = np.zeros(0, dtype=np.int64)
        self._all_bodies = False
        if method == "quasistatic-adaptive":
            self.solver = AdaptiveQuasiStatics(model, assembly, weights=weights)
            self.solver.set_state(q)
            self._q = self.solver.q
            self._kin = FramesKinematics(self.solver, model.nb)
        else:
            self.solver = DCA(model, assembly)
            self._q = q
        self._v = np.zeros(model.nv)
        self.last = {}
        self._loop = None           # the compiled loop's bundle (False: Python steps)
        for f in forces:
            self.add_force(f)

    @property
    def q(self) -> np.ndarray:
        """Current configuration (nq,) float64, a read-only view."""
        v = self._q.view()
        v.flags.writeable = False
        return v

    def add_force(self, force):
        """Add an applied force and return it.

        An :class:`articulated.Force` (joint forces and body forces; velocities are zero in
        quasi-statics). Its ``support(model)`` tells which bodies and joints it writes; a
        force without one is treated as touching every body (a full O(n) update per step).
        """
        if not hasattr(force, "apply"):
            raise TypeError(f"a force needs an apply(model, t, q, qd, tau, f_ext) method, "
                            f"got {force!r}")
        if hasattr(force, "bind"):
            force.bind(self.model)
        self.forces.append(force)
        self._loop = None
        bodies, joints = (force.support(self.model) if hasattr(force, "support")
                          else (None, None))
        if bodies is None:
            self._all_bodies = True
        else:
            self._bodies = np.union1d(self._bodies, np.asarray(bodies, dtype=np.int64))
        if joints is None:
            joints = np.arange(self.model.nb)
        self._joints = np.union1d(self._joints, np.asarray(joints, dtype=np.int64))
        return force

    def _evaluate_forces(self):
        """Applied forces at the current state into ``_tau``, ``_f_ext`` (touched rows)."""
        m = self.model
        if self._all_bodies:
            self._f_ext[:] = 0.0
        else:
            self._f_ext[self._bodies] = 0.0
        for j in self._joints:
            va, d = m.jnt_vadr[j], m.jnt_nv[j]
            self._tau[va:va + d] = 0.0
        kin = (self._kin if self.method == "quasistatic-adaptive"
               else _DCAKinematics(m, self._q))
        for f in self.forces:
            f.apply(m, self.t, self._q, self._v, self._tau, self._f_ext, kin)
        if not (np.isfinite(self._f_ext).all() if self._all_bodies
                else np.isfinite(self._f_ext[self._bodies]).all()):
            raise ValueError(f"an applied force is not finite at t = {self.t:.6g}")

    def _compiled_loop(self):
        """The :data:`~articulated.simulation.quasistatic_loop.QSLoop` of the adaptive
        method when every force is a compiled body force (built once per set of forces),
        else None."""
        if self._loop is None:
            fa = (body_forces(self.model, self.forces)
                  if self.method == "quasistatic-adaptive" else None)
            self._loop = False if fa is None else qs_loop_bundle(
                self.model, self.solver, fa, self._step, self.metric_every)
        return self._loop or None

    def _compiled_steps(self, n, out):
        """``n`` steps in the compiled loop, statistics into ``out`` (n, 4) (joints,
        bound, nodes, cycles); returns ``(steps done, error)``: None, or the message of the
        ValueError the Python step raises there."""
        s, lp = self.solver, self._compiled_loop()
        budget = -1 if self.max_joints is None else self.max_joints
        done, code, s._n_computed = quasistatic_steps(
            lp, s._node_args(True), s._node_args(False), s._solve_args(), int(n), self.t,
            self.dt, self.eps_max, ERROR_MEASURES.index(self.error), budget, s._n_computed,
            out)
        for _ in range(done):
            self.t += self.dt
        if code == BAD_FORCE:
            return done, f"an applied force is not finite at t = {self.t:.6g}"
        if code == BAD_NODE:
            return done, (f"the adaptive quasi-statics result is not finite at joint "
                          f"{self.model.joint_name[int(lp.bad[0])]!r}: a node inverse "
                          f"inertia is singular")
        if code:
            return done, (f"the quasi-static configuration became non-finite at t = "
                          f"{self.t:.6g}")
        return done, None

    def step(self) -> dict:
        """Take one quasi-static step and return its statistics.

        The statistics are also kept in :attr:`last`: ``joints`` (accelerations computed),
        ``bound`` (certified error), ``nodes`` (tree nodes recomputed), ``wall`` [s].
        """
        m = self.model
        t0 = time.perf_counter()
        if self._compiled_loop() is not None:
            out = np.zeros((1, 4))
            err = self._compiled_steps(1, out)[1]
            if err:
                raise ValueError(err)
            self.last = dict(joints=int(out[0, 0]), bound=float(out[0, 1]),
                             nodes=int(out[0, 2]), wall=time.perf_counter() - t0)
            return self.last
        self._evaluate_forces()
        h2 = self.dt * self.dt
        if self.method == "quasistatic-adaptive":
            s = self.solver
            bodies = np.arange(m.nb) if self._all_bodies else self._bodies
            m1, m2 = metric_due(int(self._step[0]), self.metric_every,
                                -1 if self.max_joints is None else self.max_joints)
            nodes = s.update(bodies=bodies, f_ext=self._f_ext, tau=self._tau,
                             tau_joints=self._joints, metric=m1)
            res = s.solve(self.eps_max, self.error, self.max_joints, copy=False)
            J = res.joints
            integrate_joints_inplace(J, J.size, m.jnt_type, m.jnt_qadr, m.jnt_vadr, s.q,
                                     res.qdd, h2)
            nodes += s.update(joints=J, metric=m2)
            self._step[0] += 1
            stats = dict(joints=int(J.size), bound=res.bound, nodes=int(nodes))
        else:
            qdd = self.solver.quasi_statics(self._q, self._tau, self._f_ext)
            integrate_joints_inplace(np.arange(m.nb), m.nb, m.jnt_type, m.jnt_qadr,
                                     m.jnt_vadr, self._q, qdd, h2)
            stats = dict(joints=m.nb, bound=0.0, nodes=self.solver.tree.n_nodes)
        if not np.isfinite(self._q).all():
            raise ValueError(f"the quasi-static configuration became non-finite at t = "
                             f"{self.t:.6g}")
        self.t += self.dt
        stats["wall"] = time.perf_counter() - t0
        self.last = stats
        return stats

    def run(self, steps: int, record_every: int | None = None) -> Trajectory:
        """Run ``steps`` steps and return the :class:`Trajectory`.

        Records the configuration every ``record_every`` steps (default: first and last
        only; each record copies q, O(n)) and the per-step statistics (:class:`Trajectory`
        fields ``joints``, ``bound``, ``nodes``, ``wall``; ``qd``, the energies None:
        velocities are zero in quasi-statics). Raises ValueError for steps < 1 or
        record_every < 1, and :class:`articulated.SimulationDiverged` (carrying the
        trajectory recorded so far) when a step fails on non-finite values.
        """
        steps = int(steps)
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        every = steps if record_every is None else int(record_every)
        if every < 1:
            raise ValueError(f"record_every must be >= 1, got {record_every}")
        m = self.model
        ts, qs = [self.t], [self._q.copy()]
        joints = np.zeros(steps, dtype=np.int64)
        bound = np.zeros(steps)
        nodes = np.zeros(steps, dtype=np.int64)
        wall = np.zeros(steps)
        def trajectory(n):
            return Trajectory.of(self.model, t=np.array(ts), q=np.array(qs).reshape(-1, m.nq),
                                 joints=joints[:n], bound=bound[:n], nodes=nodes[:n],
                                 wall=wall[:n], nfev=n, wall_time=float(wall[:n].sum()),
                                 method=self.method, integrator="quasistatic", dt=self.dt,
                                 settings=dict(error=self.error, eps_max=self.eps_max,
                                               max_joints=self.max_joints))

        k = 0
        compiled = self._compiled_loop() is not None
        rate = _cycle_rate() if compiled else None
        while k < steps:
            err = None
            if compiled:                      # up to the next record, in one call
                n = min(every - k % every, steps - k)
                out = np.zeros((n, 4))
                t0 = time.perf_counter()
                n, err = self._compiled_steps(n, out)
                w = time.perf_counter() - t0
                joints[k:k + n], bound[k:k + n], nodes[k:k + n] = out[:n, :3].T
                wall[k:k + n] = out[:n, 3] / rate if rate else w / max(n, 1)
            else:
                try:
                    st = self.step()
                except ValueError as e:       # non-finite accelerations, forces or state
                    err, n = str(e), 0
                else:
                    joints[k], bound[k], nodes[k], wall[k] = (st["joints"], st["bound"],
                                                              st["nodes"], st["wall"])
                    n = 1
            if err:
                k += n
                raise SimulationDiverged(f"quasi-static run stopped at step {k + 1}: {err}",
                                         trajectory=trajectory(k), t=self.t, step=k + 1)
            k += n
            if k % every == 0 or k == steps:
                if ts[-1] != self.t:
                    ts.append(self.t)
                    qs.append(self._q.copy())
        if compiled and steps:
            self.last = dict(joints=int(joints[steps - 1]), bound=float(bound[steps - 1]),
                             nodes=int(nodes[steps - 1]), wall=float(wall[steps - 1]))
        return trajectory(steps)

    def __repr__(self):
        return (f"QuasiStaticSimulator(nb={self.model.nb}, dt={self.dt:g}, "
                f"method={self.method!r}, eps_max={self.eps_max:g}, error={self.error!r}, "
                f"t={self.t:.6g}, forces={len(self.forces)})")
