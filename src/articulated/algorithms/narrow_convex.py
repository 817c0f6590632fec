"""Narrow phase of the convex pairs without a closed form: box-box, box-cylinder and
cylinder-cylinder.

Box-box (:func:`box_box`): the separating-axis test over the 15 axes (the three face
normals of each box and the nine cross products of their edge directions; ODE's
``dBoxBox``, MuJoCo's box-box). A face axis clips the incident face (the face of the other
box most opposed to the reference face) against the reference face's rectangle, as
Sutherland-Hodgman clipping against the four side planes does, but feature by feature so
that every point keeps its key from step to step: the incident corners inside the
rectangle (features 0-3), the rectangle's corners inside the incident face (4-7), and where
each incident edge enters and leaves the rectangle (8 + 2 edge + 0/1). An edge axis gives
one contact midway between the closest points of the two edges. The overlap along the best
axis is the exact penetration depth of two boxes (the 15 axes are the face normals of their
Minkowski difference); apart, that separation is only a lower bound, and the Euclidean
distance comes from the closest features (corners against the other box, the 144 edge
pairs), exact to rounding.

Box-cylinder and cylinder-cylinder (:func:`convex_pair`): Gilbert-Johnson-Keerthi (1988)
on the support functions (:func:`support`) for the distance when apart, the expanding
polytope algorithm (van den Bergen 2001) from GJK's final simplex for the depth when they
overlap. Both stop when the support point improves the bound by at most
:data:`CONVEX_TOL` times the sum of the bounding radii (or after their iteration caps,
:data:`GJK_ITERATIONS`, :data:`EPA_VERTICES`); flat features converge exactly, a curved
support (a cylinder's side or rim) linearly. The manifold: the corners of the face (box)
or the rim points of the cap or the ends of the side line (cylinder) that face the other
shape, each against the other shape's exact signed distance
(:func:`~articulated.algorithms.narrow_phase._sdf`), kept where that distance is within the
reach and its normal within :data:`MANIFOLD_COS` of the pair's; one outside is moved
towards the pair's witness point by bisection, to the border of the face it rests on (a
cylinder standing on a box rests on its rim points, a box lying on a cylinder on two points
of the side line). Keys: the features of shape a 1-6, of shape b 7-12, GJK/EPA's point 15.

Conventions of :mod:`articulated.algorithms.collision`: the normal (world, unit) points
from shape b to shape a, the point lies midway between the surfaces, the distance is
negative when they overlap. The work arrays (simplex, polytope) live on the stack
(:func:`_stack`): nothing is allocated on the heap.
"""

from __future__ import annotations

import math

import numpy as np
import numba
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from ..config import inline
from ..geometry import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER
from .narrow_phase import (_add, _col, _dot, _emit, _lerp, _mul, _norm, _sdf,
                           _segments_closest, _sub, _v3)

CONVEX_TOL = 1e-9
"""Relative stopping tolerance of GJK and EPA (times the sum of the bounding radii)."""
GJK_ITERATIONS = 128
"""Most GJK iterations."""
EPA_VERTICES = 128
"""Most vertices of the EPA polytope."""
_EPA_FACES = 2 * EPA_VERTICES
MANIFOLD_COS = 0.99
"""A manifold point is kept where the other shape's normal there is within this cosine of
the pair's normal."""
_EDGE_BIAS = 1e-6
"""An edge axis of box-box replaces the best face axis only when it separates more by this
times the sum of the largest half extents (a box resting on a face keeps its face
manifold)."""
_BISECT = 30


# ------------------------------------------------------------------ stack work arrays
def _stack(rows, cols):
    """A function returning a (rows, cols) float64 work array: on the stack of the compiled
    caller (an ``alloca`` in its entry block, no reference count; compiled callers only),
    ``np.empty`` when numba's JIT is disabled (``NUMBA_DISABLE_JIT=1``)."""
    if numba.config.DISABLE_JIT:
        return lambda: np.empty((rows, cols))

    arrty = types.Array(types.float64, 2, "C")

    @intrinsic
    def alloc(typingctx):
        def codegen(context, builder, signature, args):
            llty = context.get_value_type(types.float64)
            ptr = cgutils.alloca_once(builder, llty, size=rows * cols)
            ary = context.make_array(arrty)(context, builder)
            isz = context.get_abi_sizeof(llty)
            intp = context.get_value_type(types.intp)
            populate_array(ary, data=ptr, shape=[intp(rows), intp(cols)],
                           strides=[intp(cols * isz), intp(isz)], itemsize=intp(isz),
                           meminfo=None)
            return ary._getvalue()

        return arrty(), codegen

    return alloc


_simplex = _stack(4, 10)          # w (3), point of a (3), point of b (3), weight
_epa_vertices = _stack(EPA_VERTICES, 9)
_epa_faces = _stack(_EPA_FACES, 8)   # i, j, k, normal (3), distance, alive (1) / visible (2)
_epa_edges = _stack(_EPA_FACES, 2)
_points = _stack(16, 3)


