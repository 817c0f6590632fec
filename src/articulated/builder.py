"""Build a validated :class:`~articulated.model.Model` body by body.

The :class:`ModelBuilder`: a validated :class:`~articulated.model.Model` built body by
body, and the inertia check it applies to every body."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .model import (JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_TYPES, LOOP_KINDS, Model, _JOINT_NV,
                    _as_vec3, _check_rotation)


@dataclass
class _BodySpec:
    name: str
    parent: object
    joint_type: int
    joint_name: str
    axis: np.ndarray
    origin_xyz: np.ndarray
    origin_R: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    limits: tuple
    armature: float = 0.0
    children: list = field(default_factory=list)


def check_inertia(I, what: str, rtol: float = 1e-9) -> np.ndarray:
    """Validate a (3, 3) rotational inertia about the COM; ValueError naming ``what``.

    Checks finiteness, symmetry, positive definiteness and the triangle inequality of the
    principal moments (``I1 + I2 >= I3``, which every physical mass distribution obeys).
    """
    I = np.asarray(I, dtype=np.float64)
    if I.shape != (3, 3):
        raise ValueError(f"{what}: inertia must have shape (3, 3), got {I.shape}")
    if not np.all(np.isfinite(I)):
        raise ValueError(f"{what}: inertia is not finite")
    scale = max(float(np.abs(I).max()), 1e-300)
    if np.abs(I - I.T).max() > rtol * scale + 1e-300:
        raise ValueError(f"{what}: inertia is not symmetric")
    I = 0.5 * (I + I.T)
    ev = np.linalg.eigvalsh(I)
    if ev[0] <= 0.0:
        raise ValueError(f"{what}: inertia is not positive definite (principal moments {ev})")
    if ev[0] + ev[1] < ev[2] * (1.0 - 1e-9):
        raise ValueError(f"{what}: principal moments {ev} violate the triangle inequality "
                         f"I1 + I2 >= I3")
    return I


class ModelBuilder:
    """Build a validated :class:`Model` body by body.

    Bodies may be added in any order and refer to their parent by name (or by ``None`` for
    the world); :meth:`build` resolves the names, rejects unknown parents and cycles, and
    numbers the bodies in depth-first order so that ``parent[i] < i``.

    Parameters
    ----------
    gravity : (3,) float
        Gravitational acceleration in world coordinates [m/s^2]; default ``(0, 0, -9.81)``.

    Examples
    --------
    >>> b = ModelBuilder()
    >>> b.add_body("upper", parent=None, joint="revolute", axis=(0, 1, 0),
    ...            mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    >>> b.add_body("lower", parent="upper", joint="revolute", axis=(0, 1, 0),
    ...            origin_xyz=(0, 0, -1), mass=1.0, com=(0, 0, -0.5),
    ...            inertia=np.diag([0.1, 0.1, 0.01]))
    >>> model = b.build()
    """

    def __init__(self, gravity=(0.0, 0.0, -9.81)):
        self.gravity = _as_vec3(gravity, "gravity")
        self._bodies: dict[str, _BodySpec] = {}
        self._joint_names: set[str] = set()
        self._loops: list[dict] = []

    def __len__(self):
        return len(self._bodies)

    def add_body(self, name: str, parent=None, joint: str = "revolute", *, axis=(0.0, 0.0, 1.0),
                 origin_xyz=(0.0, 0.0, 0.0), origin_R=None, mass: float = 1.0,
                 com=(0.0, 0.0, 0.0), inertia=None, joint_name: str | None = None,
                 limits=None, armature: float = 0.0) -> str:
        """Add a body and the joint that connects it to ``parent``.

        Parameters
        ----------
        name : str
            Unique body name.
        parent : str or None
            Parent body name; ``None`` attaches to the world.
        joint : {"revolute", "prismatic", "spherical", "free", "fixed"}
        axis : (3,) float
            Joint axis in joint coordinates (revolute, prismatic); normalized.
        origin_xyz : (3,) float
            Joint frame origin in parent body coordinates [m].
        origin_R : (3, 3) float, optional
            Joint frame axes in parent coordinates (default 1).
        mass : float
            Body mass [kg], > 0.
        com : (3,) float
            Centre of mass in body coordinates [m].
        inertia : (3, 3) float, optional
            Rotational inertia about the COM in body axes [kg m^2]; default ``0.4 m (0.05
            m)^2 1_3`` (a 5 cm solid sphere).
        joint_name : str, optional
            Defaults to ``name + "_joint"``.
        limits : (lower, upper), optional
            Joint limits [rad or m] of a revolute or prismatic joint (``-inf``/``inf`` or
            None for a free side); enforced by the simulator with ``limits=True`` (Kokkevis
            2004 via GLM IV.B).
        armature : float
            Armature of each of the joint's dofs [kg m^2 | kg], >= 0: a rotor inertia
            reflected through its gear, added to the joint-space inertia's diagonal
            (:attr:`Model.dof_armature`, MuJoCo's ``armature``); not on a free joint.

        Notes
        -----
        Returns the body name. Raises ValueError (naming the body) on bad values.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"body name must be a non-empty string, got {name!r}")
        if name in self._bodies:
            raise ValueError(f"body {name!r} is defined twice")
        if joint not in JOINT_TYPES:
            raise ValueError(f"body {name!r}: unknown joint type {joint!r}; "
                             f"expected one of {sorted(JOINT_TYPES)}")
        jt = JOINT_TYPES[joint]
        jname = joint_name if joint_name is not None else f"{name}_joint"
        if jname in self._joint_names:
            raise ValueError(f"body {name!r}: joint name {jname!r} is used twice")
        if parent is not None and not isinstance(parent, str):
            raise ValueError(f"body {name!r}: parent must be a body name or None, got {parent!r}")
        if parent == name:
            raise ValueError(f"body {name!r} is its own parent (a cycle)")
        try:
            mass = float(mass)
        except (TypeError, ValueError):
            raise ValueError(f"body {name!r}: mass must be a number, got {mass!r}") from None
        if not math.isfinite(mass) or mass <= 0.0:
            raise ValueError(f"body {name!r}: mass must be finite and > 0, got {mass}")
        com = _as_vec3(com, f"body {name!r}: com")
        if inertia is None:
            inertia = np.eye(3) * 0.4 * mass * 0.05 ** 2
        inertia = check_inertia(inertia, f"body {name!r}")
        ax = _as_vec3(axis, f"body {name!r}: joint axis")
        if jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            nrm = np.linalg.norm(ax)
            if nrm < 1e-12:
                raise ValueError(f"body {name!r}: joint axis must be non-zero")
            ax = ax / nrm
        xyz = _as_vec3(origin_xyz, f"body {name!r}: origin_xyz")
        R = np.eye(3) if origin_R is None else _check_rotation(origin_R, f"body {name!r}: origin_R")
        lim = (-math.inf, math.inf)
        if limits is not None:
            if jt not in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                raise ValueError(f"body {name!r}: only revolute and prismatic joints take limits")
            try:
                lo, hi = (float(x) if x is not None else s * math.inf
                          for x, s in zip(limits, (-1.0, 1.0), strict=True))
            except (TypeError, ValueError):
                raise ValueError(f"body {name!r}: limits must be (lower, upper), got {limits!r}") from None
            if math.isnan(lo) or math.isnan(hi) or lo > hi or lo == math.inf or hi == -math.inf:
                raise ValueError(f"body {name!r}: limits must satisfy lower <= upper, got {limits!r}")
            lim = (lo, hi)
        try:
            armature = float(armature)
        except (TypeError, ValueError):
            raise ValueError(f"body {name!r}: armature must be a number, got {armature!r}") from None
        if not (math.isfinite(armature) and armature >= 0.0):
            raise ValueError(f"body {name!r}: armature must be finite and >= 0, got {armature}")
        self._bodies[name] = _BodySpec(name, parent, jt, jname, ax, xyz, R, mass, com, inertia,
                                       lim, armature)
        self._joint_names.add(jname)
        return name

    def add_loop_joint(self, body_a, frame_a, body_b, frame_b, kind: str = "revolute", *,
                       axis=None, name: str | None = None) -> str:
        """Add a loop-closing joint between two bodies (beside the spanning tree).

        The bodies stay connected by their tree joints (reduced coordinates); a loop joint
        adds the constraint rows ``g_L(q) = 0`` of :data:`LOOP_KINDS` between a frame A fixed
        on ``body_a`` and a frame B fixed on ``body_b``. Simulate a model with loops by the
        sequential regularization method (:class:`articulated.simulation.srm.SRMSolver`,
        ``Simulator(..., method="srm")``); every other algorithm ignores loop joints.

        Parameters
        ----------
        body_a, body_b : str or None
            Body names; ``None`` is the world (not both).
        frame_a, frame_b : (3,) float, or a pair ``(xyz (3,), R (3, 3))``
            The loop-joint frame on each body: origin ``xyz`` in body coordinates [m] and
            axes ``R`` (columns, body coordinates; default identity). World coordinates for
            the world.
        kind : {"revolute", "spherical", "weld", "point"}
            See :data:`LOOP_KINDS`.
        axis : (3,) float
            For ``revolute`` (hinge axis) and ``point`` (normal of the plane of motion): a
            direction in loop-frame coordinates, the same in A and B; normalized. Required
            for these two kinds, rejected for the others.
        name : str, optional
            Unique loop-joint name (default ``"loop<k>"``).

        Notes
        -----
        Returns the name.

        Raises
        ------
        ValueError
            Here: ``body_a == body_b``, both world, bad frames or axis, unknown kind,
            duplicate name; in :meth:`build`: an unknown body, or a loop joint that
            duplicates the tree joint between a body and its parent (it holds for every
            value of that joint's coordinates, so it adds no constraint and makes ``G_L``
            rank-deficient everywhere) or can never close.

        Source: Ascher & Lin 1999, sec. 3 (tree plus loop-closing constraints, eq. 3.1).
        """
        lname = name if name is not None else f"loop{len(self._loops)}"
        if not isinstance(lname, str) or not lname:
            raise ValueError(f"loop-joint name must be a non-empty string, got {lname!r}")
        if any(lj["name"] == lname for lj in self._loops):
            raise ValueError(f"loop joint {lname!r} is defined twice")
        for side, b in (("body_a", body_a), ("body_b", body_b)):
            if b is not None and not isinstance(b, str):
                raise ValueError(f"loop joint {lname!r}: {side} must be a body name or None, got {b!r}")
        if body_a == body_b:
            what = "the world" if body_a is None else f"body {body_a!r}"
            raise ValueError(f"loop joint {lname!r} connects {what} to itself")
        if kind not in LOOP_KINDS:
            raise ValueError(f"loop joint {lname!r}: unknown kind {kind!r}; expected one of "
                             f"{sorted(LOOP_KINDS)}")

        def frame(f, side):
            what = f"loop joint {lname!r}: {side}"
            if isinstance(f, (tuple, list)) and len(f) == 2 and np.ndim(f[1]) == 2:
                return _as_vec3(f[0], what + " origin"), _check_rotation(f[1], what + " rotation")
            return _as_vec3(f, what + " origin"), np.eye(3)

        ra, Ea = frame(frame_a, "frame_a")
        rb, Eb = frame(frame_b, "frame_b")
        if kind in ("revolute", "point"):
            if axis is None:
                raise ValueError(f"loop joint {lname!r}: kind {kind!r} needs an axis")
            ax = _as_vec3(axis, f"loop joint {lname!r}: axis")
            if np.linalg.norm(ax) < 1e-12:
                raise ValueError(f"loop joint {lname!r}: axis must be non-zero")
        elif axis is not None:
            raise ValueError(f"loop joint {lname!r}: kind {kind!r} takes no axis "
                             f"(only 'revolute' and 'point' do)")
        else:
            ax = None
        self._loops.append(dict(name=lname, body_a=body_a, body_b=body_b, kind=kind, Ea=Ea,
                                ra=ra, Eb=Eb, rb=rb, axis=ax))
        return lname


    def build(self) -> Model:
        """Resolve parents, check the topology, and return the :class:`Model`.

        Raises ValueError if a parent is unknown, the bodies form a cycle, or there is no body.
        """
        if not self._bodies:
            raise ValueError("the model has no bodies")
        for b in self._bodies.values():
            b.children = []
        roots = []
        for b in self._bodies.values():
            if b.parent is None:
                roots.append(b.name)
            elif b.parent not in self._bodies:
                raise ValueError(f"body {b.name!r}: unknown parent body {b.parent!r}")
            else:
                self._bodies[b.parent].children.append(b.name)
        order = []
        stack = list(reversed(roots))
        while stack:
            n = stack.pop()
            order.append(n)
            stack.extend(reversed(self._bodies[n].children))
        if len(order) != len(self._bodies):
            left = sorted(set(self._bodies) - set(order))
            raise ValueError(f"bodies {left[:10]} form a cycle (they never reach the world)")
        index = {n: i for i, n in enumerate(order)}
        for lj in self._loops:
            for side in ("body_a", "body_b"):
                if lj[side] is not None and lj[side] not in index:
                    raise ValueError(f"loop joint {lj['name']!r}: unknown {side} {lj[side]!r}")
        specs = [self._bodies[n] for n in order]
        return Model(
            body_name=order,
            joint_name=[s.joint_name for s in specs],
            body_parent=[index[s.parent] if s.parent is not None else -1 for s in specs],
            jnt_type=[s.joint_type for s in specs],
            jnt_axis=np.array([s.axis for s in specs]),
            jnt_Xtree_E=np.array([s.origin_R.T for s in specs]),
            jnt_Xtree_r=np.array([s.origin_xyz for s in specs]),
            body_mass=np.array([s.mass for s in specs]),
            body_com=np.array([s.com for s in specs]),
            body_I_com=np.array([s.inertia for s in specs]),
            gravity=self.gravity,
            jnt_range=np.array([s.limits for s in specs]).reshape(-1, 2),
            dof_armature=np.array([s.armature for s in specs
                                   for _ in range(_JOINT_NV[s.joint_type])], dtype=np.float64),
            loop_joints=[dict(lj, body_a=(index[lj["body_a"]] if lj["body_a"] is not None else -1),
                              body_b=(index[lj["body_b"]] if lj["body_b"] is not None else -1))
                         for lj in self._loops],
        )
