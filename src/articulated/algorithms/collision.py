"""Collision detection: the contacts between the shapes of a model.

Collision detection: the contacts between the shapes of a
:class:`~articulated.geometry.CollisionModel` at a configuration (Gayle, Lin & Manocha 2006,
"GLM", sec. IV and VI: detection feeds the impulse response of
:mod:`articulated.algorithms.contact`).

Pipeline (one compiled kernel, :func:`detect_kernel`):

1. world placement of every shape from its body's pose (static shapes: once);
2. broad phase (:func:`broad_phase`): sweep and prune of the bounding balls, each grown
   by its speculative margin, along the world axis of largest spread (the shapes kept
   sorted from step to step: insertion sort, O(ng) when little moves), the 3D ball test for overlapping intervals,
   and a look-up of the pair among the allowed ones (``CollisionModel.arrays()["pairs"]``,
   filtered by groups, parent-child and same-body rules); a plane is tested against every
   shape it pairs with. The candidates are sorted by pair index (:func:`sort_candidates`,
   a radix sort), so the contacts (and their keys) come in pair order. O(ng + candidates)
   per step instead of O(pairs);
3. narrow phase, closed form or by a one-dimensional convex search:
   sphere and capsule against sphere, capsule and plane by segment-segment closest points;
   sphere and capsule against box and cylinder by minimizing the convex signed distance of
   the box/cylinder along the capsule's segment (regula falsi on its directional
   derivative to the last bit of the segment parameter,
   :func:`~articulated.algorithms.narrow_phase._segment_min_sdf`; first cleared when the
   distance at the capsule's centre exceeds its bounding radius plus the reach), plus the
   segment's end points when they are also within the margin (a capsule lying on a face
   rests on two points); box and cylinder against a plane by their corners and rim
   points; box against box by the separating-axis test with a clipped face manifold, box
   and cylinder against cylinder by GJK/EPA on support functions with the facing
   features' manifold (:mod:`articulated.algorithms.narrow_convex`);
4. pairs with a :class:`~articulated.geometry.Mesh` (the convex hull of its vertices),
   after the kernel (:mod:`articulated.algorithms.collision_mesh`): against a plane, a
   spread set of the hull's vertices (one compiled call for all such pairs); against
   spheres, capsules, boxes, cylinders and meshes, a Python pass with coal's GJK/EPA
   (``coal.distance`` on one ``coal.Convex`` per mesh, signed distance).

A contact is ``(shape a, shape b, body a, body b, point, normal, distance, mu, e)``: the
normal ``n`` (world, unit) points from b to a (moving a along ``+n`` separates them); the
point is midway between the two surfaces; the distance is negative when they overlap (its
magnitude the depth). GLM's collision frame ``F_coll`` (Fig. 2) has ``z = n``.

Speculative contacts (no tunnelling): a pair is reported while its distance is below the
sum of the shapes' margins ``h (|v| + |omega| r)`` (the distance each can travel in one
step); the response lets it approach by at most its distance per step.

The output buffers grow, never drop a contact: the kernel counts every contact, writes those
that fit, and :class:`Detector` calls it again with larger buffers when the count exceeded
the capacity.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from ..geometry import (SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_MESH, SHAPE_NAMES,
                        SHAPE_PLANE, SHAPE_SPHERE)
from .collision_mesh import MeshNarrowPhase, capsule_end, write_block
from .narrow_phase import (_add, _any_perp, _col, _dot, _emit, _emit_core, _lerp, _mul, _norm,
                           _sdf, _segment, _segment_min_sdf, _segments_closest, _sub, _v3)
from .narrow_convex import convex_convex
from .heap import _heapsort

GeomModel = namedtuple("GeomModel", ("body", "kind", "size", "pos", "R", "mu", "e", "rb", "pairs",
                                     "pstart", "phi", "plane_pairs"))
GeomModel.__doc__ = """The shapes (``ng``): ``body, kind`` (ng,) int64; ``size`` (ng, 3);
``pos`` (ng, 3) [m] and ``R`` (ng, 3, 3) in body or world coordinates; ``mu, e, rb`` (ng,)
(friction, restitution, bounding radius [m]); ``pairs`` (np, 2) int64 the allowed pairs,
increasing in ``(min, max)`` of their shapes; the look-up of a pair: ``pstart`` (ng + 1,)
int64 the first pair whose lower shape is g, ``phi`` (np,) int64 the higher shape of each
pair; ``plane_pairs`` (npl,) int64 the pairs with a plane (increasing)."""

Broad = namedtuple("Broad", ("order", "lo", "cand", "tmp", "axis"))
Broad.__doc__ = """Broad-phase state: ``order`` (nm,) int64 the shapes that are not planes,
kept sorted by ``lo`` from step to step; ``lo`` (ng,) the lower end of each grown ball along
the sweep axis [m]; ``cand`` (cap,) int64 the candidate pairs of a step (grows); ``tmp``
(cap + 256,) int64 the scratch of their sort (:func:`sort_candidates`); ``axis`` (1,) int64
the sweep axis (0, 1, 2: world x, y, z)."""


def broad_state(order, ng, cap):
    """A :class:`Broad` for the shapes ``order`` (not planes) of ``ng`` shapes, room for
    ``cap`` candidates, sweep axis x."""
    return Broad(order, np.zeros(ng), np.zeros(cap, np.int64), np.zeros(cap + 256, np.int64),
                 np.zeros(1, np.int64))

GeomPoses = namedtuple("GeomPoses", ("gR", "gp", "margin"))
GeomPoses.__doc__ = """Per step: world rotation ``gR`` (ng, 3, 3) and origin ``gp`` (ng, 3)
[m] of each shape, and its speculative margin (ng,) [m]."""

Contacts = namedtuple("Contacts", ("geom", "body", "point", "normal", "dist", "mu", "e", "key"))
Contacts.__doc__ = """Output, capacity ``cap``: ``geom, body`` (cap, 2) int64 (body -1:
static), ``point`` (cap, 3) [m] and ``normal`` (cap, 3) world, ``dist`` (cap,) [m] (< 0:
depth), ``mu, e`` (cap,) of the pair, ``key`` (cap,) int64 ``16 pair + feature``: the same
contact point of the same pair has the same key from step to step (the contacts come in
increasing key order), which lets the response start from the last step's impulses."""