# ------------------------------------------------------------------ small helpers
@inline
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@inline
def _neg(a):
    return (-a[0], -a[1], -a[2])


@inline
def _row(A, i, j):
    return (A[i, j], A[i, j + 1], A[i, j + 2])


@inline
def _put(A, i, j, x):
    A[i, j] = x[0]
    A[i, j + 1] = x[1]
    A[i, j + 2] = x[2]


@inline
def _sgn(x):
    return 1.0 if x >= 0.0 else -1.0


@inline
def support(gm, gp, gR, g, d):
    """The point of shape g (sphere, capsule, box or cylinder) farthest along the world
    direction ``d`` (3 floats), world coordinates [m]; ties go to the positive side."""
    c = _v3(gp, g)
    k = gm.kind[g]
    if k == SHAPE_BOX:
        for j in range(3):
            e = _col(gR, g, j)
            c = _add(c, _mul(e, _sgn(_dot(e, d)) * gm.size[g, j]))
        return c
    z = _col(gR, g, 2)
    dz = _dot(d, z)
    if k == SHAPE_CYLINDER:   # the rim point along d's component in the local xy plane
        ex, ey = _col(gR, g, 0), _col(gR, g, 1)
        dx, dy = _dot(d, ex), _dot(d, ey)
        L = math.sqrt(dx * dx + dy * dy)
        c = _add(c, _mul(z, _sgn(dz) * gm.size[g, 1]))
        if L > 0.0:
            c = _add(c, _mul(_add(_mul(ex, dx), _mul(ey, dy)), gm.size[g, 0] / L))
        return c
    if k == SHAPE_CAPSULE:
        c = _add(c, _mul(z, _sgn(dz) * gm.size[g, 1]))
    L = _norm(d)
    if L > 0.0:
        c = _add(c, _mul(d, gm.size[g, 0] / L))
    return c


@inline
def _box_corner(gm, gp, gR, g, i):
    """Corner i (bit j: the sign along axis j) of box g, world."""
    x = _v3(gp, g)
    for j in range(3):
        x = _add(x, _mul(_col(gR, g, j), (1.0 if (i >> j) & 1 else -1.0) * gm.size[g, j]))
    return x


@inline
def _box_closest(gm, gp, gR, g, x):
    """The point of box g closest to the world point x."""
    c = _v3(gp, g)
    d = _sub(x, c)
    for j in range(3):
        e = _col(gR, g, j)
        h = gm.size[g, j]
        c = _add(c, _mul(e, min(h, max(-h, _dot(e, d)))))
    return c


@inline
def _box_edge(gm, gp, gR, g, e):
    """End points of edge e (0-11: axis e // 4, signs of the other two axes e % 4) of box g."""
    j = e // 4
    x = _v3(gp, g)
    bit = 0
    for m in range(3):
        if m == j:
            continue
        x = _add(x, _mul(_col(gR, g, m), (1.0 if (e >> bit) & 1 else -1.0) * gm.size[g, m]))
        bit += 1
    h = _mul(_col(gR, g, j), gm.size[g, j])
    return _sub(x, h), _add(x, h)


# ------------------------------------------------------------------ box-box
@inline
def _box_sep(gm, gR, a, b, d, L):
    """Separation of boxes a and b along the unit axis L, their centres ``d = c_b - c_a``
    apart: ``|d . L| - r_a - r_b``."""
    r = 0.0
    for j in range(3):
        r += gm.size[a, j] * abs(_dot(_col(gR, a, j), L)) + gm.size[b, j] * abs(
            _dot(_col(gR, b, j), L))
    return abs(_dot(d, L)) - r


