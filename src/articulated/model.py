"""Static description of an articulated body: :class:`Model` and its packed arrays.

Static description of an articulated body (:class:`Model`) and the packed arrays its
kernels read (:class:`ModelArrays`, :func:`model_arrays`). Its workspace is
:class:`articulated.data.Data`; :class:`articulated.builder.ModelBuilder` makes a validated
Model body by body.

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
from collections import namedtuple

import numpy as np
from numba import njit

from ._views import mat3_view, rows
from .config import inline, KERNEL, VIEWS
from .data import Data


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

LOOP_POINT = 0
LOOP_SPHERICAL = 1
LOOP_REVOLUTE = 2
LOOP_WELD = 3

LOOP_KINDS = {"point": LOOP_POINT, "spherical": LOOP_SPHERICAL, "revolute": LOOP_REVOLUTE,
              "weld": LOOP_WELD}
"""Loop-joint kinds of :meth:`ModelBuilder.add_loop_joint` and the rows each adds to g_L:

=============  ====  ==========================================================================
kind           rows  constraint (frames A on body a, B on body b; ``R_A^T`` = loop-frame A
                     coordinates)
=============  ====  ==========================================================================
``point``      2     planar pin: ``t_k . R_A^T (p_B - p_A) = 0``, k = 1, 2 (origins coincide
                     in the plane normal to ``axis``: the paper's 2D loop closure
                     ``x_k - x_j = 0``, Ascher & Lin 1999 sec. 3, eq. 3.1)
``spherical``  3     ball joint: ``R_A^T (p_B - p_A) = 0``
``revolute``   5     the 3 rows of ``spherical`` and ``t_k . (R_A^T R_B n) = 0``, k = 1, 2
                     (the axis ``n`` of B stays parallel to that of A)
``weld``       6     the 3 rows of ``spherical`` and ``vee(R_rel - R_rel^T) / 2 = 0`` with
                     ``R_rel = R_A^T R_B`` (``sin(angle) axis`` of the relative rotation)
=============  ====  ==========================================================================
"""
LOOP_KIND_NAMES = {v: k for k, v in LOOP_KINDS.items()}
LOOP_NC = {LOOP_POINT: 2, LOOP_SPHERICAL: 3, LOOP_REVOLUTE: 5, LOOP_WELD: 6}

QUAT_TOL = 1e-6
"""Largest accepted ``abs(norm(quat) - 1)`` of a quaternion in a float64 state."""

QUAT_TOL_F32 = 1e-4
"""Largest accepted ``abs(norm(quat) - 1)`` of a quaternion in a float32 state."""


def quaternion_tol(dtype) -> float:
    """Return the accepted ``abs(norm(quat) - 1)`` of a configuration of ``dtype``.

    :data:`QUAT_TOL` in float64, :data:`QUAT_TOL_F32` in float32.
    """
    return QUAT_TOL if dtype is _F64 or dtype == np.float64 else QUAT_TOL_F32


_F64 = np.dtype(np.float64)


MODEL_ARRAY_NAMES = ("parent", "jtype", "qadr", "vadr", "jnv", "subtree_end", "Xtree_rot",
                     "axis", "Xtree_E", "Xtree_r", "mass", "h", "Ibar", "S", "gravity",
                     "armature")
"""Names of the arrays :func:`model_arrays` returns, in its order."""

ModelViews = namedtuple("ModelViews", MODEL_ARRAY_NAMES)
ModelViews.__doc__ = """The named views :func:`model_arrays` returns (a numba named tuple).

Kernels read its fields by name."""

_MODEL_INT_ROWS = 7
_MODEL_BODY = 32
"""Entries of a body's record in the packed model floats (four 64-byte cache lines)."""


def model_floats_size(nb, nv):
    """Return the length of the packed model floats of ``nb`` bodies and ``nv`` dofs.

    The layout is :func:`model_arrays`'s."""
    return _MODEL_BODY * nb + 7 * nv + 3


@njit(**KERNEL)
def first_bad_quaternion(q, quat_qadr, tol):
    """Return the index of the first quaternion of ``q`` whose norm is not 1, or -1.

    Quaternion ``k`` is ``q[quat_qadr[k] : quat_qadr[k] + 4]``; a non-finite one counts
    as bad when its norm is not within ``tol`` of 1. The compiled O(1)-per-joint check of
    :meth:`Model.check_configuration`.
    """
    for k in range(quat_qadr.shape[0]):
        if not unit_quaternion(q, quat_qadr[k], tol):
            return k
    return -1


@inline
def unit_quaternion(q, a, tol):
    """Return True if the quaternion ``q[a : a + 4]`` has norm within ``tol`` of 1.

    False for a non-finite quaternion.
    """
    n = math.sqrt(float(q[a]) ** 2 + float(q[a + 1]) ** 2 + float(q[a + 2]) ** 2
                  + float(q[a + 3]) ** 2)
    return abs(n - 1.0) <= tol