# ------------------------------------------------------------------ pair kernels
@inline
def _core_pair(out, k, gm, gp, gR, a, b, reach, key):
    """Shape a a sphere or capsule, b any convex shape: the deepest point of a's core in b,
    and a capsule's end points when they lie within ``reach`` too. Keys ``key + feature``
    in increasing order: the deepest point feature 0, or 1 + e where it stands for end e
    (:func:`~articulated.algorithms.collision_mesh.capsule_end`), the ends 1 + e."""
    p0, p1 = _segment(gm, gp, gR, a)
    ra = gm.size[a, 0]
    kb = gm.kind[b]
    if kb == SHAPE_SPHERE or kb == SHAPE_CAPSULE:
        q0, q1 = _segment(gm, gp, gR, b)
        s, t = _segments_closest(p0, p1, q0, q1)
        x = _lerp(p0, p1, s)
        y = _lerp(q0, q1, t)
        d = _sub(x, y)
        L = _norm(d)
        if L > 0.0:
            n = _mul(d, 1.0 / L)
        else:
            n = _any_perp(_col(gR, b, 2))
        sd = L - gm.size[b, 0]
    elif kb == SHAPE_PLANE:
        nb_ = _col(gR, b, 2)
        s = 0.0 if _dot(nb_, _sub(p0, p1)) <= 0.0 else 1.0
        x = _lerp(p0, p1, s)
        sd, n = _sdf(gm, gp, gR, b, x)
    else:
        s = _segment_min_sdf(gm, gp, gR, b, p0, p1)
        x = _lerp(p0, p1, s)
        sd, n = _sdf(gm, gp, gR, b, x)
    # a capsule's end within half its radius of the deepest point is not a contact of its
    # own, and the deepest point takes that end's key (feature 1 + e) instead of the core's
    # (0): a capsule lying flat has its lower end change from step to step, and the warm
    # start must find each end's impulse under its key (the keys increase)
    capsule = gm.kind[a] == SHAPE_CAPSULE
    end = capsule_end(s, 2.0 * gm.size[a, 1], ra) if capsule else -1
    if end < 0 and sd - ra < reach:
        k = _emit_core(out, k, gm, a, b, x, ra, n, sd, key)
    if capsule:  # end points: a capsule lying on a surface
        for e in range(2):
            se = float(e)
            if e == end:
                if sd - ra < reach:
                    k = _emit_core(out, k, gm, a, b, x, ra, n, sd, key + 1 + e)
                continue
            if abs(se - s) * gm.size[a, 1] * 2.0 <= 1e-9 + 0.5 * ra:
                continue
            xe = p1 if e == 1 else p0
            sde, ne = _sdf(gm, gp, gR, b, xe)
            if sde - ra < reach:
                k = _emit_core(out, k, gm, a, b, xe, ra, ne, sde, key + 1 + e)
    return k


