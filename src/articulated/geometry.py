"""Collision geometry: shapes on bodies, static obstacles and their materials.

Collision geometry: shapes on bodies, static obstacles and their materials
(:class:`CollisionModel`), the model-layer input of contact handling (Gayle, Lin & Manocha
2006, "GLM"; detection in :mod:`articulated.algorithms.collision`, response in
:mod:`articulated.algorithms.contact`).

Shapes and their local frames (every size in metres):

============  =========================================================================
shape         geometry in its own frame
============  =========================================================================
``Sphere``    centre at the origin, ``radius``
``Capsule``   segment from ``(0, 0, -length/2)`` to ``(0, 0, length/2)`` swept by a ball
              of ``radius`` (total extent ``length + 2 radius``; ``length`` may be 0)
``Box``       ``|x| <= size[0]/2``, ``|y| <= size[1]/2``, ``|z| <= size[2]/2`` (full edge
              lengths, as URDF's ``<box size>``)
``Cylinder``  axis z, ``|z| <= length/2``, ``x^2 + y^2 <= radius^2``
``Plane``     the half space ``n . x <= n . pos`` (solid below the plane; only as a
              static obstacle)
``Mesh``      the convex hull of ``vertices`` (given in its own frame, scaled); its
              narrow phase runs through coal (``pip install articulated[mesh]``)
============  =========================================================================

A shape sits in the frame of its body (or the world, for a static obstacle) at ``pos``
with rotation ``R`` (columns: the shape's axes in the body/world frame).

Materials: each shape has a Coulomb friction coefficient ``mu >= 0`` and a coefficient of
restitution ``e`` in [0, 1]; a pair uses ``mu = sqrt(mu_a mu_b)`` and ``e = max(e_a, e_b)``
(MuJoCo and Bullet combine friction by the geometric mean, Box2D too; the larger restitution
wins so that a bouncy ball bounces on any floor).

Filters: a pair of shapes is tested only when ``group_a & mask_b`` and ``group_b & mask_a``
are non-zero (MuJoCo's contype/conaffinity), the two are on different bodies, not on a
parent and its child (their joint keeps them touching), not both static, and not a body
pair named by :meth:`CollisionModel.exclude`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from .model import Model

SHAPE_SPHERE, SHAPE_CAPSULE, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_PLANE, SHAPE_MESH = 0, 1, 2, 3, 4, 5
SHAPE_NAMES = ("sphere", "capsule", "box", "cylinder", "plane", "mesh")
_PAIR_RANK = (0, 1, 2, 3, 5, 4)
"""Order of the shapes in a pair (``CollisionModel._pairs``): by kind code, the mesh between the
cylinder and the plane, so a plane is always shape b."""


def _placement(pos, R, what):
    p = np.zeros(3) if pos is None else np.asarray(pos, dtype=np.float64)
    if p.shape != (3,) or not np.isfinite(p).all():
        raise ValueError(f"{what}: pos must be a finite (3,) vector, got {pos!r}")
    M = np.eye(3) if R is None else np.asarray(R, dtype=np.float64)
    if M.shape != (3, 3) or not np.isfinite(M).all():
        raise ValueError(f"{what}: R must be a finite (3, 3) rotation matrix")
    if np.abs(M.T @ M - np.eye(3)).max() > 1e-9 or np.linalg.det(M) < 0:
        raise ValueError(f"{what}: R is not a rotation (R^T R != I or det R < 0)")
    return p, M


def _size(x, name, shape, allow_zero=False):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{shape}: {name} must be a real number, got {x!r}") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise ValueError(f"{shape}: {name} must be finite and > 0, got {x}")
    return x


@dataclass(frozen=True)
class Shape:
    """Base class of the shapes: a placement in the frame of the body that carries it.

    The placement is ``pos`` (3,) [m] and rotation ``R`` (3, 3).
    """

    pos: tuple = field(default=None, kw_only=True)
    R: tuple = field(default=None, kw_only=True)

    kind = -1

    # every shape defines params() -> (3,) float64, the sizes the kernels read (validated,
    # ValueError naming the shape), and bounding_radius() -> float, the radius [m] of a
    # ball about its origin that contains it (inf: plane)

    def placement(self):
        """Return ``(pos (3,), R (3, 3))``, validated (ValueError otherwise)."""
        return _placement(self.pos, self.R, repr(self))


@dataclass(frozen=True)
class Sphere(Shape):
    """Ball of ``radius`` [m] about the shape's origin.

    Parameters
    ----------
    radius : float
        Radius [m], > 0.
    pos : (3,) float, optional
        Origin in the coordinates of the carrying body (or the world) [m]; default zero.
    R : (3, 3) float, optional
        Axes (columns) in those coordinates; default identity.
    """

    radius: float = 0.0
    kind = SHAPE_SPHERE

    def params(self):
        """Return the (3,) float64 sizes the kernels read (ValueError if invalid)."""
        return np.array([_size(self.radius, "radius", "Sphere"), 0.0, 0.0])

    def bounding_radius(self):
        """Return the radius [m] of a ball about the origin containing the shape."""
        return float(self.radius)


@dataclass(frozen=True)
class Capsule(Shape):
    """A capsule: a segment along the local z axis swept by a ball.

    The segment of ``length`` [m] is centred on the shape origin; the ball has ``radius``
    [m].

    Parameters
    ----------
    radius : float
        Radius [m], > 0.
    length : float
        Segment length [m], >= 0.
    pos : (3,) float, optional
        Origin in the coordinates of the carrying body (or the world) [m]; default zero.
    R : (3, 3) float, optional
        Axes (columns) in those coordinates; default identity.
    """

    radius: float = 0.0
    length: float = 0.0
    kind = SHAPE_CAPSULE

    def params(self):
        """Return the (3,) float64 sizes the kernels read (ValueError if invalid)."""
        return np.array([_size(self.radius, "radius", "Capsule"),
                         0.5 * _size(self.length, "length", "Capsule", allow_zero=True), 0.0])

    def bounding_radius(self):
        """Return the radius [m] of a ball about the shape origin that contains the shape."""
        return float(self.radius + 0.5 * self.length)


@dataclass(frozen=True)
class Box(Shape):
    """Box with full edge lengths ``size = (sx, sy, sz)`` [m], centred.

    Parameters
    ----------
    size : (3,) float
        Full edge lengths [m], each > 0.
    pos : (3,) float, optional
        Origin in the coordinates of the carrying body (or the world) [m]; default zero.
    R : (3, 3) float, optional
        Axes (columns) in those coordinates; default identity.
    """

    size: tuple = (0.0, 0.0, 0.0)
    kind = SHAPE_BOX

    def params(self):
        """Return the (3,) float64 sizes the kernels read (ValueError if invalid)."""
        s = np.asarray(self.size, dtype=np.float64)
        if s.shape != (3,):
            raise ValueError(f"Box: size must be 3 edge lengths, got {self.size!r}")
        return np.array([0.5 * _size(x, "size", "Box") for x in s])

    def bounding_radius(self):
        """Return the radius [m] of a ball about the shape origin that contains the shape."""
        return float(0.5 * np.linalg.norm(np.asarray(self.size, dtype=np.float64)))


@dataclass(frozen=True)
class Cylinder(Shape):
    """Solid cylinder of ``radius`` [m] and ``length`` [m] along the local z axis, centred.

    Parameters
    ----------
    radius, length : float
        Radius and length [m], > 0.
    pos : (3,) float, optional
        Origin in the coordinates of the carrying body (or the world) [m]; default zero.
    R : (3, 3) float, optional
        Axes (columns) in those coordinates; default identity.
    """

    radius: float = 0.0
    length: float = 0.0
    kind = SHAPE_CYLINDER

    def params(self):
        """Return the (3,) float64 sizes the kernels read (ValueError if invalid)."""
        return np.array([_size(self.radius, "radius", "Cylinder"),
                         0.5 * _size(self.length, "length", "Cylinder"), 0.0])

    def bounding_radius(self):
        """Return the radius [m] of a ball about the shape origin that contains the shape."""
        return float(math.hypot(self.radius, 0.5 * self.length))


@dataclass(frozen=True)
class Plane(Shape):
    """A half space below the plane through ``pos`` with unit outward ``normal``.

    For static obstacles only.

    Parameters
    ----------
    normal : (3,) float
        Outward normal in world coordinates (normalized); default ``(0, 0, 1)``.
    pos : (3,) float, optional
        A point of the plane in world coordinates [m]; default zero.
    """

    normal: tuple = (0.0, 0.0, 1.0)
    kind = SHAPE_PLANE

    def params(self):
        """Return the (3,) float64 sizes the kernels read (ValueError if invalid)."""
        return np.zeros(3)

    def placement(self):
        """Return ``(pos (3,), R (3, 3))``, local z the unit normal (ValueError if invalid)."""
        p, _ = _placement(self.pos, None, repr(self))
        n = np.asarray(self.normal, dtype=np.float64)
        if n.shape != (3,) or not np.isfinite(n).all() or np.linalg.norm(n) < 1e-12:
            raise ValueError(f"Plane: normal must be a finite non-zero (3,) vector, got {self.normal!r}")
        z = n / np.linalg.norm(n)
        a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        x = np.cross(a, z)
        x /= np.linalg.norm(x)
        return p, np.column_stack([x, np.cross(z, x), z])  # local z = the normal

    def bounding_radius(self):
        """Return the radius [m] of a ball about the shape origin that contains the shape."""
        return math.inf


@dataclass(frozen=True, eq=False)
class Mesh(Shape):
    """Triangle mesh; collisions use the convex hull of its vertices (as MuJoCo does).

    Parameters
    ----------
    vertices : (nv, 3) float
        Vertex positions in the mesh's own frame, before ``scale`` [m after scaling]; at
        least 4, not all in one plane, finite.
    faces : (nf, 3) int, optional
        Triangles (vertex indices); kept for export and display, the narrow phase does not
        read them.
    scale : (3,) float
        Per-axis scale applied to the vertices (URDF ``<mesh scale>``), each > 0.
    source : str, optional
        The file the mesh came from (in messages).

    Notes
    -----
    Build one from a file with :meth:`from_file` (trimesh reads STL, OBJ, DAE, PLY...).
    The narrow phase (mesh against every shape, in :mod:`articulated.algorithms.collision`)
    builds one ``coal.Convex`` per mesh and needs coal: ``pip install articulated[mesh]``.
    """

    vertices: np.ndarray = None
    faces: np.ndarray = None
    scale: tuple = (1.0, 1.0, 1.0)
    source: str = None
    kind = SHAPE_MESH

    def __repr__(self):
        what = self.source if self.source else f"{0 if self.vertices is None else len(self.vertices)} vertices"
        return f"Mesh({what})"

    @classmethod
    def from_file(cls, path, scale=(1.0, 1.0, 1.0), *, pos=None, R=None) -> "Mesh":
        """Read a mesh file with trimesh (several bodies in one file are concatenated).

        Raises ValueError naming the file if it is missing, unreadable, or holds no
        triangles.
        """
        import trimesh  # a dependency of yourdfpy

        path = os.fspath(path)
        if not os.path.isfile(path):
            raise ValueError(f"mesh file not found: {path}")
        try:
            tm = trimesh.load(path, force="mesh", process=False)
        except Exception as e:
            raise ValueError(f"mesh file {path}: trimesh cannot read it: "
                             f"{type(e).__name__}: {e}") from None
        V = np.asarray(getattr(tm, "vertices", np.zeros((0, 3))), dtype=np.float64)
        F = np.asarray(getattr(tm, "faces", np.zeros((0, 3))), dtype=np.int64)
        if len(V) == 0:
            raise ValueError(f"mesh file {path}: no vertices")
        return cls(vertices=V, faces=F, scale=scale, source=path, pos=pos, R=R)

    def scaled_vertices(self):
        """Return the vertices times ``scale`` (nv, 3) float64 [m], validated.

        ValueError naming the mesh for non-finite values, fewer than 4 vertices, all in one
        plane, scale <= 0, or a face index out of range.
        """
        cache = self.__dict__.get("_scaled")
        if cache is not None:
            return cache
        what = repr(self)
        try:
            V = np.asarray(self.vertices, dtype=np.float64)
            sc = np.broadcast_to(np.asarray(self.scale, dtype=np.float64), (3,))
        except (TypeError, ValueError):
            raise ValueError(f"{what}: vertices must be (nv, 3) numbers and scale 3 numbers") from None
        if V.ndim != 2 or V.shape[1] != 3:
            raise ValueError(f"{what}: vertices must have shape (nv, 3), got {V.shape}")
        if not np.isfinite(V).all():
            raise ValueError(f"{what}: vertices are not finite")
        if not (np.isfinite(sc).all() and (sc > 0).all()):
            raise ValueError(f"{what}: scale must be finite and > 0, got {tuple(sc)}")
        if self.faces is not None:
            F = np.asarray(self.faces)
            if F.size and (F.ndim != 2 or F.shape[1] != 3 or F.min() < 0 or F.max() >= len(V)):
                raise ValueError(f"{what}: faces must be (nf, 3) indices into the {len(V)} vertices")
        V = V * sc
        if len(V) < 4:
            raise ValueError(f"{what}: needs at least 4 vertices, got {len(V)}")
        ext = np.linalg.svd(V - V.mean(axis=0), compute_uv=False)
        if ext[2] <= 1e-9 * max(ext[0], 1e-300):
            raise ValueError(f"{what}: the vertices lie in one plane (no volume)")
        V.setflags(write=False)
        object.__setattr__(self, "_scaled", V)
        return V

    def params(self):
        """Return the (3,) float64 sizes the kernels read (ValueError if invalid)."""
        self.scaled_vertices()
        return np.zeros(3)

    def bounding_radius(self):
        """Return the radius [m] of a ball about the shape origin that contains the shape."""
        return float(np.linalg.norm(self.scaled_vertices(), axis=1).max())


def _material(mu, e, what):
    mu = float(mu)
    e = float(e)
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"{what}: friction coefficient mu must be finite and >= 0, got {mu}")
    if not (math.isfinite(e) and 0.0 <= e <= 1.0):
        raise ValueError(f"{what}: restitution e must be in [0, 1], got {e}")
    return mu, e


class CollisionModel:
    """Collision shapes on a model's bodies and static obstacles, with materials and filters.

    Parameters
    ----------
    model : Model
        The articulated body the shapes ride on.

    Attributes
    ----------
    body : (ng,) int64
        Carrying body, -1 for a static obstacle. These flat arrays over the ``ng`` shapes
        are rebuilt by :meth:`arrays`.
    kind : (ng,) int64
        ``SHAPE_*`` code.
    size : (ng, 3) float64
        Sphere ``(r, 0, 0)``, capsule and cylinder ``(r, L/2, 0)``, box half extents [m];
        zeros for a plane and a mesh.
    mesh : list of Mesh or None
        The :class:`Mesh` of each mesh shape, None for the others.
    pos : (ng, 3) float64
        Shape origin in body (or world) coordinates [m].
    R : (ng, 3, 3) float64
        Shape axes in body (or world) coordinates.
    mu, e : (ng,) float64
        Friction coefficient, restitution.
    group, mask : (ng,) int64
        Collision filter bits.
    name : list of str
        Shape names.

    References
    ----------
    Gayle, Lin & Manocha 2006, sec. IV (shapes on the links of a hybrid body).

    Examples
    --------
    >>> geom = CollisionModel(model)
    >>> geom.add("link3", Capsule(radius=0.01, length=0.1), pos=(0, 0, -0.05), mu=0.5, e=0.1)
    >>> geom.add_static(Plane(normal=(0, 0, 1)))
    """

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        self.model = model
        self._rows = []
        self._arrays = None
        self._exclude = set()

    def __len__(self):
        return len(self._rows)

    def __repr__(self):
        ns = sum(1 for r in self._rows if r["body"] < 0)
        return f"CollisionModel({len(self._rows) - ns} shapes on bodies, {ns} static)"

    def add(self, body, shape: Shape, *, pos=None, R=None, mu: float = 0.5, e: float = 0.0,
            group: int = 1, mask: int = 0xFFFF, name: str | None = None) -> int:
        """Attach ``shape`` to ``body`` and return the shape's index.

        ``body`` is a name or index; the shape sits at ``pos``/``R`` in body coordinates
        (default: the shape's own ``pos``/``R``).

        Raises ValueError for an unknown body, a plane on a body, bad sizes, ``mu < 0``,
        ``e`` outside [0, 1], or a ``pos``/``R`` that is not a placement.
        """
        b = self.model.body_id(body)
        if shape.kind == SHAPE_PLANE:
            raise ValueError(f"body {self.model.body_name[b]!r}: a Plane can only be a static obstacle")
        return self._add(b, shape, pos, R, mu, e, group, mask, name)

    def add_static(self, *shapes: Shape, mu: float = 0.5, e: float = 0.0, group: int = 1,
                   mask: int = 0xFFFF, names=None) -> list:
        """Add static obstacles and return their indices.

        They are placed in world coordinates by their own ``pos``/``R`` and named by
        ``names`` (one str per shape, optional).
        """
        if names is None:
            names = [None] * len(shapes)
        elif isinstance(names, str) or len(names) != len(shapes):
            raise ValueError(f"add_static: names must give one name per shape "
                             f"({len(shapes)}), got {names!r}")
        return [self._add(-1, s, None, None, mu, e, group, mask, n) for s, n in zip(shapes, names)]

    def exclude(self, body_a, body_b) -> None:
        """Never test the shapes of ``body_a`` against those of ``body_b``.

        Bodies by names or indices, like MuJoCo's ``<contact><exclude>``. ValueError for an
        unknown body.
        """
        a, b = self.model.body_id(body_a), self.model.body_id(body_b)
        self._exclude.add((min(a, b), max(a, b)))
        self._arrays = None

    def set_filter(self, shapes=None, *, group=None, mask=None) -> None:
        """Set the collision filter bits of ``shapes``.

        ``shapes`` are indices or names (default every shape on a body, not the static
        ones): two shapes are tested iff ``group_a & mask_b`` and ``group_b & mask_a`` are
        both non-zero. E.g. a robot that collides only with the floor:
        ``geom.set_filter(group=1, mask=2)`` and ``add_static(Plane(), group=2, mask=1)``.
        ValueError for an unknown shape or a negative value.
        """
        names = [r["name"] for r in self._rows]
        if shapes is None:
            idx = [i for i, r in enumerate(self._rows) if r["body"] >= 0]
        else:
            idx = []
            for s in shapes:
                if isinstance(s, str):
                    if s not in names:
                        raise ValueError(f"unknown shape {s!r}")
                    idx.append(names.index(s))
                elif 0 <= int(s) < len(self._rows):
                    idx.append(int(s))
                else:
                    raise ValueError(f"unknown shape {s!r} (this model has {len(self._rows)})")
        for key, val in (("group", group), ("mask", mask)):
            if val is not None and int(val) < 0:
                raise ValueError(f"{key} must be >= 0, got {val}")
        for i in idx:
            if group is not None:
                self._rows[i]["group"] = int(group)
            if mask is not None:
                self._rows[i]["mask"] = int(mask)
        self._arrays = None

    def _add(self, b, shape, pos, R, mu, e, group, mask, name):
        if not isinstance(shape, Shape) or type(shape) is Shape:
            raise TypeError(f"expected a Sphere, Capsule, Box, Cylinder, Mesh or Plane, got {shape!r}")
        where = (f"shape {len(self._rows)} ({SHAPE_NAMES[shape.kind]}) on "
                 + ("the world" if b < 0 else f"body {self.model.body_name[b]!r}"))
        size = shape.params()
        p0, R0 = shape.placement()
        p, Rm = _placement(p0 if pos is None else pos, R0 if R is None else R, where)
        mu, e = _material(mu, e, where)
        self._rows.append(dict(body=b, kind=shape.kind, size=size, pos=p, R=Rm, mu=mu, e=e,
                               group=int(group), mask=int(mask),
                               rb=shape.bounding_radius(),
                               mesh=shape if shape.kind == SHAPE_MESH else None,
                               name=name or f"{SHAPE_NAMES[shape.kind]}{len(self._rows)}"))
        self._arrays = None
        return len(self._rows) - 1

    def arrays(self):
        """Return the flat arrays and the candidate pairs, built once per change.

        The flat arrays (see the class doc) and the candidate pairs, built once per change:
        a dict with ``body, kind, size, pos, R, mu, e, rb, group, mask, pairs, mesh, name``
        where ``pairs`` (np, 2) int64 lists every pair allowed by the filters, ordered for
        the narrow phase (sphere < capsule < box < cylinder < mesh < plane).
        """
        if self._arrays is None:
            rows = self._rows
            ng = len(rows)
            A = dict(
                body=np.array([r["body"] for r in rows], dtype=np.int64).reshape(ng),
                kind=np.array([r["kind"] for r in rows], dtype=np.int64).reshape(ng),
                size=np.array([r["size"] for r in rows], dtype=np.float64).reshape(ng, 3),
                pos=np.array([r["pos"] for r in rows], dtype=np.float64).reshape(ng, 3),
                R=np.array([r["R"] for r in rows], dtype=np.float64).reshape(ng, 3, 3),
                mu=np.array([r["mu"] for r in rows], dtype=np.float64).reshape(ng),
                e=np.array([r["e"] for r in rows], dtype=np.float64).reshape(ng),
                rb=np.array([r["rb"] for r in rows], dtype=np.float64).reshape(ng),
                group=np.array([r["group"] for r in rows], dtype=np.int64).reshape(ng),
                mask=np.array([r["mask"] for r in rows], dtype=np.int64).reshape(ng),
            )
            A["pairs"] = self._pairs(rows)
            A["mesh"] = [r["mesh"] for r in rows]
            A["name"] = [r["name"] for r in rows]
            self._arrays = A
        return self._arrays

    def _pairs(self, rows):
        """Every pair the filters allow (not two static shapes, not one body, not a parent
        and its child, not an excluded body pair, group/mask bits both ways), ``(a, b)`` with ``a < b`` in row-major
        order, each with the shape of lower :data:`_PAIR_RANK` first (so each narrow-phase
        kernel handles one ordering); vectorized one shape at a time (O(ng)
        Python steps, O(ng^2) work)."""
        parent = self.model.body_parent
        body = np.array([r["body"] for r in rows], dtype=np.int64)
        group = np.array([r["group"] for r in rows], dtype=np.int64)
        mask = np.array([r["mask"] for r in rows], dtype=np.int64)
        rank = np.array([_PAIR_RANK[r["kind"]] for r in rows], dtype=np.int64)
        up = np.where(body >= 0, parent[np.maximum(body, 0)], -2)  # parent body, -2: static
        out = []
        for a in range(len(rows) - 1):
            b = np.arange(a + 1, len(rows))
            ba, bb = body[a], body[b]
            keep = (bb != ba) & ((ba >= 0) | (bb >= 0))
            if ba >= 0:
                keep &= ~((bb >= 0) & ((up[a] == bb) | (up[b] == ba)))
            keep &= ((group[a] & mask[b]) != 0) & ((group[b] & mask[a]) != 0)
            if ba >= 0 and self._exclude:  # pairs of bodies excluded by exclude()
                ex = [y if x == ba else x for x, y in self._exclude if ba in (x, y)]
                keep &= ~np.isin(bb, ex)
            b = b[keep]
            swap = rank[a] > rank[b]
            out.append(np.stack([np.where(swap, b, a), np.where(swap, a, b)], axis=1))
        return (np.concatenate(out) if out else np.zeros((0, 2))).astype(np.int64)
