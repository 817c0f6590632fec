"""Conversions to the peer libraries (Pinocchio, MuJoCo) for cross-checks and benchmarks.

Pinocchio (PyPI ``pin``) is linear-first for spatial vectors and stores quaternions as
(x, y, z, w); these helpers permute. Fixed joints are merged into the parent's Pinocchio
joint (their inertia is appended with the fixed placement), as Pinocchio's URDF parser does.
MuJoCo (:func:`to_mujoco`) gets a model built with ``mujoco.MjSpec``: nested bodies in our body order, no geoms,
contacts off; its free joints use world-frame positions and linear velocities, which
:class:`MujocoConverters` maps (it needs the configuration for that).
Neither peer is a runtime dependency: they are imported on first use.
"""

from __future__ import annotations

import numpy as np

from .model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL,
                    Model)


class PinocchioModel:
    """A Pinocchio model equivalent to an articulated :class:`Model`, with state converters.

    Attributes: ``model`` (pin.Model), ``data`` (pin.Data), ``joint_of_body`` (nb,) the
    Pinocchio joint id carrying each body, ``placement_of_body`` list of pin.SE3 (body frame
    in that joint's frame).
    """

    def __init__(self, model: Model):
        import pinocchio as pin

        self.pin = pin
        self.src = model
        pm = pin.Model()
        pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
        jid = np.zeros(model.nb, dtype=int)
        place = []
        for i in range(model.nb):
            p = model.body_parent[i]
            pj = 0 if p < 0 else int(jid[p])
            pplace = pin.SE3.Identity() if p < 0 else place[p]
            Mtree = pin.SE3(model.jnt_Xtree_E[i].T.copy(), model.jnt_Xtree_r[i].copy())
            Mj = pplace * Mtree  # joint frame in the parent pin-joint frame
            t = model.jnt_type[i]
            name = model.joint_name[i]
            inertia = pin.Inertia(float(model.body_mass[i]), model.body_com[i].copy(),
                                  model.body_I_com[i].copy())
            if t == JOINT_FIXED:
                jid[i] = pj
                place.append(Mj)
                pm.appendBodyToJoint(pj, inertia, Mj)
                continue
            if t == JOINT_REVOLUTE:
                jm = pin.JointModelRevoluteUnaligned(model.jnt_axis[i].copy())
            elif t == JOINT_PRISMATIC:
                jm = pin.JointModelPrismaticUnaligned(model.jnt_axis[i].copy())
            elif t == JOINT_SPHERICAL:
                jm = pin.JointModelSpherical()
            else:
                jm = pin.JointModelFreeFlyer()
            jid[i] = pm.addJoint(pj, jm, Mj, name)
            place.append(pin.SE3.Identity())
            pm.appendBodyToJoint(int(jid[i]), inertia, pin.SE3.Identity())
        self.model = pm
        self.data = pm.createData()
        self.joint_of_body = jid
        self.placement_of_body = place
        # index maps between our q/qd and Pinocchio's
        self._qmap = []
        self._vmap = []
        for i in range(model.nb):
            t = model.jnt_type[i]
            if t == JOINT_FIXED:
                continue
            j = pm.joints[int(jid[i])]
            qa, va = model.jnt_qadr[i], model.jnt_vadr[i]
            if t in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                self._qmap += [(qa, j.idx_q)]
                self._vmap += [(va, j.idx_v)]
            elif t == JOINT_SPHERICAL:  # ours (w,x,y,z) -> pin (x,y,z,w)
                self._qmap += [(qa + 1, j.idx_q), (qa + 2, j.idx_q + 1), (qa + 3, j.idx_q + 2), (qa, j.idx_q + 3)]
                self._vmap += [(va + k, j.idx_v + k) for k in range(3)]
            else:  # free: ours [p, w,x,y,z] / [w; v] -> pin [p, x,y,z,w] / [v; w]
                self._qmap += [(qa + k, j.idx_q + k) for k in range(3)]
                self._qmap += [(qa + 4, j.idx_q + 3), (qa + 5, j.idx_q + 4), (qa + 6, j.idx_q + 5), (qa + 3, j.idx_q + 6)]
                self._vmap += [(va + k, j.idx_v + 3 + k) for k in range(3)]
                self._vmap += [(va + 3 + k, j.idx_v + k) for k in range(3)]
        self._qa = np.array([a for a, _ in self._qmap], dtype=int)
        self._qb = np.array([b for _, b in self._qmap], dtype=int)
        self._va = np.array([a for a, _ in self._vmap], dtype=int)
        self._vb = np.array([b for _, b in self._vmap], dtype=int)
        pm.armature = self.v(model.dof_armature)   # M + diag(armature), as ours

    def q(self, q):
        out = np.zeros(self.model.nq)
        out[self._qb] = q[self._qa]
        return out

    def v(self, v):
        out = np.zeros(self.model.nv)
        out[self._vb] = v[self._va]
        return out

    def v_back(self, vp):
        out = np.zeros(self.src.nv)
        out[self._va] = vp[self._vb]
        return out

    def M_back(self, Mp):
        P = np.zeros((self.src.nv, self.model.nv))
        P[self._va, self._vb] = 1.0
        return P @ Mp @ P.T

    def fext(self, f_ext):
        """Our (nb, 6) body-frame forces as Pinocchio's per-joint local forces."""
        pin = self.pin
        acc = [np.zeros(6) for _ in range(self.model.njoints)]  # pin order [f; n]
        for i in range(self.src.nb):
            w = f_ext[i]
            if not np.any(w):
                continue
            fb = pin.Force(w[3:].copy(), w[:3].copy())
            fj = self.placement_of_body[i].act(fb)
            acc[int(self.joint_of_body[i])] += fj.vector
        return [pin.Force(a) for a in acc]

    def aba(self, q, v, tau, f_ext=None):
        pin = self.pin
        args = (self.model, self.data, self.q(q), self.v(v), self.v(tau))
        if f_ext is not None:
            args = args + (self.fext(f_ext),)
        return self.v_back(pin.aba(*args))

    def rnea(self, q, v, a, f_ext=None):
        pin = self.pin
        args = (self.model, self.data, self.q(q), self.v(v), self.v(a))
        if f_ext is not None:
            args = args + (self.fext(f_ext),)
        return self.v_back(pin.rnea(*args))

    def crba(self, q):
        pin = self.pin
        M = pin.crba(self.model, self.data, self.q(q)).copy()
        M = np.triu(M) + np.triu(M, 1).T
        return self.M_back(M)


