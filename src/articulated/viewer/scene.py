"""What the viewer draws, independent of where it is drawn.

What the viewer draws, independent of where it is drawn (viser, the HTML replay, a GIF):
one triangle mesh per body in body coordinates (:func:`body_meshes`), the static obstacles
(:func:`static_meshes`), the stick figure of joint origins (:func:`stick_segments`), the
recorded frames of a run (:func:`frames`), the bodies' world poses along them
(:func:`body_poses`, from :func:`articulated.forward_kinematics`), a colour per body and
frame (:func:`body_colors`), the light that shades the GIFs' triangles (:func:`lambert`) and
the decimation that keeps large meshes fast to draw (:func:`decimate`).

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

MIN_RADIUS = 0.01
"""Smallest capsule radius, as a fraction of the scene radius (light links stay visible)."""

STATIC_RGB = (190, 190, 190)
"""Colour of the static obstacles and the floor (light grey)."""

LIGHT_DIRECTION = (-0.2, -0.5, 1.0)
"""Direction towards the light of :func:`lambert` (world coordinates, z up: from above, on
the side of the default cameras)."""

AMBIENT = 0.4
"""Brightness of a face turned away from the light (:func:`lambert`), as a fraction of its
colour."""


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
        F = mesh.scaled_faces()
        if F is None or F.size == 0:  # vertices only: draw the convex hull (what collides)
            return trimesh.Trimesh(V, process=False).convex_hull
        return trimesh.Trimesh(V, F, process=False)
    raise ValueError(f"no mesh for shape kind {kind}")


def lambert(normals, rgb, light=LIGHT_DIRECTION, ambient: float = AMBIENT) -> np.ndarray:
    """Colours of faces lit by a distant light (Lambert's cosine law).

    ``rgb (ambient + (1 - ambient) max(0, n . l))``, ``l`` the unit ``light`` direction: a
    face facing the light shows its colour, one turned away ``ambient`` of it.

    Parameters
    ----------
    normals : (..., 3) float64
        Face normals (any length; zero for a degenerate face, drawn at ``ambient``).
    rgb : (..., 3) float or uint8
        Face colours (uint8 0-255 or float 0-1), broadcast against ``normals``.
    light : (3,) float
        Direction towards the light, world coordinates (any length).

    Returns
    -------
    (..., 3) float64
        Lit colours in [0, 1].
    """
    n = np.asarray(normals, dtype=np.float64)
    length = np.linalg.norm(n, axis=-1, keepdims=True)
    l = np.asarray(light, dtype=np.float64)
    cos = np.clip((n @ (l / np.linalg.norm(l)))[..., None] / np.maximum(length, 1e-300), 0.0, 1.0)
    c = np.asarray(rgb)
    c = c / 255.0 if c.dtype == np.uint8 else c.astype(np.float64)
    return c * (ambient + (1.0 - ambient) * cos)


def decimate(mesh, max_faces: int):
    """A mesh of at most ``max_faces`` triangles that keeps the shape of ``mesh``.

    Vertex clustering: the vertices are snapped to a cubic grid, those in one cell merge
    at their mean, and faces that collapse or repeat are dropped; the finest grid (cells
    along the longest side, by bisection) that keeps at most ``max_faces`` faces is used, or
    the coarsest that keeps any face when every grid within the budget collapses the mesh.
    Small features (thinner than a cell) may close up; a mesh of at most ``max_faces``
    faces is returned unchanged.

    Parameters
    ----------
    mesh : trimesh.Trimesh
    max_faces : int >= 1

    Returns
    -------
    trimesh.Trimesh
    """
    import trimesh

    V = np.asarray(mesh.vertices, dtype=np.float64)
    F = np.asarray(mesh.faces, dtype=np.int64)
    if len(F) <= max_faces:
        return mesh
    lo, size = V.min(axis=0), max(float(np.ptp(V, axis=0).max()), 1e-12)

    def cluster(cells):
        ijk = np.floor((V - lo) * (cells / size)).astype(np.int64)
        _, inv = np.unique((ijk[:, 0] * (cells + 1) + ijk[:, 1]) * (cells + 1) + ijk[:, 2],
                           return_inverse=True)
        f = inv[F]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 0] != f[:, 2])]
        s = np.sort(f, axis=1)
        _, first = np.unique((s[:, 0] * len(V) + s[:, 1]) * len(V) + s[:, 2], return_index=True)
        f = f[np.sort(first)]
        w = np.bincount(inv)
        v = np.stack([np.bincount(inv, V[:, k]) for k in range(3)], axis=1) / w[:, None]
        return v, f

    lo_cells, hi_cells = 1, 1024
    best = cluster(1)
    while hi_cells - lo_cells > 1:
        mid = (lo_cells + hi_cells) // 2
        v, f = cluster(mid)
        if len(f) <= max_faces:
            lo_cells, best = mid, (v, f)
        else:
            hi_cells = mid
    cells = lo_cells
    while len(best[1]) == 0 and cells < 1024:    # collapsed: the coarsest grid that draws
        cells += 1
        best = cluster(cells)
    return trimesh.Trimesh(best[0], best[1], process=False)


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


def static_meshes(model: Model, extent: float = 1.0, center=None, *,
                  planes: bool | None = None) -> list:
    """Meshes of the static obstacles of ``model.collision`` in world coordinates [m].

    Parameters
    ----------
    extent : float > 0
        Half the side of the square (two triangles facing along the normal) that draws a
        plane [m].
    center : (3,) float, optional
        World point [m] whose projection on each plane centres its square (e.g. the centre
        of the bodies, so that the floor lies under them); default: the plane's ``pos``.
    planes : bool, optional
        True: the planes only; False: every static shape but the planes; None: all.

    Returns
    -------
    list of ``trimesh.Trimesh``
        One mesh per static shape drawn, in the order of ``model.collision``.
    """
    import trimesh

    geom = getattr(model, "collision", None)
    if geom is None or not len(geom):
        return []
    A = geom.arrays()
    out = []
    for g in np.flatnonzero(A["body"] < 0):
        plane = A["kind"][g] == SHAPE_PLANE
        if planes is not None and plane != planes:
            continue
        pos = np.asarray(A["pos"][g], dtype=np.float64)
        if plane:
            m = trimesh.Trimesh(extent * np.array([[-1.0, -1, 0], [1, -1, 0], [1, 1, 0],
                                                   [-1, 1, 0]]), [[0, 1, 2], [0, 2, 3]],
                                process=False)
            if center is not None:     # slide the square along the plane, under ``center``
                n = A["R"][g][:, 2]
                d = np.asarray(center, dtype=np.float64) - pos
                pos = pos + d - (d @ n) * n
        else:
            m = _shape_mesh(A["kind"][g], A["size"][g], A["mesh"][g], 8)
        out.append(_placed(m, pos, A["R"][g]))
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
