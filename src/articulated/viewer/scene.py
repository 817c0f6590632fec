"""What the viewer draws, independent of where it is drawn.

What the viewer draws, independent of where it is drawn (viser, the HTML replay, a GIF):
one triangle mesh per body in body coordinates (:func:`body_meshes`), the static obstacles
(:func:`static_meshes`), the stick figure of joint origins (:func:`stick_segments`), the
recorded frames of a run (:func:`frames`), the bodies' world poses along them
(:func:`body_poses`, from :func:`articulated.forward_kinematics`) and a colour per body and
frame (:func:`body_colors`).

Bodies are drawn from their collision shapes when ``model.collision`` has any (see
:mod:`articulated.geometry`: spheres, capsules, boxes, cylinders and meshes, the meshes as
read by trimesh), otherwise from capsules between the body's joint origin and its
children's joint origins whose radius gives the body's mass at the density of water
(1000 kg/m^3), so a heavier link is drawn thicker.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.kinematics import forward_kinematics
from ..geometry import (SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_MESH, SHAPE_PLANE,
                        SHAPE_SPHERE)
from ..model import Model

DENSITY = 1000.0
"""Density [kg/m^3] that sizes the capsules of a body without collision shapes."""

BODY_RGB = (70, 130, 180)
"""Colour of every body when no per-body value is given (steel blue)."""

BOOL_RGB = ((170, 170, 170), (230, 100, 20))
"""Colours of a boolean per-body value: False (grey), True (orange)."""


# ----------------------------------------------------------------------- frames and poses

@dataclass
class Frames:
    """The configurations to show, one per frame.

    t : (k,) float64 - time of each frame [s]
    q : (k, nq) float64 - configurations
    """

    t: np.ndarray
    q: np.ndarray

    def __len__(self):
        return len(self.t)


def frames(model: Model, traj=None, q=None) -> Frames:
    """The frames of a trajectory or of configurations.

    Parameters
    ----------
    model : Model
    traj : object with ``t`` (k,) [s] and ``q`` (k, nq), optional
        Any trajectory of :mod:`articulated.simulation` (``Trajectory``,
        ``AdaptiveTrajectory``, ``QuasiStaticTrajectory``).
    q : (nq,) or (k, nq) float64, optional
        Configuration(s) shown one per frame, 1 s apart, when no ``traj`` is given; default:
        ``model.neutral()``.

    Raises
    ------
    ValueError
        If both are given, for a wrong shape, non-finite entries or ``traj.t``
        not of length k.
    """
    if traj is not None and q is not None:
        raise ValueError("give either traj or q, not both")
    if traj is not None:
        Q = np.asarray(traj.q, dtype=np.float64)
        t = np.asarray(traj.t, dtype=np.float64)
    else:
        Q = model.neutral() if q is None else np.asarray(q, dtype=np.float64)
        Q = Q.reshape(1, -1) if Q.ndim == 1 else Q
        t = np.arange(len(Q), dtype=np.float64)
    if Q.ndim != 2 or Q.shape[1] != model.nq:
        raise ValueError(f"configurations must have shape (k, nq={model.nq}), got {Q.shape}")
    if len(Q) == 0:
        raise ValueError("the trajectory has no frames")
    if t.shape != (len(Q),):
        raise ValueError(f"traj.t must have shape ({len(Q)},) like traj.q, got {t.shape}")
    if not (np.isfinite(Q).all() and np.isfinite(t).all()):
        bad = int(np.flatnonzero(~np.isfinite(Q).all(axis=1) | ~np.isfinite(t))[0])
        raise ValueError(f"frame {bad} is not finite")
    return Frames(t=t, q=Q)


def body_poses(model: Model, Q) -> tuple[np.ndarray, np.ndarray]:
    """World poses of every body at every frame, by :func:`articulated.forward_kinematics`.

    Parameters
    ----------
    Q : (k, nq) float64
        Configurations.

    Returns
    -------
    p : (k, nb, 3) float64
        Body origins in world coordinates [m].
    R : (k, nb, 3, 3) float64
        Body axes (columns) in world coordinates.
    """
    d = model.data()
    k = len(Q)
    p = np.empty((k, model.nb, 3))
    R = np.empty((k, model.nb, 3, 3))
    for f in range(k):
        R[f], p[f] = forward_kinematics(model, Q[f], data=d)
    return p, R


def quaternions(R) -> np.ndarray:
    """``(..., 4)`` unit quaternions ``(w, x, y, z)`` (scalar first) of rotation matrices
    ``R (..., 3, 3)`` (scipy's ``Rotation.from_matrix``)."""
    from scipy.spatial.transform import Rotation

    R = np.asarray(R, dtype=np.float64)
    return Rotation.from_matrix(R.reshape(-1, 3, 3)).as_quat(scalar_first=True).reshape(
        R.shape[:-2] + (4,))


# ----------------------------------------------------------------------- colours

@dataclass
class Colors:
    """Per-body colours of every frame and what they mean (for a legend).

    rgb : (k, nb, 3) uint8
    kind : "uniform" | "bool" | "scalar"
    label : str - what the value is (legend title)
    vmin, vmax : float - range of a scalar value mapped by ``cmap``
    cmap : str - matplotlib colormap of a scalar value
    clipped : bool - some values exceed ``vmax`` (drawn in the colour of ``vmax``)
    """

    rgb: np.ndarray
    kind: str = "uniform"
    label: str = ""
    vmin: float = 0.0
    vmax: float = 1.0
    cmap: str = "viridis"
    clipped: bool = False


def body_colors(model: Model, k: int, color=None, *, label: str = "", cmap: str = "viridis",
                vmin=None, vmax=None) -> Colors:
    """Colour of every body at every frame from a per-body value.

    Parameters
    ----------
    k : int
        Number of frames.
    color : None, (nb,) or (k, nb) array, optional
        The value of each body (at each frame): boolean (e.g. the active joints of an
        adaptive run, bodies in contact): True orange, False grey (:data:`BOOL_RGB`);
        numbers: mapped by ``cmap`` over ``[vmin, vmax]`` (default: the values' range).
        None: every body :data:`BODY_RGB`.
    label : str
        What the value is (the legend's title).

    Raises
    ------
    ValueError
        For a wrong shape or non-finite numbers.
    """
    nb = model.nb
    if color is None:
        return Colors(rgb=np.broadcast_to(np.array(BODY_RGB, np.uint8), (k, nb, 3)).copy())
    c = np.asarray(color)
    if c.shape == (nb,):
        c = np.broadcast_to(c, (k, nb))
    if c.shape != (k, nb):
        raise ValueError(f"color must have shape (nb={nb},) or (frames={k}, nb={nb}), "
                         f"got {c.shape}")
    if c.dtype == np.bool_:
        table = np.array(BOOL_RGB, dtype=np.uint8)
        return Colors(rgb=table[c.astype(np.intp)], kind="bool", label=label)
    c = c.astype(np.float64)
    if not np.isfinite(c).all():
        raise ValueError("color: values must be finite")
    import matplotlib

    lo = float(c.min()) if vmin is None else float(vmin)
    hi = float(c.max()) if vmax is None else float(vmax)
    x = (c - lo) / (hi - lo) if hi > lo else np.zeros_like(c)
    rgba = matplotlib.colormaps[cmap](np.clip(x, 0.0, 1.0))
    return Colors(rgb=(255 * rgba[..., :3] + 0.5).astype(np.uint8), kind="scalar",
                  label=label, vmin=lo, vmax=hi, cmap=cmap, clipped=bool((c > hi).any()))


# ----------------------------------------------------------------------- geometry

def _children(model):
    kids = [[] for _ in range(model.nb)]
    for i, p in enumerate(model.body_parent):
        if p >= 0:
            kids[p].append(i)
    return kids


def stick_segments(model: Model) -> list[np.ndarray]:
    """The stick figure of each body: segments from its joint origin (the body origin) to
    the joint origins of its children, or to twice its centre of mass for a leaf body.

    Returns
    -------
    list of nb arrays (s, 2, 3) float64
        Segment end points in body coordinates [m]; empty (0, 2, 3) for a body whose
        segments all have zero length (a point).
    """
    out = []
    for i, kids in enumerate(_children(model)):
        ends = [model.jnt_Xtree_r[c] for c in kids] or [2.0 * model.body_com[i]]
        ends = [e for e in ends if np.linalg.norm(e) > 1e-9]
        seg = np.zeros((len(ends), 2, 3))
        if ends:
            seg[:, 1] = ends
        out.append(seg)
    return out


def _capsule_radius(mass, length):
    """Radius [m] of a capsule of total segment ``length`` [m] and ``mass`` [kg] at
    :data:`DENSITY`: ``pi r^2 L + 4/3 pi r^3 = m / rho``, solved for r (Newton)."""
    vol = max(float(mass), 1e-12) / DENSITY
    r = (3.0 * vol / (4.0 * np.pi)) ** (1.0 / 3.0)
    if length > 0:
        r = min(r, np.sqrt(vol / (np.pi * length)))
        for _ in range(30):
            f = np.pi * r * r * length + 4.0 / 3.0 * np.pi * r ** 3 - vol
            r -= f / (2.0 * np.pi * r * length + 4.0 * np.pi * r * r)
    return float(r)


def _segment_capsule(a, b, r, sections):
    import trimesh

    d = b - a
    L = float(np.linalg.norm(d))
    m = trimesh.creation.capsule(height=L, radius=r, count=[sections, sections])
    T = np.eye(4)
    T[:3, :3] = _rotation_z_to(d / L)
    T[:3, 3] = 0.5 * (a + b)
    m.apply_transform(T)
    return m


def _rotation_z_to(z):
    """A rotation matrix whose third column is the unit vector ``z``."""
    a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(a, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _shape_mesh(kind, size, mesh, sections):
    """Triangle mesh of one collision shape in its own frame (see
    :mod:`articulated.geometry` for the frames and sizes)."""
    import trimesh

    if kind == SHAPE_SPHERE:
        return trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    if kind == SHAPE_CAPSULE:
        return trimesh.creation.capsule(height=2.0 * size[1], radius=size[0],
                                        count=[sections, sections])
    if kind == SHAPE_BOX:
        return trimesh.creation.box(extents=2.0 * size[:3])
    if kind == SHAPE_CYLINDER:
        return trimesh.creation.cylinder(radius=size[0], height=2.0 * size[1],
                                         sections=2 * sections)
    if kind == SHAPE_MESH:
        V = mesh.scaled_vertices()
        F = None if mesh.faces is None else np.asarray(mesh.faces)
        if F is None or F.size == 0:  # vertices only: draw the convex hull (what collides)
            return trimesh.Trimesh(V, process=False).convex_hull
        return trimesh.Trimesh(V, F, process=False)
    raise ValueError(f"no mesh for shape kind {kind}")


def _placed(m, pos, R):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = pos
    m.apply_transform(T)
    return m


def body_meshes(model: Model, *, sections: int = 8, min_radius: float = 0.0) -> list:
    """One triangle mesh per body, in body coordinates [m].

    From the body's collision shapes when ``model.collision`` (a
    :class:`~articulated.geometry.CollisionModel`) holds any shape on a body, otherwise
    capsules along :func:`stick_segments` with the radius that gives the body's mass at
    :data:`DENSITY` (a ball of that mass for a body drawn as a point).

    Parameters
    ----------
    sections : int >= 3
        Segments around a capsule or cylinder (detail of the meshes).
    min_radius : float >= 0
        Smallest capsule radius [m] (keeps light links visible in a large scene; collision
        shapes are drawn at their own size).

    Returns
    -------
    list of nb ``trimesh.Trimesh`` or None
        None for a body without shapes when the model has collision shapes on other bodies
        (nothing to draw).
    """
    import trimesh

    if int(sections) < 3:
        raise ValueError(f"sections must be >= 3, got {sections}")
    geom = getattr(model, "collision", None)
    if geom is not None and len(geom) and (geom.arrays()["body"] >= 0).any():
        A = geom.arrays()
        parts = [[] for _ in range(model.nb)]
        for g in np.flatnonzero(A["body"] >= 0):
            m = _shape_mesh(A["kind"][g], A["size"][g], A["mesh"][g], sections)
            parts[A["body"][g]].append(_placed(m, A["pos"][g], A["R"][g]))
        return [trimesh.util.concatenate(p) if p else None for p in parts]
    out = []
    for i, seg in enumerate(stick_segments(model)):
        L = float(np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1).sum()) if len(seg) else 0.0
        r = max(_capsule_radius(model.body_mass[i], L), float(min_radius))
        if not len(seg):
            out.append(trimesh.creation.icosphere(subdivisions=1, radius=r))
            continue
        out.append(trimesh.util.concatenate(
            [_segment_capsule(a, b, r, sections) for a, b in seg]))
    return out


def static_meshes(model: Model, extent: float = 1.0) -> list:
    """Meshes of the static obstacles of ``model.collision`` in world coordinates; a
    plane is drawn as a thin square of side ``2 extent`` [m] centred on its ``pos``, its
    top face on the plane."""
    import trimesh

    geom = getattr(model, "collision", None)
    if geom is None or not len(geom):
        return []
    A = geom.arrays()
    out = []
    for g in np.flatnonzero(A["body"] < 0):
        if A["kind"][g] == SHAPE_PLANE:
            h = 1e-3 * extent
            m = trimesh.creation.box(extents=(2 * extent, 2 * extent, h))
            m.apply_translation((0.0, 0.0, -0.5 * h))
        else:
            m = _shape_mesh(A["kind"][g], A["size"][g], A["mesh"][g], 8)
        out.append(_placed(m, A["pos"][g], A["R"][g]))
    return out


def geometry_groups(meshes) -> list[tuple[object, np.ndarray]]:
    """Bodies that share one mesh (equal vertices and faces), so that each group is drawn
    as instances of one mesh: a list of ``(mesh, bodies (n,) int64)``, bodies without a
    mesh left out."""
    groups: dict[bytes, tuple[object, list]] = {}
    for i, m in enumerate(meshes):
        if m is None:
            continue
        key = (np.round(np.asarray(m.vertices), 9).tobytes()
               + np.asarray(m.faces, dtype=np.int64).tobytes())
        groups.setdefault(key, (m, []))[1].append(i)
    return [(m, np.asarray(b, dtype=np.int64)) for m, b in groups.values()]


def scene_bounds(p) -> tuple[np.ndarray, float]:
    """Centre (3,) [m] and radius [m] of the body origins ``p (k, nb, 3)`` over all
    frames (the radius at least 0.1 m)."""
    lo = p.reshape(-1, 3).min(axis=0)
    hi = p.reshape(-1, 3).max(axis=0)
    return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 0.1)
