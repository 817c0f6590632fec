"""Load a :class:`~articulated.model.Model` from an MJCF file (MuJoCo's XML).

Load a :class:`~articulated.model.Model` from an MJCF file (MuJoCo's XML), parsed and
compiled by MuJoCo itself (``mujoco.MjSpec``): defaults, ``<include>``, angle units,
inertias computed from geoms and mesh processing are MuJoCo's, and the compiled
``mjModel`` is translated into our bodies and joints.

Needs the ``mujoco`` package (``pip install articulated[mjcf]``).
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from ..builder import ModelBuilder
from ..model import Model
from ._common import MAX_FILE_BYTES, check_size, combine_inertias, describe

INTERMEDIATE_MASS = 1e-9
"""Default ``intermediate_mass`` of :func:`load_mjcf` (a fraction of the MuJoCo body's mass)."""


def _mujoco():
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - mujoco is in the test extra
        raise ImportError("load_mjcf needs MuJoCo's parser: pip install mujoco "
                          "(or articulated[mjcf])") from e
    return mujoco


def _quat2mat(q):
    """Rotation matrix of a unit quaternion (w, x, y, z) (Hamilton, scalar first)."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _axis_angle(n, t):
    """Rotation by ``t`` [rad] about the unit axis ``n`` (Rodrigues)."""
    K = np.array([[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]])
    return np.eye(3) + math.sin(t) * K + (1.0 - math.cos(t)) * K @ K


class _Names:
    """Names of a compiled mjModel's elements, with a stand-in for unnamed ones;
    ValueError for a name that is not UTF-8."""

    def __init__(self, mujoco, m, where):
        self.mujoco, self.m, self.where = mujoco, m, where

    def __call__(self, objtype, i, kind):
        try:
            n = self.mujoco.mj_id2name(self.m, objtype, int(i))
        except UnicodeDecodeError:
            raise ValueError(f"{self.where}: the name of {kind} {int(i)} is not UTF-8") from None
        return n if n else f"{kind}{int(i)}"


def _compile(mujoco, source, max_bytes):
    """(spec, mjModel, path or None, raw bytes, where) of a path or an XML string."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    is_xml = isinstance(source, str) and source.lstrip().startswith("<")
    if is_xml:
        path, where = None, "MJCF string"
        raw = source.encode("utf-8")
        check_size(len(raw), max_bytes, where)
    else:
        path = os.fspath(source)
        where = path
        if not os.path.isfile(path):
            raise FileNotFoundError(f"MJCF file not found: {path}")
        check_size(os.path.getsize(path), max_bytes, where)
        with open(path, "rb") as f:
            raw = f.read()
    try:
        spec = (mujoco.MjSpec.from_string(source) if is_xml else mujoco.MjSpec.from_file(path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MuJoCo's deprecation notes (settotalmass, ...)
            m = spec.compile()
    except Exception as e:  # mujoco raises ValueError with the element and line
        raise ValueError(f"{where}: MuJoCo cannot load it: {e}") from None
    return spec, m, path, raw, where


def _check_finite(mujoco, m, name, where):
    """ValueError naming the first element with a NaN or inf in a compiled array."""
    O = mujoco.mjtObj
    checks = [
        ("body", O.mjOBJ_BODY, ("body_pos", "body_quat", "body_mass", "body_ipos", "body_iquat",
                                "body_inertia")),
        ("joint", O.mjOBJ_JOINT, ("jnt_pos", "jnt_axis", "jnt_range")),
        ("geom", O.mjOBJ_GEOM, ("geom_pos", "geom_quat", "geom_size", "geom_friction")),
    ]
    for kind, ot, fields in checks:
        for f in fields:
            a = np.asarray(getattr(m, f), dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(a.reshape(len(a), -1)).all(axis=1)) if len(a) else []
            if len(bad):
                i = int(bad[0])
                raise ValueError(f"{where}: {kind} {name(ot, i, kind)!r}: {f[f.index('_') + 1:]} "
                                 f"is not finite: {a[i].tolist()}")
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        nq = {0: 7, 1: 4}.get(int(m.jnt_type[j]), 1)
        if not np.isfinite(m.qpos0[a:a + nq]).all():
            raise ValueError(f"{where}: joint {name(O.mjOBJ_JOINT, j, 'joint')!r}: reference "
                             f"position (ref / body pose) is not finite")
    if not np.isfinite(m.opt.gravity).all():
        raise ValueError(f"{where}: <option gravity> is not finite: {m.opt.gravity.tolist()}")


def _unsupported(mujoco, m, name, where):
    """Raise ValueError for what would change the dynamics and cannot be represented
    (flexes, active equality constraints other than body connect/weld); return the
    warnings' lines for what is ignored."""
    O, E = mujoco.mjtObj, mujoco.mjtEq
    if m.nflex:
        raise ValueError(f"{where}: flex {name(O.mjOBJ_FLEX, 0, 'flex')!r}: deformable "
                         f"(<flexcomp>/<flex>) elements are not supported")
    for k in range(m.neq):
        t = int(m.eq_type[k])
        what = f"equality {name(O.mjOBJ_EQUALITY, k, 'equality')!r}"
        if not m.eq_active0[k]:
            continue
        if t not in (E.mjEQ_CONNECT, E.mjEQ_WELD):
            raise ValueError(f"{where}: {what} of type {E(t).name[5:].lower()} is not supported "
                             f"(only <connect> and <weld> between bodies, which become loop "
                             f"joints)")
        if int(m.eq_objtype[k]) != int(O.mjOBJ_BODY):
            raise ValueError(f"{where}: {what}: a <connect>/<weld> between sites is not "
                             f"supported (give body1/body2 and anchor instead)")
    lines = []

    def listed(kind, ot, ids):
        ids = list(ids)
        if ids:
            names = [name(ot, i, kind) for i in ids]
            more = f", ... ({len(names)} in all)" if len(names) > 8 else ""
            lines.append(f"{kind}s {names[:8]}{more}")

    inactive = [k for k in range(m.neq) if not m.eq_active0[k]]
    listed("inactive equalitie", O.mjOBJ_EQUALITY, inactive)
    listed("tendon", O.mjOBJ_TENDON, range(m.ntendon))
    listed("joint friction loss (dry friction) on joint", O.mjOBJ_JOINT,
           sorted({int(m.dof_jntid[i]) for i in np.flatnonzero(m.dof_frictionloss)}))
    listed("armature of a free joint on joint", O.mjOBJ_JOINT,
           [j for j in range(m.njnt) if m.jnt_type[j] == 0
            and m.dof_armature[m.jnt_dofadr[j]:m.jnt_dofadr[j] + 6].any()])
    listed("stiffness of a ball or free joint on joint", O.mjOBJ_JOINT,
           [j for j in np.flatnonzero(m.jnt_stiffness) if m.jnt_type[j] in (0, 1)])
    listed("actuator force range of joint", O.mjOBJ_JOINT, np.flatnonzero(m.jnt_actfrclimited))
    balls = [j for j in range(m.njnt) if m.jnt_type[j] == 1 and m.jnt_limited[j]]
    listed("ball-joint range", O.mjOBJ_JOINT, balls)
    listed("mocap bodie", O.mjOBJ_BODY, np.flatnonzero(m.body_mocapid >= 0))
    listed("gravity compensation on bodie", O.mjOBJ_BODY, np.flatnonzero(m.body_gravcomp))
    if m.opt.density or m.opt.viscosity or np.any(m.opt.wind):
        lines.append("fluid forces (<option density/viscosity/wind>)")
    if m.npair:
        lines.append(f"{m.npair} explicit contact <pair>s")
    return lines


def load_mjcf(source, *, gravity=None, intermediate_mass: float = INTERMEDIATE_MASS,
              collision: bool = True, mu: float | None = None, e: float = 0.0,
              max_bytes: int | None = MAX_FILE_BYTES) -> Model:
    """Build a :class:`~articulated.model.Model` from MJCF, parsed and compiled by MuJoCo.

    Parameters
    ----------
    source : str, bytes or os.PathLike
        An MJCF file, or the XML itself (a string that starts with ``<``). Files named by
        ``<include>`` and meshes are found relative to the file (MuJoCo's rules).
    gravity : (3,) float, optional
        Gravitational acceleration in world coordinates [m/s^2]; default the file's
        ``<option gravity>`` (zero where the file disables gravity).
    intermediate_mass : float
        MuJoCo lets one body carry several joints; here every joint moves a body of its own,
        so a body with ``k`` joints becomes a chain of ``k`` bodies, of which the first ``k
        - 1`` (named ``"<body>/<joint>"``) are *intermediate*: massless in MuJoCo, but
        :class:`Model` needs mass > 0 on every body. Each intermediate body gets this
        fraction (> 0) of its MuJoCo body's mass at its origin, with the same fraction of
        the mean principal moment as a spherical inertia. The joint accelerations differ
        from MuJoCo's in proportion to this fraction, and the DCA's rounding error (it
        inverts body inertias) in inverse proportion; the default 1e-9 balances the two (the
        results pages give the errors). ABA and CRBA agree to rounding for any fraction. The
        names are in ``model.mjcf_intermediate``.
    collision : bool
        True (default): ``model.collision`` is a :class:`~articulated.geometry.CollisionModel`
        of the geoms that collide in MuJoCo (``contype`` or ``conaffinity`` non-zero; see
        Notes). False: ``model.collision`` is None.
    mu : float, optional
        Friction coefficient of every shape; default each geom's sliding friction
        (``friction[0]``).
    e : float
        Restitution of every shape in [0, 1] (MuJoCo has none; default 0).
    max_bytes : int or None
        Refuse a file (or string) larger than this [bytes] (default 64 MiB, see
        :data:`articulated.io._common.MAX_FILE_BYTES`); None lifts the cap. Files pulled in
        by ``<include>`` are read by MuJoCo and not counted.

    Returns
    -------
    Model
        With ``description = {"mjcf": absolute path (None for a string), "sha256": hex of
        the bytes, "kwargs": {...}}``, ``frames``: dict ``MuJoCo body name -> (body, R,
        p)`` for every MuJoCo body (``body`` the index of our body that carries it, ``-1``
        the world; ``R`` (3, 3) its axes and ``p`` (3,) [m] its origin in that body's
        coordinates), ``mjcf_intermediate`` (list of str) and ``collision``.

    Notes
    -----
    Coordinates: ``q`` equals MuJoCo's ``qpos`` and has its order (bodies depth first in
    file order, joints of a body in file order). Hinge and slide joints: the angle [rad] or
    displacement [m] ``qpos`` itself (a joint's ``ref`` is built into its placement, so
    that ``q = qpos`` and ``jnt_range`` is MuJoCo's ``range``, in radians). ``ball`` ->
    ``"spherical"``: the quaternion (w, x, y, z) of ``qpos``, the angular velocity in body
    coordinates as in ``qvel``. ``free`` -> ``"free"``: ``qpos`` (world position of the
    body origin, quaternion); but ``qd = [omega; v]`` has ``v`` in *body* coordinates where
    MuJoCo's ``qvel`` has the world-frame linear velocity first, then ``omega`` (body):
    ``qvel = [R v; omega]`` and ``qacc = [R (qdd_v + omega x v); qdd_omega]`` with ``R``
    the body's rotation. Bodies without joints are welded to their parent and merged into
    it (masses, COMs and inertias combined), as are their children's welded bodies; bodies
    welded to the world are dropped from the dynamics (their geoms become static
    obstacles).

    Frames: a joint's body frame sits at the joint's anchor (``pos``) with the MuJoCo
    body's axes, so MuJoCo's rotation of a body about an off-origin anchor is reproduced;
    ``frames`` says where each MuJoCo body frame lies in ours.

    Inertias: MuJoCo's compiled ``body_mass``, ``body_ipos``, ``body_iquat``,
    ``body_inertia`` (so ``inertiafromgeom``, ``boundmass`` and the like apply as in
    MuJoCo).

    Geoms (``collision=True``): sphere -> :class:`~articulated.geometry.Sphere`, capsule ->
    :class:`~articulated.geometry.Capsule` (``length`` = 2 half-lengths), cylinder ->
    :class:`~articulated.geometry.Cylinder`, box -> :class:`~articulated.geometry.Box` (full
    edges = 2 half-sizes), mesh -> :class:`~articulated.geometry.Mesh` (MuJoCo's compiled
    vertices; the convex hull collides in both), plane -> static
    :class:`~articulated.geometry.Plane` (normal = the geom's z axis). Ellipsoids, height
    fields, SDFs and planes on moving bodies are skipped with a warning. ``contype`` and
    ``conaffinity`` become ``group`` and ``mask``: we test a pair when *both*
    ``group_a & mask_b`` and ``group_b & mask_a`` are non-zero, MuJoCo when *either* is (the
    same for the default 1/1). As in MuJoCo, the geoms of a body never meet those of its
    parent body (the chain of a multi-joint body counts as one body), and
    ``<contact><exclude>`` pairs are excluded; ``solref``/``solimp``/``margin`` are not read.

    Equality constraints: an active ``<connect>`` between two bodies becomes a
    ``"spherical"`` loop joint and a ``<weld>`` a ``"weld"`` loop joint
    (:meth:`ModelBuilder.add_loop_joint`; simulate with ``method="srm"``).

    Passive forces and actuation, as MuJoCo computes them (its ``qfrc_passive`` and
    ``qfrc_actuator``): ``armature`` -> :attr:`Model.dof_armature` (the joint-space inertia
    is ``M + diag(armature)``); joint ``damping`` -> a
    :class:`~articulated.simulation.forces.JointDamping`, ``stiffness`` of hinge and slide
    joints -> a :class:`~articulated.simulation.forces.PDController` with ``kd = 0`` about
    ``springref``; actuators with a joint transmission on a hinge or slide joint, fixed
    gain, no or affine bias and no activation dynamics (``motor``, ``position``,
    ``velocity`` and such ``general`` ones) -> one
    :class:`~articulated.simulation.forces.Actuators` (``ctrlrange``, ``forcerange`` where
    limited). They are in ``model.forces``, which every simulator adds (set the controls
    with ``sim.ctrl``); joint limits are in ``jnt_range`` where the file says ``limited``
    (or ``limited="auto"`` with a range), and every simulator enforces them
    (:attr:`Model.enforce_limits` is set; ``Simulator(..., limits=False)`` turns them off). :func:`articulated.interop.
    to_mujoco_state` and ``from_mujoco_state`` convert states and accelerations.

    Ignored, with one warning naming the elements: tendons, other actuators, joint friction
    loss, stiffness and armature of free joints, stiffness of ball joints, joint actuator force ranges, ball-joint
    ranges, mocap bodies (welded), gravity compensation, fluid forces, explicit contact
    pairs, inactive equalities; also sensors, sites, cameras, lights and visuals.

    Raises
    ------
    FileNotFoundError
        ``source`` names no file.
    ValueError
        MuJoCo cannot parse or compile it (its message, naming the element and line); the
        file exceeds ``max_bytes``; a NaN or inf in a body, joint or geom (names it; MuJoCo
        accepts ``nan`` in numbers); flexes, or an active equality constraint other than a
        body ``<connect>``/``<weld>`` (names it); ``intermediate_mass`` not finite and > 0;
        a geom our shapes reject (names it).
    ImportError
        ``mujoco`` is not installed.
    """
    mujoco = _mujoco()
    intermediate_mass = float(intermediate_mass)
    if not (math.isfinite(intermediate_mass) and intermediate_mass > 0.0):
        raise ValueError(f"intermediate_mass must be finite and > 0, got {intermediate_mass}")
    spec, m, path, raw, where = _compile(mujoco, source, max_bytes)
    name = _Names(mujoco, m, where)
    O = mujoco.mjtObj
    _check_finite(mujoco, m, name, where)
    ignored = _unsupported(mujoco, m, name, where)
    if gravity is None:
        grav = (np.zeros(3) if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY
                else np.array(m.opt.gravity, dtype=np.float64))
    else:
        grav = gravity

    bodies = []          # our bodies, depth-first pre-order (= MuJoCo's body order)
    parts = []           # per our body: list of (m, c, I) in its coordinates
    frames = {}          # MuJoCo body id -> (our body or -1, R, p)
    frames[0] = (-1, np.eye(3), np.zeros(3))
    last = {0: -1}       # MuJoCo body id -> our body that carries it
    intermediate = []
    bname = {b: name(O.mjOBJ_BODY, b, "body") for b in range(m.nbody)}
    for b in range(1, m.nbody):
        o, Rp, pp = frames[int(m.body_parentid[b])]
        Rc, pc = Rp @ _quat2mat(m.body_quat[b]), pp + Rp @ m.body_pos[b]
        j0, nj = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        mass_b = float(m.body_mass[b])
        for k, j in enumerate(range(j0, j0 + nj)):
            t = int(m.jnt_type[j])
            jname = name(O.mjOBJ_JOINT, j, f"{bname[b]}/joint")
            a = np.array(m.jnt_pos[j], dtype=np.float64)
            n = np.array(m.jnt_axis[j], dtype=np.float64)
            limits = None
            if t == mujoco.mjtJoint.mjJNT_FREE:
                jt, axis, R, p, after = "free", (0.0, 0.0, 1.0), np.eye(3), np.zeros(3), np.zeros(3)
            elif t == mujoco.mjtJoint.mjJNT_BALL:
                jt, axis, R, p, after = "spherical", (0.0, 0.0, 1.0), Rc, pc + Rc @ a, -a
            else:
                ref = float(m.qpos0[m.jnt_qposadr[j]])
                if t == mujoco.mjtJoint.mjJNT_HINGE:
                    # F <- F T(a) Rot(n, qpos - ref) T(-a): the body frame sits at the anchor,
                    # the placement turned by -ref so that q = qpos
                    jt, R, p, after = "revolute", Rc @ _axis_angle(n, -ref), pc + Rc @ a, -a
                else:  # slide: F <- F T(n (qpos - ref))
                    jt, R, p, after = "prismatic", Rc, pc - ref * (Rc @ n), np.zeros(3)
                axis = n
                if m.jnt_limited[j]:
                    limits = tuple(float(x) for x in m.jnt_range[j])
            final = k == nj - 1
            our = bname[b] if final else f"{bname[b]}/{jname}"
            bodies.append(dict(name=our, parent=None if o < 0 else bodies[o]["name"], joint=jt,
                               joint_name=jname, axis=axis, R=R, p=p, limits=limits,
                               armature=0.0 if jt == "free" else float(
                                   m.dof_armature[m.jnt_dofadr[j]]),
                               where=f"{where}: body {bname[b]!r} (joint {jname!r})"))
            o, Rc, pc = len(bodies) - 1, np.eye(3), after
            if final:
                parts.append([])
            else:
                eps = intermediate_mass
                parts.append([(eps * mass_b, np.zeros(3),
                               eps * float(np.mean(m.body_inertia[b])) * np.eye(3))])
                intermediate.append(our)
        frames[b] = (o, Rc, pc)
        last[b] = o
        if o >= 0 and mass_b > 0.0:
            Ri = Rc @ _quat2mat(m.body_iquat[b])
            parts[o].append((mass_b, pc + Rc @ m.body_ipos[b],
                             Ri @ np.diag(m.body_inertia[b]) @ Ri.T))
    if not bodies:
        raise ValueError(f"{where}: the model has no joint (every body is welded to the "
                         f"world)")

    try:
        builder = ModelBuilder(gravity=grav)
        for k, bd in enumerate(bodies):
            mk, c, I = combine_inertias(parts[k])
            if mk <= 0.0:
                raise ValueError(f"{bd['where']}: moves no mass (give the body an <inertial> "
                                 f"or a geom with mass)")
            try:
                builder.add_body(bd["name"], parent=bd["parent"], joint=bd["joint"],
                                 axis=bd["axis"], origin_xyz=bd["p"], origin_R=bd["R"], mass=mk,
                                 com=c, inertia=I, joint_name=bd["joint_name"],
                                 limits=bd["limits"], armature=bd["armature"])
            except ValueError as err:
                raise ValueError(f"{bd['where']}: {err}") from None
        for k in range(m.neq):
            if not m.eq_active0[k]:
                continue
            _add_equality(mujoco, m, k, name, frames, bodies, builder)
        model = builder.build()
    except ValueError as err:
        msg = str(err)
        raise ValueError(msg if msg.startswith(where) else f"{where}: {msg}") from None

    model.forces = _forces(mujoco, m, model, name, ignored)
    model.enforce_limits = bool(model.jnt_limited.any())
    model.frames = {bname[b]: (f[0], f[1].copy(), f[2].copy()) for b, f in frames.items()}
    model.mjcf_intermediate = intermediate
    model.collision = (_collision_model(mujoco, m, model, name, frames, last, where, mu, e,
                                        ignored) if collision else None)
    if ignored:
        warnings.warn(f"{where}: load_mjcf ignores " + "; ".join(ignored), stacklevel=2)
    model.description = describe("mjcf", path, raw, {
        "gravity": None if gravity is None else [float(x) for x in np.asarray(gravity).ravel()],
        "intermediate_mass": intermediate_mass, "collision": bool(collision),
        "mu": mu, "e": e, "max_bytes": max_bytes})
    return model


def _free_dofs(mujoco, m):
    """``perm`` (nv,) int64 with ``ours = mujoco_dof_array[perm]``: a free joint's dofs are
    ``[v_world; omega]`` in MuJoCo, ``[omega; v]`` here (the other joints in the same
    order, :func:`articulated.interop.to_mujoco_state`)."""
    perm = np.arange(m.nv, dtype=np.int64)
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            a = int(m.jnt_dofadr[j])
            perm[a:a + 6] = np.r_[a + 3:a + 6, a:a + 3]
    return perm


def _forces(mujoco, m, model, name, ignored):
    """The MJCF file's joint dampers and springs and its actuators as forces
    (:class:`~articulated.simulation.forces.JointDamping`, ``PDController`` with ``kd =
    0``, ``Actuators``); what they cannot represent goes to ``ignored``."""
    from ..simulation.forces import Actuators, JointDamping, PDController

    O, J = mujoco.mjtObj, mujoco.mjtJoint
    one_dof = (int(J.mjJNT_HINGE), int(J.mjJNT_SLIDE))
    affine_bias = int(mujoco.mjtBias.mjBIAS_AFFINE)
    out = []
    b = np.asarray(m.dof_damping, dtype=np.float64)[_free_dofs(mujoco, m)]
    if b.any():
        out.append(JointDamping(b))
    js = [j for j in np.flatnonzero(m.jnt_stiffness) if int(m.jnt_type[j]) in one_dof]
    if js:
        out.append(PDController(kp=m.jnt_stiffness[js], kd=0.0,
                                q_ref=m.qpos_spring[m.jnt_qposadr[js]],
                                joints=[model.joint_name[j] for j in js]))
    rows, skipped = [], []
    for u in range(m.nu):
        j = int(m.actuator_trnid[u, 0])
        if (int(m.actuator_trntype[u]) != int(mujoco.mjtTrn.mjTRN_JOINT)
                or int(m.jnt_type[j]) not in one_dof
                or int(m.actuator_dyntype[u]) != int(mujoco.mjtDyn.mjDYN_NONE)
                or int(m.actuator_gaintype[u]) != int(mujoco.mjtGain.mjGAIN_FIXED)
                or int(m.actuator_biastype[u]) not in (int(mujoco.mjtBias.mjBIAS_NONE),
                                                       affine_bias)):
            skipped.append(name(O.mjOBJ_ACTUATOR, u, "actuator"))
            continue
        affine = int(m.actuator_biastype[u]) == affine_bias
        inf = (-np.inf, np.inf)
        rows.append(dict(
            joint=model.joint_name[j], gear=float(m.actuator_gear[u, 0]),
            gain=float(m.actuator_gainprm[u, 0]),
            bias=np.array(m.actuator_biasprm[u, :3]) if affine else np.zeros(3),
            ctrlrange=m.actuator_ctrlrange[u] if m.actuator_ctrllimited[u] else inf,
            forcerange=m.actuator_forcerange[u] if m.actuator_forcelimited[u] else inf,
            name=name(O.mjOBJ_ACTUATOR, u, "actuator")))
    if rows:
        out.append(Actuators([r["joint"] for r in rows], [r["gear"] for r in rows],
                             [r["gain"] for r in rows], [r["bias"] for r in rows],
                             [r["ctrlrange"] for r in rows], [r["forcerange"] for r in rows],
                             names=[r["name"] for r in rows]))
    if skipped:
        more = f", ... ({len(skipped)} in all)" if len(skipped) > 8 else ""
        ignored.append(f"actuators other than fixed-gain, affine-bias actuators without "
                       f"activation dynamics on hinge or slide joints: {skipped[:8]}{more}")
    return out


def _add_equality(mujoco, m, k, name, frames, bodies, builder):
    """Add the active body ``<connect>`` or ``<weld>`` ``k`` as a loop joint."""
    O = mujoco.mjtObj
    b1, b2 = int(m.eq_obj1id[k]), int(m.eq_obj2id[k])
    d = np.asarray(m.eq_data[k], dtype=np.float64)
    o1, R1, p1 = frames[b1]
    o2, R2, p2 = frames[b2]
    lname = name(O.mjOBJ_EQUALITY, k, "equality")
    if o1 == o2:
        raise ValueError(f"equality {lname!r} connects bodies carried by one rigid body "
                         f"(welded together or to the world)")
    n1 = None if o1 < 0 else bodies[o1]["name"]
    n2 = None if o2 < 0 else bodies[o2]["name"]
    if int(m.eq_type[k]) == mujoco.mjtEq.mjEQ_CONNECT:
        # data: anchor on body1 (body1 frame), the same point on body2 (body2 frame)
        builder.add_loop_joint(n1, (p1 + R1 @ d[0:3], R1), n2, (p2 + R2 @ d[3:6], R2),
                               kind="spherical", name=lname)
    else:
        # data: anchor on body2 (body2 frame), relpose (pos, quat) of body2 in body1
        builder.add_loop_joint(n1, (p1 + R1 @ d[3:6], R1 @ _quat2mat(d[6:10])),
                               n2, (p2 + R2 @ d[0:3], R2), kind="weld", name=lname)


def _collision_model(mujoco, m, model, name, frames, last, where, mu, e, ignored):
    """The :class:`CollisionModel` of the colliding geoms (see :func:`load_mjcf`)."""
    from ..geometry import (Box, Capsule, CollisionModel, Cylinder, Mesh, Plane, Sphere,
                            _material)

    G, O = mujoco.mjtGeom, mujoco.mjtObj
    if mu is not None:
        mu, e = _material(mu, e, "load_mjcf")
    geom = CollisionModel(model)
    skipped = []
    meshes = {}
    for g in range(m.ngeom):
        if not (m.geom_contype[g] or m.geom_conaffinity[g]):
            continue  # visual only
        b = int(m.geom_bodyid[g])
        o, Rb, pb = frames[b]
        gname = name(O.mjOBJ_GEOM, g, "geom")
        R = Rb @ _quat2mat(m.geom_quat[g])
        p = pb + Rb @ m.geom_pos[g]
        t, s = int(m.geom_type[g]), np.asarray(m.geom_size[g], dtype=np.float64)
        what = f"{where}: geom {gname!r} on body {name(O.mjOBJ_BODY, b, 'body')!r}"
        try:
            if t == G.mjGEOM_SPHERE:
                shape = Sphere(radius=s[0])
            elif t == G.mjGEOM_CAPSULE:
                shape = Capsule(radius=s[0], length=2.0 * s[1])
            elif t == G.mjGEOM_CYLINDER:
                shape = Cylinder(radius=s[0], length=2.0 * s[1])
            elif t == G.mjGEOM_BOX:
                shape = Box(size=tuple(2.0 * s))
            elif t == G.mjGEOM_MESH:
                mid = int(m.geom_dataid[g])
                shape = meshes.get(mid)
                if shape is None:
                    va, vn = int(m.mesh_vertadr[mid]), int(m.mesh_vertnum[mid])
                    fa, fn = int(m.mesh_faceadr[mid]), int(m.mesh_facenum[mid])
                    shape = meshes[mid] = Mesh(
                        vertices=np.array(m.mesh_vert[va:va + vn], dtype=np.float64),
                        faces=np.array(m.mesh_face[fa:fa + fn], dtype=np.int64),
                        source=name(O.mjOBJ_MESH, mid, "mesh"))
            elif t == G.mjGEOM_PLANE and o < 0:
                shape = Plane(normal=tuple(R[:, 2]), pos=tuple(p))
            else:
                skipped.append(gname)
                continue
            gm = float(m.geom_friction[g, 0]) if mu is None else mu
            kw = dict(mu=gm, e=e, group=int(m.geom_contype[g]), mask=int(m.geom_conaffinity[g]))
            if o < 0:
                if t != G.mjGEOM_PLANE:
                    import dataclasses
                    shape = dataclasses.replace(shape, pos=p, R=R)
                geom.add_static(shape, names=[gname], **kw)
            else:
                geom.add(o, shape, pos=p, R=R, name=gname, **kw)
        except ValueError as err:
            raise ValueError(f"{what}: {err}") from None
    if skipped:
        ignored.append(f"geoms of unsupported type for contact (ellipsoid, hfield, sdf, plane "
                       f"on a moving body): {skipped[:8]}")
    # MuJoCo's filterparent: a body's geoms never meet its parent's (a multi-joint body's
    # chain counts as one body); and <contact><exclude> pairs
    if not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT:
        for b in range(1, m.nbody):
            a, c = last[b], last[int(m.body_parentid[b])]
            if a >= 0 and c >= 0 and a != c and model.body_parent[a] != c:
                geom.exclude(a, c)
    for sig in m.exclude_signature:
        b1, b2 = int(sig) >> 16, int(sig) & 0xFFFF
        a, c = last.get(b1, -1), last.get(b2, -1)
        if a >= 0 and c >= 0 and a != c:
            geom.exclude(a, c)
    return geom