def to_pinocchio(model: Model) -> PinocchioModel:
    """Build the Pinocchio equivalent of ``model`` (needs ``pip install pin``)."""
    return PinocchioModel(model)


# ============================================================================ MuJoCo

def _quat_to_rot(w, x, y, z):
    """Rotation matrix (child -> parent coordinates) of a unit quaternion (w, x, y, z)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_quat((w, x, y, z), scalar_first=True).as_matrix()


def _rot_to_quat(R):
    """Unit quaternion (w, x, y, z), w >= 0, of a proper rotation matrix."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(np.asarray(R, dtype=np.float64)).as_quat(canonical=True,
                                                                          scalar_first=True)


def _quat_mul(a, b):
    """Hamilton product a * b of (w, x, y, z) quaternions."""
    from scipy.spatial.transform import Rotation

    ra = Rotation.from_quat(a, scalar_first=True)
    return (ra * Rotation.from_quat(b, scalar_first=True)).as_quat(scalar_first=True)


def mujoco_spec(model: Model, *, name: str = "articulated", geom=None):
    """Return a ``mujoco.MjSpec`` of ``model``.

    A ``mujoco.MjSpec`` of ``model``: one nested body per body (in body order, so MuJoCo's
    body ``i + 1`` is our body ``i``), placed by its joint placement, with an explicit
    inertial (principal axes computed here at full precision), one joint (hinge / slide /
    ball / free; none for a fixed joint) with the model's armature, no geoms, contacts and
    constraints disabled, no damping, stiffness, friction loss or limits.

    With ``geom`` (a :class:`~articulated.geometry.CollisionModel` of ``model``) the shapes
    become MuJoCo geoms (sphere, capsule, box, cylinder, plane, mesh from its vertices; same
    sizes and placements, ``friction = mu`` for sliding, MuJoCo's defaults for torsion and
    rolling; restitution has no MuJoCo equivalent and is ignored) and contacts are enabled,
    with MuJoCo's own filters (parent-child pairs excluded, as ours) and ``contype =
    group``, ``conaffinity = mask`` (MuJoCo tests a pair when either direction matches,
    we when both do: the same pairs for symmetric filters such as the defaults or "robot
    against floor only").

    Raises ValueError for a free joint below the top level (MuJoCo allows free joints only
    on bodies attached to the world).
    """
    import mujoco

    spec = mujoco.MjSpec()
    spec.modelname = name
    spec.compiler.degree = False
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.option.gravity = np.asarray(model.gravity, dtype=np.float64)
    spec.option.timestep = 0.001
    spec.option.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                                 | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    evals, evecs = np.linalg.eigh(model.body_I_com) if model.nb else (None, None)
    kinds = {JOINT_REVOLUTE: mujoco.mjtJoint.mjJNT_HINGE,
             JOINT_PRISMATIC: mujoco.mjtJoint.mjJNT_SLIDE,
             JOINT_SPHERICAL: mujoco.mjtJoint.mjJNT_BALL, JOINT_FREE: mujoco.mjtJoint.mjJNT_FREE}
    bodies = []
    for i in range(model.nb):
        t = int(model.jnt_type[i])
        p = int(model.body_parent[i])
        if t == JOINT_FREE and p >= 0:
            raise ValueError(f"joint {model.joint_name[i]!r}: MuJoCo allows free joints only on "
                             f"top-level bodies (attached to the world)")
        R = model.jnt_Xtree_E[i].T  # joint frame axes in parent coordinates
        V = evecs[i].copy()
        if np.linalg.det(V) < 0:
            V[:, 2] = -V[:, 2]
        body = (spec.worldbody if p < 0 else bodies[p]).add_body(
            name=model.body_name[i], pos=model.jnt_Xtree_r[i], quat=_rot_to_quat(R),
            mass=float(model.body_mass[i]), ipos=model.body_com[i], iquat=_rot_to_quat(V),
            inertia=evals[i], explicitinertial=True)
        bodies.append(body)
        if t in kinds:
            j = body.add_joint(name=model.joint_name[i], type=kinds[t], damping=0.0,
                               armature=float(model.dof_armature[model.jnt_vadr[i]]),
                               stiffness=0.0, frictionloss=0.0,
                               limited=mujoco.mjtLimited.mjLIMITED_FALSE)
            if t in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                j.axis = model.jnt_axis[i]
    if geom is not None:
        _mujoco_geoms(spec, bodies, geom)
    return spec