@njit(**VIEWS)
def model_arrays(model_i, model_f):
    """Return named views into the two packed buffers of a :class:`ModelArrays`.

    The one place that defines the buffers' layout: kernels start with ``m =
    model_arrays(model_i, model_f)`` and read ``m.parent``, ``m.S``, ... by name. Returns a
    :class:`ModelViews` of the arrays named by :data:`MODEL_ARRAY_NAMES`; ``Xtree_E`` and
    ``Ibar`` are (nb, 9), row-major 3x3 matrices (:func:`articulated.spatial.get_mat3` reads
    both this and (nb, 3, 3)). No copies, no allocation.
    """
    nb = model_i.shape[1]
    parent = model_i[0]
    jtype = model_i[1]
    qadr = model_i[2]
    vadr = model_i[3]
    jnv = model_i[4]
    subtree_end = model_i[5]
    Xtree_rot = model_i[6]
    nv = vadr[nb - 1] + jnv[nb - 1] if nb > 0 else 0
    # one record per body, the fields of ABA pass 1 first (cache line 0), pass 2 next
    body = rows(model_f, nb, _MODEL_BODY)
    axis = body[:, 0:3]
    Xtree_r = body[:, 3:6]
    mass = body[:, 6]
    h = body[:, 8:11]
    Ibar = body[:, 11:20]
    Xtree_E = body[:, 20:29]
    o = _MODEL_BODY * nb
    S = rows(model_f[o:], nv, 6)
    o += 6 * nv
    gravity = model_f[o:o + 3]
    o += 3
    armature = model_f[o:o + nv]
    return ModelViews(parent, jtype, qadr, vadr, jnv, subtree_end, Xtree_rot, axis, Xtree_E,
                      Xtree_r, mass, h, Ibar, S, gravity, armature)




class ModelArrays:
    """The arrays of a :class:`Model` that kernels read, in one float dtype, in two buffers.

    A numba call pays per array argument, and a kernel addresses a handful of record arrays
    more cheaply than dozens of separate ones (fewer base pointers and strides to keep in
    registers), so the model is packed into two buffers that kernels unpack into named
    views with :func:`model_arrays`, the only definition of the layout:

    ints (7, nb) int64
        rows ``parent``, ``jtype``, ``qadr``, ``vadr``, ``jnv`` (as the Model's
        ``body_parent``, ``jnt_type``, ``jnt_qadr``, ``jnt_vadr``, ``jnt_nv``), ``subtree_end``
        (``body_subtree_end``: the children of i are ``c = i + 1``, then
        ``c = subtree_end[c]`` while ``c < subtree_end[i]``), ``Xtree_rot`` (1 where the joint
        placement rotates, else 0)
    floats (32 nb + 7 nv + 3,) float64 or float32
        a record of 32 entries per body: ``axis`` (3), ``Xtree_r`` (3), ``mass``, ``h`` (3),
        ``Ibar`` (9), ``Xtree_E`` (9), as the Model's ``jnt_axis``, ``jnt_Xtree_r``,
        ``body_mass``, ``body_h``, ``body_Ibar``, ``jnt_Xtree_E`` cast to the dtype; then ``S``
        (nv, 6) (``dof_S``), ``gravity`` (3,) and ``armature`` (nv,) (``dof_armature``)

    Every name of :data:`MODEL_ARRAY_NAMES` is also an attribute, a NumPy view into the
    buffers with the Model's shapes (``Xtree_E``, ``Ibar`` (nb, 3, 3)); the per-body fields
    are strided views. ``dof_parent`` (nv,) int64 is the Model's.
    """

    def __init__(self, model: "Model", dtype):
        dt = np.dtype(dtype)
        nb, nv = model.nb, model.nv
        self.dtype = dt
        Xtree_rot = np.abs(model.jnt_Xtree_E - np.eye(3)).reshape(nb, 9).max(axis=1, initial=0) > 0
        self.ints = np.ascontiguousarray(np.stack([
            model.body_parent, model.jnt_type, model.jnt_qadr, model.jnt_vadr, model.jnt_nv,
            model.body_subtree_end, Xtree_rot.astype(np.int64)]).reshape(_MODEL_INT_ROWS, nb),
            dtype=np.int64)
        self.floats = np.zeros(model_floats_size(nb, nv), dtype=dt)
        for name, a in zip(MODEL_ARRAY_NAMES, model_arrays(self.ints, self.floats)):
            setattr(self, name, mat3_view(a, nb) if name in ("Xtree_E", "Ibar") else a)
        self.axis[...] = model.jnt_axis
        self.Xtree_E[...] = model.jnt_Xtree_E
        self.Xtree_r[...] = model.jnt_Xtree_r
        self.mass[...] = model.body_mass
        self.h[...] = model.body_h
        self.Ibar[...] = model.body_Ibar
        self.S[...] = model.dof_S
        self.gravity[...] = model.gravity
        self.armature[...] = model.dof_armature
        self.dof_parent = model.dof_parent

    def kin(self):
        """Return ``(parent, jtype, qadr, axis, Xtree_E, Xtree_r)`` for kinematics kernels."""
        return (self.parent, self.jtype, self.qadr, self.axis, self.Xtree_E, self.Xtree_r)


