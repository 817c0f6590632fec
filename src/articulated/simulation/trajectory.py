"""What a simulation records: :class:`Trajectory`, one type for every simulator.

What a simulation records: :class:`Trajectory`, one type for every simulator (tree
dynamics, :class:`~articulated.simulation.simulator.DynamicsSimulator`; adaptive dynamics,
:class:`~articulated.simulation.adaptive.AdaptiveSimulator`; quasi-statics,
:class:`~articulated.simulation.quasistatic.QuasiStaticSimulator`), with the fields of
its method and ``None`` for the others, written to and read from one ``.npz`` file
(:meth:`Trajectory.save`, :meth:`Trajectory.load`) that also carries the body and joint
names, the model's description (:attr:`articulated.Model.description`, so that
:meth:`Trajectory.build_model` can rebuild the model), the units, the method and the
integrator; and :class:`SimulationDiverged`, which every simulator raises with the records
made before a failure."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

import numpy as np

from ..models.description import jsonable

FORMAT = 1
"""Version of the ``.npz`` layout written by :meth:`Trajectory.save` (its ``meta`` entry)."""

UNITS = {
    "t": "s", "q": "rad (revolute), m (prismatic, free position), 1 (quaternion w, x, y, z)",
    "qd": "rad/s (revolute, angular), m/s (prismatic, linear)", "kinetic": "J",
    "potential": "J", "wall": "s", "wall_time": "s", "dt": "s", "nfev": "1",
    "active": "joints", "update_region": "joints", "rigidified": "joints",
    "joints": "joints", "nodes": "assembly-tree nodes",
    "bound": "1 (relative measures) or rad/s^2 | m/s^2 (absolute measures)",
}
"""Units of the fields of a :class:`Trajectory` (SI), also written into every file."""

ARRAYS = ("t", "q", "qd", "kinetic", "potential", "wall", "active", "update_region",
          "rigidified", "joints", "bound", "nodes", "contacts")
"""The array fields of :class:`Trajectory` (each may be None except ``t`` and ``q``)."""


class SimulationDiverged(RuntimeError):
    """The state (or an applied force) became non-finite during a simulation.

    Attributes
    ----------
    trajectory : Trajectory
        Everything recorded before the failure (at least the state the failing ``run``
        started from).
    t : float
        Time [s] of the last finite state.
    step : int
        Index (1-based, within the run) of the step that failed.
    joint : str or None
        The joint whose coordinate (or acceleration) first became non-finite, if known.
    q, qd : (nq,), (nv,) float64 or None
        The last finite state (at time ``t``), if known.
    """

    def __init__(self, message, *, trajectory=None, t=None, step=None, joint=None, q=None,
                 qd=None):
        super().__init__(message)
        self.trajectory = trajectory
        self.t = t
        self.step = step
        self.joint = joint
        self.q = None if q is None else np.array(q, dtype=np.float64)
        self.qd = None if qd is None else np.array(qd, dtype=np.float64)


@dataclass
class Trajectory:
    """What a simulator's ``run`` records, one type for every method.

    The fields of the method that made it are set, ``None`` for the others.

    Attributes
    ----------
    t : (k,) float64
        Times of the records [s].
    q : (k, nq) float64
        Configurations.
    qd : (k, nv) float64 or None
        Joint velocities (body-frame rates for quaternion joints); None for quasi-statics
        (velocities are zero at every instant).
    kinetic : (k,) float64 or None
        Kinetic energy ``T = 1/2 qd^T M qd`` [J] (dynamics and adaptive dynamics).
    potential : (k,) float64 or None
        Gravity potential plus the potentials of the conservative applied forces (springs,
        world point forces, PD springs) [J] (tree dynamics only).
    nfev : int
        Forward-dynamics evaluations of the run (for ``rk45``, scipy's ``nfev``; SRM:
        steps).
    wall_time : float
        Wall-clock duration of the run [s].
    integrator, method : str
        As given to the simulator (adaptive dynamics: ``"semi_implicit_euler"``,
        quasi-statics: ``"quasistatic"`` stepping from rest).
    dt : float
        The simulator's time step [s].
    contacts : (steps,) structured array or None
        With ``contacts=``: the contact statistics of every step of the run, fields
        :data:`~articulated.simulation.contact.CONTACT_STATS`.
    wall : (steps,) float64 or None
        Wall time of every step [s] (adaptive dynamics and quasi-statics).
    active, update_region, rigidified : (k,) int64 or None
        Adaptive dynamics, per record: active joints, joints of the last acceleration update
        region, joints rigidified at the last active-region update.
    joints, bound, nodes : (steps,) or None
        Quasi-statics, per step: joint accelerations computed (N_E; nb for the DCA),
        certified acceleration error (0 for the DCA; unit of the error measure),
        assembly-tree nodes recomputed.
    settings : dict
        The simulator's other settings (JSON values: ``max_active``, ``eps_max``, ``error``,
        ...).
    body_name, joint_name : list of str
        The model's names (nb each).
    description : dict or None
        The model's :attr:`~articulated.Model.description` (how to rebuild it,
        :meth:`build_model`).
    units : dict
        Field -> unit (:data:`UNITS`).
    interrupted : bool
        The run ended early on Ctrl-C (these are the records so far).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray | None = None
    kinetic: np.ndarray | None = None
    potential: np.ndarray | None = None
    nfev: int = 0
    wall_time: float = 0.0
    integrator: str = ""
    method: str = ""
    dt: float = float("nan")
    contacts: np.ndarray | None = None
    wall: np.ndarray | None = None
    active: np.ndarray | None = None
    update_region: np.ndarray | None = None
    rigidified: np.ndarray | None = None
    joints: np.ndarray | None = None
    bound: np.ndarray | None = None
    nodes: np.ndarray | None = None
    settings: dict = field(default_factory=dict)
    body_name: list = field(default_factory=list)
    joint_name: list = field(default_factory=list)
    description: dict | None = None
    units: dict = field(default_factory=lambda: dict(UNITS))
    interrupted: bool = False

    @classmethod
    def of(cls, model, **fields_) -> "Trajectory":
        """A trajectory of ``model``: its names and description, then ``fields_``."""
        return cls(body_name=list(model.body_name), joint_name=list(model.joint_name),
                   description=getattr(model, "description", None), **fields_)

    @property
    def total(self) -> np.ndarray:
        """Total mechanical energy ``kinetic + potential`` (k,) float64 [J].

        ValueError when the run did not record both (adaptive dynamics records the kinetic
        energy only, quasi-statics none).
        """
        if self.kinetic is None or self.potential is None:
            raise ValueError(f"this trajectory ({self.method or 'unknown method'}) has no "
                             f"{'kinetic' if self.kinetic is None else 'potential'} energy")
        return self.kinetic + self.potential

    @property
    def error(self) -> str:
        """Quasi-statics: the error measure of ``eps_max`` (``settings["error"]``)."""
        return self.settings.get("error", "")

    @property
    def eps_max(self) -> float:
        """Quasi-statics: the error bound (``settings["eps_max"]``)."""
        return float(self.settings.get("eps_max", 0.0))

    def __len__(self) -> int:
        return int(self.t.shape[0])

    # ------------------------------------------------------------------ files
    def _meta(self) -> dict:
        return jsonable(dict(format=FORMAT, nfev=int(self.nfev),
                             wall_time=float(self.wall_time), integrator=self.integrator,
                             method=self.method, dt=float(self.dt), settings=self.settings,
                             body_name=self.body_name, joint_name=self.joint_name,
                             description=self.description, units=self.units,
                             interrupted=bool(self.interrupted)))

    def arrays(self) -> dict:
        """Return ``name -> array`` of the array fields that are set.

        What :meth:`save` writes beside the ``meta`` entry.
        """
        return {k: getattr(self, k) for k in ARRAYS if getattr(self, k) is not None}

    def save(self, path) -> None:
        """Write the trajectory to the NumPy ``.npz`` archive ``path``.

        The archive holds every array field that is set, and a ``meta`` entry (a JSON
        string) with the scalars, settings, body and joint names, the model's description
        and the units. Read it back with :meth:`load` (no pickle). Raises OSError when the
        file cannot be written (the trajectory in memory is unchanged).
        """
        np.savez(path, meta=np.str_(json.dumps(self._meta())), **self.arrays())

    @classmethod
    def load(cls, path) -> "Trajectory":
        """Read a trajectory written by :meth:`save`.

        Also reads a checkpoint of
        :meth:`articulated.simulation.simulator.DynamicsSimulator.run`, which holds the
        trajectory so far, and the files of earlier versions (no ``meta``: names and
        description empty). Raises ValueError for a file that is not a trajectory.
        """
        with np.load(path, allow_pickle=False) as z:
            keys = set(z.files)
            if "t" not in keys or "q" not in keys:
                raise ValueError(f"{path}: not a trajectory file (no 't' and 'q' arrays; "
                                 f"entries {sorted(keys)})")
            arrays = {k: z[k] for k in ARRAYS if k in keys}
            if "meta" in keys:
                meta = json.loads(str(z["meta"]))
                if int(meta.get("format", 0)) > FORMAT:
                    raise ValueError(f"{path}: trajectory format {meta['format']} is newer "
                                     f"than this version of articulated reads ({FORMAT})")
            else:                          # format 0: scalars as entries of their own
                meta = {k: z[k].item() for k in ("nfev", "wall_time", "integrator",
                                                 "method", "dt") if k in keys}
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in meta.items() if k in names}
        kw.setdefault("units", dict(UNITS))
        return cls(**arrays, **kw)

    def build_model(self):
        """Return the model this trajectory was recorded on, rebuilt from its description.

        Built from :attr:`description` by :func:`articulated.models.build_model`, checked
        against the recorded body names.

        Raises ValueError when the trajectory has no description (a model built by hand:
        pass the model yourself), when the description cannot be rebuilt (an unknown scene,
        a missing or changed file), or when the rebuilt model's bodies differ from the
        recorded ones.
        """
        from ..models import build_model

        if self.description is None:
            raise ValueError("this trajectory carries no model description (the model was "
                             "built by hand, or the file predates descriptions): build the "
                             "model yourself")
        model = build_model(self.description)
        if self.body_name and list(model.body_name) != list(self.body_name):
            raise ValueError(f"the model rebuilt from {self.description} has bodies "
                             f"{model.body_name[:3]}... ({model.nb}), the trajectory "
                             f"{self.body_name[:3]}... ({len(self.body_name)})")
        return model

    def __repr__(self):
        k = len(self)
        span = f"t = {self.t[0]:.6g} .. {self.t[-1]:.6g} s" if k else "empty"
        what = self.description.get("scene", "") if isinstance(self.description, dict) else ""
        return (f"Trajectory({k} records, {span}, method={self.method!r}, "
                f"integrator={self.integrator!r}, dt={self.dt:g}"
                f"{', scene=' + repr(what) if what else ''}, nb={len(self.body_name)})")


def record_rows(x, c):
    """The first ``c`` rows of a run's preallocated record array ``x``: ``x`` itself when
    it is full (its records are not written again: no copy of what may be megabytes; a
    checkpoint's trajectory and the run's final one may then share it), else a copy (a
    trajectory taken while the run goes on)."""
    return x if c == x.shape[0] else x[:c].copy()


def nonfinite_joint(model, q, qd, what):
    """``(message, joint name)`` for the first non-finite entry of ``q`` (nq,) or ``qd``
    (nv,) (``what`` names the state in the message); the joint is None when both are
    finite."""
    bad = np.flatnonzero(~np.isfinite(q))
    if bad.size:
        k = int(bad[0])
        j = int(np.searchsorted(model.jnt_qadr + model.jnt_nq, k, side="right"))
        name = model.joint_name[j]
        return f"{what} q[{k}] (joint {name!r}) is {float(q[k])!r}", name
    bad = np.flatnonzero(~np.isfinite(qd))
    if bad.size:
        k = int(bad[0])
        name = model.joint_name[int(model.dof_body[k])]
        return f"{what} qd[{k}] (joint {name!r}) is {float(qd[k])!r}", name
    return f"{what} is not finite", None