def _mujoco_geoms(spec, bodies, geom):
    """Add the shapes of ``geom`` to ``spec`` as geoms and enable contacts (see
    :func:`mujoco_spec`)."""
    import mujoco

    from .geometry import SHAPE_NAMES

    kinds = dict(sphere=mujoco.mjtGeom.mjGEOM_SPHERE, capsule=mujoco.mjtGeom.mjGEOM_CAPSULE,
                 box=mujoco.mjtGeom.mjGEOM_BOX, cylinder=mujoco.mjtGeom.mjGEOM_CYLINDER,
                 plane=mujoco.mjtGeom.mjGEOM_PLANE)
    spec.option.disableflags &= ~(mujoco.mjtDisableBit.mjDSBL_CONTACT
                                  | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    A = geom.arrays()
    for g in range(len(A["body"])):
        kind = SHAPE_NAMES[int(A["kind"][g])]
        b = int(A["body"][g])
        extra = {}
        if kind == "mesh":  # its vertices; MuJoCo collides the convex hull, as we do
            spec.add_mesh(name=f"mesh{g}",
                          uservert=A["mesh"][g].scaled_vertices().ravel().tolist())
            extra = dict(meshname=f"mesh{g}", type=mujoco.mjtGeom.mjGEOM_MESH)
        elif kind in kinds:
            size = A["size"][g]
            size = dict(sphere=[size[0], 0, 0], capsule=[size[0], size[1], 0],
                        cylinder=[size[0], size[1], 0], box=list(size), plane=[0, 0, 1])[kind]
            extra = dict(type=kinds[kind], size=size)
        else:
            raise ValueError(f"shape {g} ({kind}): no MuJoCo geom for it here")
        (spec.worldbody if b < 0 else bodies[b]).add_geom(
            pos=A["pos"][g], quat=_rot_to_quat(A["R"][g]),
            friction=[float(A["mu"][g]), 0.005, 0.0001], contype=int(A["group"][g]),
            conaffinity=int(A["mask"][g]), group=0, **extra)


class MujocoConverters:
    """State and force conversions between a :class:`Model` and its MuJoCo model.

    The MuJoCo model is made by :func:`to_mujoco`.

    Conventions (MuJoCo docs, "Joint" and "Floating objects"; checked against our ABA in
    ``tests/test_bench.py``): hinge / slide coordinates are identical; a ball joint's qpos is
    the same (w, x, y, z) quaternion and its qvel the same body-frame angular velocity. A
    free joint's qpos is the *world* position and orientation of the body (ours: relative to
    the joint placement), its qvel is ``[world-frame linear velocity of the body origin;
    body-frame angular velocity]`` (ours: ``[w; v]``, both in body coordinates), and its
    generalized force ``[world-frame force; body-frame torque]``; so the free-joint maps
    need the current orientation ``R`` (body -> world) and the linear acceleration picks up
    ``R (w x v)``.
    """

    def __init__(self, model: Model, mj_model):
        import mujoco

        self.src = model
        self.mj = mj_model
        nj = []
        for i in range(model.nb):
            t = int(model.jnt_type[i])
            if t == JOINT_FIXED:
                continue
            j = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_JOINT, model.joint_name[i])
            nj.append((i, t, int(model.jnt_qadr[i]), int(model.jnt_vadr[i]),
                       int(mj_model.jnt_qposadr[j]), int(mj_model.jnt_dofadr[j])))
        self._joints = nj
        sc = [(qa, va, mq, mv) for _, t, qa, va, mq, mv in nj if t in (JOINT_REVOLUTE, JOINT_PRISMATIC)]
        self._sq = np.array([s[0] for s in sc], dtype=int)
        self._sv = np.array([s[1] for s in sc], dtype=int)
        self._mq = np.array([s[2] for s in sc], dtype=int)
        self._mv = np.array([s[3] for s in sc], dtype=int)
        self._multi = [s for s in nj if s[1] in (JOINT_SPHERICAL, JOINT_FREE)]

    def _free_pose(self, i, q, qa):
        """World position and rotation (body -> world) of the free-joint body i."""
        R0 = self.src.jnt_Xtree_E[i].T
        r0 = self.src.jnt_Xtree_r[i]
        Rq = _quat_to_rot(*q[qa + 3:qa + 7])
        return r0 + R0 @ q[qa:qa + 3], R0 @ Rq, R0

    def qpos(self, q) -> np.ndarray:
        """MuJoCo qpos (nq,) of our configuration q."""
        q = np.asarray(q, dtype=np.float64)
        out = np.zeros(self.mj.nq)
        out[self._mq] = q[self._sq]
        for i, t, qa, va, mq, mv in self._multi:
            if t == JOINT_SPHERICAL:
                out[mq:mq + 4] = q[qa:qa + 4]
            else:
                p, _, R0 = self._free_pose(i, q, qa)
                out[mq:mq + 3] = p
                out[mq + 3:mq + 7] = _quat_mul(_rot_to_quat(R0), q[qa + 3:qa + 7])
        return out

    def q_back(self, qpos) -> np.ndarray:
        """Our configuration q (nq,) of a MuJoCo qpos (the inverse of :meth:`qpos`)."""
        qpos = np.asarray(qpos, dtype=np.float64)
        out = np.zeros(self.src.nq)
        out[self._sq] = qpos[self._mq]
        for i, t, qa, va, mq, mv in self._multi:
            if t == JOINT_SPHERICAL:
                out[qa:qa + 4] = qpos[mq:mq + 4]
            else:
                R0, r0 = self.src.jnt_Xtree_E[i].T, self.src.jnt_Xtree_r[i]
                w, x, y, z = _rot_to_quat(R0)
                out[qa:qa + 3] = R0.T @ (qpos[mq:mq + 3] - r0)
                out[qa + 3:qa + 7] = _quat_mul(np.array([w, -x, -y, -z]), qpos[mq + 3:mq + 7])
        return out

    def qvel_back(self, q, qvel) -> np.ndarray:
        """Our qd (nv,) of a MuJoCo qvel at our configuration q (the inverse of
        :meth:`qvel`)."""
        return self.qfrc_back(q, qvel)

    def qvel(self, q, qd) -> np.ndarray:
        """MuJoCo qvel (nv,) of our (q, qd)."""
        return self._tangent_to_mj(q, qd)

    def qfrc(self, q, tau) -> np.ndarray:
        """Return the MuJoCo generalized force (nv,) (e.g. ``qfrc_applied``) of our tau.

        A free joint's force is the dual of its velocity (world-frame linear part,
        body-frame angular part), so it maps exactly as :meth:`qvel` does.
        """
        return self._tangent_to_mj(q, tau)

    def _tangent_to_mj(self, q, x) -> np.ndarray:
        q = np.asarray(q, dtype=np.float64)
        x = np.asarray(x, dtype=np.float64)
        out = np.zeros(self.mj.nv)
        out[self._mv] = x[self._sv]
        for i, t, qa, va, mq, mv in self._multi:
            if t == JOINT_SPHERICAL:
                out[mv:mv + 3] = x[va:va + 3]
            else:
                _, R, _ = self._free_pose(i, q, qa)
                out[mv:mv + 3] = R @ x[va + 3:va + 6]
                out[mv + 3:mv + 6] = x[va:va + 3]
        return out

    def qfrc_back(self, q, f) -> np.ndarray:
        """Our tau (nv,) of a MuJoCo generalized force (e.g. ``qfrc_inverse``); the same map
        takes a qvel to our qd (:meth:`qvel_back`)."""
        q = np.asarray(q, dtype=np.float64)
        f = np.asarray(f, dtype=np.float64)
        out = np.zeros(self.src.nv)
        out[self._sv] = f[self._mv]
        for i, t, qa, va, mq, mv in self._multi:
            if t == JOINT_SPHERICAL:
                out[va:va + 3] = f[mv:mv + 3]
            else:
                _, R, _ = self._free_pose(i, q, qa)
                out[va:va + 3] = f[mv + 3:mv + 6]
                out[va + 3:va + 6] = R.T @ f[mv:mv + 3]
        return out

    def qacc(self, q, qd, qdd) -> np.ndarray:
        """MuJoCo qacc (nv,) of our (q, qd, qdd)."""
        q = np.asarray(q, dtype=np.float64)
        qd = np.asarray(qd, dtype=np.float64)
        qdd = np.asarray(qdd, dtype=np.float64)
        out = np.zeros(self.mj.nv)
        out[self._mv] = qdd[self._sv]
        for i, t, qa, va, mq, mv in self._multi:
            if t == JOINT_SPHERICAL:
                out[mv:mv + 3] = qdd[va:va + 3]
            else:
                _, R, _ = self._free_pose(i, q, qa)
                w, v = qd[va:va + 3], qd[va + 3:va + 6]
                out[mv:mv + 3] = R @ (qdd[va + 3:va + 6] + np.cross(w, v))
                out[mv + 3:mv + 6] = qdd[va:va + 3]
        return out

    def qacc_back(self, q, qd, qacc) -> np.ndarray:
        """Our qdd (nv,) of a MuJoCo qacc at our state (q, qd)."""
        q = np.asarray(q, dtype=np.float64)
        qd = np.asarray(qd, dtype=np.float64)
        a = np.asarray(qacc, dtype=np.float64)
        out = np.zeros(self.src.nv)
        out[self._sv] = a[self._mv]
        for i, t, qa, va, mq, mv in self._multi:
            if t == JOINT_SPHERICAL:
                out[va:va + 3] = a[mv:mv + 3]
            else:
                _, R, _ = self._free_pose(i, q, qa)
                w, v = qd[va:va + 3], qd[va + 3:va + 6]
                out[va:va + 3] = a[mv + 3:mv + 6]
                out[va + 3:va + 6] = R.T @ a[mv:mv + 3] - np.cross(w, v)
        return out

    def set_state(self, mj_data, q, qd, tau=None):
        """Write qpos, qvel and (optionally) ``qfrc_applied`` of ``mj_data``."""
        mj_data.qpos[:] = self.qpos(q)
        mj_data.qvel[:] = self.qvel(q, qd)
        if tau is not None:
            mj_data.qfrc_applied[:] = self.qfrc(q, tau)