class Model:
    """Static description of an articulated body; it never changes during a simulation.

    Make one with :class:`ModelBuilder`, :func:`articulated.load_urdf` or a scene generator
    of :mod:`articulated.models`. Field names carry an entity prefix (``body_``, ``jnt_``,
    ``dof_``, ``loop_``), as in MuJoCo's ``mjModel``. Joint ``i`` connects body ``i`` to its
    parent; see the module documentation for joint types, coordinates and frames.

    Attributes
    ----------
    nb : int
        Number of bodies (= number of joints; the world is not a body).
    nq, nv : int
        Lengths of ``q`` and ``qd``.
    body_name, joint_name : list of str, length nb
        Unique names.
    body_parent : (nb,) int64
        Parent body, ``-1`` for the world; ``body_parent[i] < i``.
    body_subtree_end : (nb,) int64
        The descendants of ``i`` are ``i+1 .. body_subtree_end[i]-1``.
    body_mass : (nb,) float64
        Mass [kg].
    body_com : (nb, 3) float64
        Centre of mass in body coordinates [m].
    body_I_com : (nb, 3, 3) float64
        Rotational inertia about the COM, body axes [kg m^2].
    body_h : (nb, 3) float64
        First mass moment ``m c`` [kg m].
    body_Ibar : (nb, 3, 3) float64
        Rotational inertia about the body origin [kg m^2].
    body_I : (nb, 6, 6) float64
        Spatial inertia about the body origin (RBDA eq. 2.63).
    jnt_type : (nb,) int64
        ``JOINT_FIXED .. JOINT_FREE``.
    jnt_axis : (nb, 3) float64
        Unit axis in joint coordinates (revolute, prismatic).
    jnt_Xtree_E : (nb, 3, 3) float64
        Rotation from parent body coordinates to joint coordinates.
    jnt_Xtree_r : (nb, 3) float64
        Joint frame origin in parent body coordinates [m].
    jnt_qadr, jnt_nq, jnt_vadr, jnt_nv : (nb,) int64
        Offsets and sizes of each joint in ``q`` and ``qd``.
    jnt_range : (nb, 2) float64
        Lower and upper joint limit [rad or m] (revolute and prismatic joints only;
        ``-inf``/``inf``: no limit on that side).
    jnt_limited : (nb,) bool
        The joint has a finite limit on at least one side.
    enforce_limits : bool
        Whether a simulator enforces ``jnt_range`` when its ``limits`` is left at None
        (default False; :func:`~articulated.io.mjcf.load_mjcf` sets it where the file
        limits a joint, as MuJoCo does).
    dof_body : (nv,) int64
        Body whose joint owns each velocity coordinate.
    dof_S : (nv, 6) float64
        Motion-subspace column of each dof, body coordinates.
    dof_parent : (nv,) int64
        Previous dof on the path to the root, -1 at the root (Featherstone's ``lambda``
        of the branch-induced sparsity, RBDA sec. 6.5).
    dof_armature : (nv,) float64
        Armature of each dof [kg m^2 | kg]: a rotor inertia reflected through its gear,
        added to the joint-space inertia's diagonal, ``M + diag(dof_armature)`` (MuJoCo's
        ``dof_armature``); zero by default, and zero on free joints. ABA, CRBA and RNEA
        include it; the DCA and the adaptive methods refuse a model with armature
        (:meth:`require_no_armature`).
    gravity : (3,) float64
        Gravitational acceleration in world coordinates [m/s^2].
    forces : list
        Applied forces that the model's file defines (an MJCF file's joint springs,
        dampers and actuators, :func:`articulated.load_mjcf`); the simulators add them
        (``Simulator(..., model_forces=True)``). Empty by default.
    description : dict or None
        How to rebuild this model, JSON-serialisable: a scene generator's
        ``{"scene": name, "kwargs": {...}}``, or a loader's ``{"urdf" | "mjcf" |
        "structure": path, "sha256": hex, "kwargs": {...}}``; ``None`` for a model built
        by hand (saved trajectories then carry the names only).
    nloops : int
        Number of loop-closing joints (beside the spanning tree; see
        :meth:`ModelBuilder.add_loop_joint` and :mod:`articulated.algorithms.loops`;
        every other algorithm ignores them).
    nc : int
        Number of loop-constraint rows.
    loop_name : list of str, length nloops
        Loop-joint names.
    loop_body_a, loop_body_b : (nloops,) int64
        The two bodies of each loop joint (-1: the world).
    loop_kind : (nloops,) int64
        ``LOOP_POINT .. LOOP_WELD`` (:data:`LOOP_KINDS`).
    loop_nc, loop_cadr : (nloops,) int64
        Rows of each loop and their offset in ``g_L``.
    loop_Ea, loop_Eb : (nloops, 3, 3) float64
        Loop-joint frame axes (columns) in the coordinates of body a / body b (world
        coordinates for the world).
    loop_ra, loop_rb : (nloops, 3) float64
        Loop-joint frame origins in body a / body b coordinates [m].
    loop_axis : (nloops, 3) float64
        Unit axis ``n`` in loop-frame coordinates (revolute: the hinge axis; point: the
        normal of the plane of motion; zero for the other kinds).
    loop_T : (nloops, 2, 3) float64
        Unit vectors ``t1, t2`` completing ``n`` to a right-handed frame ``(t1, t2, n)``
        (loop-frame coordinates).
    """

    def __init__(self, *, body_name, joint_name, body_parent, jnt_type, jnt_axis,
                 jnt_Xtree_E, jnt_Xtree_r, body_mass, body_com, body_I_com, gravity,
                 loop_joints=(), jnt_range=None, dof_armature=None):
        self.body_name = list(body_name)
        self.joint_name = list(joint_name)
        # own, writable copies: a caller's array edited later never changes the model, and
        # a read-only input (np.broadcast_to) never gives kernels a second, read-only type
        own = lambda a, dt: np.array(a, dtype=dt, order="C", copy=True)
        self.body_parent = own(body_parent, np.int64)
        self.jnt_type = own(jnt_type, np.int64)
        self.jnt_axis = own(jnt_axis, np.float64)
        self.jnt_Xtree_E = own(jnt_Xtree_E, np.float64)
        self.jnt_Xtree_r = own(jnt_Xtree_r, np.float64)
        self.body_mass = own(body_mass, np.float64)
        self.body_com = own(body_com, np.float64)
        self.body_I_com = own(body_I_com, np.float64)
        self.gravity = own(gravity, np.float64)
        nb = self.nb = len(self.body_parent)
        if jnt_range is None:
            jnt_range = np.tile([-np.inf, np.inf], (nb, 1))
        self.jnt_range = own(jnt_range, np.float64).reshape(-1, 2) \
            if nb else np.zeros((0, 2))
        self.jnt_limited = np.isfinite(self.jnt_range).any(axis=1) if nb else np.zeros(0, bool)
        self.enforce_limits = False

        self.jnt_nq = np.array([_JOINT_NQ[t] for t in self.jnt_type], dtype=np.int64)
        self.jnt_nv = np.array([_JOINT_NV[t] for t in self.jnt_type], dtype=np.int64)
        self.jnt_qadr = np.concatenate([[0], np.cumsum(self.jnt_nq)[:-1]]).astype(np.int64) if nb else np.zeros(0, np.int64)
        self.jnt_vadr = np.concatenate([[0], np.cumsum(self.jnt_nv)[:-1]]).astype(np.int64) if nb else np.zeros(0, np.int64)
        self.nq = int(self.jnt_nq.sum())
        self.nv = int(self.jnt_nv.sum())
        self.dof_armature = (np.zeros(self.nv) if dof_armature is None
                             else own(dof_armature, np.float64).reshape(-1))

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
        self.description = None
        self.forces = []
        self._body_index = {n: i for i, n in enumerate(self.body_name)}
        self._joint_index = {n: i for i, n in enumerate(self.joint_name)}
        self._arrays = {}
        self._data = {}
        self._init_loops(loop_joints)

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
        arm = getattr(self, "dof_armature", None)
        if arm is not None:
            nv = int(self.jnt_nv.sum())
            if arm.shape != (nv,):
                raise ValueError(f"Model.dof_armature must have shape {(nv,)}, got {arm.shape}")
            dof_joint = np.repeat(np.arange(nb), self.jnt_nv)
            bad = np.flatnonzero(~(np.isfinite(arm) & (arm >= 0.0)))
            if bad.size:
                raise ValueError(f"joint {self.joint_name[dof_joint[bad[0]]]!r}: armature must "
                                 f"be finite and >= 0, got {arm[bad[0]]}")
            bad = np.flatnonzero((arm != 0.0) & (self.jnt_type[dof_joint] == JOINT_FREE))
            if bad.size:
                raise ValueError(f"joint {self.joint_name[dof_joint[bad[0]]]!r}: a free joint "
                                 f"takes no armature (a rotor needs an axis; MuJoCo applies it "
                                 f"along the world axes)")
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
        if self.jnt_range.shape != (nb, 2):
            raise ValueError(f"Model.jnt_range must have shape {(nb, 2)}, got {self.jnt_range.shape}")
        if nb:
            lo, hi = self.jnt_range[:, 0], self.jnt_range[:, 1]
            bad = np.flatnonzero(np.isnan(self.jnt_range).any(axis=1) | (lo == np.inf) | (hi == -np.inf))
            if bad.size:
                raise ValueError(f"joint {self.joint_name[bad[0]]!r}: limits {self.jnt_range[bad[0]]} "
                                 f"are NaN or infinite on the wrong side")
            bad = np.flatnonzero(lo > hi)
            if bad.size:
                raise ValueError(f"joint {self.joint_name[bad[0]]!r}: lower limit {lo[bad[0]]} > "
                                 f"upper limit {hi[bad[0]]}")
            limited = np.isfinite(self.jnt_range).any(axis=1)
            bad = np.flatnonzero(limited & ~np.isin(self.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC)))
            if bad.size:
                raise ValueError(f"joint {self.joint_name[bad[0]]!r}: only revolute and prismatic "
                                 f"joints take limits ({JOINT_TYPE_NAMES[self.jnt_type[bad[0]]]})")

    # ------------------------------------------------------------------ loop joints
    def _init_loops(self, loop_joints):
        """Store and validate the loop-closing joints (dicts with keys ``name, body_a,
        body_b`` (indices, -1 = world), ``kind`` (str), ``Ea, ra, Eb, rb, axis``)."""
        nl = self.nloops = len(loop_joints)
        self.loop_name = [lj["name"] for lj in loop_joints]
        self.loop_body_a = np.array([lj["body_a"] for lj in loop_joints], dtype=np.int64)
        self.loop_body_b = np.array([lj["body_b"] for lj in loop_joints], dtype=np.int64)
        self.loop_kind = np.zeros(nl, dtype=np.int64)
        self.loop_Ea = np.zeros((nl, 3, 3))
        self.loop_Eb = np.zeros((nl, 3, 3))
        self.loop_ra = np.zeros((nl, 3))
        self.loop_rb = np.zeros((nl, 3))
        self.loop_axis = np.zeros((nl, 3))
        self.loop_T = np.zeros((nl, 2, 3))
        if len(set(self.loop_name)) != nl:
            raise ValueError("loop-joint names are not unique")
        for k, lj in enumerate(loop_joints):
            name = lj["name"]
            if lj["kind"] not in LOOP_KINDS:
                raise ValueError(f"loop joint {name!r}: unknown kind {lj['kind']!r}; expected one "
                                 f"of {sorted(LOOP_KINDS)}")
            kind = self.loop_kind[k] = LOOP_KINDS[lj["kind"]]
            for side in ("a", "b"):
                b = int(lj["body_" + side])
                if not -1 <= b < self.nb:
                    raise ValueError(f"loop joint {name!r}: body_{side} index {b} out of range "
                                     f"-1..{self.nb - 1}")
            if self.loop_body_a[k] == self.loop_body_b[k]:
                what = ("the world" if self.loop_body_a[k] < 0
                        else f"body {self.body_name[self.loop_body_a[k]]!r}")
                raise ValueError(f"loop joint {name!r} connects {what} to itself")
            self.loop_Ea[k] = _check_rotation(lj["Ea"], f"loop joint {name!r}: frame_a rotation")
            self.loop_Eb[k] = _check_rotation(lj["Eb"], f"loop joint {name!r}: frame_b rotation")
            self.loop_ra[k] = _as_vec3(lj["ra"], f"loop joint {name!r}: frame_a origin")
            self.loop_rb[k] = _as_vec3(lj["rb"], f"loop joint {name!r}: frame_b origin")
            ax = lj.get("axis")
            if kind in (LOOP_REVOLUTE, LOOP_POINT):
                if ax is None:
                    raise ValueError(f"loop joint {name!r}: kind {lj['kind']!r} needs an axis")
                ax = _as_vec3(ax, f"loop joint {name!r}: axis")
                nrm = float(np.linalg.norm(ax))
                if nrm < 1e-12:
                    raise ValueError(f"loop joint {name!r}: axis must be non-zero")
                n = ax / nrm
                t1 = np.cross(n, np.eye(3)[int(np.argmin(np.abs(n)))])
                t1 /= np.linalg.norm(t1)
                self.loop_axis[k] = n
                self.loop_T[k, 0] = t1
                self.loop_T[k, 1] = np.cross(n, t1)
            elif ax is not None:
                raise ValueError(f"loop joint {name!r}: kind {lj['kind']!r} takes no axis "
                                 f"(only 'revolute' and 'point' do)")
        self.loop_nc = np.array([LOOP_NC[int(t)] for t in self.loop_kind], dtype=np.int64)
        self.loop_cadr = (np.concatenate([[0], np.cumsum(self.loop_nc)[:-1]]).astype(np.int64)
                          if nl else np.zeros(0, np.int64))
        self.nc = int(self.loop_nc.sum())
        self._loop_index = {n: i for i, n in enumerate(self.loop_name)}
        for k in range(nl):
            self._check_loop_not_tree_joint(k)

    def _check_loop_not_tree_joint(self, k):
        """ValueError if loop joint k only repeats the tree joint between a body and its
        parent (or a root body and the world): its residual g then does not depend on that
        joint's coordinates (sampled at 4 values), so it either holds identically (a
        duplicate: G_L would be rank-deficient everywhere) or never (it cannot close)."""
        a, b = int(self.loop_body_a[k]), int(self.loop_body_b[k])
        if b >= 0 and self.body_parent[b] == a:
            child, flip = b, False
        elif a >= 0 and self.body_parent[a] == b:
            child, flip = a, True
        else:
            return
        t = int(self.jnt_type[child])
        res = []
        rng = np.random.default_rng(0)
        for s in (0.0, 0.7, -1.9, 2.6):
            R, p = _joint_pose_np(t, self.jnt_axis[child], self.jnt_Xtree_E[child],
                                  self.jnt_Xtree_r[child], s, rng)
            I3, z = np.eye(3), np.zeros(3)
            Ra, pa, Rb, pb = (R, p, I3, z) if flip else (I3, z, R, p)
            res.append(loop_residual_np(int(self.loop_kind[k]), Ra, pa, Rb, pb, self.loop_Ea[k],
                                        self.loop_ra[k], self.loop_Eb[k], self.loop_rb[k],
                                        self.loop_axis[k], self.loop_T[k]))
        res = np.array(res)
        if np.abs(res - res[0]).max() < 1e-9:
            pb_ = "the world" if self.body_parent[child] < 0 else repr(self.body_name[self.body_parent[child]])
            if np.abs(res[0]).max() < 1e-9:
                raise ValueError(
                    f"loop joint {self.loop_name[k]!r} duplicates tree joint "
                    f"{self.joint_name[child]!r} between body {self.body_name[child]!r} and its "
                    f"parent {pb_}: it holds for every value of that joint's coordinates "
                    f"(remove it or change the tree joint)")
            raise ValueError(
                f"loop joint {self.loop_name[k]!r} between body {self.body_name[child]!r} and its "
                f"parent {pb_} can never close: its residual {res[0]} does not depend on tree "
                f"joint {self.joint_name[child]!r}")

    def loop_id(self, loop) -> int:
        """Return the index of a loop joint given by name or index.

        Raises
        ------
        ValueError
            If there is no such loop joint.
        """
        if isinstance(loop, (int, np.integer)):
            if not 0 <= int(loop) < self.nloops:
                raise ValueError(f"loop-joint index {loop} out of range 0..{self.nloops - 1}")
            return int(loop)
        try:
            return self._loop_index[loop]
        except KeyError:
            raise ValueError(f"no loop joint named {loop!r} in the model") from None


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
        """Return the index of a body given by name or index.

        Raises
        ------
        ValueError
            If there is no such body.
        """
        if isinstance(body, (int, np.integer)):
            if not 0 <= int(body) < self.nb:
                raise ValueError(f"body index {body} out of range 0..{self.nb - 1}")
            return int(body)
        try:
            return self._body_index[body]
        except KeyError:
            raise ValueError(f"no body named {body!r} in the model") from None

    def joint_id(self, joint) -> int:
        """Return the index of a joint given by name or index.

        Raises
        ------
        ValueError
            If there is no such joint.
        """
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
        """Return the neutral configuration: zero angles and offsets, identity quaternions.

        Returns
        -------
        q : (nq,) float64
        """
        q = np.zeros(self.nq)
        q[self.quat_qadr] = 1.0
        return q

    def random_configuration(self, rng=None, scale: float = np.pi) -> np.ndarray:
        """Return a random configuration.

        Parameters
        ----------
        rng : numpy.random.Generator, int or None
            Random generator or seed.
        scale : float, default pi
            Revolute angles are uniform in ``[-scale, scale]`` [rad].

        Returns
        -------
        q : (nq,) float64
            Prismatic and free-joint positions uniform in [-0.5, 0.5] m, unit quaternions
            uniformly random.
        """
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
        """Return the model arrays cast to ``dtype`` (cached).

        Parameters
        ----------
        dtype : {numpy.float64, numpy.float32}

        Returns
        -------
        ModelArrays

        Raises
        ------
        TypeError
            If ``dtype`` is not float64 or float32.
        """
        key = np.dtype(dtype)
        if key not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise TypeError(f"dtype must be float64 or float32, got {key}")
        if key not in self._arrays:
            self._arrays[key] = ModelArrays(self, key)
        return self._arrays[key]

    def data(self, dtype=np.float64) -> "Data":
        """Return the workspace the public functions use for this model and dtype (cached).

        Parameters
        ----------
        dtype : {numpy.float64, numpy.float32}

        Returns
        -------
        articulated.Data
        """
        key = np.dtype(dtype)
        d = self._data.get(key)
        if d is None:
            d = self._data[key] = Data(self, key)
            self._data[key.type] = d  # looked up by ``np.float64`` too (the hot path's key)
        return d

    def __getstate__(self):
        """Pickle (and deepcopy) the model without its cached workspaces.

        Their fields are views into shared buffers that pickling would copy apart; they
        are rebuilt on first use.
        """
        state = dict(self.__dict__)
        state["_arrays"], state["_data"] = {}, {}
        return state

    def check_vector(self, x, name: str, size: int, dtype=np.float64) -> np.ndarray:
        """Return ``x`` as a contiguous ``(size,)`` array of ``dtype``.

        Parameters
        ----------
        x : array_like
            The vector to check.
        name : str
            Its name in error messages.
        size : int
            Required length.
        dtype : numpy dtype, default float64

        Returns
        -------
        (size,) ndarray of ``dtype``

        Raises
        ------
        ValueError
            On a wrong shape.
        TypeError
            On a non-numeric array.
        """
        a = np.asarray(x)
        if a.dtype.kind not in "fiu":
            raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
        if a.shape != (size,):
            raise ValueError(f"{name} must have shape ({size},), got {a.shape}")
        return np.ascontiguousarray(a, dtype=dtype)

    def check_configuration(self, q, dtype=np.float64) -> np.ndarray:
        """Validate a configuration: shape (nq,), finite entries, unit quaternions.

        Parameters
        ----------
        q : array_like, (nq,)
            Joint coordinates.
        dtype : {numpy.float64, numpy.float32}

        Returns
        -------
        (nq,) ndarray of ``dtype``
            ``q`` as a contiguous array.

        Raises
        ------
        ValueError
            Naming the joint, on a wrong shape or a quaternion whose norm is not 1 within
            :func:`quaternion_tol`.
        TypeError
            On a non-numeric array.
        """
        q = self.check_vector(q, "q", self.nq, dtype)
        if self.quat_qadr.size:
            k = first_bad_quaternion(q, self.quat_qadr, quaternion_tol(q.dtype))
            if k >= 0:
                a = int(self.quat_qadr[k])
                norm = float(np.sqrt(np.sum(q[a:a + 4].astype(np.float64) ** 2)))
                raise ValueError(
                    f"joint {self.joint_name[self._quat_joint(k)]!r}: quaternion q[{a}:"
                    f"{a + 4}] has norm {norm!r}, not 1 "
                    f"(normalize it, e.g. with articulated.normalize)")
        return q

    def with_limits(self, lower, upper, joints=None) -> "Model":
        """Return a copy of this model with joint limits on some joints.

        Parameters
        ----------
        lower, upper : float or array_like
            Limits [rad or m], a scalar or one value per joint; ``-inf``/``inf`` removes
            a side.
        joints : sequence of str or int, optional
            Joint names or indices; default every revolute and prismatic joint. The
            limits of the other joints are kept.

        Returns
        -------
        Model
            The copy; a ``collision`` model (``load_urdf(collision=True)``) is carried
            over onto it.

        Raises
        ------
        ValueError
            Naming the joint, for a joint that is not revolute or prismatic, or ``lower >
            upper``.
        """
        if joints is None:
            idx = np.flatnonzero(np.isin(self.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC)))
        else:
            idx = np.array([self.joint_id(j) for j in joints], dtype=np.int64)
        rng = self.jnt_range.copy()
        rng[idx, 0] = np.broadcast_to(np.asarray(lower, dtype=np.float64), idx.shape)
        rng[idx, 1] = np.broadcast_to(np.asarray(upper, dtype=np.float64), idx.shape)
        m = self._copy("with_limits", lower=lower, upper=upper, joints=joints)
        m.jnt_range = rng
        m.jnt_limited = np.isfinite(rng).any(axis=1)
        m._validate_arrays()
        return m

    @property
    def has_armature(self) -> bool:
        """True if any dof has a non-zero armature (:attr:`dof_armature`)."""
        return bool(self.dof_armature.any())

    def require_no_armature(self, what: str) -> None:
        """Raise ValueError naming the first joint with armature, for a method (``what``)
        that does not model it (the DCA and the adaptive methods)."""
        if self.has_armature:
            j = self.dof_body[np.flatnonzero(self.dof_armature)[0]]
            raise ValueError(f"joint {self.joint_name[j]!r} has armature "
                             f"{self.dof_armature[self.jnt_vadr[j]:self.jnt_vadr[j] + self.jnt_nv[j]]}"
                             f"; {what} does not model armature: use method 'aba' or 'crba', "
                             f"or model.with_armature(0.0)")

    def with_armature(self, armature, joints=None) -> "Model":
        """Return a copy of the model with the armature of ``joints`` set.

        Parameters
        ----------
        armature : float or (k,) float
            Armature [kg m^2 | kg] per dof of the named joints (a scalar: every such dof),
            finite and >= 0; added to the diagonal of the joint-space inertia.
        joints : list of str or int, optional
            Default: every joint.

        Returns
        -------
        Model
            The copy (its ``collision`` model carried over).

        Raises
        ------
        ValueError
            For an unknown joint, a wrong length, or a negative or non-finite armature
            (naming the joint).
        """
        idx = range(self.nb) if joints is None else [self.joint_id(j) for j in joints]
        dofs = np.array([v for j in idx for v in range(self.jnt_vadr[j],
                                                         self.jnt_vadr[j] + self.jnt_nv[j])],
                        dtype=np.int64)
        arm = self.dof_armature.copy()
        a = np.asarray(armature, dtype=np.float64)
        if a.ndim and a.shape != dofs.shape:
            raise ValueError(f"armature must be a scalar or have shape {dofs.shape} (one per "
                             f"dof of the joints), got {a.shape}")
        arm[dofs] = a
        m = self._copy("with_armature", armature=armature, joints=joints)
        m.dof_armature = arm
        m._validate_arrays()
        return m

    def _copy(self, edit, **arguments) -> "Model":
        """A shallow copy with fresh kernel arrays and workspaces, its ``collision`` model
        carried over onto it; its description records the edit (``edit``, the method's
        name, with its ``arguments``) so that :func:`articulated.models.build_model`
        repeats it."""
        import copy

        from .models.description import jsonable

        m = copy.copy(self)
        m._arrays = {}
        m._data = {}
        if isinstance(self.description, dict):
            try:
                m.description = dict(self.description, edits=list(
                    self.description.get("edits", [])) + [[edit, jsonable(arguments)]])
            except TypeError:
                m.description = None
        geom = getattr(self, "collision", None)
        if geom is not None:
            m.collision = copy.copy(geom)
            m.collision.model = m
            m.collision._rows = [dict(r) for r in geom._rows]
            m.collision._arrays = None
        return m

    def check_limits(self, q, tol: float = 0.0) -> None:
        """Check that every limited joint coordinate of ``q`` lies within ``jnt_range``.

        Parameters
        ----------
        q : (nq,) float64
            Joint coordinates.
        tol : float, default 0.0
            Accepted excess over a limit [rad or m].

        Raises
        ------
        ValueError
            Naming the first joint outside its limits by more than ``tol``.
        """
        for j in np.flatnonzero(self.jnt_limited):
            x = float(q[self.jnt_qadr[j]])
            lo, hi = self.jnt_range[j]
            if not (lo - tol <= x <= hi + tol):
                raise ValueError(f"joint {self.joint_name[j]!r}: q = {x:.6g} is outside its "
                                 f"limits [{lo:.6g}, {hi:.6g}]")

    def _quat_joint(self, k):
        js = [i for i in range(self.nb) if self.jnt_type[i] in (JOINT_SPHERICAL, JOINT_FREE)]
        return js[k]

    def diagnose_nonfinite(self, **vectors):
        """Raise ValueError naming the joint (or body) whose input entry is NaN or inf.

        Called by the public wrappers after a kernel produced a non-finite result.

        Parameters
        ----------
        **vectors : array_like or None
            Maps a name (``q``, ``qd``, ``tau``, ``qdd``, ``f_ext``) to its array.

        Raises
        ------
        ValueError
            Naming the joint or body of the first non-finite entry; returns ``None`` when
            every entry is finite.
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


# ------------------------------------------------------------------- loop joints (NumPy)

def _rodrigues(a, t):
    a = np.asarray(a, dtype=np.float64)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(t) * K + (1 - math.cos(t)) * K @ K


def _joint_pose_np(t, axis, Xtree_E, Xtree_r, s, rng):
    """Child body axes R (columns, parent coordinates) and origin p (parent coordinates) of
    a joint of type t at a sample coordinate value s (random for quaternion joints)."""
    E0T = np.asarray(Xtree_E).T
    if t == JOINT_REVOLUTE:
        return E0T @ _rodrigues(axis, s), np.asarray(Xtree_r, dtype=np.float64)
    if t == JOINT_PRISMATIC:
        return E0T, Xtree_r + E0T @ (s * np.asarray(axis))
    if t in (JOINT_SPHERICAL, JOINT_FREE):
        u = rng.normal(size=3)
        R = E0T @ _rodrigues(u / np.linalg.norm(u), s)
        d = rng.normal(size=3) * s if t == JOINT_FREE else np.zeros(3)
        return R, Xtree_r + E0T @ d
    return E0T, np.asarray(Xtree_r, dtype=np.float64)


def loop_residual_np(kind, Ra, pa, Rb, pb, Ea, ra, Eb, rb, n, T):
    """Return the residual g of one loop joint (NumPy reference; see :data:`LOOP_KINDS`).

    Parameters
    ----------
    kind : int
        ``LOOP_POINT .. LOOP_WELD``.
    Ra, Rb : (3, 3) float64
        Body axes in world coordinates (body -> world).
    pa, pb : (3,) float64
        Body origins in world coordinates [m].
    Ea, ra, Eb, rb, n, T
        The loop joint's frames and axes (:class:`Model` ``loop_*``).

    Returns
    -------
    (nc_k,) float64
        Residual [m | 1].
    """
    RA = Ra @ Ea
    RB = Rb @ Eb
    gp = RA.T @ ((pb + Rb @ rb) - (pa + Ra @ ra))
    if kind == LOOP_POINT:
        return np.array([T[0] @ gp, T[1] @ gp])
    if kind == LOOP_SPHERICAL:
        return gp
    Rr = RA.T @ RB
    if kind == LOOP_REVOLUTE:
        m = Rr @ n
        return np.concatenate([gp, [T[0] @ m, T[1] @ m]])
    w = 0.5 * np.array([Rr[2, 1] - Rr[1, 2], Rr[0, 2] - Rr[2, 0], Rr[1, 0] - Rr[0, 1]])
    return np.concatenate([gp, w])


# ------------------------------------------------- input checks (Model and ModelBuilder)

def _as_vec3(x, what):
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (3,):
        raise ValueError(f"{what} must have shape (3,), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} is not finite: {a}")
    return a.copy()


def _check_rotation(R, what):
    R = np.asarray(R, dtype=np.float64)
    if R.shape != (3, 3) or not np.all(np.isfinite(R)):
        raise ValueError(f"{what} must be a finite (3, 3) rotation matrix")
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
        raise ValueError(f"{what} is not a proper rotation matrix (R R^T != 1 or det < 0)")
    return R.copy()