@inline
def _box_plane(out, k, gm, gp, gR, a, b, reach, key):
    """Corners of box a below the plane b (+ reach)."""
    n = _col(gR, b, 2)
    o = _v3(gp, b)
    c = _v3(gp, a)
    for i in range(8):
        x = c
        for j in range(3):
            sgn = 1.0 if (i >> j) & 1 else -1.0
            x = _add(x, _mul(_col(gR, a, j), sgn * gm.size[a, j]))
        d = _dot(n, _sub(x, o))
        if d < reach:
            k = _emit(out, k, gm, a, b, _sub(x, _mul(n, 0.5 * d)), n, d, key + i)
    return k


@inline
def _cylinder_plane(out, k, gm, gp, gR, a, b, reach, key):
    """The lowest rim point of each cap of cylinder a against plane b (four rim points per
    cap when the cylinder stands on it)."""
    n = _col(gR, b, 2)
    o = _v3(gp, b)
    z = _col(gR, a, 2)
    w = _sub(n, _mul(z, _dot(n, z)))
    Lw = _norm(w)
    r = gm.size[a, 0]
    for cap in range(2):
        cc = _add(_v3(gp, a), _mul(z, (1.0 if cap == 1 else -1.0) * gm.size[a, 1]))
        if Lw > 1e-9:
            x = _sub(cc, _mul(w, r / Lw))
            d = _dot(n, _sub(x, o))
            if d < reach:
                k = _emit(out, k, gm, a, b, _sub(x, _mul(n, 0.5 * d)), n, d, key + 5 * cap)
        else:
            ex = _col(gR, a, 0)
            ey = _col(gR, a, 1)
            for j in range(4):
                dx = (1.0, 0.0, -1.0, 0.0)[j]
                dy = (0.0, 1.0, 0.0, -1.0)[j]
                x = _add(cc, _add(_mul(ex, r * dx), _mul(ey, r * dy)))
                d = _dot(n, _sub(x, o))
                if d < reach:
                    k = _emit(out, k, gm, a, b, _sub(x, _mul(n, 0.5 * d)), n, d,
                              key + 5 * cap + 1 + j)
    return k