@inline
def box_box_sat(gm, gp, gR, a, b):
    """Separating-axis test of boxes a and b over the 15 axes.

    Returns ``(s, n, axis, s_face, face, n_face)``: the largest separation ``s`` [m] (the
    negated penetration depth when they overlap, a lower bound of the distance when apart),
    its axis ``n`` (world, unit, from b to a) and index (0-2 faces of a, 3-5 faces of b,
    6 + 3 i + j the edge pair ``a_i x b_j``); the largest separation over the six face
    axes, its index and axis. Parallel edge pairs (cross product below 1e-9) are skipped:
    their axis is a face axis.
    """
    d = _sub(_v3(gp, b), _v3(gp, a))
    scale = 0.0
    for j in range(3):
        scale += gm.size[a, j] + gm.size[b, j]
    s = -math.inf
    n = (0.0, 0.0, 1.0)
    axis = -1
    sf = -math.inf
    face = 0
    nf = n
    for i in range(15):
        if i < 6:
            L = _col(gR, a if i < 3 else b, i % 3)
        else:
            L = _cross(_col(gR, a, (i - 6) // 3), _col(gR, b, (i - 6) % 3))
            ll = _norm(L)
            if ll < 1e-9:
                continue
            L = _mul(L, 1.0 / ll)
        si = _box_sep(gm, gR, a, b, d, L)
        Ln = L if _dot(d, L) <= 0.0 else _neg(L)
        if si > s:
            s, n, axis = si, Ln, i
        # a face of b replaces one of a only when it separates more by 1e-9 scale, so that
        # two resting faces keep their roles from step to step
        if i < 6 and si > sf + (1e-9 * scale if i >= 3 and face < 3 else 0.0):
            sf, face, nf = si, i, Ln
    return s, n, axis, sf, face, nf


@inline
def box_box_closest(gm, gp, gR, a, b):
    """Closest points ``(distance, p_a, p_b)`` of two boxes that do not overlap: the least
    of the corners of each against the other box and the 144 edge pairs (the closest
    points of two convex polyhedra lie on a corner or on two edges)."""
    best = math.inf
    pa = pb = _v3(gp, a)
    for t in range(16):
        g, o = (a, b) if t < 8 else (b, a)
        x = _box_corner(gm, gp, gR, g, t % 8)
        y = _box_closest(gm, gp, gR, o, x)
        dd = _dot(_sub(x, y), _sub(x, y))
        if dd < best:
            best = dd
            pa, pb = (x, y) if t < 8 else (y, x)
    for ea in range(12):
        p0, p1 = _box_edge(gm, gp, gR, a, ea)
        for eb in range(12):
            q0, q1 = _box_edge(gm, gp, gR, b, eb)
            s, t = _segments_closest(p0, p1, q0, q1)
            x = _lerp(p0, p1, s)
            y = _lerp(q0, q1, t)
            dd = _dot(_sub(x, y), _sub(x, y))
            if dd < best:
                best = dd
                pa, pb = x, y
    return math.sqrt(best), pa, pb


@inline
def _face_point(rc, eu, ev, u, v):
    """The point ``rc + u eu + v ev`` of the reference face (world) [m]."""
    return _add(_add(rc, _mul(eu, u)), _mul(ev, v))


@inline
def _face_contact(out, k, gm, a, b, y, m, z, sgn, reach, key):
    """Emit the manifold point over ``y`` on the reference face (outward normal m) whose
    incident surface lies ``z`` above it; ``sgn`` the sign taking m to the pair's
    normal."""
    x = _add(y, _mul(m, 0.5 * z))
    if z < reach:
        k = _emit(out, k, gm, a, b, x, _mul(m, sgn), z, key)
    return k


@inline
def _box_face_manifold(out, k, gm, gp, gR, a, b, face, reach, key):
    """The face-axis manifold of boxes a, b: reference face ``face`` (0-2 of a, 3-5 of b,
    the one towards the other box), incident face the other box's face most opposed to it;
    keys as the module says. Returns the new count."""
    r, o = (a, b) if face < 3 else (b, a)
    j = face % 3
    dro = _sub(_v3(gp, o), _v3(gp, r))
    m = _col(gR, r, j)
    if _dot(m, dro) < 0.0:
        m = _neg(m)
    sgn = -1.0 if r == a else 1.0          # pair normal: from b to a
    ju, jv = (j + 1) % 3, (j + 2) % 3
    eu, ev = _col(gR, r, ju), _col(gR, r, jv)
    hu, hv = gm.size[r, ju], gm.size[r, jv]
    rc = _add(_v3(gp, r), _mul(m, gm.size[r, j]))
    # incident face of o: its axis most parallel to m, the side facing r
    ji = 0
    for t in range(1, 3):
        if abs(_dot(_col(gR, o, t), m)) > abs(_dot(_col(gR, o, ji), m)):
            ji = t
    fi = _col(gR, o, ji)
    fi = _mul(fi, -_sgn(_dot(fi, m)))       # outward normal of the incident face
    ip, iq = (ji + 1) % 3, (ji + 2) % 3
    ep = _mul(_col(gR, o, ip), gm.size[o, ip])
    eq = _mul(_col(gR, o, iq), gm.size[o, iq])
    ic = _add(_v3(gp, o), _mul(fi, gm.size[o, ji]))
    scale = hu + hv + gm.size[o, ip] + gm.size[o, iq]
    tol = 1e-9 * scale
    P = _points()   # incident corners in the reference frame: u, v, z
    for i in range(4):
        su = 1.0 if i == 0 or i == 3 else -1.0
        sv = 1.0 if i < 2 else -1.0
        x = _sub(_add(ic, _add(_mul(ep, su), _mul(eq, sv))), rc)
        P[i, 0] = _dot(x, eu)
        P[i, 1] = _dot(x, ev)
        P[i, 2] = _dot(x, m)
    k0 = k
    # 1. incident corners inside the rectangle
    for i in range(4):
        if abs(P[i, 0]) <= hu + tol and abs(P[i, 1]) <= hv + tol:
            k = _face_contact(out, k, gm, a, b, _face_point(rc, eu, ev, P[i, 0], P[i, 1]), m,
                              P[i, 2], sgn, reach, key + i)
    # 2. rectangle corners strictly inside the incident quadrilateral
    area = 0.0
    for i in range(4):
        i1 = (i + 1) % 4
        area += P[i, 0] * P[i1, 1] - P[i1, 0] * P[i, 1]
    nz = _dot(fi, m)   # the incident plane: n_u u + n_v v + n_z z = const
    nu, nv = _dot(fi, eu), _dot(fi, ev)
    if area != 0.0 and nz != 0.0:
        ori = _sgn(area)
        for c in range(4):
            cu = hu if c == 0 or c == 3 else -hu
            cv = hv if c < 2 else -hv
            inside = True
            for i in range(4):
                i1 = (i + 1) % 4
                du, dv = P[i1, 0] - P[i, 0], P[i1, 1] - P[i, 1]
                cr = du * (cv - P[i, 1]) - dv * (cu - P[i, 0])
                if ori * cr <= tol * math.sqrt(du * du + dv * dv):
                    inside = False
            if inside:
                z = P[0, 2] - (nu * (cu - P[0, 0]) + nv * (cv - P[0, 1])) / nz
                k = _face_contact(out, k, gm, a, b, _face_point(rc, eu, ev, cu, cv), m, z, sgn,
                                  reach, key + 4 + c)
    # 3. incident edges entering / leaving the rectangle (Liang-Barsky)
    for i in range(4):
        i1 = (i + 1) % 4
        t0, t1 = 0.0, 1.0
        for ax in range(2):
            h = hu if ax == 0 else hv
            p0 = P[i, ax]
            dp = P[i1, ax] - p0
            for sd in range(2):   # the side planes +h and -h: s p <= h
                s = 1.0 if sd == 0 else -1.0
                num = h - s * p0
                den = s * dp
                if den == 0.0:
                    if num < 0.0:
                        t0, t1 = 1.0, 0.0
                elif den > 0.0:
                    t1 = min(t1, num / den)
                else:
                    t0 = max(t0, num / den)
        if t0 < t1:
            for e in range(2):
                t = t0 if e == 0 else t1
                if (e == 0 and t > 1e-9) or (e == 1 and t < 1.0 - 1e-9):
                    u = P[i, 0] + t * (P[i1, 0] - P[i, 0])
                    v = P[i, 1] + t * (P[i1, 1] - P[i, 1])
                    z = P[i, 2] + t * (P[i1, 2] - P[i, 2])
                    k = _face_contact(out, k, gm, a, b, _face_point(rc, eu, ev, u, v), m, z,
                                      sgn, reach, key + 8 + 2 * i + e)
    if k == k0:   # nothing over the face (a corner beyond its edge): the deepest corner
        i0 = 0
        for i in range(1, 4):
            if P[i, 2] < P[i0, 2]:
                i0 = i
        k = _face_contact(out, k, gm, a, b, _face_point(rc, eu, ev, P[i0, 0], P[i0, 1]), m,
                          P[i0, 2], sgn, reach, key + i0)
    return k


@inline
def box_box(out, k, gm, gp, gR, a, b, reach, key):
    """Contacts of boxes a and b within ``reach`` [m] (module docstring): a face manifold
    of up to 8 points, or one point for an edge pair or separated boxes whose closest
    features are not two faces. Returns the new count."""
    s, n, axis, sf, face, _nf = box_box_sat(gm, gp, gR, a, b)
    if not s < reach:   # apart beyond the reach, or NaN poses (no contact)
        return k
    scale = gm.size[a, 0] + gm.size[a, 1] + gm.size[a, 2] + gm.size[b, 0] + gm.size[b, 1] + \
        gm.size[b, 2]
    use_face = axis < 6 or s <= sf + _EDGE_BIAS * scale
    if s > 0.0:   # apart: the Euclidean distance from the closest features
        D, pa, pb = box_box_closest(gm, gp, gR, a, b)
        if D >= reach:
            return k
        if not (use_face and D <= sf + 1e-9 * scale):
            nn = _mul(_sub(pa, pb), 1.0 / D) if D > 0.0 else n
            return _emit(out, k, gm, a, b, _mul(_add(pa, pb), 0.5), nn, D, key)
    if use_face:
        return _box_face_manifold(out, k, gm, gp, gR, a, b, face, reach, key)
    # edge pair: the edge of a deepest along -n, of b along +n
    i, j = (axis - 6) // 3, (axis - 6) % 3
    pa = _v3(gp, a)
    pb = _v3(gp, b)
    for m in range(3):
        if m != i:
            e = _col(gR, a, m)
            pa = _add(pa, _mul(e, -_sgn(_dot(e, n)) * gm.size[a, m]))
        if m != j:
            e = _col(gR, b, m)
            pb = _add(pb, _mul(e, _sgn(_dot(e, n)) * gm.size[b, m]))
    ha = _mul(_col(gR, a, i), gm.size[a, i])
    hb = _mul(_col(gR, b, j), gm.size[b, j])
    p0, p1 = _sub(pa, ha), _add(pa, ha)
    q0, q1 = _sub(pb, hb), _add(pb, hb)
    u, t = _segments_closest(p0, p1, q0, q1)
    x = _mul(_add(_lerp(p0, p1, u), _lerp(q0, q1, t)), 0.5)
    return _emit(out, k, gm, a, b, x, n, s, key)


# ------------------------------------------------------------------ GJK and EPA
@inline
def _support_pair(gm, gp, gR, a, b, d, S, i):
    """Row i of S: the support point ``w = s_a(d) - s_b(-d)`` of the Minkowski difference
    a - b along d, with its two points."""
    x = support(gm, gp, gR, a, d)
    y = support(gm, gp, gR, b, _neg(d))
    _put(S, i, 0, _sub(x, y))
    _put(S, i, 3, x)
    _put(S, i, 6, y)


@inline
def _triangle_weights(A, B, C):
    """Barycentric weights of the point of triangle ABC closest to the origin (Ericson,
    Real-Time Collision Detection, 5.1.5)."""
    ab = _sub(B, A)
    ac = _sub(C, A)
    d1 = -_dot(ab, A)
    d2 = -_dot(ac, A)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    d3 = -_dot(ab, B)
    d4 = -_dot(ac, B)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return 1.0 - v, v, 0.0
    d5 = -_dot(ab, C)
    d6 = -_dot(ac, C)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return 1.0 - w, 0.0, w
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - w, w
    den = va + vb + vc
    if den == 0.0:   # degenerate: the nearest vertex
        return 1.0, 0.0, 0.0
    v = vb / den
    w = vc / den
    return 1.0 - v - w, v, w


@inline
def _simplex_closest(S, n):
    """Reduce the simplex ``S[:n]`` to the smallest face holding its point closest to the
    origin, weights in column 9; returns the new size, or 0 when the tetrahedron holds the
    origin."""
    if n == 1:
        S[0, 9] = 1.0
        return 1
    if n == 2:
        A, B = _row(S, 0, 0), _row(S, 1, 0)
        ab = _sub(B, A)
        dd = _dot(ab, ab)
        t = min(1.0, max(0.0, -_dot(A, ab) / dd)) if dd > 0.0 else 0.0
        S[0, 9], S[1, 9] = 1.0 - t, t
    elif n == 3:
        S[0, 9], S[1, 9], S[2, 9] = _triangle_weights(_row(S, 0, 0), _row(S, 1, 0),
                                                      _row(S, 2, 0))
    else:
        best = math.inf
        inside = True
        l0 = l1 = l2 = l3 = 0.0
        for f in range(4):   # the face opposite vertex f
            i, j, m = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
            A, B, C, D = _row(S, i, 0), _row(S, j, 0), _row(S, m, 0), _row(S, f, 0)
            nf = _cross(_sub(B, A), _sub(C, A))
            if _dot(A, nf) * _dot(_sub(D, A), nf) > 0.0 or _dot(_sub(D, A), nf) == 0.0:
                inside = False
                wa, wb, wc = _triangle_weights(A, B, C)
                x = _add(_add(_mul(A, wa), _mul(B, wb)), _mul(C, wc))
                dd = _dot(x, x)
                if dd < best:
                    best = dd
                    l0 = l1 = l2 = l3 = 0.0   # vertex f keeps weight 0
                    for t in range(4):
                        wt = wa if t == i else (wb if t == j else (wc if t == m else 0.0))
                        if t == 0:
                            l0 = wt
                        elif t == 1:
                            l1 = wt
                        elif t == 2:
                            l2 = wt
                        else:
                            l3 = wt
        if inside:
            return 0
        S[0, 9], S[1, 9], S[2, 9], S[3, 9] = l0, l1, l2, l3
    # keep the vertices of positive weight
    m = 0
    for i in range(n):
        if S[i, 9] > 0.0:
            for c in range(10):
                S[m, c] = S[i, c]
            m += 1
    return m


@inline
def _simplex_point(S, n, col):
    x = (0.0, 0.0, 0.0)
    for i in range(n):
        x = _add(x, _mul(_row(S, i, col), S[i, 9]))
    return x


@inline
def _epa_face(V, F, f, i, j, m):
    """Face f of the polytope: vertices i, j, m (counter-clockwise seen from outside), its
    outward unit normal and its distance from the origin (a degenerate face: infinite)."""
    A = _row(V, i, 0)
    nf = _cross(_sub(_row(V, j, 0), A), _sub(_row(V, m, 0), A))
    L = _norm(nf)
    F[f, 0], F[f, 1], F[f, 2] = i, j, m
    F[f, 7] = 1.0
    if L > 0.0:
        nf = _mul(nf, 1.0 / L)
        _put(F, f, 3, nf)
        F[f, 6] = _dot(nf, A)
    else:
        _put(F, f, 3, (0.0, 0.0, 1.0))
        F[f, 6] = math.inf


@inline
def _epa_neighbour(F, nf, p, q):
    """The live face among ``F[:nf]`` with the directed edge p -> q, or -1."""
    for g in range(nf):
        if F[g, 7] != 0.0:
            for e in range(3):
                if int(F[g, e]) == p and int(F[g, (e + 1) % 3]) == q:
                    return g
    return -1


@inline
def _epa(gm, gp, gR, a, b, S, tol):
    """Penetration of a and b (expanding polytope, van den Bergen 2001) from the tetrahedron
    ``S`` that holds the origin: ``(depth, n_f, p_a, p_b)`` with ``n_f`` the outward normal
    of the closest face of the Minkowski difference a - b (moving a by ``-depth n_f``
    separates them)."""
    V = _epa_vertices()
    F = _epa_faces()
    E = _epa_edges()
    for i in range(4):
        for c in range(9):
            V[i, c] = S[i, c]
    nv = 4
    nf = 4
    for f in range(4):
        i, j, m = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
        A = _row(V, i, 0)
        if _dot(_cross(_sub(_row(V, j, 0), A), _sub(_row(V, m, 0), A)),
                _sub(_row(V, f, 0), A)) > 0.0:
            j, m = m, j
        _epa_face(V, F, f, i, j, m)
    d = math.inf
    nrm = (0.0, 0.0, 1.0)
    i = j = m = 0
    while True:
        best = -1
        for f in range(nf):
            if F[f, 7] == 1.0 and (best < 0 or F[f, 6] < F[best, 6]):
                best = f
        if best < 0 or not F[best, 6] < math.inf:
            break
        d = F[best, 6]
        nrm = _row(F, best, 3)
        i, j, m = int(F[best, 0]), int(F[best, 1]), int(F[best, 2])
        if nv == EPA_VERTICES:
            break
        _support_pair(gm, gp, gR, a, b, nrm, V, nv)
        w = _row(V, nv, 0)
        if _dot(nrm, w) - F[best, 6] <= tol:
            break
        dup = False
        for i in range(nv):
            if _norm(_sub(w, _row(V, i, 0))) <= tol:
                dup = True
        if dup:
            break
        # the faces that see w, flooded from the closest one across shared edges (a
        # connected set, whatever the rounding), and the horizon: the edges of the set
        # whose other face does not see w
        F[best, 7] = 2.0
        ne = 0
        grown = True
        while grown:
            grown = False
            ne = 0
            for f in range(nf):
                if F[f, 7] != 2.0:
                    continue
                for e in range(3):
                    p, q = int(F[f, e]), int(F[f, (e + 1) % 3])
                    g = _epa_neighbour(F, nf, q, p)
                    if g < 0 or F[g, 7] != 1.0:
                        continue
                    if not F[g, 6] < math.inf or _dot(_row(F, g, 3), _sub(
                            w, _row(V, int(F[g, 0]), 0))) > 0.0:
                        F[g, 7] = 2.0
                        grown = True
                    elif ne < E.shape[0]:
                        E[ne, 0], E[ne, 1] = p, q
                        ne += 1
        for f in range(nf):
            if F[f, 7] == 2.0:
                F[f, 7] = 0.0
        full = False
        for e in range(ne):   # a new face per horizon edge, in a free slot
            f = 0
            while f < nf and F[f, 7] != 0.0:
                f += 1
            if f == nf:
                if nf == _EPA_FACES:
                    full = True
                    break
                nf += 1
            _epa_face(V, F, f, int(E[e, 0]), int(E[e, 1]), nv)
        nv += 1
        if full:
            break
    if best < 0 or not d < math.inf:   # no face left (a flat polytope): touching
        return 0.0, (0.0, 0.0, 1.0), _row(V, 0, 3), _row(V, 0, 6)
    # the witness points: barycentric coordinates of d n_f in the closest face
    A, B, C = _row(V, i, 0), _row(V, j, 0), _row(V, m, 0)
    p = _mul(nrm, d)
    la = _dot(_cross(_sub(B, p), _sub(C, p)), nrm)
    lb = _dot(_cross(_sub(C, p), _sub(A, p)), nrm)
    lc = _dot(_cross(_sub(A, p), _sub(B, p)), nrm)
    s = la + lb + lc
    if s > 0.0:
        la, lb, lc = la / s, lb / s, lc / s
    else:
        la, lb, lc = 1.0, 0.0, 0.0
    pa = _add(_add(_mul(_row(V, i, 3), la), _mul(_row(V, j, 3), lb)), _mul(_row(V, m, 3), lc))
    pb = _add(_add(_mul(_row(V, i, 6), la), _mul(_row(V, j, 6), lb)), _mul(_row(V, m, 6), lc))
    return d, nrm, pa, pb


@inline
def _blow_up(gm, gp, gR, a, b, S, n):
    """Grow a simplex of fewer than 4 points around the origin (shapes that touch) into a
    tetrahedron, with support points along directions off its span."""
    tries = 0
    while n < 4 and tries < 12:
        A = _row(S, 0, 0)
        if n == 1:
            d = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))[tries % 3]
        elif n == 2:
            e = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))[tries % 3]
            d = _cross(_sub(_row(S, 1, 0), A), e)
        else:
            d = _cross(_sub(_row(S, 1, 0), A), _sub(_row(S, 2, 0), A))
        if tries >= 3:
            d = _neg(d)
        tries += 1
        if _norm(d) == 0.0:
            continue
        _support_pair(gm, gp, gR, a, b, d, S, n)
        w = _row(S, n, 0)
        # keep w only when it leaves the span of the simplex
        if n == 1:
            ok = _norm(_sub(w, A)) > 0.0
        elif n == 2:
            ok = _norm(_cross(_sub(_row(S, 1, 0), A), _sub(w, A))) > 0.0
        else:
            ok = _dot(d, _sub(w, A)) != 0.0
        if ok:
            n += 1
    return n


