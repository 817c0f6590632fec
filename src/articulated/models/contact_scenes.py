"""Contact scenes of Gayle, Lin & Manocha 2006: capsule chains and obstacles.

Contact scenes (Gayle, Lin & Manocha 2006, "GLM", sec. VI): free-base capsule
chains with their collision shapes (``model.collision``, a
:class:`~articulated.geometry.CollisionModel`) and static obstacles.

* :func:`capsule_chain`: a chain of capsules lying flat above a plane (the MuJoCo
  comparison and GLM Fig. 7 of ``articulated bench contact``, the pile of the demo);
* :func:`thread`: a thin capsule chain in front of ``walls`` box walls with square holes
  (GLM Fig. 5), to be pulled through them (``articulated.bench.contact.thread_pull``);
* :func:`snake_bridge`: a snake wound in a helix around a box beam with rounded edges
  (GLM Fig. 6), to be driven by the helical rolling gait :func:`helical_gait`
  (``articulated.bench.contact.snake_gait``: PD tracking);
* :func:`hanging_rope`: a rope of small capsules on spherical joints, hung from a point,
  that swings over a cylinder onto the floor.

Every chain is built the same way: body 0 has a free joint, body ``i`` hangs from body
``i - 1`` by a hinge at ``(L, 0, 0)`` whose axis alternates between z (odd ``i``) and y
(even ``i``), and carries a capsule along its x axis from ``r`` to ``L - r`` (neighbours
touch end to end; parent-child pairs are never tested). GLM gives no sizes: the numbers
here are ours.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..builder import ModelBuilder
from ..geometry import Box, Capsule, CollisionModel, Cylinder, Plane
from ..model import Model
from ._common import GRAVITY, _count, _positive
from .description import scene

_X_TO_Z = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])
"""Rotation taking a shape's local z axis (capsule, cylinder) onto x."""

THREAD_SPEED = 0.5
"""Speed of the thread and of its spring's anchor [m/s] (:func:`thread`, :func:`thread_pull`)."""


def _chain(n, L, r, m, mu, group, mask, gravity):
    """The free-base capsule chain of the module docstring: ``n`` links of length ``L``
    [m], capsule radius ``r`` [m], mass ``m`` [kg] (a solid rod's inertia), friction
    ``mu``, filter bits ``group``/``mask``. Returns ``(model, geom)``."""
    b = ModelBuilder(gravity=gravity)
    I = m * np.diag([(3 * r ** 2 + L ** 2) / 12] * 2 + [r ** 2 / 2])
    I = _X_TO_Z @ I @ _X_TO_Z.T
    b.add_body("c0", None, "free", mass=m, com=(L / 2, 0, 0), inertia=I)
    for i in range(1, n):
        b.add_body(f"c{i}", f"c{i - 1}", "revolute", axis=(0, 0, 1) if i % 2 else (0, 1, 0),
                   origin_xyz=(L, 0, 0), mass=m, com=(L / 2, 0, 0), inertia=I)
    model = b.build()
    geom = CollisionModel(model)
    for i in range(n):
        geom.add(i, Capsule(radius=r, length=L - 2 * r), pos=(L / 2, 0, 0), R=_X_TO_Z, mu=mu,
                 e=0.0, group=group, mask=mask)
    model.collision = geom
    return model, geom


def chain_points(model: Model, q) -> np.ndarray:
    """Return the world positions of the joint origins of a chain of this module at ``q``.

    Positions at ``q`` (nq,): ``(n + 1, 3)`` [m], the last row the far end of the last link
    (numpy, for placing the scenes; the simulators use the compiled kinematics).
    """
    L = float(model.jnt_Xtree_r[1, 0]) if model.nb > 1 else 0.1
    R = Rotation.from_quat([q[4], q[5], q[6], q[3]]).as_matrix()
    p = np.array(q[:3], dtype=np.float64)
    out = [p.copy()]
    for i in range(1, model.nb + 1):
        p = p + R[:, 0] * L
        out.append(p.copy())
        if i < model.nb:
            c, s = np.cos(q[6 + i]), np.sin(q[6 + i])
            J = (np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]) if i % 2 else
                 np.array([[c, 0, s], [0, 1.0, 0], [-s, 0, c]]))
            R = R @ J
    return np.array(out)