# ------------------------------------------------------------------ the kernel
@inline
def place_pose(E, k, p, g, R, pos, outR, outp):
    """``outR[g] = E[k]^T R[g]``, ``outp[g] = p[k] + E[k]^T pos[g]``: a pose ``(R, pos)``
    given in frame k (``E`` (., 3, 3) rotates world to frame coordinates, ``p`` (., 3) the
    frames' origins [m]) in the world."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for l in range(3):
                s += E[k, l, i] * R[g, l, j]
            outR[g, i, j] = s
        s = p[k, i]
        for l in range(3):
            s += E[k, l, i] * pos[g, l]
        outp[g, i] = s


@inline
def point_speeds(v, k, x):
    """``(|v_x|, |omega|)`` [m/s, rad/s] of the point ``x`` (3 floats, frame coordinates)
    of frame k moving with the twist ``v[k] = [omega; v_O]`` (frame coordinates)."""
    w = (v[k, 0], v[k, 1], v[k, 2])
    vc = (v[k, 3] + w[1] * x[2] - w[2] * x[1], v[k, 4] + w[2] * x[0] - w[0] * x[2],
          v[k, 5] + w[0] * x[1] - w[1] * x[0])
    return _norm(vc), _norm(w)


@njit(**KERNEL)
def place_shapes(gm, oE, op, v, h, poses):
    """World placement and speculative margin of every shape on a body: ``gR = oE^T R``,
    ``gp = op + oE^T pos``; margin ``h (|v_c| + |omega| rb)`` with ``v_c`` the velocity of
    the shape's origin (body velocities ``v`` (nb, 6) ``[w; v_O]`` in body coordinates)."""
    for g in range(gm.body.shape[0]):
        bdy = gm.body[g]
        if bdy < 0:
            continue
        place_pose(oE, bdy, op, g, gm.R, gm.pos, poses.gR, poses.gp)
        vc, w = point_speeds(v, bdy, (gm.pos[g, 0], gm.pos[g, 1], gm.pos[g, 2]))
        poses.margin[g] = h * (vc + w * gm.rb[g])


