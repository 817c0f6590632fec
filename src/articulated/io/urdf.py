"""Load a :class:`~articulated.model.Model` from a URDF file.

Load a :class:`~articulated.model.Model` from a URDF file (parsed with a hardened lxml
parser, then yourdfpy).

The kinematic tree, the inertial data and the joint limits are read, and on request the
collision geometry (``<collision>``: box, cylinder, sphere, mesh); visual meshes,
materials, dynamics (damping/friction) and transmissions are ignored.
"""

from __future__ import annotations

import math
import warnings

import dataclasses
import os

import numpy as np

from ..builder import ModelBuilder
from ..model import Model
from ._common import MAX_FILE_BYTES, combine_inertias, describe, read_capped

_MOVING = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
           "floating": "free"}

BOUNDMASS = 1e-6
"""Default ``boundmass`` [kg] of ``load_urdf(..., repair="inertia")``."""
BOUNDINERTIA = 1e-9
"""Default ``boundinertia`` [kg m^2] of ``load_urdf(..., repair="inertia")``."""

POINT_MASS_DENSITY = 1000.0
"""Density [kg/m^3] of the ball whose inertia ``repair="inertia"`` gives a point mass."""

ROOT_JOINT_NAME = "root_joint"
"""Name of the free joint added by ``load_urdf(..., floating_base=True)`` (as in Pinocchio)."""


def _origin(T):
    """(R (3, 3), p (3,)) of a yourdfpy 4x4 origin (None -> identity)."""
    if T is None:
        return np.eye(3), np.zeros(3)
    T = np.asarray(T, dtype=np.float64)
    return T[:3, :3].copy(), T[:3, 3].copy()