@scene
def capsule_chain(n: int = 300, *, link_length: float = 0.1, radius: float = 0.01,
                  mass: float = 0.1, mu: float = 0.5, height: float = 0.3, upright: bool = False,
                  bend: float = 0.0, seed: int = 0, gravity=GRAVITY,
                  return_configuration: bool = False):
    """Build a free-base chain of ``n`` capsules above a plane (z = 0), self-collision on.

    Lying flat along +x ``height`` above it (the MuJoCo comparison of ``articulated bench
    contact``: 0.1 m links, radius 1 cm, 0.1 kg, mu 0.5, dropped from 0.3 m); or
    (``upright``) standing on its tip ``height`` above it with its joints bent at random by
    up to ``bend`` [rad] (the pile scene: 300 links of 2 cm, radius 2 mm, 20 g, +-0.05 rad,
    dropped from 5 cm).

    Parameters
    ----------
    n : int >= 1
        Links (nv = n + 5).
    link_length, radius, mass : float > 0
        Per link [m, m, kg].
    mu : float >= 0
        Friction of every shape.
    height : float
        Base height above the plane [m] (upright: of the chain's lowest point, the end of
        its last capsule).
    upright : bool
        Stand the chain on its last capsule, the free base (body 0) on top (body 0's x along
        world -z): the light end that strikes first is a leaf, not the root (rooted there,
        the first impact spins the root link against its neighbour's joint and one step's
        position update turns 2.6 J of kinetic energy into 2,500 J).
    bend : float >= 0
        Joint angles drawn uniformly in ``[-bend, bend]`` [rad].
    seed : int
        Of the angles' generator (``numpy.random.default_rng``).
    gravity : (3,) float [m/s^2]
    return_configuration : bool
        Also return ``q0`` (nq,).

    Returns
    -------
    Model (``model.collision``: one capsule per link and the plane), or ``(model, q0)``.

    Raises
    ------
    ValueError
        For n < 1 or a non-positive size.
    """
    n = _count(n, "n", 1)
    model, geom = _chain(n, _positive(link_length, "link_length"), _positive(radius, "radius"),
                         _positive(mass, "mass"), mu, 1, 0xFFFF, gravity)
    geom.add_static(Plane(normal=(0, 0, 1)), mu=mu, e=0.0)
    if not return_configuration:
        return model
    q0 = model.neutral()
    q0[7:] = np.random.default_rng(seed).uniform(-bend, bend, n - 1)
    if not upright:
        q0[2] = height
        return model, q0
    # upright: the free base (body 0) at the top, body x pointing down (+90 deg about y),
    # the chain hanging from it, its last capsule's end the lowest point: a free chain is
    # rooted at the end that does not strike first
    q0[3:7] = (np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0)
    q0[2] = height - float(np.min(chain_points(model, q0)[:, 2]))
    return model, q0


