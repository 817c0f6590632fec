"""What every narrow phase of :mod:`articulated.algorithms.collision` shares.

3-vectors as tuples, the world pose of a shape, closest points of segments, the signed
distance of a box, cylinder, sphere or capsule at a point, and writing a contact into the
output buffers (:data:`~articulated.algorithms.collision.Contacts`: the normal from shape b
to shape a, the point midway between the surfaces, the distance negative when they
overlap). All are inlined helpers of the compiled detection.
"""

from __future__ import annotations

import math

from ..config import inline
from ..geometry import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_PLANE, SHAPE_SPHERE

_SEARCH_STEPS = 128
_PARALLEL = 1e-12


# ------------------------------------------------------------------ 3-vector helpers
@inline
def _v3(A, i):
    return (A[i, 0], A[i, 1], A[i, 2])


@inline
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@inline
def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@inline
def _mul(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@inline
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@inline
def _norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@inline
def _col(R, g, k):
    """Column k of the rotation of shape g: its local axis k in world coordinates."""
    return (R[g, 0, k], R[g, 1, k], R[g, 2, k])


@inline
def _to_local(R, p, g, x):
    """World point x in the frame of shape g: ``R^T (x - p)``."""
    d = _sub(x, _v3(p, g))
    return (_dot(_col(R, g, 0), d), _dot(_col(R, g, 1), d), _dot(_col(R, g, 2), d))


@inline
def _to_world_dir(R, g, d):
    return _add(_add(_mul(_col(R, g, 0), d[0]), _mul(_col(R, g, 1), d[1])),
                _mul(_col(R, g, 2), d[2]))


@inline
def _any_perp(n):
    """A unit vector perpendicular to the unit vector n."""
    if abs(n[0]) < 0.9:
        t = (0.0, n[2], -n[1])
    else:
        t = (-n[2], 0.0, n[0])
    return _mul(t, 1.0 / _norm(t))


# ------------------------------------------------------------------ output
@inline
def _emit(out, k, gm, a, b, point, normal, dist, key):
    """Write contact k if it fits; return k + 1 (the count goes on past the capacity)."""
    if k < out.dist.shape[0]:
        out.key[k] = key
        out.geom[k, 0] = a
        out.geom[k, 1] = b
        out.body[k, 0] = gm.body[a]
        out.body[k, 1] = gm.body[b]
        for j in range(3):
            out.point[k, j] = point[j]
            out.normal[k, j] = normal[j]
        out.dist[k] = dist
        out.mu[k] = math.sqrt(gm.mu[a] * gm.mu[b])
        out.e[k] = max(gm.e[a], gm.e[b])
    return k + 1


@inline
def _emit_core(out, k, gm, a, b, x, ra, n, sd, key):
    """Contact of a ball of radius ``ra`` about ``x`` (on shape a's core) whose centre lies
    at signed distance ``sd`` from shape b with outward unit normal ``n``."""
    dist = sd - ra
    point = _sub(x, _mul(n, ra + 0.5 * dist))
    return _emit(out, k, gm, a, b, point, n, dist, key)


# ------------------------------------------------------------------ cores of shape a
@inline
def _segment(gm, gp, gR, a):
    """End points of shape a's core: a sphere's centre twice, a capsule's segment."""
    c = _v3(gp, a)
    if gm.kind[a] == SHAPE_CAPSULE:
        z = _mul(_col(gR, a, 2), gm.size[a, 1])
        return _sub(c, z), _add(c, z)
    return c, c


@inline
def _closest_on_segment(p0, p1, x):
    """Parameter in [0, 1] of the point of segment p0-p1 closest to x."""
    d = _sub(p1, p0)
    dd = _dot(d, d)
    if dd <= 0.0:
        return 0.0
    return min(1.0, max(0.0, _dot(_sub(x, p0), d) / dd))


@inline
def _segments_closest(p0, p1, q0, q1):
    """Parameters (s, t) of the closest points of segments p0-p1 and q0-q1 (Ericson,
    Real-Time Collision Detection, sec. 5.1.9); parallel segments: s = the clamped midpoint
    of the overlap."""
    d1 = _sub(p1, p0)
    d2 = _sub(q1, q0)
    r = _sub(p0, q0)
    a = _dot(d1, d1)
    e = _dot(d2, d2)
    f = _dot(d2, r)
    if a <= 0.0 and e <= 0.0:
        return 0.0, 0.0
    if a <= 0.0:
        return 0.0, min(1.0, max(0.0, f / e))
    c = _dot(d1, r)
    if e <= 0.0:
        return min(1.0, max(0.0, -c / a)), 0.0
    b = _dot(d1, d2)
    den = a * e - b * b
    if den > _PARALLEL * a * e:
        s = min(1.0, max(0.0, (b * f - c * e) / den))
    else:  # parallel: the middle of the part of p0-p1 that faces q0-q1
        s0 = min(1.0, max(0.0, -c / a))
        s1 = min(1.0, max(0.0, (b - c) / a))
        s = 0.5 * (s0 + s1)
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(1.0, max(0.0, -c / a))
    elif t > 1.0:
        t = 1.0
        s = min(1.0, max(0.0, (b - c) / a))
    return s, t


@inline
def _lerp(p0, p1, s):
    return _add(p0, _mul(_sub(p1, p0), s))


# ------------------------------------------------------------------ signed distances of b
@inline
def _sdf(gm, gp, gR, b, x):
    """Signed distance (< 0 inside) of world point x from convex shape b and the outward
    unit normal there (the gradient of the distance). Sphere, capsule: distance to the
    core minus the radius; box, cylinder: exact; plane: ``n . (x - p)``."""
    k = gm.kind[b]
    if k == SHAPE_PLANE:
        n = _col(gR, b, 2)
        return _dot(n, _sub(x, _v3(gp, b))), n
    if k == SHAPE_SPHERE or k == SHAPE_CAPSULE:
        p0, p1 = _segment(gm, gp, gR, b)
        y = _lerp(p0, p1, _closest_on_segment(p0, p1, x))
        d = _sub(x, y)
        L = _norm(d)
        if L > 0.0:
            return L - gm.size[b, 0], _mul(d, 1.0 / L)
        n = _any_perp(_col(gR, b, 2)) if k == SHAPE_CAPSULE else (0.0, 0.0, 1.0)
        return -gm.size[b, 0], n
    xl = _to_local(gR, gp, b, x)
    if k == SHAPE_BOX:
        h = (gm.size[b, 0], gm.size[b, 1], gm.size[b, 2])
        qx = abs(xl[0]) - h[0]
        qy = abs(xl[1]) - h[1]
        qz = abs(xl[2]) - h[2]
        ox, oy, oz = max(qx, 0.0), max(qy, 0.0), max(qz, 0.0)
        out = math.sqrt(ox * ox + oy * oy + oz * oz)
        if out > 0.0:
            nl = (math.copysign(ox, xl[0]) / out, math.copysign(oy, xl[1]) / out,
                  math.copysign(oz, xl[2]) / out)
            return out, _to_world_dir(gR, b, nl)
        if qx >= qy and qx >= qz:
            return qx, _to_world_dir(gR, b, (math.copysign(1.0, xl[0]), 0.0, 0.0))
        if qy >= qz:
            return qy, _to_world_dir(gR, b, (0.0, math.copysign(1.0, xl[1]), 0.0))
        return qz, _to_world_dir(gR, b, (0.0, 0.0, math.copysign(1.0, xl[2])))
    # cylinder: radial and axial excess
    rho = math.sqrt(xl[0] * xl[0] + xl[1] * xl[1])
    if rho > 0.0:
        ux, uy = xl[0] / rho, xl[1] / rho
    else:
        ux, uy = 1.0, 0.0
    dr = rho - gm.size[b, 0]
    dz = abs(xl[2]) - gm.size[b, 1]
    sz = math.copysign(1.0, xl[2])
    if dr > 0.0 and dz > 0.0:  # outside, beyond the rim
        L = math.sqrt(dr * dr + dz * dz)
        return L, _to_world_dir(gR, b, (ux * dr / L, uy * dr / L, sz * dz / L))
    if dr > 0.0 or (dz <= 0.0 and dr >= dz):  # outside the side, or inside nearer the side
        return dr, _to_world_dir(gR, b, (ux, uy, 0.0))
    return dz, _to_world_dir(gR, b, (0.0, 0.0, sz))  # beyond a cap, or inside nearer a cap


@inline
def _segment_min_sdf(gm, gp, gR, b, p0, p1):
    """Parameter in [0, 1] of the point of segment p0-p1 deepest in (or closest to) the
    convex shape b. The signed distance ``f`` of a convex set is convex along a line, so
    the sign of its directional derivative ``g(s) = n(x(s)) . (p1 - p0)`` (``n`` the
    gradient :func:`_sdf` returns, a subgradient at a kink) tells on which side of s a
    minimizer lies. A bracket ``[lo, hi]`` with ``g(lo) < 0 < g(hi)``, from the end points
    (a minimum may sit at one), shrinks at the root of the secant of ``g`` (regula falsi
    with the Illinois weights, superlinear where ``g`` is smooth: outside a box or
    cylinder), or, where a step finds ``g`` unchanged on its side (``f`` linear there:
    inside a box), at the meeting point of the tangents of ``f`` at the two ends (the
    kink where both sides are linear); a bisection after three steps that did not halve
    it. It ends when no point lies strictly inside: the minimizer of a plain bisection on
    the sign of ``g`` to the last bit, in about 14 evaluations of :func:`_sdf` instead of
    its 55 (``tests/test_contact.py::test_segment_search_finds_the_bisections_minimum``).
    A search on the values alone (golden
    section) places a smooth minimum only to ~sqrt(eps) of the segment, since near the
    bottom the values differ by less than their rounding; the derivative's sign stays well
    conditioned there. Where the derivative is zero over an interval (a segment parallel
    to a face) the first end point is returned; the end points of a capsule are contacts
    of their own (:func:`_core_pair`)."""
    d = _sub(p1, p0)
    if _norm(d) <= 0.0:
        return 0.0
    flo, n = _sdf(gm, gp, gR, b, p0)
    glo = _dot(n, d)
    if glo >= 0.0:
        return 0.0
    fhi, n = _sdf(gm, gp, gR, b, p1)
    ghi = _dot(n, d)
    if ghi <= 0.0:
        return 1.0
    lo, hi = 0.0, 1.0
    wlo, whi = glo, ghi     # the secant's (Illinois) weights of g(lo), g(hi)
    side = 0                # the end the last step moved (-1 lo, 1 hi)
    tangent = False
    ref = 1.0               # the bracket's width when it last halved
    since = 0               # steps since
    for _ in range(_SEARCH_STEPS):
        if since >= 3:
            t = 0.5 * (lo + hi)
        elif tangent:
            t = (fhi - flo + glo * lo - ghi * hi) / (glo - ghi)
            if not lo < t < hi:     # at an end of the bracket (to rounding): the secant
                t = lo - wlo * (hi - lo) / (whi - wlo)
        else:
            t = lo - wlo * (hi - lo) / (whi - wlo)
        if not lo < t < hi:
            t = 0.5 * (lo + hi)
            if not lo < t < hi:
                break
        f, n = _sdf(gm, gp, gR, b, _lerp(p0, p1, t))
        g = _dot(n, d)
        if g < 0.0:
            tangent = abs(g - glo) <= 1e-12 * abs(glo)
            lo, flo, glo, wlo = t, f, g, g
            if side < 0:
                whi *= 0.5
            side = -1
        elif g > 0.0:
            tangent = abs(g - ghi) <= 1e-12 * ghi
            hi, fhi, ghi, whi = t, f, g, g
            if side > 0:
                wlo *= 0.5
            side = 1
        else:
            return t
        since += 1
        if hi - lo <= 0.5 * ref:
            ref = hi - lo
            since = 0
    return 0.5 * (lo + hi)