# numeric attributes of URDF elements: tag -> {attribute: number of values (0: 1 or 3)}
_NUMBERS = {
    "origin": {"xyz": 3, "rpy": 3}, "axis": {"xyz": 3},
    "limit": {"lower": 1, "upper": 1, "effort": 1, "velocity": 1},
    "dynamics": {"damping": 1, "friction": 1}, "mass": {"value": 1},
    "inertia": {k: 1 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
    "box": {"size": 3}, "cylinder": {"radius": 1, "length": 1}, "sphere": {"radius": 1},
    "capsule": {"radius": 1, "length": 1}, "mesh": {"scale": 0},
    "safety_controller": {"soft_lower_limit": 1, "soft_upper_limit": 1, "k_position": 1,
                          "k_velocity": 1},
    "calibration": {"rising": 1, "falling": 1}, "mimic": {"multiplier": 1, "offset": 1},
}


def _element_path(el):
    """``link 'name': <inertial><origin>``-style description of where ``el`` sits."""
    tags = []
    while el is not None and el.tag not in ("link", "joint", "robot"):
        tags.append(f"<{el.tag}>")
        el = el.getparent()
    owner = "" if el is None or el.tag == "robot" else f"{el.tag} {el.get('name')!r}: "
    return owner + "".join(reversed(tags))


def _check_numbers(root, path):
    """ValueError naming the element for a numeric attribute of a URDF element (origin,
    axis, limit, dynamics, inertial, geometry, ...) that is not a number, has the wrong
    count of values, or is NaN or infinite."""
    for el in root.iter(*_NUMBERS):
        for attr, count in _NUMBERS[el.tag].items():
            text = el.get(attr)
            if text is None:
                continue
            try:
                vals = [float(x) for x in text.split()]
            except ValueError:
                raise ValueError(f"{_where(path, el, attr, text)}: not a number") from None
            if (len(vals) not in (1, 3)) if count == 0 else len(vals) != count:
                raise ValueError(f"{_where(path, el, attr, text)}: expected "
                                 f"{count or '1 or 3'} value(s), got {len(vals)}")
            if not all(map(math.isfinite, vals)):
                raise ValueError(f"{_where(path, el, attr, text)}: not finite")


def _where(path, el, attr, text):
    """Return the place of a bad number for an error message.

    Built only when one is raised: building it for every attribute of a large file would
    dominate the load time.
    """
    return f"{path}: {_element_path(el)} {attr}={text[:60]!r}"


def _check_structure(root, path):
    """ValueError naming the element for a ``<link>`` or ``<joint>`` without a name, a
    joint without a type or without ``<parent link>``/``<child link>``, a ``<visual>`` or
    ``<collision>`` without a geometry shape, a ``<mesh>`` without a file name."""
    for el in root:
        if el.tag not in ("link", "joint"):
            continue
        name = el.get("name")
        if not name:
            raise ValueError(f"{path}: a <{el.tag}> (line {el.sourceline}) has no name")
        for part in el.iter("visual", "collision"):
            g = part.find("geometry")
            if g is None or len(g) == 0:
                raise ValueError(f"{path}: link {name!r}: a <{part.tag}> (line "
                                 f"{part.sourceline}) has no <geometry> shape")
            m = g.find("mesh")
            if m is not None and not m.get("filename"):
                raise ValueError(f"{path}: link {name!r}: a <{part.tag}> <mesh> (line "
                                 f"{m.sourceline}) has no filename")
        if el.tag == "joint":
            if not el.get("type"):
                raise ValueError(f"{path}: joint {name!r} has no type")
            for end in ("parent", "child"):
                e = el.find(end)
                if e is None or not e.get("link"):
                    raise ValueError(f"{path}: joint {name!r} has no <{end} link=...>")


def _parse(path: str, max_bytes):
    """Parse ``path`` with a hardened lxml parser (no entity expansion, no network, no
    huge trees, at most ``max_bytes``), check its numbers, then hand the tree to yourdfpy;
    ValueError with the path if anything is wrong."""
    try:
        import yourdfpy
        from lxml import etree
    except ImportError as e:  # pragma: no cover - yourdfpy is a hard dependency
        raise ImportError("load_urdf needs yourdfpy (pip install yourdfpy)") from e
    raw = read_capped(path, max_bytes, "URDF")
    # strict (yourdfpy's own loader silently falls back to a recovering parser) and hardened:
    # entities are not expanded (billion laughs, external entities), no DTD is loaded, no
    # network access, libxml2's limits on depth and text size stay on
    parser = etree.XMLParser(remove_blank_text=True, resolve_entities=False, no_network=True,
                             huge_tree=False, load_dtd=False, remove_comments=True)
    try:
        root = etree.fromstring(raw, parser=parser)
    except etree.XMLSyntaxError as e:
        raise ValueError(f"{path}: malformed URDF (not well-formed XML): {e}") from None
    if root.tag != "robot":
        raise ValueError(f"{path}: malformed URDF: root element is <{root.tag}>, not <robot>")
    if root.find("link") is None:
        raise ValueError(f"{path}: the URDF has no <link>")
    if root.get("name") is None:
        root.set("name", "")  # urdfdom requires it; it names nothing we use
    _check_structure(root, path)
    _check_numbers(root, path)
    etree.cleanup_namespaces(root)
    try:
        # yourdfpy.URDF.load would parse the bytes again with its own parser
        robot = yourdfpy.URDF._parse_robot(xml_element=root)
    except KeyError as e:  # yourdfpy indexes required attributes directly
        raise ValueError(f"{path}: malformed URDF: an element misses its required "
                         f"attribute {e}") from None
    except Exception as e:  # ValueError/TypeError on bad numbers and the like
        raise ValueError(f"{path}: malformed URDF: {type(e).__name__}: {e}") from None
    return raw, robot


def _joint_limits(j, path):
    """``(lower, upper)`` [rad or m] of a URDF revolute/prismatic joint, None if unlimited.

    Pinocchio's rules (urdfdom): a ``<limit>`` without ``lower``/``upper`` gives 0 for the
    missing side (the URDF spec's default); ``continuous`` joints are unlimited whatever
    their ``<limit>`` says. MuJoCo's rule for ``lower == upper`` (also ``0 == 0``, e.g. a
    ``<limit effort velocity/>`` on a wheel): no limit, with a warning naming the joint
    (Pinocchio keeps ``(0, 0)``, which would lock the joint once limits are enforced). A
    revolute or prismatic joint without ``<limit>`` (urdfdom rejects the file) is
    unlimited, as in MuJoCo's URDF import.
    """
    if j.type not in ("revolute", "prismatic") or j.limit is None:
        return None
    lo = 0.0 if j.limit.lower is None else float(j.limit.lower)
    hi = 0.0 if j.limit.upper is None else float(j.limit.upper)
    if lo == hi:
        warnings.warn(f"{path}: joint {j.name!r}: <limit> lower == upper == {lo:g}: loaded "
                      f"without limits (as MuJoCo does)", stacklevel=3)
        return None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{path}: joint {j.name!r}: <limit lower={lo} upper={hi}> must be "
                         f"finite")
    if lo > hi:
        raise ValueError(f"{path}: joint {j.name!r}: <limit> lower {lo} > upper {hi}")
    return lo, hi


