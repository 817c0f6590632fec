"""The robots of example-robot-data, and a robot a user brings, on a floor.

:func:`path` finds the URDF of an example-robot-data robot by its loader name
(``"solo12"``, ``"anymal_c"``, ``"talos"``, ...; :func:`names` lists them) when the
``robots`` extra is installed (``pip install articulated[robots]``); :func:`load` loads it.
:func:`floor_contacts` gives any URDF robot loaded with ``collision=True`` a ground plane
under its collision shapes, with self-collision off (as PyBullet's default) or on with the
pairs that touch at the start and the SRDF's ``<disable_collisions>`` excluded (what MuJoCo
users write by hand); :func:`named_pose` reads an SRDF ``<group_state>`` and
:func:`hold_pose` holds a configuration with a PD controller. ``articulated simulate --urdf
X --floating-base --floor`` is built from these.
"""

from __future__ import annotations

import importlib.metadata
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

__all__ = ["data_dir", "names", "path", "srdf_path", "load", "floor_contacts",
           "named_pose", "hold_pose", "FLOOR_GROUP", "ROBOT_GROUP"]

ROBOT_GROUP = 1
"""Collision filter group of a robot's shapes under :func:`floor_contacts`.

Without self-collision their mask is :data:`FLOOR_GROUP`: they touch only the floor."""
FLOOR_GROUP = 2
"""Collision filter group of the floor of :func:`floor_contacts` (mask :data:`ROBOT_GROUP`)."""

