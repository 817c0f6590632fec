"""Adaptive-dynamics simulation (Redon, Galoppo & Lin 2005, RGL): :class:`AdaptiveSimulator`,
behind ``Simulator(model, dt, method="adaptive", ...)``.

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
updates cost O(N_A log n), an active-region update O(n) (see its module docstring).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..algorithms.adaptive import AdaptiveDynamics
from ..algorithms.kinematics import body_velocities, energy
from ..model import Model
from .forces import FramesKinematics
from .integrators import integrate, integrate_joints_inplace


@dataclass
class AdaptiveTrajectory:
    """What :meth:`AdaptiveSimulator.run` records (one entry per recorded step).

    t : (k,) [s]; q : (k, nq); qd : (k, nv); kinetic : (k,) [J] kinetic energy;
    active : (k,) int - active joints; update_region : (k,) int - joints of the last
    acceleration update region; rigidified : (k,) int - joints rigidified at the last
    active-region update; wall : (steps,) float - wall time of every step [s].
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    kinetic: np.ndarray
    active: np.ndarray
    update_region: np.ndarray
    rigidified: np.ndarray
    wall: np.ndarray

    def __len__(self):
        return len(self.t)


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
    max_update : int, optional - budget of the acceleration update region (joints)
    update_every : int >= 1 - steps between active-region updates (RGL f = 1 / update_every)
    weights, velocity_weights : (nb, 6, 6), optional - SPD metric weights (identity)
    forces : iterable of :class:`articulated.Force`
    q0, qd0 : initial state (neutral, zero); assembly : assembly-tree kind or tree

    With none of ``max_active``, ``eps_vel`` (> 0), ``eps_acc`` (> 0), ``max_update`` the
    active region is everything that moves and the result is the full dynamics.
    Raises ValueError for bad settings.
    """

    def __init__(self, model: Model, dt: float, *, max_active=None,
                 eps_vel: float = 0.0, eps_acc: float = 0.0, max_update: int | None = None,
                 update_every: int = 20, weights=None, velocity_weights=None, forces=(),
                 q0=None, qd0=None, assembly="balanced"):
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
        self.model = model
        self.dt = float(dt)
        self.max_active = max_active
        self.eps_vel = float(eps_vel)
        self.eps_acc = float(eps_acc)
        self.max_update = None if max_update is None else int(max_update)
        self.update_every = int(update_every)
        self.impulse_columns = 16
        """Rigidification of at most this many joints assembles RGL's K^R from unit test
        impulses; more use the equivalent momentum projection (O(n))."""
        self.solver = AdaptiveDynamics(model, assembly, weights=weights,
                                       velocity_weights=velocity_weights)
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
        for f in forces:
            self.add_force(f)
        self.t = 0.0
        self.steps = 0
        self.last = dict(active=model.nb, update_region=0, rigidified=0)
        self.solver.set_state(self.q, self.qd)         # frames at q0 for the first forces
        self.solver.prepare_region()

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
        return force

    def _forces(self):
        """Applied forces into the persistent ``tau``, ``f_ext`` (only the rows the forces
        touch are cleared, from :meth:`articulated.Force.support`)."""
        m = self.model
        if self._all:
            self._tau[:] = 0.0
            self._f_ext[:] = 0.0
        else:
            self._f_ext[self._bodies] = 0.0
            for j in self._joints:
                self._tau[m.jnt_vadr[j]:m.jnt_vadr[j] + m.jnt_nv[j]] = 0.0
        kin = FramesKinematics(self.solver, m.nb,
                               lambda: body_velocities(m, self.q, self.qd))
        for f in self.forces:
            f.apply(m, self.t, self.q, self.qd, self._tau, self._f_ext, kin)
        rows = self._f_ext if self._all else self._f_ext[self._bodies]
        taus = self._tau if self._all else self._tau[np.isin(m.dof_body, self._joints)] \
            if self._joints.size else self._tau[:0]
        if not (np.isfinite(rows).all() and np.isfinite(taus).all()):
            raise ValueError(f"an applied force is not finite at t = {self.t:.6g}")
        return self._tau, self._f_ext

    def _region_update(self, tau, f_ext):
        """RGL Sec. 5.1 steps 1-4 (:meth:`AdaptiveDynamics.region_update`); returns the new
        joint velocities."""
        s = self.solver
        qd, U, rigid = s.region_update(
            self.q, self.qd, tau, f_ext, self.dt, eps_acc=self.eps_acc,
            max_update=self.max_update, eps_vel=self.eps_vel, max_active=self.max_active,
            bodies=None if self._all else self._bodies,
            joints=None if self._all else self._joints,
            impulse_columns=self.impulse_columns)
        self.active = s.active.copy()
        self.last = dict(active=int(self.active.sum()), update_region=int(U.size),
                         rigidified=int(rigid.size))
        return qd

    def step(self) -> None:
        """One step (an active-region update every ``update_every`` steps)."""
        m, h = self.model, self.dt
        self.solver.sync_frames(self.q)                 # world poses at this step's q
        tau, f_ext = self._forces()
        if self.steps % self.update_every == 0:
            qd = self._region_update(tau, f_ext)
            q = integrate(m, self.q, qd, h)
        else:
            # multilevel forward dynamics of the hybrid body (RGL Sec. 4.3): O(N_A log n)
            s = self.solver
            qdd = s.hybrid_accelerations(self.q, self.qd, tau, f_ext,
                                         None if self._all else self._bodies)
            qd = self.qd + h * qdd
            q = self.q.copy()
            J = s._ajoints
            integrate_joints_inplace(J, J.size, m.jnt_type, m.jnt_qadr, m.jnt_vadr, q, qd, h)
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            raise ValueError(f"the adaptive simulation became non-finite at t = {self.t:.6g}")
        self.q, self.qd = q, qd
        self.t += h
        self.steps += 1

    def run(self, steps: int, record_every: int = 1) -> AdaptiveTrajectory:
        """Run ``steps`` steps, recording every ``record_every`` steps (kinetic energy
        included, O(n) per record). Raises ValueError for steps or record_every < 1 and
        :class:`articulated.SimulationDiverged` (carrying the trajectory recorded so far)
        when a step fails on non-finite values."""
        if int(steps) < 1 or int(record_every) < 1:
            raise ValueError("steps and record_every must be >= 1")
        rec = {k: [] for k in ("t", "q", "qd", "kinetic", "active", "update_region",
                               "rigidified")}
        wall = np.zeros(int(steps))

        def record():
            rec["t"].append(self.t)
            rec["q"].append(self.q.copy())
            rec["qd"].append(self.qd.copy())
            rec["kinetic"].append(energy(self.model, self.q, self.qd)[0])
            for k in ("active", "update_region", "rigidified"):
                rec[k].append(self.last[k])

        record()
        for k in range(int(steps)):
            t0 = time.perf_counter()
            try:
                self.step()
            except ValueError as e:          # non-finite accelerations or state
                from .simulator import SimulationDiverged

                raise SimulationDiverged(
                    f"adaptive run stopped at step {k + 1}: {e}",
                    trajectory=AdaptiveTrajectory(**{n: np.array(v) for n, v in rec.items()},
                                                  wall=wall[:k]),
                    t=self.t, step=k + 1) from e
            wall[k] = time.perf_counter() - t0
            if (k + 1) % int(record_every) == 0:
                record()
        return AdaptiveTrajectory(**{k: np.array(v) for k, v in rec.items()}, wall=wall)

    def __repr__(self):
        return (f"AdaptiveSimulator(nb={self.model.nb}, dt={self.dt:g}, "
                f"max_active={self.max_active}, update_every={self.update_every}, "
                f"t={self.t:.6g}, active={int(self.active.sum())})")