def _link_inertia(link, path):
    """(m, c (3,), I_com (3, 3)) of a yourdfpy Link in link coordinates; zeros if none."""
    inr = link.inertial
    if inr is None or inr.mass is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    m = float(inr.mass)
    if not np.isfinite(m) or m < 0.0:
        raise ValueError(f"{path}: link {link.name!r}: mass must be finite and >= 0, got {m}")
    R, c = _origin(inr.origin)
    I = np.zeros((3, 3)) if inr.inertia is None else np.asarray(inr.inertia, dtype=np.float64)
    if not np.all(np.isfinite(I)) or not np.all(np.isfinite(c)):
        raise ValueError(f"{path}: link {link.name!r}: inertial values are not finite")
    return m, c, R @ I @ R.T


def _collision_shapes(link, path, handler, meshes):
    """The shapes of a yourdfpy Link's ``<collision>`` elements: a list of ``(name, shape,
    R_o (3, 3), p_o (3,))`` with the element's origin in the link frame. ValueError naming
    the link for a non-finite origin, a bad size or an unreadable mesh. ``meshes`` caches
    the Mesh of each (file, scale), so links that share a file share its hull."""
    from ..geometry import Box, Cylinder, Mesh, Sphere

    out = []
    for k, c in enumerate(link.collisions):
        name = c.name or f"{link.name}/collision_{k}"
        what = f"{path}: link {link.name!r}: <collision> {name!r}"
        Ro, po = _origin(c.origin)
        if not (np.isfinite(Ro).all() and np.isfinite(po).all()):
            raise ValueError(f"{what}: <origin> is not finite")
        g = c.geometry
        try:
            if g is None:
                raise ValueError("no <geometry>")
            if g.box is not None:
                shape = Box(size=tuple(np.asarray(g.box.size, dtype=np.float64).reshape(-1)))
            elif g.cylinder is not None:
                shape = Cylinder(radius=g.cylinder.radius, length=g.cylinder.length)
            elif g.sphere is not None:
                shape = Sphere(radius=g.sphere.radius)
            elif g.mesh is not None:
                sc = np.asarray(1.0 if g.mesh.scale is None else g.mesh.scale, dtype=np.float64)
                if sc.size not in (1, 3):
                    raise ValueError(f"<mesh scale> must have 1 or 3 values, got {sc}")
                sc = tuple(np.broadcast_to(sc.reshape(-1), (3,)))
                file = handler(g.mesh.filename)
                shape = meshes.get((file, sc))
                if shape is None:
                    shape = meshes[file, sc] = Mesh.from_file(file, scale=sc)
            else:
                raise ValueError("empty <geometry>")
            shape.params()  # validates the sizes
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
        if g.mesh is not None:
            _check_against_visual(link, what, g.mesh.filename, shape, po)
        out.append((name, shape, Ro, po))
    return out


def _check_against_visual(link, what, filename, mesh, po):
    """Warn where a ``<collision>`` mesh lies farther from a ``<visual>`` of the same file
    on the link than the mesh's size (its largest vertex distance from its origin): most
    likely a typo in its ``<origin>`` (a rotation written as ``xyz``), which a simulator
    follows as written."""
    r = float(np.linalg.norm(mesh.scaled_vertices(), axis=1).max())
    for v in link.visuals:
        if v.geometry is None or v.geometry.mesh is None or v.geometry.mesh.filename != filename:
            continue
        pv = _origin(v.origin)[1]
        d = float(np.linalg.norm(po - pv))
        if d > 2.0 * r + 0.01:
            warnings.warn(f"{what}: the mesh {os.path.basename(filename)!r} lies {d:.3g} m "
                          f"from the link's <visual> of the same file (<origin xyz> "
                          f"{np.round(po, 4).tolist()} against {np.round(pv, 4).tolist()}; "
                          f"the mesh reaches {r:.3g} m from its origin): simulated as "
                          f"written; check the <collision> <origin>", stacklevel=4)
            return