@scene
def thread(n: int = 295, *, walls: int = 5, link_length: float = 0.02, radius: float = 0.004,
           mass: float = 0.01, hole: float = 0.03, offset: float = 0.012, gap: float = 0.25,
           wall_thickness: float = 0.03, mu: float = 0.3, speed: float = THREAD_SPEED,
           return_configuration: bool = False):
    """Build scene (b) of GLM Fig. 5: a thread in front of box walls, no gravity.

    A free-base capsule chain of ``n`` links, nv = n + 5 (300 for the default), in front of
    ``walls`` box walls.

    Wall ``k`` (k = 0 ..) stands across the x axis at ``x = gap (k + 1)``, 0.24 m square,
    ``wall_thickness`` thick, built from four static boxes around a square hole of side
    ``hole`` (larger than the thread's ``2 radius``); the holes' centres step around the
    x axis, ``(y, z) = (0, offset), (offset, 0), (0, -offset), (-offset, 0), ...``, so that
    a thread along the axis rubs against one edge of every hole (by ``radius + offset -
    hole / 2`` [m]: 1 mm for the defaults). The thread lies along -x from its head (body 0,
    at ``x = gap - 0.05``), moving at ``speed`` along +x; :func:`thread_pull` pulls the head
    on along the axis. Thread-wall contacts only (no self-collision).

    Parameters
    ----------
    n : int >= 2
        Links.
    walls : int >= 1
    link_length, radius, mass : float > 0
        Per link [m, m, kg].
    hole : float > 2 radius
        Side of the square holes [m].
    offset : float
        Distance of the holes' centres from the x axis [m].
    gap : float > wall_thickness
        Distance between walls [m].
    wall_thickness : float > 0 [m]
    mu : float >= 0
        Friction of thread and walls.
    speed : float
        Initial velocity of the thread along +x [m/s].
    return_configuration : bool
        Also return ``q0`` (nq,) and ``qd0`` (nv,).

    Returns
    -------
    Model (``model.collision``: the capsules and ``4 walls`` boxes), or
    ``(model, q0, qd0)``.

    Raises
    ------
    ValueError
        For a bad count or size, a hole not larger than the thread, or walls that
        overlap.
    """
    n = _count(n, "n", 2)
    walls = _count(walls, "walls", 1)
    r, a = _positive(radius, "radius"), 0.5 * _positive(hole, "hole")
    tw, gap = _positive(wall_thickness, "wall_thickness"), _positive(gap, "gap")
    if not a > r:
        raise ValueError(f"thread: hole {hole} m is not larger than the thread ({2 * r} m)")
    if not gap > tw:
        raise ValueError(f"thread: gap {gap} m between walls <= wall_thickness {tw} m")
    W = 0.12
    if not abs(offset) + a < W:
        raise ValueError(f"thread: the hole (offset {offset} m, side {hole} m) leaves the "
                         f"wall ({2 * W} m)")
    model, geom = _chain(n, _positive(link_length, "link_length"), r, _positive(mass, "mass"),
                         mu, 1, 2, (0.0, 0.0, 0.0))
    steps = [(0.0, offset), (offset, 0.0), (0.0, -offset), (-offset, 0.0)]
    for k in range(walls):
        x = gap * (k + 1)
        yc, zc = steps[k % 4]
        geom.add_static(Box(size=(tw, 2 * W, W - (zc + a)), pos=(x, 0, 0.5 * (W + zc + a))),
                        Box(size=(tw, 2 * W, W + (zc - a)), pos=(x, 0, 0.5 * (-W + zc - a))),
                        Box(size=(tw, W + (yc - a), 2 * a), pos=(x, 0.5 * (-W + yc - a), zc)),
                        Box(size=(tw, W - (yc + a), 2 * a), pos=(x, 0.5 * (W + yc + a), zc)),
                        mu=mu, e=0.0, group=2, mask=1,
                        names=[f"wall{k}_{side}" for side in ("top", "bottom", "left", "right")])
    if not return_configuration:
        return model
    q0 = model.neutral()
    q0[0] = gap - 0.05
    q0[3:7] = (0.0, 0.0, 0.0, 1.0)   # half a turn about z: the thread trails along -x
    qd0 = np.zeros(model.nv)
    qd0[3] = -float(speed)           # body x is world -x
    return model, q0, qd0


