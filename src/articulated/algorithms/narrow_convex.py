"""Narrow phase of the convex pairs without a short closed form: box-box.

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

Box-cylinder and cylinder-cylinder pairs have no narrow phase yet:
:class:`~articulated.algorithms.collision.Detector` refuses them, naming the two shapes.

Conventions of :mod:`articulated.algorithms.collision`: the normal (world, unit) points
from shape b to shape a, the point lies midway between the surfaces, the distance is
negative when they overlap. The manifold's work array lives on the stack (:func:`_stack`):
nothing is allocated on the heap.
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
from .collision import (_add, _col, _dot, _emit, _lerp, _mul, _norm, _segments_closest, _sub,
                        _v3)

_EDGE_BIAS = 1e-6
"""An edge axis of box-box replaces the best face axis only when it separates more by this
times the sum of the largest half extents (a box resting on a face keeps its face
manifold)."""


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
def _face_contact(out, k, gm, a, b, rc, U, V, m, z, sgn, reach, key):
    """Emit the manifold point at ``rc + U + V`` on the reference face (outward normal m)
    whose incident surface lies ``z`` above it; ``sgn`` the sign taking m to the pair's
    normal."""
    x = _add(_add(rc, U), _add(V, _mul(m, 0.5 * z)))
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
            k = _face_contact(out, k, gm, a, b, rc, _mul(eu, P[i, 0]), _mul(ev, P[i, 1]), m,
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
                k = _face_contact(out, k, gm, a, b, rc, _mul(eu, cu), _mul(ev, cv), m, z, sgn,
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
                    k = _face_contact(out, k, gm, a, b, rc, _mul(eu, u), _mul(ev, v), m, z,
                                      sgn, reach, key + 8 + 2 * i + e)
    if k == k0:   # nothing over the face (a corner beyond its edge): the deepest corner
        i0 = 0
        for i in range(1, 4):
            if P[i, 2] < P[i0, 2]:
                i0 = i
        k = _face_contact(out, k, gm, a, b, rc, _mul(eu, P[i0, 0]), _mul(ev, P[i0, 1]), m,
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


__all__ = ["box_box_sat", "box_box_closest", "box_box"]