@inline
def gjk_epa(gm, gp, gR, a, b):
    """Signed distance of two convex shapes (sphere, capsule, box, cylinder) by GJK
    (Gilbert, Johnson & Keerthi 1988) when apart and EPA (van den Bergen 2001) when they
    overlap.

    Returns ``(dist, n, p_a, p_b)``: the signed distance [m] (< 0: depth), the unit normal
    from b to a (world) and the witness points on a and on b (world, [m]). Both stop at
    :data:`CONVEX_TOL` times ``rb_a + rb_b`` on the gap between the upper and lower bounds
    of the distance (depth), or at their caps.
    """
    tol = CONVEX_TOL * (gm.rb[a] + gm.rb[b])
    S = _simplex()
    d = _sub(_v3(gp, a), _v3(gp, b))
    if _norm(d) == 0.0:
        d = (1.0, 0.0, 0.0)
    _support_pair(gm, gp, gR, a, b, d, S, 0)
    S[0, 9] = 1.0
    n = 1
    v = _row(S, 0, 0)
    for _it in range(GJK_ITERATIONS):
        vv = _dot(v, v)
        if vv <= tol * tol:
            break
        _support_pair(gm, gp, gR, a, b, _neg(v), S, n)
        w = _row(S, n, 0)
        if vv - _dot(v, w) <= tol * math.sqrt(vv):   # distance known to tol: apart
            pa = _simplex_point(S, n, 3)
            pb = _simplex_point(S, n, 6)
            L = math.sqrt(vv)
            return L, _mul(v, 1.0 / L), pa, pb
        n = _simplex_closest(S, n + 1)
        if n == 0:
            n = 4
            break
        v = _simplex_point(S, n, 0)
    if n < 4:
        n = _blow_up(gm, gp, gR, a, b, S, n)
        if n < 4:   # flat Minkowski difference: touching
            L = _norm(v)
            nn = _mul(v, 1.0 / L) if L > 0.0 else (0.0, 0.0, 1.0)
            return L, nn, _simplex_point(S, 1, 3), _simplex_point(S, 1, 6)
    depth, nf, pa, pb = _epa(gm, gp, gR, a, b, S, tol)
    return -depth, _neg(nf), pa, pb


