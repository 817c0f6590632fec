"""Static description of an articulated body (:class:`Model`), its workspace (:class:`Data`)
and the :class:`ModelBuilder` that makes a validated Model.

Topology
--------
Bodies are numbered ``0 .. nb-1`` in depth-first pre-order, so ``body_parent[i] < i``
(``-1`` is the world; several roots make a forest, e.g. a crowd). Body ``i`` is connected
to its parent by exactly one joint, also numbered ``i`` (a ``"fixed"`` joint has no
degree of freedom). Subtrees are contiguous: the descendants of ``i`` are
``i+1 .. body_subtree_end[i]-1``.

Joints, coordinates and frames
------------------------------
Each joint has a placement ``X_tree`` (parent body frame -> joint frame, given as the
joint frame's origin ``r`` and axes ``R`` in parent coordinates, like a URDF ``<origin>``)
and a motion ``X_J(q)`` (joint frame -> child body frame). ``q`` (nq,) stacks the joint
coordinates in body order and ``qd`` (nv,) the joint velocities:

=============  ====  ====  =========================================================
type           nq    nv    q / qd
=============  ====  ====  =========================================================
``fixed``      0     0     -
``revolute``   1     1     angle [rad] about ``axis`` / angular rate [rad/s]
``prismatic``  1     1     displacement [m] along ``axis`` / rate [m/s]
``spherical``  4     3     unit quaternion (w, x, y, z) of the child frame in the joint
                           frame / angular velocity in child (body) coordinates [rad/s]
``free``       7     6     position of the child origin in joint-frame coordinates [m],
                           then the unit quaternion (w, x, y, z) / ``[w; v]``: angular
                           velocity and origin velocity, both in body coordinates
=============  ====  ====  =========================================================

Quaternions are Hamilton, scalar first (MuJoCo's order; Pinocchio stores (x, y, z, w)).
``qd`` is *not* ``dq/dt`` for quaternion joints (see :func:`articulated.integrate`).
In body coordinates every motion subspace ``S`` is constant: revolute ``[a; 0]``,
prismatic ``[0; a]``, spherical ``[1_3; 0]``, free ``1_6``; so ``S-dot = 0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np


JOINT_FIXED = 0
JOINT_REVOLUTE = 1
JOINT_PRISMATIC = 2
JOINT_SPHERICAL = 3
JOINT_FREE = 4

JOINT_TYPES = {
    "fixed": JOINT_FIXED,
    "revolute": JOINT_REVOLUTE,
    "prismatic": JOINT_PRISMATIC,
    "spherical": JOINT_SPHERICAL,
    "free": JOINT_FREE,
}
JOINT_TYPE_NAMES = {v: k for k, v in JOINT_TYPES.items()}
_JOINT_NQ = {JOINT_FIXED: 0, JOINT_REVOLUTE: 1, JOINT_PRISMATIC: 1, JOINT_SPHERICAL: 4, JOINT_FREE: 7}
_JOINT_NV = {JOINT_FIXED: 0, JOINT_REVOLUTE: 1, JOINT_PRISMATIC: 1, JOINT_SPHERICAL: 3, JOINT_FREE: 6}

QUAT_TOL = 1e-6
"""Largest accepted | |quat| - 1 | of a quaternion in a float64 state (1e-4 in float32)."""


class ModelArrays:
    """The flat arrays of a :class:`Model` in one float dtype, in the order kernels take them.

    Integer arrays are shared with the Model; float arrays are cast copies (float32 for
    the single-precision study) or the Model's own arrays (float64).
    """

    def __init__(self, model: "Model", dtype):
        dt = np.dtype(dtype)
        f = (lambda a: a) if dt == np.float64 else (lambda a: np.ascontiguousarray(a, dtype=dt))
        self.dtype = dt
        self.parent = model.body_parent
        self.jtype = model.jnt_type
        self.qadr = model.jnt_qadr
        self.vadr = model.jnt_vadr
        self.jnv = model.jnt_nv
        self.axis = f(model.jnt_axis)
        self.Xtree_E = f(model.jnt_Xtree_E)
        self.Xtree_r = f(model.jnt_Xtree_r)
        self.mass = f(model.body_mass)
        self.h = f(model.body_h)
        self.Ibar = f(model.body_Ibar)
        self.I = f(model.body_I)
        self.S = f(model.dof_S)
        self.dof_parent = model.dof_parent
        self.gravity = f(model.gravity)

    def kin(self):
        """(parent, jtype, qadr, axis, Xtree_E, Xtree_r): what kinematics kernels take."""
        return (self.parent, self.jtype, self.qadr, self.axis, self.Xtree_E, self.Xtree_r)


class Model:
    """Static description of an articulated body. Never changes during a simulation.

    Make one with :class:`ModelBuilder`, :func:`articulated.load_urdf` or a scene generator
    of :mod:`articulated.models`. Field names carry an entity prefix (``body_``, ``jnt_``,
    ``dof_``), as in MuJoCo's ``mjModel``.

    Attributes
    ----------
    nb : int - number of bodies (= number of joints; the world is not a body)
    nq, nv : int - lengths of ``q`` and ``qd``
    body_name, joint_name : list[str] (nb) - unique names
    body_parent : (nb,) int64 - parent body, ``-1`` for the world; ``body_parent[i] < i``
    body_subtree_end : (nb,) int64 - descendants of i are ``i+1 .. body_subtree_end[i]-1``
    body_mass : (nb,) float64 - mass [kg]
    body_com : (nb, 3) float64 - centre of mass in body coordinates [m]
    body_I_com : (nb, 3, 3) float64 - rotational inertia about the COM, body axes [kg m^2]
    body_h : (nb, 3) float64 - first mass moment ``m c`` [kg m]
    body_Ibar : (nb, 3, 3) float64 - rotational inertia about the body origin [kg m^2]
    body_I : (nb, 6, 6) float64 - spatial inertia about the body origin (RBDA eq. 2.63)
    jnt_type : (nb,) int64 - ``JOINT_FIXED .. JOINT_FREE``
    jnt_axis : (nb, 3) float64 - unit axis in joint coordinates (revolute, prismatic)
    jnt_Xtree_E : (nb, 3, 3) float64 - rotation parent body coords -> joint coords
    jnt_Xtree_r : (nb, 3) float64 - joint frame origin in parent body coords [m]
    jnt_qadr, jnt_nq, jnt_vadr, jnt_nv : (nb,) int64 - offsets and sizes in q and qd
    dof_body : (nv,) int64 - body whose joint owns each velocity coordinate
    dof_S : (nv, 6) float64 - motion-subspace column of each dof, body coordinates
    dof_parent : (nv,) int64 - previous dof on the path to the root, -1 at the root
        (Featherstone's ``lambda`` of the branch-induced sparsity, RBDA sec. 6.5)
    gravity : (3,) float64 - gravitational acceleration in world coordinates [m/s^2]
    """

    def __init__(self, *, body_name, joint_name, body_parent, jnt_type, jnt_axis,
                 jnt_Xtree_E, jnt_Xtree_r, body_mass, body_com, body_I_com, gravity):
        self.body_name = list(body_name)
        self.joint_name = list(joint_name)
        self.body_parent = np.ascontiguousarray(body_parent, dtype=np.int64)
        self.jnt_type = np.ascontiguousarray(jnt_type, dtype=np.int64)
        self.jnt_axis = np.ascontiguousarray(jnt_axis, dtype=np.float64)
        self.jnt_Xtree_E = np.ascontiguousarray(jnt_Xtree_E, dtype=np.float64)
        self.jnt_Xtree_r = np.ascontiguousarray(jnt_Xtree_r, dtype=np.float64)
        self.body_mass = np.ascontiguousarray(body_mass, dtype=np.float64)
        self.body_com = np.ascontiguousarray(body_com, dtype=np.float64)
        self.body_I_com = np.ascontiguousarray(body_I_com, dtype=np.float64)
        self.gravity = np.ascontiguousarray(gravity, dtype=np.float64)
        nb = self.nb = len(self.body_parent)

        self.jnt_nq = np.array([_JOINT_NQ[t] for t in self.jnt_type], dtype=np.int64)
        self.jnt_nv = np.array([_JOINT_NV[t] for t in self.jnt_type], dtype=np.int64)
        self.jnt_qadr = np.concatenate([[0], np.cumsum(self.jnt_nq)[:-1]]).astype(np.int64) if nb else np.zeros(0, np.int64)
        self.jnt_vadr = np.concatenate([[0], np.cumsum(self.jnt_nv)[:-1]]).astype(np.int64) if nb else np.zeros(0, np.int64)
        self.nq = int(self.jnt_nq.sum())
        self.nv = int(self.jnt_nv.sum())

        self._validate_arrays()
        m = self.body_mass
        c = self.body_com
        self.body_h = m[:, None] * c
        # Ibar = I_com + m (c.c 1 - c c^T) (parallel axis), I = [[Ibar, h^], [h^T, m 1]]
        self.body_Ibar = (self.body_I_com + m[:, None, None] * (
            np.einsum("bi,bi->b", c, c)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :]))
        hx = np.zeros((nb, 3, 3))
        h = self.body_h
        hx[:, 0, 1], hx[:, 0, 2], hx[:, 1, 2] = -h[:, 2], h[:, 1], -h[:, 0]
        hx[:, 1, 0], hx[:, 2, 0], hx[:, 2, 1] = h[:, 2], -h[:, 1], h[:, 0]
        self.body_I = np.zeros((nb, 6, 6))
        self.body_I[:, :3, :3] = self.body_Ibar
        self.body_I[:, :3, 3:] = hx
        self.body_I[:, 3:, :3] = np.transpose(hx, (0, 2, 1))
        self.body_I[:, 3:, 3:] = m[:, None, None] * np.eye(3)

        end = np.arange(1, nb + 1, dtype=np.int64)
        for i in range(nb - 1, -1, -1):
            p = self.body_parent[i]
            if p >= 0:
                end[p] = max(end[p], end[i])
        self.body_subtree_end = end

        self.dof_body = np.repeat(np.arange(nb, dtype=np.int64), self.jnt_nv)
        self.dof_S = np.zeros((self.nv, 6))
        self.dof_parent = np.full(self.nv, -1, dtype=np.int64)
        last_dof = np.full(nb, -1, dtype=np.int64)  # last dof on the path root..i
        for i in range(nb):
            p = self.body_parent[i]
            prev = last_dof[p] if p >= 0 else -1
            va, nvi, t = self.jnt_vadr[i], self.jnt_nv[i], self.jnt_type[i]
            for k in range(nvi):
                self.dof_parent[va + k] = prev
                prev = va + k
            last_dof[i] = prev
            if t == JOINT_REVOLUTE:
                self.dof_S[va, :3] = self.jnt_axis[i]
            elif t == JOINT_PRISMATIC:
                self.dof_S[va, 3:] = self.jnt_axis[i]
            elif t == JOINT_SPHERICAL:
                self.dof_S[va:va + 3, :3] = np.eye(3)
            elif t == JOINT_FREE:
                self.dof_S[va:va + 6] = np.eye(6)
        self.quat_qadr = np.array(
            [self.jnt_qadr[i] + (3 if self.jnt_type[i] == JOINT_FREE else 0)
             for i in range(nb) if self.jnt_type[i] in (JOINT_SPHERICAL, JOINT_FREE)],
            dtype=np.int64)
        self._body_index = {n: i for i, n in enumerate(self.body_name)}
        self._joint_index = {n: i for i, n in enumerate(self.joint_name)}
        self._arrays = {}
        self._data = {}

    def _validate_arrays(self):
        """Vectorized checks of the arrays (every construction path goes through here)."""
        nb = self.nb
        shapes = dict(jnt_type=(nb,), jnt_axis=(nb, 3), jnt_Xtree_E=(nb, 3, 3),
                      jnt_Xtree_r=(nb, 3), body_mass=(nb,), body_com=(nb, 3),
                      body_I_com=(nb, 3, 3), gravity=(3,))
        for k, s in shapes.items():
            if getattr(self, k).shape != s:
                raise ValueError(f"Model.{k} must have shape {s}, got {getattr(self, k).shape}")
        if len(self.body_name) != nb or len(self.joint_name) != nb:
            raise ValueError("body_name and joint_name need one entry per body")
        if len(set(self.body_name)) != nb:
            raise ValueError("body names are not unique")
        if len(set(self.joint_name)) != nb:
            raise ValueError("joint names are not unique")
        bad = np.flatnonzero((self.body_parent >= np.arange(nb)) | (self.body_parent < -1))
        if bad.size:
            raise ValueError(f"body {self.body_name[bad[0]]!r}: parent index "
                             f"{self.body_parent[bad[0]]} must be -1 or smaller than {bad[0]}")
        bad = np.flatnonzero(~np.isin(self.jnt_type, list(JOINT_TYPE_NAMES)))
        if bad.size:
            raise ValueError(f"joint {self.joint_name[bad[0]]!r}: unknown joint type {self.jnt_type[bad[0]]}")
        for k in ("jnt_axis", "jnt_Xtree_E", "jnt_Xtree_r", "body_com", "body_I_com", "body_mass"):
            a = getattr(self, k)
            bad = np.flatnonzero(~np.isfinite(a.reshape(nb, -1)).all(axis=1))
            if bad.size:
                raise ValueError(f"body {self.body_name[bad[0]]!r}: {k} is not finite")
        if not np.isfinite(self.gravity).all():
            raise ValueError("gravity is not finite")
        bad = np.flatnonzero(~(self.body_mass > 0))
        if bad.size:
            raise ValueError(f"body {self.body_name[bad[0]]!r}: mass must be > 0, got {self.body_mass[bad[0]]}")
        I = self.body_I_com
        if nb:
            scale = np.abs(I).reshape(nb, -1).max(axis=1)
            bad = np.flatnonzero(np.abs(I - np.transpose(I, (0, 2, 1))).reshape(nb, -1).max(axis=1) > 1e-9 * scale)
            if bad.size:
                raise ValueError(f"body {self.body_name[bad[0]]!r}: inertia is not symmetric")
            ev = np.linalg.eigvalsh(I)
            bad = np.flatnonzero(ev[:, 0] <= 0)
            if bad.size:
                raise ValueError(f"body {self.body_name[bad[0]]!r}: inertia is not positive definite "
                                 f"(principal moments {ev[bad[0]]})")
            bad = np.flatnonzero(ev[:, 0] + ev[:, 1] < ev[:, 2] * (1 - 1e-9))
            if bad.size:
                raise ValueError(f"body {self.body_name[bad[0]]!r}: principal moments {ev[bad[0]]} "
                                 f"violate the triangle inequality I1 + I2 >= I3")
            E = self.jnt_Xtree_E
            bad = np.flatnonzero(np.abs(E @ np.transpose(E, (0, 2, 1)) - np.eye(3)).reshape(nb, -1).max(axis=1) > 1e-9)
            if bad.size:
                raise ValueError(f"joint {self.joint_name[bad[0]]!r}: placement rotation is not orthonormal")
            moving = np.isin(self.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC))
            bad = np.flatnonzero(moving & (np.abs(np.linalg.norm(self.jnt_axis, axis=1) - 1) > 1e-9))
            if bad.size:
                raise ValueError(f"joint {self.joint_name[bad[0]]!r}: axis is not a unit vector")

    # ------------------------------------------------------------------ naming
    @property
    def joint_names(self) -> list[str]:
        """Joint names, one per body (joint i connects body i to its parent)."""
        return list(self.joint_name)

    @property
    def body_names(self) -> list[str]:
        """Body names in body order."""
        return list(self.body_name)

    @property
    def total_mass(self) -> float:
        """Sum of the body masses [kg]."""
        return float(self.body_mass.sum())

    def body_id(self, body) -> int:
        """Index of a body given by name or index; ValueError if there is no such body."""
        if isinstance(body, (int, np.integer)):
            if not 0 <= int(body) < self.nb:
                raise ValueError(f"body index {body} out of range 0..{self.nb - 1}")
            return int(body)
        try:
            return self._body_index[body]
        except KeyError:
            raise ValueError(f"no body named {body!r} in the model") from None

    def joint_id(self, joint) -> int:
        """Index of a joint given by name or index; ValueError if there is no such joint."""
        if isinstance(joint, (int, np.integer)):
            if not 0 <= int(joint) < self.nb:
                raise ValueError(f"joint index {joint} out of range 0..{self.nb - 1}")
            return int(joint)
        try:
            return self._joint_index[joint]
        except KeyError:
            raise ValueError(f"no joint named {joint!r} in the model") from None

    def __repr__(self):
        counts = {JOINT_TYPE_NAMES[t]: int((self.jnt_type == t).sum()) for t in np.unique(self.jnt_type)}
        return f"Model(nb={self.nb}, nq={self.nq}, nv={self.nv}, joints={counts})"

    # ------------------------------------------------------------- states
    def neutral(self) -> np.ndarray:
        """Neutral configuration q (nq,) float64: zero angles/offsets, identity quaternions."""
        q = np.zeros(self.nq)
        q[self.quat_qadr] = 1.0
        return q

    def random_configuration(self, rng=None, scale: float = np.pi) -> np.ndarray:
        """A random configuration q (nq,) float64 (angles uniform in [-scale, scale],
        prismatic/free positions in [-0.5, 0.5] m, uniformly random unit quaternions)."""
        rng = np.random.default_rng(rng)
        q = np.zeros(self.nq)
        for i in range(self.nb):
            t, a = self.jnt_type[i], self.jnt_qadr[i]
            if t == JOINT_REVOLUTE:
                q[a] = rng.uniform(-scale, scale)
            elif t == JOINT_PRISMATIC:
                q[a] = rng.uniform(-0.5, 0.5)
            elif t in (JOINT_SPHERICAL, JOINT_FREE):
                o = a
                if t == JOINT_FREE:
                    q[a:a + 3] = rng.uniform(-0.5, 0.5, 3)
                    o = a + 3
                u = rng.normal(size=4)
                q[o:o + 4] = u / np.linalg.norm(u)
        return q

    def arrays(self, dtype=np.float64) -> ModelArrays:
        """Model arrays cast to ``dtype`` (float64 or float32), cached."""
        key = np.dtype(dtype)
        if key not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise TypeError(f"dtype must be float64 or float32, got {key}")
        if key not in self._arrays:
            self._arrays[key] = ModelArrays(self, key)
        return self._arrays[key]

    def data(self, dtype=np.float64) -> "Data":
        """The workspace the public functions use for this model and dtype (cached)."""
        key = np.dtype(dtype)
        d = self._data.get(key)
        if d is None:
            d = self._data[key] = Data(self, key)
        return d

    def check_vector(self, x, name: str, size: int, dtype=np.float64) -> np.ndarray:
        """Return x as a contiguous (size,) array of ``dtype``; ValueError on a wrong shape,
        TypeError on a non-numeric array."""
        a = np.asarray(x)
        if a.dtype.kind not in "fiu":
            raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
        if a.shape != (size,):
            raise ValueError(f"{name} must have shape ({size},), got {a.shape}")
        return np.ascontiguousarray(a, dtype=dtype)

    def check_configuration(self, q, dtype=np.float64) -> np.ndarray:
        """Validate a configuration: shape (nq,), finite, unit quaternions (ValueError naming
        the joint otherwise). Returns it as a contiguous array of ``dtype``."""
        q = self.check_vector(q, "q", self.nq, dtype)
        if self.quat_qadr.size:
            tol = QUAT_TOL if q.dtype == np.float64 else 1e-4
            idx = self.quat_qadr[:, None] + np.arange(4)
            norms = np.sqrt((q[idx].astype(np.float64) ** 2).sum(axis=1))
            bad = np.flatnonzero(~(np.abs(norms - 1.0) <= tol))
            if bad.size:
                j = self._quat_joint(bad[0])
                raise ValueError(
                    f"joint {self.joint_name[j]!r}: quaternion q[{self.quat_qadr[bad[0]]}:"
                    f"{self.quat_qadr[bad[0]] + 4}] has norm {norms[bad[0]]!r}, not 1 "
                    f"(normalize it, e.g. with articulated.normalize)")
        return q

    def _quat_joint(self, k):
        js = [i for i in range(self.nb) if self.jnt_type[i] in (JOINT_SPHERICAL, JOINT_FREE)]
        return js[k]

    def diagnose_nonfinite(self, **vectors):
        """Raise ValueError naming the joint (or body) whose input entry is NaN/inf.

        ``vectors`` maps a name (``q``, ``qd``, ``tau``, ``qdd``, ``f_ext``) to its array.
        Called by the public wrappers after a kernel produced a non-finite result.
        """
        for name, x in vectors.items():
            if x is None:
                continue
            x = np.asarray(x)
            bad = np.argwhere(~np.isfinite(x))
            if bad.size == 0:
                continue
            k = int(bad[0][0])
            if name == "q":
                j = int(np.searchsorted(self.jnt_qadr + self.jnt_nq, k, side="right"))
                raise ValueError(f"joint {self.joint_name[j]!r}: q[{k}] is {x.flat[k]!r} (not finite)")
            if name == "f_ext":
                raise ValueError(f"body {self.body_name[k]!r}: f_ext[{k}] is not finite")
            j = int(self.dof_body[k])
            raise ValueError(f"joint {self.joint_name[j]!r}: {name}[{k}] is {x[k]!r} (not finite)")
        return None


class Data:
    """Every state-dependent workspace array of a :class:`Model`, allocated once.

    Fields are grouped by the stage that writes them (MuJoCo's ``mjData`` habit). Frames:
    a body quantity of body i is in body-i coordinates unless prefixed ``o`` (world).

    Position stage
        Xup_E (nb, 3, 3), Xup_r (nb, 3): compact transform parent -> body (``iX_lambda(i)``)
        oE (nb, 3, 3): rotation world -> body coordinates; op (nb, 3): body origin in world [m]
    Velocity stage
        v (nb, 6): body spatial velocity; c (nb, 6): velocity-product acceleration ``v x S qd``
    Acceleration / force stage
        a (nb, 6): body spatial acceleration (gravity folded in as a base acceleration)
        f (nb, 6): force transmitted across joint i from its parent [N, N m]
        IA (nb, 6, 6), pA (nb, 6): articulated inertia and bias force (ABA); composite
        inertia ``Ic`` reuses IA in CRBA
        U (nv, 6): ``IA S``; Dinv (nv, 6): rows of ``D^-1`` (``D = S^T IA S``) per joint;
        D (nv, 6): ``D`` kept separately by the modified ABA; u (nv,): ``tau - S^T pA``
    Outputs
        qdd (nv,), tau (nv,), M (nv, nv) allocated on first use by CRBA
    Scratch
        T, T2 (6, 6), EJ (3, 3), tmp (4, 6); f_zero (nb, 6) zeros for ``f_ext=None``
    """

    def __init__(self, model: Model, dtype=np.float64):
        nb, nv = model.nb, model.nv
        dt = self.dtype = np.dtype(dtype)
        z = lambda *s: np.zeros(s, dtype=dt)
        self.Xup_E = z(nb, 3, 3)
        self.Xup_r = z(nb, 3)
        self.oE = z(nb, 3, 3)
        self.op = z(nb, 3)
        self.v = z(nb, 6)
        self.c = z(nb, 6)
        self.a = z(nb, 6)
        self.f = z(nb, 6)
        self.IA = z(nb, 6, 6)
        self.pA = z(nb, 6)
        self.U = z(nv, 6)
        self.Dinv = z(nv, 6)
        self.D = z(nv, 6)
        self.u = z(nv)
        self.qdd = z(nv)
        self.tau = z(nv)
        self.T = z(6, 6)
        self.T2 = z(6, 6)
        self.EJ = z(3, 3)
        self.tmp = z(4, 6)
        self.f_zero = z(nb, 6)
        self._M = None

    @property
    def M(self) -> np.ndarray:
        """(nv, nv) joint-space inertia workspace, allocated on first use."""
        if self._M is None:
            self._M = np.zeros((self.U.shape[0],) * 2, dtype=self.dtype)
        return self._M

    def nbytes(self) -> int:
        """Bytes held by the workspace arrays."""
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))


# ---------------------------------------------------------------------------- builder

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
    children: list = field(default_factory=list)


def _as_vec3(x, what):
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (3,):
        raise ValueError(f"{what} must have shape (3,), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} is not finite: {a}")
    return a.copy()


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


def _check_rotation(R, what):
    R = np.asarray(R, dtype=np.float64)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"{what} must be a finite (3, 3) rotation matrix")
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
        raise ValueError(f"{what} is not a proper rotation matrix (R R^T != 1 or det < 0)")
    return R.copy()


class ModelBuilder:
    """Build a validated :class:`Model` body by body.

    Bodies may be added in any order and refer to their parent by name (or by ``None`` for
    the world); :meth:`build` resolves the names, rejects unknown parents and cycles, and
    numbers the bodies in depth-first order so that ``parent[i] < i``.

    Example
    -------
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

    def __len__(self):
        return len(self._bodies)

    def add_body(self, name: str, parent=None, joint: str = "revolute", *, axis=(0.0, 0.0, 1.0),
                 origin_xyz=(0.0, 0.0, 0.0), origin_R=None, mass: float = 1.0,
                 com=(0.0, 0.0, 0.0), inertia=None, joint_name: str | None = None) -> str:
        """Add a body and the joint that connects it to ``parent``.

        Parameters
        ----------
        name : str - unique body name
        parent : str or None - parent body name; ``None`` attaches to the world
        joint : {"revolute", "prismatic", "spherical", "free", "fixed"}
        axis : (3,) float - joint axis in joint coordinates (revolute, prismatic); normalized
        origin_xyz : (3,) float - joint frame origin in parent body coordinates [m]
        origin_R : (3, 3) float, optional - joint frame axes in parent coordinates (default 1)
        mass : float - body mass [kg], > 0
        com : (3,) float - centre of mass in body coordinates [m]
        inertia : (3, 3) float, optional - rotational inertia about the COM in body axes
            [kg m^2]; default ``0.4 m (0.05 m)^2 1_3`` (a 5 cm solid sphere)
        joint_name : str, optional - defaults to ``name + "_joint"``

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
        self._bodies[name] = _BodySpec(name, parent, jt, jname, ax, xyz, R, mass, com, inertia)
        self._joint_names.add(jname)
        return name

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
        )