def to_mujoco_state(model: Model, mj_model, q, qd, qdd=None):
    """Convert our state (and joint accelerations) to MuJoCo's ``qpos, qvel`` (and ``qacc``).

    Parameters
    ----------
    model : Model
    mj_model : mujoco.MjModel
        A MuJoCo model with our joints by name: the one :func:`to_mujoco` builds, or the
        compiled file of :func:`articulated.load_mjcf` (``mujoco.MjModel.from_xml_path``).
    q : (nq,) float64
    qd : (nv,) float64
        Joint velocities [rad/s | m/s]; a free joint's ``[omega; v]`` in body coordinates.
    qdd : (nv,) float64, optional
        Joint accelerations.

    Returns
    -------
    qpos : (mj nq,) float64
    qvel : (mj nv,) float64
        A free joint's ``[world linear velocity of the body origin; omega]``.
    qacc : (mj nv,) float64
        Only with ``qdd``: a free joint's ``[R (dv + omega x v); domega]``.

    Notes
    -----
    Hinge, slide and ball coordinates are MuJoCo's; a free joint's position is in world
    coordinates. See :class:`MujocoConverters`.
    """
    c = MujocoConverters(model, mj_model)
    out = (c.qpos(q), c.qvel(q, qd))
    return out if qdd is None else out + (c.qacc(q, qd, qdd),)


