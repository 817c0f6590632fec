"""Narrow phase of the pairs with a mesh.

Narrow phase of the pairs with a :class:`~articulated.geometry.Mesh`, which
:class:`~articulated.algorithms.collision.Detector` runs after its compiled kernel, writing
contacts with the same fields (normal from b to a, point midway between the surfaces,
distance < 0 when they overlap, keys increasing): mesh against plane in one compiled call
(:func:`mesh_plane_kernel`), the other pairs through coal in Python.

coal (``pip install 'articulated[mesh]'``) is imported only when a model has a mesh pair.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, KERNEL
from ..geometry import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_MESH, SHAPE_PLANE, SHAPE_SPHERE

MESH_FEATURES = 16
"""Most contacts of one mesh pair (the key is ``16 pair + feature``)."""

MESH_PLANE_SPREAD = 0.3
"""Two contacts of one mesh-plane pair lie at least this fraction of the hull's radius
(about the centre of its bounding box) apart: hull vertices closer together than that
are one contact. The constant is MuJoCo's ``tolplanemesh`` (MuJoCo keeps the deepest
vertex and at most 3 of its hull neighbours that far from it; the farthest-point
selection of up to :data:`MESH_FEATURES` is ours). A rounded foot's hull puts a dozen
vertices within a millimetre of the floor; as contacts they are rows that differ by a
lever of a millimetre, which Gauss-Seidel separates at a rate of about ``m d^2 / I`` per
sweep, so a standing robot would spend every step at the sweep cap while the load drifts
from vertex to vertex."""


@inline
def capsule_end(s, length, ra):
    """The end (0 or 1) of a capsule (``length`` [m] between its end centres, radius ``ra``
    [m]) that its core point at segment parameter ``s`` (in [0, 1]) stands for: the end
    within ``ra / 2`` of it along the segment, which is then no contact of its own; -1 for
    none, or for both (a capsule shorter than ``ra / 2`` is one contact, its core's,
    whichever end is lower). The compiled narrow phase (``collision._core_pair``) and the
    mesh narrow phase give that point the end's key (feature ``1 + e``, else 0), so that
    each end keeps its key from step to step."""
    band = 1e-9 + 0.5 * ra
    e = 0 if s <= 0.5 else 1
    if abs(float(e) - s) * length <= band and abs(float(1 - e) - s) * length > band:
        return e
    return -1


MeshPairs = namedtuple("MeshPairs", (
    "pairs", "is_plane", "rb", "near", "reach", "first", "hstart", "V", "hr", "sel", "dsel",
    "cand", "dc", "Y", "dmin"))
MeshPairs.__doc__ = """The mesh pairs of a detector for the compiled kernels
(:func:`mesh_broad_phase`, :func:`mesh_plane_kernel`): ``pairs`` (nm, 2) int64 (the
mesh-plane pairs first), ``is_plane`` (nm,) bool, the shapes' bounding radii ``rb`` (ng,)
[m], the broad phase's output ``near`` (nm,) int64 and ``reach`` (nm,) [m], ``first`` (1,)
int64 the pair index of pair 0 (keys ``16 (first + i) + feature``); the mesh-plane pairs'
hulls ``V[hstart[i]:hstart[i + 1]]`` (mesh frame) [m] and their radii ``hr`` (npl,) [m]
about their bounding-box centres; scratch ``sel, dsel`` (16,), ``cand, dc, dmin`` (nh,),
``Y`` (nh, 3)."""


def mesh_pairs_empty(rb):
    """A :class:`MeshPairs` without pairs (a detector without meshes; ``rb`` (ng,))."""
    return MeshPairs(np.zeros((0, 2), np.int64), np.zeros(0, np.bool_), rb,
                     np.zeros(0, np.int64), np.zeros(0), np.zeros(1, np.int64),
                     np.zeros(1, np.int64), np.zeros((0, 3)), np.zeros(0),
                     np.zeros(MESH_FEATURES, np.int64), np.zeros(MESH_FEATURES),
                     np.zeros(1, np.int64), np.zeros(1), np.zeros((1, 3)), np.zeros(1))


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


def write_block(out, gm, k, a, b, point, normal, dist, key):
    """Write a block of contacts of the pair (a, b) (from the mesh narrow phase) into the
    contact buffer ``out`` from index ``k`` on (``gm`` the
    :class:`~articulated.algorithms.collision.GeomModel`: bodies, friction and
    restitution); returns the index after them."""
    e = k + len(dist)
    out.key[k:e] = key
    out.geom[k:e, 0] = a
    out.geom[k:e, 1] = b
    out.body[k:e, 0] = gm.body[a]
    out.body[k:e, 1] = gm.body[b]
    out.point[k:e] = point
    out.normal[k:e] = normal
    out.dist[k:e] = dist
    out.mu[k:e] = math.sqrt(gm.mu[a] * gm.mu[b])
    out.e[k:e] = max(gm.e[a], gm.e[b])
    return e


class MeshNarrowPhase:
    """Narrow phase of the pairs with a mesh (after the kernel): against a plane compiled,
    the others through coal in Python.

    Each mesh collides as the convex hull of its vertices (MuJoCo does the same), one
    ``coal.Convex`` per mesh: coal's GJK gives the distance of separated shapes and EPA the
    depth and normal of overlapping ones (a ``BVHModelOBBRSS`` of the triangles gives no
    penetration depth, and costs much more per query). Contacts, in the fields of
    :class:`Contacts` (normal from b to a, point midway between the surfaces, ``dist < 0``
    when they overlap):

    * mesh against a plane: the hull vertices below the plane plus the reach, as a box's
      corners: the deepest one, then repeatedly the one farthest from those chosen, while
      that is at least :data:`MESH_PLANE_SPREAD` times the mesh's bounding radius away,
      at most :data:`MESH_FEATURES` (feature: the vertex index for hulls of at most 16
      vertices, else the rank of the vertex among those chosen: when the chosen set
      changes, a warm start may pass an impulse to another vertex); all the mesh-plane
      pairs in one compiled call (:func:`mesh_plane_kernel`);
    * sphere, capsule, box, cylinder or mesh against a mesh: coal's closest (deepest) pair
      of points, one contact (feature 0); a capsule adds its end points when they lie
      within the reach too (features 1, 2), as the compiled capsule pairs do (and its
      closest point within half its radius of one end takes that end's feature: the end
      keeps its key whichever point is the closest, :func:`capsule_end`).

    ``pairs`` (nm, 2) int64 are the mesh pairs as ``CollisionModel.arrays()`` gives them
    (a plane is shape b, a mesh is b unless both are meshes or b is a plane); they are
    numbered with the mesh-plane pairs first, then the others, each in that order, from
    ``first`` (their keys follow those of the compiled pairs, so the keys stay
    increasing).
    """

    def __init__(self, A, pairs, first):
        coal = self.coal = _import_coal()
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self.kind = A["kind"]
        plane = self.kind[pairs[:, 1]] == SHAPE_PLANE
        self.pairs = np.concatenate([pairs[plane], pairs[~plane]])
        self.nplane = int(plane.sum())
        self.first = int(first)
        self.size = A["size"]
        self.rb = A["rb"]
        self.al, self.bl = self.pairs[:, 0].tolist(), self.pairs[:, 1].tolist()
        self.is_capsule = (self.kind == SHAPE_CAPSULE).tolist()
        self._npl = 0
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
        # the mesh-plane pairs' hulls, one after the other, and each hull's radius about
        # the centre of its bounding box (a URDF mesh's origin may lie far from it:
        # solo12's lower leg 0.169 m about its origin, 0.091 about it)
        hulls = [self.hull[a] for a in self.al[:self.nplane]]
        nh = max([len(V) for V in hulls], default=1)
        n = len(self.pairs)
        self.mp = MeshPairs(
            self.pairs, self.kind[self.pairs[:, 1]] == SHAPE_PLANE, self.rb,
            np.zeros(n, np.int64), np.zeros(n), np.array([self.first], np.int64),
            np.cumsum([0] + [len(V) for V in hulls]).astype(np.int64),
            np.concatenate(hulls) if hulls else np.zeros((0, 3)),
            np.array([np.linalg.norm(V - 0.5 * (V.min(0) + V.max(0)), axis=1).max()
                      for V in hulls], dtype=np.float64),
            np.zeros(MESH_FEATURES, np.int64), np.zeros(MESH_FEATURES),
            np.zeros(nh, np.int64), np.zeros(nh), np.zeros((nh, 3)), np.zeros(nh))
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

    def contacts(self, poses, extra, gm, out, k):
        """The contacts of the mesh pairs at the world placements ``poses`` (after
        :func:`~articulated.algorithms.collision.place_shapes`), within the pairs' margins
        plus ``extra`` [m]: those of the mesh-plane pairs written to the contact buffer
        ``out`` (:class:`~articulated.algorithms.collision.Contacts`) from index ``k`` on
        (``gm`` the :class:`~articulated.algorithms.collision.GeomModel`), the others as a
        list of blocks ``(a, b, point (k, 3), normal (k, 3), dist (k,), key (k,))``, one
        per pair in contact, keys increasing. Returns ``(index after the written ones,
        blocks)``; the index may pass the buffer's capacity (nothing is written there: grow
        the buffer and call :meth:`plane_contacts`)."""
        mp = self.mp
        nn = mesh_broad_phase(mp, poses, float(extra))
        npl = self._npl = int(np.searchsorted(mp.near[:nn], self.nplane))
        k = self.plane_contacts(poses, gm, out, k)
        return k, self.blocks(poses, npl, nn)

    def blocks(self, poses, npl, nn):
        """The contact blocks (as :meth:`contacts` returns them) of the near pairs ``npl
        .. nn - 1`` of the last broad phase (``mp.near``, ``mp.reach``), by coal."""
        mp = self.mp
        blocks = []
        for i, reach in zip(mp.near[npl:nn].tolist(), mp.reach[npl:nn].tolist()):
            blk = self._pair(self.al[i], self.bl[i], poses.gR, poses.gp, reach,
                             MESH_FEATURES * (self.first + i))
            if blk is not None:
                blocks.append(blk)
        return blocks

    def coal_contacts(self, poses, gm, out, k, npl, nn):
        """The contacts of the near pairs ``npl .. nn - 1`` (:meth:`blocks`) written into
        ``out`` from index ``k`` on when they fit; returns the index after them (past the
        capacity: nothing written). The detection stage of the compiled step calls it
        (:func:`~articulated.simulation.hooks.python_contacts`)."""
        blocks = self.blocks(poses, npl, nn)
        end = k + sum(len(blk[4]) for blk in blocks)
        if end <= out.dist.shape[0]:
            for blk in blocks:
                k = write_block(out, gm, k, *blk)
        return end

    def plane_contacts(self, poses, gm, out, k):
        """The mesh-plane pairs' part of the last :meth:`contacts` (its broad phase kept),
        written again from index ``k`` (after the buffer grew); returns the index after
        them."""
        if self._npl:
            k = mesh_plane_kernel(self.mp, self._npl, gm, poses, out, k)
        return k

    def _pair(self, a, b, gR, gp, reach, key):
        Ta, Tb = self.T[a], self.T[b]
        Ta.setRotation(gR[a])
        Ta.setTranslation(gp[a])
        Tb.setRotation(gR[b])
        Tb.setTranslation(gp[b])
        rows = []
        d, pa, pb, n = self._distance(self.geo[a], Ta, self.geo[b], Tb)
        core = key
        if self.is_capsule[a]:
            # a capsule lying on a face rests on its two end points (as in _core_pair; a
            # nearest point within ra / 2 of an end takes that end's key)
            ra, hl = float(self.size[a, 0]), float(self.size[a, 1])
            z = gR[a, :, 2]
            x = pa + ra * n  # the point of the capsule's segment nearest to b
            s = min(1.0, max(0.0, 0.5 + float((x - gp[a]) @ z) / (2.0 * hl))) if hl > 0 else 0.0
            e = capsule_end(s, 2.0 * hl, ra)
            if e >= 0:
                core = key + 1 + e
        if d < reach:
            rows.append((0.5 * (pa + pb), n, d, core))
        if self.is_capsule[a]:
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
                    rows.append((0.5 * (pae + pbe), ne, de, key + 1 + e))
        if not rows:
            return None
        rows.sort(key=lambda row: row[3])      # the keys increase (warm_start's merge)
        P, N, D, K = zip(*rows)
        return (a, b, np.array(P), np.array(N), np.array(D), np.array(K, dtype=np.int64))

MESH_PLANE_GIVE = 1e-4
"""A vertex chosen as a mesh-plane contact gives way to a vertex of its cell (the vertices
within reach nearer to it than to any other chosen one) that lies deeper by more than this
[m]: a rotating link brings that vertex through the floor within a step where the chosen
one stays above it; a face resting flat, whose vertices lie level to far less than this,
keeps its corners."""


@inline
def _hull_plane(V, h0, h1, X, plane, reach, spread, out, scratch):
    """The hull vertices ``V[h0:h1]`` (shape frame; placed at ``X = (R, p)``, world rotation
    ``R`` (3, 3) and origin ``p`` (3,)) whose signed distance from the plane ``plane = (n,
    o)`` through ``o`` (3,) with unit normal ``n`` (3,) is below ``reach`` [m], reduced to a
    spread set: the deepest one, then repeatedly the one farthest (in the world) from those
    chosen, while that is at least ``spread`` [m] away, at most ``m = len(sel_out)``
    (``out = (sel_out, d_out)``); then every vertex within reach joins its nearest chosen
    one, and each chosen one gives way to the deepest vertex of its cell where that is
    deeper by more than :data:`MESH_PLANE_GIVE`. Writes their indices (in ``V[h0:h1]``), increasing, to
    ``sel_out`` and their distances to ``d_out``; returns their number. ``scratch = (cand,
    dc, Y, dmin)``: ``cand, dc`` (nh,), ``Y`` (nh, 3) the vertices in the world, ``dmin``
    (nh,)."""
    R, p = X
    n, o = plane
    sel_out, d_out = out
    cand, dc, Y, dmin = scratch
    m = sel_out.shape[0]
    k = 0
    for v in range(h1 - h0):
        u = h0 + v
        x0 = p[0] + R[0, 0] * V[u, 0] + R[0, 1] * V[u, 1] + R[0, 2] * V[u, 2]
        x1 = p[1] + R[1, 0] * V[u, 0] + R[1, 1] * V[u, 1] + R[1, 2] * V[u, 2]
        x2 = p[2] + R[2, 0] * V[u, 0] + R[2, 1] * V[u, 1] + R[2, 2] * V[u, 2]
        d = n[0] * (x0 - o[0]) + n[1] * (x1 - o[1]) + n[2] * (x2 - o[2])
        if d < reach:
            cand[k] = v
            dc[k] = d
            Y[k, 0] = x0
            Y[k, 1] = x1
            Y[k, 2] = x2
            k += 1
    if k == 0:
        return 0
    # farthest-point selection, starting from the deepest vertex
    j = 0
    for i in range(k):
        if dc[i] < dc[j]:
            j = i
        dmin[i] = np.inf
    spread2 = spread * spread
    c = 0
    while c < m:
        sel_out[c] = j
        c += 1
        best = 0.0
        nxt = -1
        for i in range(k):
            e0 = Y[i, 0] - Y[j, 0]
            e1 = Y[i, 1] - Y[j, 1]
            e2 = Y[i, 2] - Y[j, 2]
            dd = e0 * e0 + e1 * e1 + e2 * e2
            if dd < dmin[i]:
                dmin[i] = dd
            if dmin[i] > best:
                best = dmin[i]
                nxt = i
        if nxt < 0 or best < spread2:
            break
        j = nxt
    # each candidate joins its nearest chosen vertex; a chosen vertex gives way to the
    # deepest of its cell where that is deeper by more than MESH_PLANE_GIVE (a shallower
    # vertex standing for a deeper one lets the deeper one through the floor)
    for i in range(k):
        best = np.inf
        for t in range(c):
            j = sel_out[t]
            e0 = Y[i, 0] - Y[j, 0]
            e1 = Y[i, 1] - Y[j, 1]
            e2 = Y[i, 2] - Y[j, 2]
            dd = e0 * e0 + e1 * e1 + e2 * e2
            if dd < best:
                best = dd
                dmin[i] = t
    for t in range(c):
        j = sel_out[t]
        for i in range(k):
            if dmin[i] == t and dc[i] < dc[j]:
                j = i
        if dc[j] < dc[sel_out[t]] - MESH_PLANE_GIVE:
            sel_out[t] = j
    # candidate positions -> vertex indices, increasing (insertion sort of c entries)
    for t0 in range(c):
        i = sel_out[t0]
        t = t0
        while t > 0 and sel_out[t - 1] > i:
            sel_out[t] = sel_out[t - 1]
            t -= 1
        sel_out[t] = i
    for t in range(c):
        d_out[t] = dc[sel_out[t]]
        sel_out[t] = cand[sel_out[t]]
    return c


@njit(**KERNEL)
def mesh_plane_kernel(mp, npl, gm, poses, out, k):
    """The contacts of the mesh-plane pairs ``mp.near[:npl]`` (:class:`MeshPairs`: mesh a,
    plane b) within ``mp.reach[:npl]`` [m], at the world placements ``poses``
    (:class:`~articulated.algorithms.collision.GeomPoses`): :func:`_hull_plane` with a
    spread of :data:`MESH_PLANE_SPREAD` times the hull's radius ``mp.hr[i]``; each vertex
    a contact with the plane's normal, its point midway between the vertex and the plane,
    key ``16 (first + i) + feature`` (the vertex index for hulls of at most 16 vertices,
    else its rank among those chosen), friction ``sqrt(mu_a mu_b)`` and restitution
    ``max(e_a, e_b)`` (``gm`` the :class:`~articulated.algorithms.collision.GeomModel`).
    Written to ``out`` from index ``k`` on, as far as its capacity goes; returns the index
    after the last contact (counted past the capacity too)."""
    cap = out.dist.shape[0]
    gR, gp, V, sel, dsel = poses.gR, poses.gp, mp.V, mp.sel, mp.dsel
    first = mp.first[0]
    for t in range(npl):
        i = mp.near[t]
        a = mp.pairs[i, 0]
        b = mp.pairs[i, 1]
        h0 = mp.hstart[i]
        h1 = mp.hstart[i + 1]
        n = (gR[b, 0, 2], gR[b, 1, 2], gR[b, 2, 2])
        ns = _hull_plane(V, h0, h1, (gR[a], gp[a]), (n, gp[b]), mp.reach[t],
                         MESH_PLANE_SPREAD * mp.hr[i], (sel, dsel),
                         (mp.cand, mp.dc, mp.Y, mp.dmin))
        mu = math.sqrt(gm.mu[a] * gm.mu[b])
        e = max(gm.e[a], gm.e[b])
        for c in range(ns):
            if k < cap:
                v = h0 + sel[c]
                d = dsel[c]
                for r in range(3):
                    x = (gp[a, r] + gR[a, r, 0] * V[v, 0] + gR[a, r, 1] * V[v, 1]
                         + gR[a, r, 2] * V[v, 2])
                    out.point[k, r] = x - 0.5 * d * n[r]
                    out.normal[k, r] = n[r]
                out.dist[k] = d
                out.key[k] = MESH_FEATURES * (first + i) + (
                    sel[c] if h1 - h0 <= MESH_FEATURES else c)
                out.geom[k, 0] = a
                out.geom[k, 1] = b
                out.body[k, 0] = gm.body[a]
                out.body[k, 1] = gm.body[b]
                out.mu[k] = mu
                out.e[k] = e
            k += 1
    return k


@njit(**KERNEL)
def mesh_broad_phase(mp, poses, extra):
    """Broad phase of the mesh pairs ``mp`` (:class:`MeshPairs`), as
    :func:`~articulated.algorithms.collision.detect_kernel` does it: bounding balls
    (``mp.rb`` [m]) grown by the pair's reach ``margin_a + margin_b + extra`` (``poses``
    the :class:`~articulated.algorithms.collision.GeomPoses`), or a ball against the half
    space of a plane b. Writes the indices of the pairs that pass to ``mp.near`` and their
    reach to ``mp.reach``; returns their number."""
    gR, gp, margin, rb = poses.gR, poses.gp, poses.margin, mp.rb
    k = 0
    for i in range(mp.pairs.shape[0]):
        a = mp.pairs[i, 0]
        b = mp.pairs[i, 1]
        reach = margin[a] + margin[b] + extra
        d0 = gp[a, 0] - gp[b, 0]
        d1 = gp[a, 1] - gp[b, 1]
        d2 = gp[a, 2] - gp[b, 2]
        if mp.is_plane[i]:
            sep = gR[b, 0, 2] * d0 + gR[b, 1, 2] * d1 + gR[b, 2, 2] * d2
        else:
            sep = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - rb[b]
        if sep <= rb[a] + reach:
            mp.near[k] = i
            mp.reach[k] = reach
            k += 1
    return k
