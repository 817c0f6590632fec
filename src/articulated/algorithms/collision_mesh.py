"""Narrow phase of the pairs with a :class:`~articulated.geometry.Mesh`, through coal: the
Python pass that :class:`~articulated.algorithms.collision.Detector` runs after its compiled
kernel, writing contacts with the same fields (normal from b to a, point midway between the
surfaces, distance < 0 when they overlap, keys increasing).

coal (``pip install 'articulated[mesh]'``) is imported only when a model has a mesh pair.
"""

from __future__ import annotations

import numpy as np

from ..geometry import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_MESH, SHAPE_PLANE, SHAPE_SPHERE

MESH_FEATURES = 16
"""Most contacts of one mesh pair (the key is ``16 pair + feature``)."""


def _import_coal():
    try:
        import coal
    except ImportError:
        raise ImportError("collision with a Mesh needs coal: pip install 'articulated[mesh]' "
                          "(or pip install coal)") from None
    return coal


def _hull(coal, mesh):
    """``(coal.Convex, hull vertices (nh, 3) float64 [m])`` of a Mesh, built once and kept
    on the mesh (shapes that share a Mesh share its hull)."""
    got = mesh.__dict__.get("_coal_hull")
    if got is None:
        pts = coal.StdVec_Vec3s()
        for v in mesh.scaled_vertices():
            pts.append(np.array(v))
        try:
            cv = coal.Convex.convexHull(pts, False, None)
        except Exception as e:  # qhull failure: degenerate input
            raise ValueError(f"{mesh!r}: coal cannot build the convex hull: {e}") from None
        got = (cv, np.array(cv.points(), dtype=np.float64).reshape(-1, 3))
        object.__setattr__(mesh, "_coal_hull", got)
    return got


