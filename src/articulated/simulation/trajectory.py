"""What a simulation records: :class:`Trajectory` (tree dynamics,
:class:`~articulated.simulation.simulator.DynamicsSimulator`), :class:`AdaptiveTrajectory`
(:class:`~articulated.simulation.adaptive.AdaptiveSimulator`), :class:`QuasiStaticTrajectory`
(:class:`~articulated.simulation.quasistatic.QuasiStaticSimulator`), and
:class:`SimulationDiverged`, which every simulator raises with the records made before a
failure."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class SimulationDiverged(RuntimeError):
    """The state (or an applied force) became non-finite during a simulation.

    Attributes
    ----------
    trajectory : Trajectory - everything recorded before the failure (at least the state
        the failing ``run`` started from)
    t : float - time [s] of the last finite state
    step : int - index (1-based, within the run) of the step that failed
    joint : str or None - the joint whose coordinate first became non-finite, if known
    """

    def __init__(self, message, *, trajectory=None, t=None, step=None, joint=None):
        super().__init__(message)
        self.trajectory = trajectory
        self.t = t
        self.step = step
        self.joint = joint


@dataclass
class Trajectory:
    """States and energies recorded by :meth:`DynamicsSimulator.run
    <articulated.simulation.simulator.DynamicsSimulator.run>`.

    Attributes
    ----------
    t : (k,) float64 - times [s]
    q : (k, nq) float64 - configurations
    qd : (k, nv) float64 - joint velocities (body-frame rates for quaternion joints)
    kinetic : (k,) float64 - kinetic energy ``T = 1/2 qd^T M qd`` [J]
    potential : (k,) float64 - gravity potential plus the potentials of the conservative
        applied forces (springs, world point forces, PD springs) [J]
    nfev : int - forward-dynamics evaluations of the run (for ``rk45``, scipy's ``nfev``)
    wall_time : float - wall-clock duration of the run [s]
    integrator, method : str - as given to the simulator
    dt : float - the simulator's time step [s]
    contacts : (steps,) structured array or None - with ``contacts=``: the contact
        statistics of every step of the run, fields
        :data:`~articulated.simulation.contact.CONTACT_STATS` (``n, impacts, sticking,
        sliding, sweeps, max_depth, approach_speed, ke_before, ke_after, detect_time,
        response_time``)
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    nfev: int = 0
    wall_time: float = 0.0
    integrator: str = ""
    method: str = ""
    dt: float = float("nan")
    contacts: np.ndarray | None = None

    @property
    def total(self) -> np.ndarray:
        """(k,) float64 - total mechanical energy ``kinetic + potential`` [J]."""
        return self.kinetic + self.potential

    def __len__(self) -> int:
        return int(self.t.shape[0])

    def save(self, path) -> None:
        """Write every field to a NumPy ``.npz`` archive at ``path``."""
        np.savez(path, t=self.t, q=self.q, qd=self.qd, kinetic=self.kinetic,
                 potential=self.potential, nfev=np.int64(self.nfev),
                 wall_time=np.float64(self.wall_time), integrator=np.str_(self.integrator),
                 method=np.str_(self.method), dt=np.float64(self.dt),
                 **({} if self.contacts is None else {"contacts": self.contacts}))

    @classmethod
    def load(cls, path) -> "Trajectory":
        """Read a trajectory written by :meth:`save`."""
        with np.load(path, allow_pickle=False) as z:
            return cls(t=z["t"], q=z["q"], qd=z["qd"], kinetic=z["kinetic"],
                       potential=z["potential"], nfev=int(z["nfev"]),
                       wall_time=float(z["wall_time"]), integrator=str(z["integrator"]),
                       method=str(z["method"]), dt=float(z["dt"]),
                       contacts=z["contacts"] if "contacts" in z else None)


@dataclass
class AdaptiveTrajectory:
    """What :meth:`~articulated.simulation.adaptive.AdaptiveSimulator.run` records (one
    entry per recorded step).

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
    contacts: np.ndarray | None = None

    def __len__(self):
        return len(self.t)


@dataclass
class QuasiStaticTrajectory:
    """What :meth:`~articulated.simulation.quasistatic.QuasiStaticSimulator.run` records.

    Attributes
    ----------
    t : (k,) float64 - recorded times [s]; q : (k, nq) float64 - recorded configurations
    joints : (steps,) int64 - joint accelerations computed per step (N_E; nb for the DCA)
    bound : (steps,) float64 - certified acceleration error per step (0 for the DCA)
    nodes : (steps,) int64 - assembly-tree nodes recomputed per step
    wall : (steps,) float64 - wall time per step [s]
    method, error, eps_max - the settings
    """

    t: np.ndarray
    q: np.ndarray
    joints: np.ndarray
    bound: np.ndarray
    nodes: np.ndarray
    wall: np.ndarray
    method: str = ""
    error: str = ""
    eps_max: float = 0.0
    extra: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.t)