def from_mujoco_state(model: Model, mj_model, qpos, qvel, qacc=None):
    """Convert MuJoCo's ``qpos, qvel`` (and ``qacc``) to our ``q, qd`` (and ``qdd``).

    The inverse of :func:`to_mujoco_state`, with the same parameters; returns ``(q, qd)``
    or ``(q, qd, qdd)``.
    """
    c = MujocoConverters(model, mj_model)
    q = c.q_back(qpos)
    qd = c.qvel_back(q, qvel)
    return (q, qd) if qacc is None else (q, qd, c.qacc_back(q, qd, qacc))


MUJOCO_MAX_DEPTH = 1023
"""The deepest body nesting MuJoCo 4.0 compiles (a deeper tree fails with "depth limit
exceeded in signature computation")."""


def to_mujoco(model: Model, geom=None):
    """Build the MuJoCo equivalent of ``model`` (needs ``pip install mujoco``).

    Returns ``(mj_model, converters)``: the compiled ``mujoco.MjModel`` (from
    :func:`mujoco_spec`: no geoms, contacts and constraints disabled, zero damping, our
    armature, so that ``mj_forward`` with ``qfrc_applied = tau`` gives our ABA's ``qdd``)
    and a :class:`MujocoConverters` for states, forces and accelerations.

    ``geom``: a :class:`~articulated.geometry.CollisionModel` whose shapes become geoms with
    contacts on (see :func:`mujoco_spec`).

    Raises ValueError when MuJoCo rejects the model, e.g. bodies nested deeper than about
    1,000 levels (a message naming the DEPTH) or a free joint below the top level.
    """
    depth = np.zeros(model.nb, dtype=int)
    for i in range(model.nb):  # parents first
        p = model.body_parent[i]
        depth[i] = 1 if p < 0 else depth[p] + 1
    if model.nb and depth.max() > MUJOCO_MAX_DEPTH:
        # checked before building: MjSpec takes very long to fail on such trees, where the
        # check is cheap
        raise ValueError(f"body tree DEPTH {depth.max()} beyond MuJoCo's limit "
                         f"({MUJOCO_MAX_DEPTH} nested bodies: 'depth limit exceeded')")
    try:
        mj_model = mujoco_spec(model, geom=geom).compile()
    except ValueError as e:
        if "depth limit" not in str(e):
            raise
        raise ValueError(f"body tree DEPTH {depth.max()} beyond MuJoCo's limit: {e}") from e
    return mj_model, MujocoConverters(model, mj_model)