# ------------------------------------------------------------------ convex pairs
@inline
def _feature_point(gm, gp, gR, g, d, i):
    """Candidate i (0-5) of shape g's manifold towards the world direction d: ``(valid, x,
    f)`` with ``f`` the feature's flat normal (box face, cylinder cap) or its line direction
    (cylinder side: ``f = z``, i 4-5). A box: the corners 0-3 of its face most along d; a
    cylinder: the rim points 0-3 (local +-x, +-y) of the cap along d when ``|d . z| >= 0.5``,
    else the two ends 4-5 of its side line along d."""
    c = _v3(gp, g)
    if gm.kind[g] == SHAPE_BOX:
        if i >= 4:
            return False, c, c
        j = 0
        for t in range(1, 3):
            if abs(_dot(_col(gR, g, t), d)) > abs(_dot(_col(gR, g, j), d)):
                j = t
        f = _mul(_col(gR, g, j), _sgn(_dot(_col(gR, g, j), d)))
        p, q = (j + 1) % 3, (j + 2) % 3
        su = 1.0 if i == 0 or i == 3 else -1.0
        sv = 1.0 if i < 2 else -1.0
        x = _add(_add(c, _mul(f, gm.size[g, j])),
                 _add(_mul(_col(gR, g, p), su * gm.size[g, p]),
                      _mul(_col(gR, g, q), sv * gm.size[g, q])))
        return True, x, f
    z = _col(gR, g, 2)
    dz = _dot(d, z)
    r, hl = gm.size[g, 0], gm.size[g, 1]
    if abs(dz) >= 0.5:
        if i >= 4:
            return False, c, c
        f = _mul(z, _sgn(dz))
        e = _col(gR, g, i % 2)
        x = _add(_add(c, _mul(f, hl)), _mul(e, r if i < 2 else -r))
        return True, x, f
    if i < 4:
        return False, c, c
    w = _sub(d, _mul(z, dz))
    w = _mul(w, 1.0 / _norm(w))
    x = _add(_add(c, _mul(w, r)), _mul(z, hl if i == 5 else -hl))
    return True, x, z