@scene
def hanging_rope(n: int = 1000, *, link_length: float = 0.01, radius: float = 0.004,
                 mass: float = 0.001, mu: float = 0.5, height: float = 2.0,
                 cylinder_radius: float = 0.2, cylinder_x: float = 0.6,
                 return_configuration: bool = False):
    """Build a rope hung from a point, to swing over a cylinder onto the floor.

    A chain of ``n`` links on spherical joints (nv = 3 n), self-collision on (the
    defaults of :class:`~articulated.geometry.CollisionModel`): body 0 hangs from the world
    point ``(0, 0, height)``, body ``i`` from body ``i - 1`` at ``(L, 0, 0)``; each carries a
    capsule of ``radius`` along its x axis from 0 to ``L`` (neighbours overlap at the
    joint, where parent-child pairs are not tested; links ``i`` and ``i + 2`` lie ``L - 2
    radius`` apart: 2 mm for the defaults). The rope starts straight along +x at rest; a
    static cylinder (axis along y, 1 m long) lies on the floor (plane z = 0) at ``x =
    cylinder_x``; every shape has friction ``mu`` and no restitution.

    Parameters
    ----------
    n : int >= 2
        Links (10 m of rope for the defaults).
    link_length, radius, mass : float > 0
        Per link [m, m, kg]; ``radius < link_length / 2``.
    mu : float >= 0
    height : float > 0
        Height of the hanging point [m].
    cylinder_radius : float > 0 [m]
    cylinder_x : float
        Position of the cylinder's axis along x [m].
    return_configuration : bool
        Also return ``q0`` (nq,).

    Returns
    -------
    Model (``model.collision``: the capsules, the cylinder and the floor), or
    ``(model, q0)``.

    Raises
    ------
    ValueError
        For n < 2, a non-positive size, or a radius that does not leave a gap between
        links ``i`` and ``i + 2``, or a cylinder above the hanging point.
    """
    n = _count(n, "n", 2)
    L, r = _positive(link_length, "link_length"), _positive(radius, "radius")
    m, H = _positive(mass, "mass"), _positive(height, "height")
    rc = _positive(cylinder_radius, "cylinder_radius")
    if not 2 * r < L:
        raise ValueError(f"hanging_rope: radius {r} m leaves no gap between links i and "
                         f"i + 2 (needs radius < link_length / 2 = {L / 2} m)")
    if not 2 * rc < H:
        raise ValueError(f"hanging_rope: the cylinder ({2 * rc} m high) reaches the hanging "
                         f"point at {H} m")
    b = ModelBuilder(gravity=GRAVITY)
    I = m * np.diag([(3 * r ** 2 + L ** 2) / 12] * 2 + [r ** 2 / 2])
    I = _X_TO_Z @ I @ _X_TO_Z.T
    for i in range(n):
        b.add_body(f"link{i}", f"link{i - 1}" if i else None, "spherical",
                   origin_xyz=(L, 0, 0) if i else (0, 0, H), mass=m, com=(L / 2, 0, 0),
                   inertia=I)
    model = b.build()
    geom = CollisionModel(model)
    for i in range(n):
        geom.add(i, Capsule(radius=r, length=L), pos=(L / 2, 0, 0), R=_X_TO_Z, mu=mu, e=0.0)
    geom.add_static(Cylinder(radius=rc, length=1.0, pos=(float(cylinder_x), 0, rc),
                             R=np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])),
                    Plane(normal=(0, 0, 1)), mu=mu, e=0.0, names=["cylinder", "floor"])
    model.collision = geom
    if not return_configuration:
        return model
    return model, model.neutral()



def helical_gait(n: int, amplitude: float, wavenumber: float, phase: float) -> np.ndarray:
    """Return the joint angles of the helical rolling gait of a chain of this module.

    The chain's hinges alternate between z and y: ``theta_i = A sin(d i + phase + (pi/2 if i
    odd))``, i = 1 .. n-1 (Rollinson & Choset's rolling helix: the bending direction turns
    by ``d`` per link, so the chain is a helix; advancing ``phase`` rolls the body about its
    own centre line inside the same helix). ``amplitude`` A [rad] sets the helix radius,
    ``wavenumber`` d [rad/link] its pitch (:func:`helix_shape`). Returns (n - 1,) float64
    [rad].
    """
    i = np.arange(1, n)
    return amplitude * np.sin(wavenumber * i + phase + np.where(i % 2, 0.5 * np.pi, 0.0))