class MeshNarrowPhase:
    """Narrow phase of the pairs with a mesh, through coal (Python, after the kernel).

    Each mesh collides as the convex hull of its vertices (MuJoCo does the same), one
    ``coal.Convex`` per mesh: coal's GJK gives the distance of separated shapes and EPA the
    depth and normal of overlapping ones (a ``BVHModelOBBRSS`` of the triangles gives no
    penetration depth, and costs 15-130x more per query: 46-940 us against 3-8 us for the
    solo12 meshes on this machine). Contacts, in the fields of :class:`Contacts` (normal
    from b to a, point midway between the surfaces, ``dist < 0`` when they overlap):

    * mesh against a plane: every hull vertex below the plane plus the reach, as a box's
      corners (when more than :data:`MESH_FEATURES` are, the deepest one and then the ones
      spread farthest apart along the plane; feature: the vertex index for hulls of at most
      16 vertices, else the rank of the vertex among those chosen);
    * sphere, capsule, box, cylinder or mesh against a mesh: coal's closest (deepest) pair
      of points, one contact (feature 0); a capsule adds its end points when they lie
      within the reach too (features 1, 2), as the compiled capsule pairs do.

    ``pairs`` (nm, 2) int64 are the mesh pairs, ordered as ``CollisionModel.arrays()``
    orders them (a plane is shape b, a mesh is b unless both are meshes or b is a plane),
    ``first`` the pair index of the first one (their keys follow those of the compiled
    pairs, so the keys stay increasing).
    """

    def __init__(self, A, pairs, first):
        coal = self.coal = _import_coal()
        self.pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self.first = int(first)
        self.kind = A["kind"]
        self.size = A["size"]
        self.rb = A["rb"]
        self.geo = {}
        self.hull = {}
        self.T = {}
        for g in np.unique(self.pairs):
            g = int(g)
            k, sz = int(self.kind[g]), self.size[g]
            if k == SHAPE_MESH:
                self.geo[g], self.hull[g] = _hull(coal, A["mesh"][g])
            elif k == SHAPE_SPHERE:
                self.geo[g] = coal.Sphere(sz[0])
            elif k == SHAPE_CAPSULE:
                self.geo[g] = coal.Capsule(sz[0], 2.0 * sz[1])
            elif k == SHAPE_BOX:
                self.geo[g] = coal.Box(2.0 * sz[0], 2.0 * sz[1], 2.0 * sz[2])
            elif k == SHAPE_CYLINDER:
                self.geo[g] = coal.Cylinder(sz[0], 2.0 * sz[1])
            if k != SHAPE_PLANE:
                self.T[g] = coal.Transform3s(np.eye(3), np.zeros(3))
        self._balls = {}
        self._T_end = coal.Transform3s(np.eye(3), np.zeros(3))
        self.req = coal.DistanceRequest()
        self.req.gjk_tolerance = 1e-12  # polytopes: GJK ends exactly; curved supports need it
        self.req.gjk_max_iterations = 1000
        self.req.epa_tolerance = 1e-12
        self.req.epa_max_iterations = 1000
        self.res = coal.DistanceResult()

    def _distance(self, ga, Ta, gb, Tb):
        """coal's signed distance, nearest points on a and b, normal from b to a."""
        res = self.res
        res.clear()
        d = self.coal.distance(ga, Ta, gb, Tb, self.req, res)
        return (d, np.array(res.getNearestPoint1()), np.array(res.getNearestPoint2()),
                -np.array(res.normal))

    def contacts(self, poses, extra):
        """The contacts of the mesh pairs at the world placements ``poses`` (after
        :func:`place_shapes`), within the pairs' margins plus ``extra`` [m]: a list of
        ``(a, b, point (3,), normal (3,), dist, key)`` in increasing key order."""
        gR, gp, margin = poses.gR, poses.gp, poses.margin
        P = self.pairs
        a, b = P[:, 0], P[:, 1]
        reach = margin[a] + margin[b] + extra
        plane = self.kind[b] == SHAPE_PLANE
        # broad phase: bounding balls, or ball against half space (as the kernel)
        sep = np.where(plane, np.einsum("ij,ij->i", gR[b, :, 2], gp[a] - gp[b]),
                       np.linalg.norm(gp[a] - gp[b], axis=1) - self.rb[b])
        out = []
        for i in np.flatnonzero(sep <= self.rb[a] + reach):
            ia, ib = int(a[i]), int(b[i])
            key = MESH_FEATURES * (self.first + int(i))
            if plane[i]:
                self._mesh_plane(out, ia, ib, gR, gp, float(reach[i]), key)
            else:
                self._pair(out, ia, ib, gR, gp, float(reach[i]), key)
        return out

    def _mesh_plane(self, out, a, b, gR, gp, reach, key):
        n = gR[b, :, 2].copy()
        V = self.hull[a]
        X = gp[a] + V @ gR[a].T
        d = (X - gp[b]) @ n
        idx = np.flatnonzero(d < reach)
        if idx.size > MESH_FEATURES:
            idx = _spread(X[idx] - np.outer(d[idx], n), d[idx], idx, MESH_FEATURES)
        for f, v in enumerate(idx):
            feat = int(v) if len(V) <= MESH_FEATURES else f
            out.append((a, b, X[v] - 0.5 * d[v] * n, n, float(d[v]), key + feat))

    def _pair(self, out, a, b, gR, gp, reach, key):
        Ta, Tb = self.T[a], self.T[b]
        Ta.setRotation(gR[a])
        Ta.setTranslation(gp[a])
        Tb.setRotation(gR[b])
        Tb.setTranslation(gp[b])
        d, pa, pb, n = self._distance(self.geo[a], Ta, self.geo[b], Tb)
        if d < reach:
            out.append((a, b, 0.5 * (pa + pb), n, float(d), key))
        if self.kind[a] != SHAPE_CAPSULE:
            return
        # a capsule lying on a face rests on its two end points (as in _core_pair)
        ra, hl = float(self.size[a, 0]), float(self.size[a, 1])
        z = gR[a, :, 2]
        x = pa + ra * n  # the point of the capsule's segment nearest to b
        s = min(1.0, max(0.0, 0.5 + float((x - gp[a]) @ z) / (2.0 * hl))) if hl > 0 else 0.0
        ball = self._balls.get(ra)
        if ball is None:
            ball = self._balls[ra] = self.coal.Sphere(ra)
        Te = self._T_end
        for e in range(2):
            if abs(float(e) - s) * hl * 2.0 <= 1e-9 + 0.5 * ra:
                continue
            Te.setTranslation(gp[a] + (2.0 * e - 1.0) * hl * z)
            de, pae, pbe, ne = self._distance(ball, Te, self.geo[b], Tb)
            if de < reach:
                out.append((a, b, 0.5 * (pae + pbe), ne, float(de), key + 1 + e))


def _spread(Y, d, idx, m):
    """``m`` of the points ``Y`` (k, 3) to rest on: the deepest (smallest ``d``), then
    repeatedly the one farthest from those chosen; returned as sorted entries of ``idx``."""
    pick = [int(np.argmin(d))]
    dmin = np.linalg.norm(Y - Y[pick[0]], axis=1)
    while len(pick) < m:
        j = int(np.argmax(dmin))
        pick.append(j)
        dmin = np.minimum(dmin, np.linalg.norm(Y - Y[j], axis=1))
    return np.sort(idx[pick])