# loader names whose files do not follow "<name>.urdf" next to "<name>.srdf" (as
# example-robot-data's own robots_loader names them): name -> (urdf, srdf or None)
_TABLE = {
    "solo8": ("solo_description/robots/solo.urdf", "solo_description/srdf/solo.srdf"),
    "solo12": ("solo_description/robots/solo12.urdf", "solo_description/srdf/solo.srdf"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf",
               "anymal_b_simple_description/srdf/anymal.srdf"),
    "anymal_b": ("anymal_b_simple_description/robots/anymal.urdf",
                 "anymal_b_simple_description/srdf/anymal.srdf"),
    "anymal_kinova": ("anymal_b_simple_description/robots/anymal-kinova.urdf",
                      "anymal_b_simple_description/srdf/anymal-kinova.srdf"),
    "anymal_c": ("anymal_c_simple_description/urdf/anymal.urdf",
                 "anymal_c_simple_description/srdf/anymal.srdf"),
    "talos": ("talos_data/robots/talos_reduced.urdf", "talos_data/srdf/talos.srdf"),
    "talos_box": ("talos_data/robots/talos_reduced_box.urdf", "talos_data/srdf/talos.srdf"),
    "talos_full": ("talos_data/robots/talos_full_v2.urdf", "talos_data/srdf/talos.srdf"),
    "talos_full_box": ("talos_data/robots/talos_full_v2_box.urdf", "talos_data/srdf/talos.srdf"),
    "talos_arm": ("talos_data/robots/talos_left_arm.urdf", "talos_data/srdf/talos.srdf"),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", "hyq_description/srdf/hyq.srdf"),
    "icub": ("icub_description/robots/icub.urdf", "icub_description/srdf/icub.srdf"),
    "icub_reduced": ("icub_description/robots/icub_reduced.urdf",
                     "icub_description/srdf/icub.srdf"),
    "romeo": ("romeo_description/urdf/romeo.urdf", "romeo_description/srdf/romeo.srdf"),
    "ur3": ("ur_description/urdf/ur3_robot.urdf", None),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", "ur_description/srdf/ur5.srdf"),
    "ur10": ("ur_description/urdf/ur10_robot.urdf", None),
    "hector": ("hector_description/robots/quadrotor_base.urdf", None),
    "kinova": ("kinova_description/robots/kinova.urdf", "kinova_description/srdf/kinova.srdf"),
    "xarm": ("xarm_description/urdf/xarm7.urdf", "xarm_description/srdf/xarm7.srdf"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", None),
    "alexander": ("alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf",
                  "alexander_description/srdf/alexander.srdf"),
    "borinot": ("borinot_description/urdf/borinot_flying_arm_2.urdf",
                "borinot_description/srdf/borinot_flying_arm_2.srdf"),
    "hextilt": ("hextilt_description/urdf/hextilt_flying_arm_5.urdf",
                "hextilt_description/srdf/hextilt_flying_arm_5.srdf"),
    "asr_twodof": ("asr_twodof_description/urdf/TwoDofs.urdf", None),
}


def data_dir() -> Path | None:
    """Return the ``robots`` folder of example-robot-data, or None when it is not installed.

    The Python module's path where the installed version ships one, else the installed
    distribution's files (the cmeel wheels of example-robot-data >= 5 ship the URDFs
    without a module). Install it with ``pip install articulated[robots]``.
    """
    probe = "ur_description/urdf/ur5_robot.urdf"
    try:
        import example_robot_data as erd
    except ImportError:
        erd = None
    if erd is not None:
        get = getattr(erd, "getModelPath", None)
        if get is None:
            from example_robot_data.robots_loader import getModelPath as get
        return Path(get(probe))
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if str(f).replace(os.sep, "/").endswith("robots/" + probe):
            return Path(f.locate()).parents[2]
    return None


def _root() -> Path:
    d = data_dir()
    if d is None:
        raise ValueError("example-robot-data is not installed: pip install 'articulated[robots]'")
    return d


def _files(root: Path) -> dict:
    """name -> (urdf, srdf or None) relative paths: the table, then every other URDF by its
    file stem (with the SRDF of the same stem in its package's ``srdf`` folder)."""
    found = dict(_TABLE)
    for urdf in sorted(root.glob("*/*/*.urdf")):
        name = urdf.stem.replace("-", "_")
        if name in found or any(v[0] == urdf.relative_to(root).as_posix()
                                for v in found.values()):
            continue
        srdf = urdf.parents[1] / "srdf" / (urdf.stem + ".srdf")
        found[name] = (urdf.relative_to(root).as_posix(),
                       srdf.relative_to(root).as_posix() if srdf.is_file() else None)
    return {k: v for k, v in found.items() if (root / v[0]).is_file()}


def names() -> list[str]:
    """Return the robot names :func:`path` knows, sorted.

    Raises ValueError when example-robot-data is not installed.
    """
    return sorted(_files(_root()))


def path(name: str) -> Path:
    """Return the URDF file of example-robot-data's robot ``name``.

    Parameters
    ----------
    name : str
        A loader name: ``"solo12"``, ``"anymal_c"``, ``"talos"``, ... (:func:`names`).

    Raises
    ------
    ValueError
        example-robot-data is not installed, or ``name`` is unknown (the message lists the
        names).
    """
    files = _files(_root())
    if name not in files:
        raise ValueError(f"unknown robot {name!r}; example-robot-data has: "
                         + ", ".join(sorted(files)))
    return _root() / files[name][0]


def srdf_path(name: str) -> Path | None:
    """Return the SRDF file of example-robot-data's robot ``name``, or None without one.

    Raises ValueError as :func:`path`.
    """
    path(name)
    srdf = _files(_root())[name][1]
    return None if srdf is None else _root() / srdf


def load(name: str, **kwargs):
    """Load example-robot-data's robot ``name`` with :func:`~articulated.load_urdf`.

    The file is :func:`path`; ``kwargs`` go to ``load_urdf`` (``floating_base``, ``collision``, ``mu``, ...).
    """
    from .io.urdf import load_urdf

    return load_urdf(path(name), **kwargs)


def _srdf_root(srdf):
    try:
        return ET.parse(os.fspath(srdf)).getroot()
    except (OSError, ET.ParseError) as err:
        raise ValueError(f"SRDF {srdf}: cannot read it: {err}") from None


def _link_body(model, link, srdf):
    frames = getattr(model, "frames", None) or {}
    if link in frames:
        return frames[link][0]
    if link in model.body_name:
        return model.body_name.index(link)
    return None


def floor_contacts(model, q0, *, self_collision: bool = False, srdf=None, mu: float = 0.5,
                   e: float = 0.0, height: float | None = None):
    """Return the robot's collision shapes with a ground plane under them.

    The shapes are ``model.collision`` (:func:`~articulated.load_urdf` with
    ``collision=True``); the plane is static, with normal +z, friction ``mu`` and
    restitution ``e``, for a simulation started at ``q0`` (nq,). The plane lies at ``height`` [m] (world z), by default at the lowest point of the
    shapes' bounding spheres at ``q0``: the robot starts resting on it or just above.
    ``self_collision=False`` (default): the robot's shapes touch only the floor (filter
    groups :data:`ROBOT_GROUP` / :data:`FLOOR_GROUP`; as PyBullet's default). True: they
    touch each other too, except a body and its parent (always), the link pairs of the
    SRDF's ``<disable_collisions>`` (``srdf``: a path, optional) and the body pairs whose
    shapes overlap at ``q0`` (found with the detector; e.g. solo12's base and upper-leg
    hulls), which are excluded (:meth:`~articulated.geometry.CollisionModel.exclude`).
    Returns the :class:`~articulated.geometry.CollisionModel` (``model.collision``, changed
    in place).

    Raises
    ------
    ValueError
        The model has no collision shapes; an unreadable SRDF; with ``self_collision``, a
        pair of shapes without a narrow phase.
    """
    from .algorithms.collision import Detector
    from .algorithms.kinematics import forward_kinematics
    from .geometry import Plane

    geom = getattr(model, "collision", None)
    A = geom.arrays() if geom is not None and len(geom) else None
    if A is None or not (A["body"] >= 0).any():
        raise ValueError("floor_contacts: the robot has no collision shapes on a moving body "
                         "(load the URDF with collision=True; does it have <collision>?)")
    q0 = model.check_configuration(q0)
    R, p = forward_kinematics(model, q0)
    if height is None:
        on = A["body"] >= 0
        centres = p[A["body"][on]] + np.einsum("gij,gj->gi", R[A["body"][on]], A["pos"][on])
        height = float(np.min(centres[:, 2] - A["rb"][on]))
    if self_collision:
        if srdf is not None:
            for dc in _srdf_root(srdf).iter("disable_collisions"):
                a = _link_body(model, dc.get("link1"), srdf)
                b = _link_body(model, dc.get("link2"), srdf)
                if a is not None and b is not None and a >= 0 and b >= 0 and a != b:
                    geom.exclude(a, b)
        det = Detector(geom)
        n = det.detect(np.ascontiguousarray(np.transpose(R, (0, 2, 1))), p,
                       np.zeros((model.nb, 6)), 1e-3)
        for c in range(n):
            if det.out.dist[c] < 0.0:
                a, b = (int(x) for x in det.out.body[c])
                if a >= 0 and b >= 0 and a != b:
                    geom.exclude(a, b)
        geom.add_static(Plane(normal=(0.0, 0.0, 1.0), pos=(0.0, 0.0, height)), mu=mu, e=e,
                        names=["floor"])
    else:
        geom.set_filter(group=ROBOT_GROUP, mask=FLOOR_GROUP)
        geom.add_static(Plane(normal=(0.0, 0.0, 1.0), pos=(0.0, 0.0, height)), mu=mu, e=e,
                        group=FLOOR_GROUP, mask=ROBOT_GROUP, names=["floor"])
    return geom


def named_pose(model, srdf, name: str, q=None):
    """Return the configuration (nq,) of the SRDF's ``<group_state name=name>``.

    ``q`` (default ``model.neutral()``) with the state's joint values set: revolute and
    prismatic joints, and a free or spherical joint from the SRDF's ``x y z qx qy qz qw``
    (Pinocchio's order); joints the model does not have are skipped, as those of a
    reduced model. ``srdf`` is the SRDF's path.

    Raises
    ------
    ValueError
        No such state in the SRDF (the message lists those it has) or an unreadable file.
    """
    root = _srdf_root(srdf)
    states = {gs.get("name"): gs for gs in root.iter("group_state")}
    if name not in states:
        raise ValueError(f"SRDF {srdf}: no group_state {name!r}; it has "
                         + (", ".join(sorted(states)) or "none"))
    q = np.array(model.neutral() if q is None else q, dtype=np.float64)
    for j in states[name].iter("joint"):
        jn = j.get("name")
        if jn not in model.joint_name:
            continue
        jid = model.joint_name.index(jn)
        nq, a = int(model.jnt_nq[jid]), int(model.jnt_qadr[jid])
        try:
            v = [float(x) for x in j.get("value").split()]
        except (AttributeError, ValueError):
            raise ValueError(f"SRDF {srdf}: group_state {name!r}: joint {jn!r} has no "
                             f"numeric value") from None
        if nq == 1 and len(v) >= 1:
            q[a] = v[0]
        elif nq in (4, 7) and len(v) == nq:
            # SRDF (Pinocchio's order): [x y z] then the quaternion (x, y, z, w); ours is
            # (w, x, y, z), normalized
            if nq == 7:
                q[a:a + 3] = v[:3]
            x, y, z, w = v[-4:]
            quat = np.array([w, x, y, z])
            q[a + nq - 4:a + nq] = quat / np.linalg.norm(quat)
        else:
            raise ValueError(f"SRDF {srdf}: group_state {name!r}: joint {jn!r} has "
                             f"{len(v)} values, its joint {nq} coordinates")
    return q


def hold_pose(model, q_ref, kp: float | None = None, kd: float | None = None,
              dt: float | None = 1e-3):
    """Return a :class:`~articulated.PDController` holding the joints at ``q_ref``.

    Every revolute and prismatic joint is held at its value in ``q_ref`` (nq,). Default
    gains scale with the robot:
    ``kp = 20 m g l`` [N m/rad] with ``m`` the total mass [kg], ``g = 9.81`` m/s^2 and ``l``
    the mean distance [m] of the bodies from the root at ``q_ref`` (at least 0.05 m), so a
    leg carrying the robot's weight bends by about 1/20 rad; ``kd = 2 sqrt(kp m l^2) / 10``
    [N m s/rad]. With a time step ``dt`` [s] (None: no cap) each joint's default gains are
    capped at ``kp_j = I_j / dt^2`` and ``kd_j = I_j / dt``, with ``I_j = 1 / sum_i
    |(M^-1)_ji|`` over the held joints ``i`` at ``q_ref`` [kg m^2 | kg] (``M``:
    :func:`~articulated.crba`): by Gershgorin's theorem every mode of the held joints then
    has ``kp dt^2 / I <= 1``, so that a semi-implicit Euler step stays stable where light
    joints (a gripper, a forearm roll) would get the legs' gains. Gains given as ``kp``,
    ``kd`` are used as they are."""
    from .algorithms.crba import crba
    from .algorithms.kinematics import forward_kinematics
    from .model import JOINT_TYPE_NAMES
    from .simulation.forces import PDController

    q_ref = model.check_configuration(q_ref)
    joints = [j for j in range(model.nb)
              if JOINT_TYPE_NAMES[model.jnt_type[j]] in ("revolute", "prismatic")]
    if not joints:
        raise ValueError("hold_pose: the model has no revolute or prismatic joint")
    _, p = forward_kinematics(model, q_ref)
    lever = max(float(np.linalg.norm(p - p[0], axis=1).mean()), 0.05)
    mass = float(model.total_mass)
    kp_given, kd_given = kp is not None, kd is not None
    kp = 20.0 * mass * 9.81 * lever if kp is None else float(kp)
    kd = 0.2 * np.sqrt(kp * mass * lever * lever) if kd is None else float(kd)
    if dt is not None and not (kp_given and kd_given):
        v = model.jnt_vadr[joints]
        inertia = 1.0 / np.abs(np.linalg.inv(crba(model, q_ref))[np.ix_(v, v)]).sum(axis=1)
        kp = kp if kp_given else np.minimum(kp, inertia / dt ** 2)
        kd = kd if kd_given else np.minimum(kd, inertia / dt)
    ref = np.array([q_ref[model.jnt_qadr[j]] for j in joints])
    return PDController(kp, kd, ref, joints=joints)