def _collision_model(model, robot, path, mesh_dir, mu, e):
    """The :class:`CollisionModel` of every link's ``<collision>`` (see :func:`load_urdf`)."""
    import functools

    import yourdfpy

    from ..geometry import CollisionModel

    handler = functools.partial(yourdfpy.filename_handler_magic, dir=mesh_dir)
    geom = CollisionModel(model)
    meshes = {}
    for link in robot.links:
        body, R, p = model.frames[link.name]
        for name, shape, Ro, po in _collision_shapes(link, path, handler, meshes):
            Rs, ps = R @ Ro, p + R @ po
            try:
                if body < 0:
                    shape = dataclasses.replace(shape, pos=ps, R=Rs)
                    geom.add_static(shape, mu=mu, e=e, names=[name])
                else:
                    geom.add(body, shape, pos=ps, R=Rs, mu=mu, e=e, name=name)
            except ValueError as err:
                raise ValueError(f"{path}: link {link.name!r}: <collision> {name!r}: {err}") from None
    return geom


def _repair_inertia(m, c, I, boundmass, boundinertia):
    """``((m, c, I), change)`` after the bounds of ``load_urdf(repair="inertia")``: mass at
    least ``boundmass``, principal moments at least ``boundinertia``, triangle inequality
    restored by raising the two smaller moments equally (``change`` describes what moved,
    '' if nothing). Negative masses and non-finite values are left for the builder to
    reject."""
    if not (np.isfinite(m) and m >= 0.0 and np.all(np.isfinite(I))):
        return (m, c, I), ""
    notes = []
    if m < boundmass:
        notes.append(f"mass {m:.6g} -> {boundmass:.6g} kg")
        c = c if m > 0.0 else np.zeros(3)
        m = boundmass
    I = 0.5 * (I + I.T)
    ev, V = np.linalg.eigh(I)
    floor = boundinertia
    if ev[2] < boundinertia:        # a point mass: the inertia of a ball of water
        floor = max(floor, 0.4 * m * (3.0 * m / (4.0 * math.pi * POINT_MASS_DENSITY)) ** (2 / 3))
    new = np.maximum(ev, floor)
    if new[2] > new[0] + new[1]:    # a margin of 1e-6 I3 keeps it after round-off
        new[:2] += 0.5 * (new[2] * (1.0 + 1e-6) - new[0] - new[1])
    if np.any(new != ev):
        fmt = {"float_kind": lambda x: f"{x:.4g}"}
        notes.append(f"principal moments {np.array2string(ev, formatter=fmt)} -> "
                     f"{np.array2string(new, formatter=fmt)} kg m^2")
        I = (V * new) @ V.T
        I = 0.5 * (I + I.T)
    return (m, c, I), " and ".join(notes)