def helix_shape(link_length: float, amplitude: float, wavenumber: float, links: int = 121):
    """Return the radius, pitch and links per turn of the helix of :func:`helical_gait`.

    Radius [m], pitch [m] and links per turn of the helix that :func:`helical_gait` bends a
    chain of ``links`` links of ``link_length`` into (fitted to its joint origins: axis by
    principal components, the middle links' mean distance from it). Returns ``(radius,
    pitch, links_per_turn, axis (3,), centre (3,), points (links + 1, 3))`` in the frame of
    a base at the origin with identity orientation.
    """
    b = ModelBuilder()
    for i in range(links):
        b.add_body(f"c{i}", None if i == 0 else f"c{i - 1}", "free" if i == 0 else "revolute",
                   axis=(0, 0, 1) if i % 2 else (0, 1, 0),
                   origin_xyz=(0, 0, 0) if i == 0 else (link_length, 0, 0), mass=1.0,
                   inertia=np.eye(3))
    m = b.build()
    q = m.neutral()
    q[7:] = helical_gait(links, amplitude, wavenumber, 0.0)
    P = chain_points(m, q)
    c = P.mean(axis=0)
    _, _, vt = np.linalg.svd(P - c, full_matrices=False)
    ax = vt[0] if vt[0] @ (P[-1] - P[0]) > 0 else -vt[0]
    along = (P - c) @ ax
    perp = P - c - np.outer(along, ax)
    mid = slice(links // 6, links - links // 6)
    ang = np.unwrap(np.arctan2(perp @ np.cross(ax, vt[1]), perp @ vt[1]))
    turns = abs(ang[-1] - ang[0]) / (2 * np.pi)
    return (float(np.linalg.norm(perp[mid], axis=1).mean()), float(np.ptp(along) / turns),
            float(links / turns), ax, c, P)




def matched_wavenumber(link_length: float, amplitude0: float, amplitude: float,
                       wavenumber: float) -> float:
    """Return the wavenumber ``d0`` [rad/link] that keeps the helix pitch at a new amplitude.

    The wavenumber ``d0`` [rad/link] that gives the helix of ``amplitude0`` the pitch of the
    helix of ``(amplitude, wavenumber)`` (:func:`helix_shape`; secant steps), so that a gait
    going from one to the other tightens the coil without shortening it.
    """
    target = helix_shape(link_length, amplitude, wavenumber)[1]
    d = [wavenumber, 0.5 * wavenumber]
    f = [helix_shape(link_length, amplitude0, x)[1] - target for x in d]
    for _ in range(12):
        if abs(f[-1]) < 1e-5 * target or f[-1] == f[-2]:
            break
        d.append(d[-1] - f[-1] * (d[-1] - d[-2]) / (f[-1] - f[-2]))
        f.append(helix_shape(link_length, amplitude0, d[-1])[1] - target)
    return float(d[-1])


@scene
def snake_bridge(n: int = 501, *, link_length: float = 0.05, radius: float = 0.01,
                 mass: float = 0.05, beam: float = 0.03, corner: float = 0.5,
                 height: float = 0.5, mu: float = 0.7, amplitude: float = 2.0,
                 wavenumber: float = 0.12, amplitude0: float = 1.6, gravity=GRAVITY,
                 return_configuration: bool = False):
    """Build scene (c) of GLM Fig. 6: a snake wound in a helix around a bridge.

    A free-base capsule chain of ``n`` links (nv = n + 5, a free base and ``n - 1`` hinges)
    wound in a helix around a horizontal box beam (the bridge) with rounded edges.

    The beam runs along x at height ``height``: square section of side ``2 beam``, its
    four edges rounded with radius ``corner * beam`` (two static boxes and four static
    cylinders), long enough for the coil plus 0.3 m at each end. The snake starts on the
    loose helix of :func:`helical_gait` with ``amplitude0`` and the wavenumber ``d0`` of
    :func:`matched_wavenumber` (the pitch of the final helix), its axis on the beam's and
    clear of it; the gait (``articulated.bench.contact.snake_gait``) tightens it to
    ``amplitude``, ``wavenumber`` (:func:`helix_shape`: radius 4.5 cm, pitch 3.6 cm, 6.4
    links per turn for the defaults, inside the beam's rounded corners at 4.6 cm from the
    axis plus the snake's radius: the snake squeezes the beam) and rolls it. Snake-beam
    contacts only (no self-collision).

    Parameters
    ----------
    n : int >= 3
        Links.
    link_length, radius, mass : float > 0
        Per link [m, m, kg].
    beam : float > 0
        Half the side of the beam's section [m].
    corner : float in (0, 1]
        Rounding radius of the beam's edges / ``beam``.
    height : float
        Height of the beam's axis [m].
    mu : float >= 0
        Friction of snake and beam.
    amplitude, wavenumber : float
        The gait's helix [rad, rad/link].
    amplitude0 : float
        The start's looser helix [rad].
    gravity : (3,) float [m/s^2]
    return_configuration : bool
        Also return ``q0`` (nq,).

    Returns
    -------
    Model (``model.collision``: the capsules, 2 boxes and 4 cylinders), or ``(model, q0)``.

    Raises
    ------
    ValueError
        For a bad count or size, or a start that touches the beam (make
        ``amplitude0`` smaller: a wider helix).
    """
    n = _count(n, "n", 3)
    L, r = _positive(link_length, "link_length"), _positive(radius, "radius")
    b = _positive(beam, "beam")
    if not 0.0 < corner <= 1.0:
        raise ValueError(f"snake_bridge: corner must be in (0, 1], got {corner}")
    rc = corner * b
    model, geom = _chain(n, L, r, _positive(mass, "mass"), mu, 1, 2, gravity)
    d0 = matched_wavenumber(L, amplitude0, amplitude, wavenumber)
    q0 = model.neutral()
    q0[7:] = helical_gait(n, amplitude0, d0, 0.0)
    # the coil's axis from a long coil of the same gait (its first n links are this one)
    _, _, _, ax, c, P = helix_shape(L, amplitude0, d0, links=max(n, 241))
    P = P[:n + 1]
    c = c + ax * float(np.mean((P - c) @ ax))
    P = np.concatenate([P, 0.5 * (P[1:] + P[:-1])])   # joint origins and link middles
    e1 = np.cross(ax, (1.0, 0.0, 0.0) if abs(ax[0]) < 0.9 else (0.0, 1.0, 0.0))
    e1 /= np.linalg.norm(e1)
    Rt = np.array([ax, e1, np.cross(ax, e1)])   # rows: the coil frame in the base's
    Pw = (P - c) @ Rt.T
    out = np.maximum(np.abs(Pw[:, 1:]) - (b - rc), 0.0)     # distance to the rounded square
    clear = float(np.min(np.hypot(out[:, 0], out[:, 1]) - rc)) - r
    if clear <= 0.0:
        raise ValueError(f"snake_bridge: the start's helix (amplitude0 {amplitude0}) touches "
                         f"the beam (clearance {clear:.4f} m); use a smaller amplitude0")
    span = float(np.ptp(Pw[:, 0])) + 0.6
    shapes = [Box(size=(span, 2 * b, 2 * (b - rc)), pos=(0, 0, height)),
              Box(size=(span, 2 * (b - rc), 2 * b), pos=(0, 0, height))]
    shapes += [Cylinder(radius=rc, length=span, pos=(0, sy * (b - rc), height + sz * (b - rc)),
                        R=_X_TO_Z) for sy in (-1, 1) for sz in (-1, 1)]
    geom.add_static(*shapes, mu=mu, e=0.0, group=2, mask=1,
                    names=["beam_y", "beam_z"] + [f"beam_edge{k}" for k in range(4)])
    if not return_configuration:
        return model
    q0[:3] = Rt @ (-c) + (0.0, 0.0, height)
    x, y, z, w = Rotation.from_matrix(Rt).as_quat()
    q0[3:7] = (w, x, y, z)
    return model, q0