@inline
def _rests(gm, gp, gR, o, x, sgn, n, reach):
    """``(ok, sd, normal)``: the point x against shape o's signed distance; ok where it is
    within the reach and o's normal (times ``sgn``, towards the pair's convention) lies
    within :data:`MANIFOLD_COS` of n."""
    sd, no = _sdf(gm, gp, gR, o, x)
    no = _mul(no, sgn)
    return sd < reach and _dot(no, n) >= MANIFOLD_COS, sd, no


@inline
def convex_pair(out, k, gm, gp, gR, a, b, reach, key):
    """Contacts of two convex shapes (box or cylinder, either order) within ``reach`` [m]:
    :func:`gjk_epa`'s point (key 15) and the manifold of the features of each that face
    the other (module docstring). Returns the new count."""
    dist, n, pa, pb = gjk_epa(gm, gp, gR, a, b)
    if not dist < reach:
        return k
    P = _points()
    npts = 0
    dup = 1e-3 * (gm.rb[a] + gm.rb[b])
    for side in range(2):
        g, o = (a, b) if side == 0 else (b, a)
        sgn = 1.0 if side == 0 else -1.0   # o's outward normal -> from b to a
        d = _mul(n, -sgn)                  # a's features face -n, b's +n
        pg = pa if side == 0 else pb
        for i in range(6):
            valid, x, f = _feature_point(gm, gp, gR, g, d, i)
            if not valid:
                continue
            ok, sd, no = _rests(gm, gp, gR, o, x, sgn, n, reach)
            if not ok:   # towards the witness point, within the same flat feature or line
                dx = _sub(x, pg)
                if i < 4:
                    on = abs(_dot(f, dx)) <= 1e-9 * (gm.rb[a] + gm.rb[b])
                else:
                    on = _norm(_sub(dx, _mul(f, _dot(f, dx)))) <= 1e-9 * (gm.rb[a] + gm.rb[b])
                if not on:
                    continue
                lo, hi = 0.0, 1.0
                for _ in range(_BISECT):
                    mid = 0.5 * (lo + hi)
                    okm, _s, _n = _rests(gm, gp, gR, o, _lerp(pg, x, mid), sgn, n, reach)
                    if okm:
                        lo = mid
                    else:
                        hi = mid
                x = _lerp(pg, x, lo)
                ok, sd, no = _rests(gm, gp, gR, o, x, sgn, n, reach)
                if not ok:
                    continue
            near = False
            for t in range(npts):
                if _norm(_sub(_row(P, t, 0), x)) <= dup:
                    near = True
            if near:
                continue
            _put(P, npts, 0, x)
            npts += 1
            # x on g; the other surface lies sd along o's normal
            k = _emit(out, k, gm, a, b, _sub(x, _mul(no, 0.5 * sd * sgn)), no, sd,
                      key + 1 + 6 * side + i)
    x = _mul(_add(pa, pb), 0.5)
    for t in range(npts):
        if _norm(_sub(_row(P, t, 0), pa)) <= dup or _norm(_sub(_row(P, t, 0), pb)) <= dup:
            return k
    return _emit(out, k, gm, a, b, x, n, dist, key + 15)


@inline
def convex_convex(out, k, gm, gp, gR, a, b, reach, key):
    """Contacts of a pair of boxes and cylinders: :func:`box_box` for two boxes, else
    :func:`convex_pair`. Returns the new count."""
    if gm.kind[a] == SHAPE_BOX and gm.kind[b] == SHAPE_BOX:
        return box_box(out, k, gm, gp, gR, a, b, reach, key)
    return convex_pair(out, k, gm, gp, gR, a, b, reach, key)


__all__ = ["support", "box_box_sat", "box_box_closest", "box_box", "gjk_epa", "convex_pair",
           "convex_convex", "CONVEX_TOL", "GJK_ITERATIONS", "EPA_VERTICES", "MANIFOLD_COS"]