def load_urdf(path, floating_base: bool = False, gravity=(0.0, 0.0, -9.81), *,
              massless_body_mass: float | None = None, repair: str | None = None,
              boundmass: float = BOUNDMASS, boundinertia: float = BOUNDINERTIA,
              collision: bool = False, mu: float = 0.5, e: float = 0.0,
              max_bytes: int | None = MAX_FILE_BYTES) -> Model:
    """Build a :class:`~articulated.model.Model` from a URDF file.

    The file is parsed with yourdfpy; meshes are loaded only with ``collision=True`` (mesh
    packages need not be installed otherwise). Links become bodies and URDF joints become
    the joints that connect each body to its parent, as in Pinocchio's URDF parser.

    Parameters
    ----------
    path : str or os.PathLike
        URDF file.
    floating_base : bool
        False: the URDF root link is welded to the world (its own inertia is ignored and
        may be absent; the joints of its children attach to the world, the world frame
        being the root link frame). True: the root link becomes body 0 with a ``"free"``
        joint named ``"root_joint"`` attached to the world at the identity placement.
    gravity : (3,) float
        Gravitational acceleration in world coordinates [m/s^2].
    massless_body_mass : float, optional
        Opt-in for URDFs that chain several moving joints through massless "virtual"
        links (e.g. a 3-DOF hip as three revolute joints). Our :class:`Model` needs
        ``mass > 0`` on every body, so by default such a link raises ValueError. If given
        (kg, > 0, e.g. 1e-6), each moving body that has zero mass but carries massive
        links further down gets this mass at its origin with the inertia of a solid
        sphere of radius 5 cm (``0.4 m (0.05 m)^2 1_3``), which perturbs the dynamics by
        about ``massless_body_mass / (subtree mass)``. The bodies changed are listed in
        ``model.urdf_regularized``. A moving subtree with no mass at all raises (unless
        ``repair="inertia"``).
    repair : {None, "inertia"}
        None (default): strict, every unphysical mass or inertia raises ValueError.
        ``"inertia"``: fix what can be fixed, in the manner of MuJoCo's compiler options
        ``boundmass``, ``boundinertia`` and ``balanceinertia``, and warn once (a
        ``UserWarning`` naming every body changed, with its old and new values). On each
        moving body after fixed links are merged: a mass below ``boundmass`` is raised to
        it (a massless body gets its new mass at its origin; moving subtrees with no mass
        at all load this way); principal moments of inertia (about the COM) below
        ``boundinertia`` are raised to it (rods; also negative moments, which no body has
        but Pinocchio accepts: romeo_laas_small), and a point mass (all three below it:
        icub's head, 1.34 kg) gets the inertia of a uniform ball of water of its mass
        (:data:`POINT_MASS_DENSITY`; ``2/5 m r^2``), so that a joint turning it about its
        centre does not spin freely at the smallest impulse; if the
        principal moments violate the triangle inequality ``I1 + I2 >= I3``, the two
        smaller ones are raised by the same amount until ``I1 + I2 = I3 (1 + 1e-6)`` (MuJoCo's
        ``balanceinertia`` instead sets all three to their mean, a larger change). The
        principal axes and the COM are kept. ``model.urdf_regularized`` lists the bodies
        changed and ``model.urdf_repairs`` maps each to what was changed. Negative or
        non-finite masses and non-finite inertias still raise.
    boundmass, boundinertia : float
        The bounds of ``repair="inertia"``: 1e-6 kg and 1e-9 kg m^2 by default (a 1 mg
        body, a 6 cm ball of 1 g), small against any link of the robots of
        example-robot-data; the DCA inverts body inertias, so much smaller bounds cost it
        accuracy.
    collision : bool
        False (default): ``<collision>`` is not read and ``model.collision`` is None. True:
        ``model.collision`` is a :class:`~articulated.geometry.CollisionModel` with one
        shape per ``<collision>`` element of every link (see Notes); mesh files are read
        with trimesh, and simulating them needs coal (``pip install articulated[mesh]``).
    mu, e : float
        Friction coefficient (>= 0) and restitution (in [0, 1]) of every collision shape
        (default 0.5 and 0: URDF has no contact material); change one shape later by
        building the CollisionModel yourself.
    max_bytes : int or None
        Refuse a file larger than this [bytes] (default 64 MiB,
        :data:`articulated.io._common.MAX_FILE_BYTES`); None lifts the cap.

    Returns
    -------
    Model
        With the extra attribute ``frames``: dict ``link name -> (body, R, p)`` for *every*
        URDF link: ``body`` (int) is the index of the body the link is part of (``-1``: the
        world, for the fixed-base root and links welded to it), ``R`` (3, 3) float64 the
        link axes and ``p`` (3,) float64 [m] the link origin, both in that body's
        coordinates (identity and zero for a link that is its own body). Also
        ``urdf_path`` (str), ``urdf_regularized`` (list of body names given
        ``massless_body_mass`` or changed by ``repair``; empty by default),
        ``urdf_repairs`` (dict body name -> what ``repair`` changed) and ``collision``
        (CollisionModel or None, see ``collision``). ``description`` is ``{"urdf":
        absolute path, "sha256": hex of the file, "kwargs": {...}}``: enough to load it
        again and to check that the file has not changed.

    Notes
    -----
    Parsing: the file (at most ``max_bytes``) is parsed by lxml with entity expansion, DTD
    loading and network access off and libxml2's size and depth limits on
    (``resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False``); every
    link and joint must have a name, every joint a type and ``<parent link>``/``<child
    link>``, and every numeric attribute must be finite numbers of the right count, before
    yourdfpy builds its objects from the checked tree.

    Joint mapping: ``revolute`` and ``continuous`` -> ``"revolute"`` about ``<axis>``
    (default (1, 0, 0), normalized); ``prismatic`` -> ``"prismatic"``; ``floating`` ->
    ``"free"``; ``fixed`` -> merged (see below). ``<dynamics>``, ``<safety_controller>``,
    ``<calibration>`` and the effort and velocity of ``<limit>`` are ignored. ``<mimic>``
    joints are loaded as independent joints (Pinocchio's default).

    Joint limits: ``<limit lower upper>`` [rad or m] of a ``revolute`` or ``prismatic``
    joint becomes ``model.jnt_range[i] = (lower, upper)`` (``jnt_limited[i]`` True),
    equal to Pinocchio's ``lowerPositionLimit``/``upperPositionLimit``: a missing
    ``lower`` or ``upper`` attribute is 0 (the URDF default), and ``lower == upper``
    (also ``0 == 0``) means no limit, with a warning (MuJoCo's rule; Pinocchio keeps
    ``(0, 0)``, which would lock the joint once limits are enforced: centauro's wheel
    joints are such a case). ``continuous`` joints are unlimited (``(-inf, inf)``)
    whatever their ``<limit>`` says. A revolute or prismatic joint without ``<limit>``,
    which urdfdom (and so Pinocchio) rejects, is loaded unlimited, as MuJoCo does.

    Frames: a joint's ``<origin>`` is the joint frame in the parent link frame; the child
    link frame is the joint frame moved by the joint (rotated about / translated along the
    axis, for ``floating`` the free-joint motion). ``<inertial><origin>`` gives the centre of
    mass and the axes of the inertia tensor in the link frame; ``<inertia>`` is about the
    COM, so the COM inertia in link axes is ``R I R^T``.

    Fixed joints: a link attached by a ``fixed`` joint is merged into the body of its
    parent (Pinocchio does the same): masses add, the COM is the mass-weighted mean and the
    inertias are combined with the parallel-axis theorem after transforming by the fixed
    placement. Massless helper links (sensor, tool and camera frames) therefore cost
    nothing and remain available through ``model.frames``. Links welded to the world in the
    fixed-base case are dropped from the dynamics.

    Collision geometry (``collision=True``): each ``<collision>`` of a link becomes a shape
    on the body the link is part of (``model.frames[link] = (body, R, p)``): its
    ``<origin>`` ``(R_o, p_o)`` is in the link frame, so the shape sits at ``(R R_o, p +
    R p_o)`` in body coordinates; the shapes of links welded to the world (body ``-1``,
    fixed base) become static obstacles at that placement in world coordinates.
    ``<box size>`` -> :class:`~articulated.geometry.Box` (full edges), ``<cylinder radius
    length>`` -> :class:`~articulated.geometry.Cylinder` (axis z, full length), ``<sphere
    radius>`` -> :class:`~articulated.geometry.Sphere`, ``<mesh filename scale>`` ->
    :class:`~articulated.geometry.Mesh` (its convex hull collides), the file resolved as
    yourdfpy resolves it (relative to the URDF's folder, ``package://`` stripped and
    searched up the folders above it; the URDFs of example-robot-data load this way), one
    Mesh per (file, scale). Shape names: the element's ``name``, else
    ``"<link>/collision_<k>"`` (k counts the link's elements from 0). Shapes of one body,
    and of a body and its parent, are never tested against each other (CollisionModel's
    rules); the convex hulls of neighbouring links further apart may overlap at rest
    (solo12's base and upper legs do): filter such pairs with ``group``/``mask`` before
    simulating.

    q ordering: bodies are numbered depth first from the root, children in the order
    their joints appear in the file; ``q`` stacks the coordinates of each body's joint in
    that order (the floating root first: position [m] of the root link origin in world
    coordinates, then its orientation quaternion (w, x, y, z), Hamilton, scalar first);
    ``qd`` of the free joint is ``[omega; v]`` in root-link coordinates. See
    :mod:`articulated.model`. Units are SI, as URDF's (m, rad, kg, kg m^2).

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        Malformed XML or URDF (message starts with the path); a file over ``max_bytes``; a
        numeric attribute of an ``<origin>``, ``<axis>``, ``<limit>``, ``<dynamics>``,
        ``<inertial>`` (``<mass>``, ``<inertia>``), geometry, ``<safety_controller>``,
        ``<calibration>`` or ``<mimic>`` element that is not a number, has the wrong count
        of values, or is NaN or infinite (names the link or joint, the element and the
        attribute); ``repair`` not None or ``"inertia"``; a joint of an unsupported type
        such as ``planar`` (names the joint); no unique root link, or a link with two parent
        joints (names it); a joint that refers to an unknown link; a zero revolute or
        prismatic axis; a negative or non-finite mass; a moving body (a link carried by a
        non-fixed joint, with the links merged into it) whose subtree has zero mass (names
        the joint and the link; its joint-space inertia would be singular, and Pinocchio's
        ABA returns NaN there); a moving body of zero mass that carries mass further down,
        unless ``massless_body_mass`` is given (names the joint and the link); a ``<limit>``
        with a non-finite bound or ``lower > upper`` (names the joint); with
        ``collision=True``, a ``<collision>`` with a non-finite ``<origin>``, a size that is
        not finite and > 0, a mesh file that is missing or unreadable or whose vertices span
        no volume (names the link and the element), ``mu < 0`` or ``e`` outside [0, 1]; an
        inertia that is not positive definite (e.g. a point mass with zero inertia) or
        violates the triangle inequality after merging (names the body; :class:`Model`
        requires physical inertias, Pinocchio does not check them).
    """
    path = os.fspath(path)
    for label, v in (("massless_body_mass", massless_body_mass), ("boundmass", boundmass),
                     ("boundinertia", boundinertia)):
        if v is not None and not (np.isfinite(float(v)) and float(v) > 0.0):
            raise ValueError(f"{label} must be finite and > 0, got {v}")
    if massless_body_mass is not None:
        massless_body_mass = float(massless_body_mass)
    if repair not in (None, "inertia"):
        raise ValueError(f"repair must be None or 'inertia', got {repair!r}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"URDF file not found: {path}")
    if collision:
        from ..geometry import _material
        mu, e = _material(mu, e, "load_urdf")
    raw, robot = _parse(path, max_bytes)

    links = {}
    for ln in robot.links:
        if ln.name in links:
            raise ValueError(f"{path}: link {ln.name!r} is defined twice")
        links[ln.name] = ln
    if not links:
        raise ValueError(f"{path}: the URDF has no <link>")
    children = {n: [] for n in links}
    parent_joint = {}
    names = set()
    for j in robot.joints:
        if j.name in names:
            raise ValueError(f"{path}: joint {j.name!r} is defined twice")
        names.add(j.name)
        if j.type != "fixed" and j.type not in _MOVING:
            raise ValueError(f"{path}: joint {j.name!r} has unsupported type {j.type!r} "
                             f"(supported: fixed, {', '.join(sorted(_MOVING))})")
        for end in ("parent", "child"):
            if getattr(j, end) not in links:
                raise ValueError(f"{path}: joint {j.name!r}: unknown {end} link "
                                 f"{getattr(j, end)!r}")
        if j.child in parent_joint:
            raise ValueError(f"{path}: link {j.child!r} is the child of two joints "
                             f"({parent_joint[j.child].name!r} and {j.name!r})")
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [n for n in links if n not in parent_joint]
    if len(roots) != 1:
        raise ValueError(f"{path}: expected exactly one root link, found {roots[:10]} "
                         f"(the joints form a cycle or several trees)")
    root = roots[0]
    if floating_base and ROOT_JOINT_NAME in names:
        raise ValueError(f"{path}: a joint is already named {ROOT_JOINT_NAME!r}")

    # Depth-first walk. Each moving body collects the (m, c, I) of its links in its own
    # coordinates; `frames` records where every link ended up.
    bodies = []      # dicts in creation (= depth-first) order
    owner_parts = {}  # body index -> list of (m, c, I)
    frames = {}
    if floating_base:
        bodies.append(dict(name=root, parent=None, joint="free", joint_name=ROOT_JOINT_NAME,
                           axis=(0.0, 0.0, 1.0), R=np.eye(3), p=np.zeros(3), link=root,
                           urdf_joint=None, limits=None))
        owner_parts[0] = []
        start = (root, 0, np.eye(3), np.zeros(3), None)
    else:
        start = (root, -1, np.eye(3), np.zeros(3), None)
    # stack items: (link, owner body of the parent link (-1: world), joint frame (R, p)
    # in owner coordinates, URDF joint or None). Bodies are created when popped, so they
    # come out in depth-first pre-order with children in file order.
    stack = [start]
    while stack:
        ln, owner, R, p, j = stack.pop()
        if j is not None and j.type != "fixed":
            jt = _MOVING[j.type]
            axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, float)
            if jt != "free" and not (axis.shape == (3,) and np.all(np.isfinite(axis))
                                     and np.linalg.norm(axis) > 1e-12):
                raise ValueError(f"{path}: joint {j.name!r}: axis {axis} is zero or not finite")
            # re-orthonormalize the rotation composed from rpy angles (drift ~1e-16)
            u, _, vt = np.linalg.svd(R)
            k = len(bodies)
            bodies.append(dict(name=ln, parent=None if owner < 0 else bodies[owner]["name"],
                               joint=jt, joint_name=j.name,
                               axis=axis if jt != "free" else (0.0, 0.0, 1.0),
                               R=u @ vt, p=p, link=ln, urdf_joint=j.name,
                               limits=_joint_limits(j, path)))
            owner_parts[k] = []
            owner, R, p = k, np.eye(3), np.zeros(3)
        frames[ln] = (owner, R, p)
        if owner >= 0:
            m, c, I = _link_inertia(links[ln], path)
            if m > 0.0 or np.any(I):
                owner_parts[owner].append((m, p + R @ c, R @ I @ R.T))
        for jc in reversed(children[ln]):
            Rj, pj = _origin(jc.origin)
            stack.append((jc.child, owner, R @ Rj, p + R @ pj, jc))
    if len(frames) != len(links):
        lost = sorted(set(links) - set(frames))
        raise ValueError(f"{path}: links {lost[:10]} are not connected to the root link "
                         f"{root!r} (their joints form a cycle)")
    if not bodies:
        raise ValueError(f"{path}: the URDF has no moving joint (every link is welded to "
                         f"the root); use floating_base=True for a single free body")

    inert = [combine_inertias(owner_parts[k]) for k in range(len(bodies))]
    # subtree masses (bodies are in depth-first order: parent index < child index)
    index = {b["name"]: k for k, b in enumerate(bodies)}
    sub = np.array([mi for mi, _, _ in inert], dtype=np.float64)
    for k in range(len(bodies) - 1, -1, -1):
        pk = bodies[k]["parent"]
        if pk is not None:
            sub[index[pk]] += sub[k]
    repairs = {}
    for k, b in enumerate(bodies):
        if repair == "inertia":
            inert[k], change = _repair_inertia(*inert[k], float(boundmass), float(boundinertia))
            if change:
                repairs[b["name"]] = change
            continue
        if inert[k][0] > 0.0:
            continue
        what = (f"joint {b['joint_name']!r} moves link {b['link']!r}" if b["urdf_joint"]
                else f"the floating root link {b['link']!r}")
        merged = [n for n, f in frames.items() if f[0] == k and n != b["link"]]
        also = f" (with the links fixed to it: {merged[:5]})" if merged else ""
        if sub[k] <= 0.0:
            raise ValueError(
                f"{path}: {what}{also}, but that link and everything it carries have zero "
                f"mass; remove the joint, make it fixed, give the link an <inertial>, or "
                f"pass repair='inertia' to load_urdf")
        if massless_body_mass is not None:
            mr = massless_body_mass
            inert[k] = (mr, np.zeros(3), inert[k][2] + 0.4 * mr * 0.05 ** 2 * np.eye(3))
            repairs[b["name"]] = f"mass 0 -> {mr:.3g} kg (massless_body_mass)"
            continue
        raise ValueError(
            f"{path}: {what}{also}, which has zero mass although links further down carry "
            f"{sub[k]:.6g} kg; articulated needs mass > 0 on every moving body: give the "
            f"link an <inertial>, or pass massless_body_mass=1e-6 (kg) or repair='inertia' "
            f"to load_urdf to give such links a tiny mass")
    if repair == "inertia" and repairs:
        warnings.warn(f"{path}: repair='inertia' changed {len(repairs)} bodies: "
                      + "; ".join(f"{n!r}: {c}" for n, c in repairs.items()), stacklevel=2)

    try:
        builder = ModelBuilder(gravity=gravity)
        for k, b in enumerate(bodies):
            m, c, I = inert[k]
            builder.add_body(b["name"], parent=b["parent"], joint=b["joint"], axis=b["axis"],
                             origin_xyz=b["p"], origin_R=b["R"], mass=m, com=c, inertia=I,
                             joint_name=b["joint_name"], limits=b["limits"])
        model = builder.build()
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    # builder.build() numbers bodies depth-first in insertion order, which is ours
    order = {n: i for i, n in enumerate(model.body_name)}
    model.frames = {ln: ((-1 if o < 0 else order[bodies[o]["name"]]), R.copy(), p.copy())
                    for ln, (o, R, p) in frames.items()}
    model.urdf_path = path
    model.urdf_regularized = list(repairs)
    model.urdf_repairs = repairs
    model.description = describe("urdf", path, raw, {
        "floating_base": bool(floating_base),
        "gravity": [float(x) for x in np.asarray(gravity, dtype=np.float64).ravel()],
        "massless_body_mass": massless_body_mass, "repair": repair,
        "boundmass": float(boundmass), "boundinertia": float(boundinertia),
        "collision": bool(collision), "mu": float(mu), "e": float(e), "max_bytes": max_bytes})
    model.collision = (_collision_model(model, robot, path, os.path.dirname(os.path.abspath(path)),
                                        mu, e) if collision else None)
    return model