@inline
def _pair_index(gm, a, b):
    """The index of the allowed pair of shapes ``a < b``, or -1 (binary search among the
    pairs of ``a``)."""
    lo = gm.pstart[a]
    hi = gm.pstart[a + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if gm.phi[mid] < b:
            lo = mid + 1
        else:
            hi = mid
    if lo < gm.pstart[a + 1] and gm.phi[lo] == b:
        return lo
    return -1


@inline
def sweep_axis(x, idx, n, axis):
    """The sweep axis (0, 1, 2: world x, y, z) kept in ``axis`` (1,) int64: the axis of
    largest spread of the points ``x[idx[:n]]`` (x (., 3) [m]), switched to only when it
    spreads 1.5x more than the current one (a hanging rope along z would overlap everywhere
    along x; the hysteresis keeps the sort order from step to step). Returns it."""
    m0 = m1 = m2 = 0.0
    s0 = s1 = s2 = 0.0
    for i in range(n):
        g = idx[i]
        m0 += x[g, 0]
        m1 += x[g, 1]
        m2 += x[g, 2]
        s0 += x[g, 0] * x[g, 0]
        s1 += x[g, 1] * x[g, 1]
        s2 += x[g, 2] * x[g, 2]
    if n > 0:
        v = (s0 - m0 * m0 / n, s1 - m1 * m1 / n, s2 - m2 * m2 / n)
        best = 0 if v[0] >= v[1] and v[0] >= v[2] else (1 if v[1] >= v[2] else 2)
        if v[best] > 1.5 * v[axis[0]]:
            axis[0] = best
    return axis[0]


@inline
def insertion_sort(order, lo, n):
    """Sort ``order[:n]`` by ``lo`` in place: O(n) when the order barely changed."""
    for i in range(1, n):
        g = order[i]
        x = lo[g]
        j = i - 1
        while j >= 0 and lo[order[j]] > x:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = g


@inline
def ball_candidate(gm, gp, a, b, r, cand, k):
    """Append the allowed pair of shapes a and b (if any) to ``cand`` when their origins
    ``gp`` are within ``r`` [m]; returns the count ``k`` after it (which may exceed the
    capacity of ``cand``: nothing is written past it)."""
    d0 = gp[a, 0] - gp[b, 0]
    d1 = gp[a, 1] - gp[b, 1]
    d2 = gp[a, 2] - gp[b, 2]
    if d0 * d0 + d1 * d1 + d2 * d2 > r * r:
        return k
    pi = _pair_index(gm, a, b) if a < b else _pair_index(gm, b, a)
    if pi >= 0:
        if k < cand.shape[0]:
            cand[k] = pi
        k += 1
    return k


@njit(**KERNEL)
def broad_phase(gm, poses, extra, bp):
    """The candidate pairs of a step into ``bp.cand``, increasing: every allowed pair whose
    bounding balls (radius ``rb + margin + extra / 2``) overlap, by sweep and prune along
    the world axis of largest spread (``bp.axis``), and every pair with a plane. Returns their number (may exceed the capacity of
    ``bp.cand``: then call again with more room)."""
    gp = poses.gp
    order, lo, cand = bp.order, bp.lo, bp.cand
    cap = cand.shape[0]
    nm = order.shape[0]
    # sweep along the axis of largest spread of the centres (a hanging rope along z would
    # overlap everywhere along x); switch only when another spreads 1.5x more
    ax = sweep_axis(gp, order, nm, bp.axis)
    for i in range(nm):
        g = order[i]
        lo[g] = gp[g, ax] - (gm.rb[g] + poses.margin[g] + 0.5 * extra)
    insertion_sort(order, lo, nm)
    k = 0
    for i in range(nm):
        a = order[i]
        ra = gm.rb[a] + poses.margin[a] + 0.5 * extra
        end = gp[a, ax] + ra
        for j in range(i + 1, nm):
            b = order[j]
            if lo[b] > end:
                break
            k = ball_candidate(gm, gp, a, b, ra + gm.rb[b] + poses.margin[b] + 0.5 * extra,
                               cand, k)
    for t in range(gm.plane_pairs.shape[0]):
        if k < cap:
            cand[k] = gm.plane_pairs[t]
        k += 1
    if k <= cap:
        sort_candidates(cand, k, bp.tmp, gm.pairs.shape[0])
    return k


@njit(**KERNEL)
def sort_candidates(cand, k, tmp, npairs):
    """Sort the distinct pair indices ``cand[:k]`` (each in ``[0, npairs)``) increasingly
    in place: least-significant-digit radix sort on bytes, one counting pass per byte of
    ``npairs - 1``, O(k + 256) each, with ``tmp`` (>= k + 256,) int64 as scratch (a heapsort
    below 64 candidates)."""
    if k < 64:
        _heapsort(cand, k)
        return
    cnt = tmp[:256]
    buf = tmp[256:]
    src, dst = cand, buf
    shift = 0
    odd = False
    while shift == 0 or (npairs - 1) >> shift > 0:
        for i in range(256):
            cnt[i] = 0
        for i in range(k):
            cnt[(src[i] >> shift) & 255] += 1
        s = 0
        for i in range(256):
            c = cnt[i]
            cnt[i] = s
            s += c
        for i in range(k):
            d = (src[i] >> shift) & 255
            dst[cnt[d]] = src[i]
            cnt[d] += 1
        src, dst = dst, src
        shift += 8
        odd = not odd
    if odd:     # the sorted keys are in buf
        for i in range(k):
            cand[i] = buf[i]


@njit(**KERNEL)
def detect_kernel(gm, poses, extra, cand, nc, out):
    """Every contact of the candidate pairs ``cand[:nc]`` (increasing, from
    :func:`broad_phase`) within their margins plus ``extra`` [m]; returns the number found
    (may exceed the capacity of ``out``: then call again with more room)."""
    gR, gp = poses.gR, poses.gp
    k = 0
    for t in range(nc):
        pi = cand[t]
        a = gm.pairs[pi, 0]
        b = gm.pairs[pi, 1]
        reach = poses.margin[a] + poses.margin[b] + extra
        kb = gm.kind[b]
        if kb != SHAPE_PLANE:  # bounding balls
            d = _norm(_sub(_v3(gp, a), _v3(gp, b)))
            if d > gm.rb[a] + gm.rb[b] + reach:
                continue
        else:  # ball against half space
            if _dot(_col(gR, b, 2), _sub(_v3(gp, a), _v3(gp, b))) > gm.rb[a] + reach:
                continue
        ka = gm.kind[a]
        if (kb == SHAPE_BOX or kb == SHAPE_CYLINDER) and (ka == SHAPE_SPHERE
                                                          or ka == SHAPE_CAPSULE):
            # b's signed distance is 1-Lipschitz: nowhere in a's bounding ball is it below
            # its value at a's origin minus rb (a margin of 1 nm covers the rounding), so
            # the pair is cleared without the search along a's core
            sdc, _n = _sdf(gm, gp, gR, b, _v3(gp, a))
            if sdc - gm.rb[a] > reach + 1e-9:
                continue
        key = 16 * pi
        if ka == SHAPE_SPHERE or ka == SHAPE_CAPSULE:
            k = _core_pair(out, k, gm, gp, gR, a, b, reach, key)
        elif ka == SHAPE_BOX and kb == SHAPE_PLANE:
            k = _box_plane(out, k, gm, gp, gR, a, b, reach, key)
        elif ka == SHAPE_CYLINDER and kb == SHAPE_PLANE:
            k = _cylinder_plane(out, k, gm, gp, gR, a, b, reach, key)
        elif kb != SHAPE_PLANE:   # two boxes and cylinders, either order
            k = convex_convex(out, k, gm, gp, gR, a, b, reach, key)
    return k


@njit(**JIT)
def grown(broad, nc):
    """``broad`` with room for ``2 nc`` candidates (new ``cand`` and ``tmp``)."""
    return Broad(broad.order, broad.lo, np.zeros(2 * nc, np.int64),
                 np.zeros(2 * nc + 256, np.int64), broad.axis)


@njit(**JIT)
def contact_buffer(cap):
    """Zeroed :class:`Contacts` for ``cap`` contacts."""
    return Contacts(np.zeros((cap, 2), np.int64), np.zeros((cap, 2), np.int64),
                    np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros(cap), np.zeros(cap),
                    np.zeros(cap), np.zeros(cap, np.int64))


@njit(**JIT)
def detect_primitives(gm, poses, broad, out, oE, op, v, h, extra):
    """The compiled pairs' contacts (:data:`SUPPORTED`) at the body poses ``oE`` (nb, 3, 3),
    ``op`` (nb, 3) with body velocities ``v`` (nb, 6) and step ``h`` [s]:
    :func:`place_shapes`, :func:`broad_phase`, :func:`detect_kernel`, growing the
    candidate and contact buffers when they are full (never dropping a contact). Returns
    ``(contacts, candidates, broad, out)`` with the buffers in use (new ones after a
    growth)."""
    place_shapes(gm, oE, op, v, h, poses)
    nc = broad_phase(gm, poses, extra, broad)
    if nc > broad.cand.shape[0]:
        broad = grown(broad, nc)
        nc = broad_phase(gm, poses, extra, broad)
    n = detect_kernel(gm, poses, extra, broad.cand, nc, out)
    if n > out.dist.shape[0]:
        out = contact_buffer(2 * n)
        n = detect_kernel(gm, poses, extra, broad.cand, nc, out)
    return n, nc, broad, out


SUPPORTED = {(SHAPE_SPHERE, k) for k in range(5)} | {(SHAPE_CAPSULE, k) for k in range(1, 5)} | {
    (SHAPE_BOX, SHAPE_PLANE), (SHAPE_CYLINDER, SHAPE_PLANE)} | {
    (ka, kb) for ka in (SHAPE_BOX, SHAPE_CYLINDER) for kb in (SHAPE_BOX, SHAPE_CYLINDER)}
"""Pairs (kind a, kind b) of the compiled narrow phase."""


class Detector:
    """Collision detection for a :class:`~articulated.geometry.CollisionModel`: holds the
    kernel bundles and the growing contact buffers.

    The compiled kernel handles the pairs of :data:`SUPPORTED`; the pairs with a mesh go
    to :class:`~articulated.algorithms.collision_mesh.MeshNarrowPhase` (coal, imported only
    then: ImportError naming ``articulated[mesh]`` without it), whose contacts follow the
    kernel's in the same buffers. Keys: ``16 p + feature`` with ``p`` the pair's index
    among the kernel's pairs (in ``CollisionModel.arrays()["pairs"]`` order), then among
    the mesh pairs after them (the mesh-plane pairs first), so the keys increase along the
    output.

    Raises ValueError at construction for a pair of shapes outside :data:`SUPPORTED` (a
    plane against a plane cannot occur: planes are static), naming the two shapes.
    """

    def __init__(self, geom, capacity: int = 64):
        A = geom.arrays()
        prim, mesh = [], []
        for a, b in A["pairs"]:
            ka, kb = int(A["kind"][a]), int(A["kind"][b])
            if ka == SHAPE_MESH or kb == SHAPE_MESH:
                mesh.append((a, b))
                continue
            if (ka, kb) not in SUPPORTED:
                raise ValueError(
                    f"no narrow phase for the pair {SHAPE_NAMES[ka]} (shape {a}) - "
                    f"{SHAPE_NAMES[kb]} (shape {b})")
            prim.append((a, b))
        self.geom = geom
        pairs = np.array(prim, dtype=np.int64).reshape(-1, 2)
        ng = len(A["body"])
        plo, phi = pairs.min(axis=1), pairs.max(axis=1)
        pstart = np.searchsorted(plo, np.arange(ng + 1)).astype(np.int64)
        planes = A["kind"] == SHAPE_PLANE
        self.gm = GeomModel(A["body"], A["kind"], A["size"], A["pos"], A["R"], A["mu"], A["e"],
                            A["rb"], pairs, pstart, phi.astype(np.int64),
                            np.flatnonzero(planes[pairs[:, 1]]).astype(np.int64))
        self.broad = broad_state(np.flatnonzero(~planes).astype(np.int64), ng, max(64, 4 * ng))
        self.mesh = MeshNarrowPhase(A, mesh, len(prim)) if mesh else None
        gR = np.zeros((ng, 3, 3))
        gp = np.zeros((ng, 3))
        static = A["body"] < 0
        gR[static] = A["R"][static]
        gp[static] = A["pos"][static]
        self.poses = GeomPoses(gR, gp, np.zeros(ng))
        self.out = self._buffers(max(int(capacity), 1))
        self.n = 0

    @staticmethod
    def _buffers(cap):
        return contact_buffer(cap)

    def detect(self, oE, op, v, h, extra=0.0) -> int:
        """Contacts at the body poses ``oE`` (nb, 3, 3), ``op`` (nb, 3) with body velocities
        ``v`` (nb, 6) and step ``h`` [s] into ``self.out``; returns their number."""
        n, nc, self.broad, self.out = detect_primitives(
            self.gm, self.poses, self.broad, self.out, np.ascontiguousarray(oE, dtype=np.float64),
            np.ascontiguousarray(op, dtype=np.float64), np.ascontiguousarray(v, dtype=np.float64),
            float(h), float(extra))
        if self.mesh is None:
            self.n = n
            return n
        k, more = self.mesh.contacts(self.poses, float(extra), self.gm, self.out, n)
        nm = sum(len(blk[4]) for blk in more)
        if k + nm > self.out.dist.shape[0]:  # grow; the coal blocks are kept
            self.out = self._buffers(2 * (k + nm))
            n = detect_kernel(self.gm, self.poses, float(extra), self.broad.cand, nc, self.out)
            k = self.mesh.plane_contacts(self.poses, self.gm, self.out, n)
        for blk in more:
            k = write_block(self.out, self.gm, k, *blk)
        self.n = k
        return k
