"""6D spatial algebra in Featherstone's convention, as small allocation-free numba helpers.

Conventions (Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), 2008, ch. 2):

* Motion vectors ``v = [w; v_O]`` and force vectors ``f = [n_O; f]`` are **angular first**,
  shape ``(6,)``; the linear part of a motion vector is the velocity of the frame origin,
  the angular part of a force vector the moment about the frame origin.
* A coordinate transform ``bXa`` from frame A to frame B is stored compactly as
  ``(E, r)``: ``E`` (3, 3) rotates A coordinates into B coordinates and ``r`` (3,) is the
  position of B's origin in A coordinates (RBDA eq. 2.24):
  ``bXa = [[E, 0], [-E r^, E]]``, ``bXa* = [[E, -E r^], [0, E]]``.
* A rigid-body spatial inertia about the body origin is stored compactly as
  ``(m, h = m c, Ibar)`` where ``Ibar`` is the rotational inertia about the origin
  (RBDA eq. 2.63): ``I = [[Ibar, h^], [h^T, m 1]]``.
* Articulated and composite inertias (symmetric 6x6) are packed into 21 entries, block by
  block (:func:`sym6_index`): the upper triangle of the top-left block A
  (``a00 a01 a02 a11 a12 a22``), the top-right block B row by row (``b00 .. b22``; the
  bottom-left block is B^T), the upper triangle of the bottom-right block C.

Two kinds of helpers:

* **Register helpers** (the hot path) take and return *tuples* of scalars: a 3-vector is a
  3-tuple, a 6-vector a 6-tuple, a rotation ``E`` a 9-tuple in row-major order, a packed
  symmetric 6x6 a 21-tuple. Kernels load an array entry once (:func:`get_vec6`,
  :func:`get_mat3`, :func:`get_sym6`, ...), chain register helpers, and store the result once
  (:func:`set_vec6`, ...). This keeps values in registers: numba arrays may alias, so
  values written to memory between steps would be re-read; and in a kernel compiled with
  numba's reference counting, each array view it creates (``A[i]``) costs an atomic update.
  6-vector arguments may also be arrays. A 3x3 matrix field is an (n, 3, 3) array or an
  (n, 9) array of row-major rows; :func:`get_mat3` and :func:`set_mat3` read both.
* **Indexed transform helpers** (``xform_*_at``) apply, compose or invert the transforms
  that the DCA family keeps in arrays ``E (n, 3, 3), r (n, 3)``, on the register helpers
  (each formula written once), LLVM-inlined (:data:`articulated.config.INLINE`); a
  transform as a 12-tuple (``E`` row-major, then ``r``): :func:`xform_get`, :func:`xform_set`.

All are generic in the float dtype: with float32 inputs the arithmetic stays in float32
except where a numeric literal enters (numba promotes ``float32 op literal`` to float64).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from .config import INLINE, inline


# ----------------------------------------------------------------- loads and stores

@inline
def get_vec3(A, i):
    """Row i of an (n, 3) array as a 3-tuple."""
    return (A[i, 0], A[i, 1], A[i, 2])


@inline
def set_vec3(A, i, x):
    """Row i of an (n, 3) array = the 3-tuple x."""
    A[i, 0] = x[0]
    A[i, 1] = x[1]
    A[i, 2] = x[2]


@inline
def get_vec6(A, i):
    """Row i of an (n, 6) array as a 6-tuple."""
    return (A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5])


@inline
def set_vec6(A, i, x):
    """Row i of an (n, 6) array = the 6-vector x."""
    A[i, 0], A[i, 1], A[i, 2] = x[0], x[1], x[2]
    A[i, 3], A[i, 4], A[i, 5] = x[3], x[4], x[5]


@inline
def add_vec6(A, i, x):
    """Row i of an (n, 6) array += the 6-vector x."""
    A[i, 0], A[i, 1], A[i, 2] = A[i, 0] + x[0], A[i, 1] + x[1], A[i, 2] + x[2]
    A[i, 3], A[i, 4], A[i, 5] = A[i, 3] + x[3], A[i, 4] + x[4], A[i, 5] + x[5]


def get_mat3(A, i):
    """Return entry i of an (n, 3, 3) or row i of an (n, 9) array as a row-major 9-tuple."""
    return tuple(np.asarray(A[i]).ravel())


def set_mat3(A, i, E):
    """Entry i of an (n, 3, 3) array, or row i of an (n, 9) array = the row-major 9-tuple E."""
    A[i] = np.reshape(np.asarray(E), np.shape(A[i]))


@overload(get_mat3, jit_options=INLINE)
def _get_mat3_jit(A, i):
    if A.ndim == 3:
        return lambda A, i: (A[i, 0, 0], A[i, 0, 1], A[i, 0, 2], A[i, 1, 0], A[i, 1, 1],
                             A[i, 1, 2], A[i, 2, 0], A[i, 2, 1], A[i, 2, 2])
    return lambda A, i: (A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5], A[i, 6],
                         A[i, 7], A[i, 8])


@overload(set_mat3, jit_options=INLINE)
def _set_mat3_jit(A, i, E):
    if A.ndim == 3:
        def impl(A, i, E):
            A[i, 0, 0] = E[0]
            A[i, 0, 1] = E[1]
            A[i, 0, 2] = E[2]
            A[i, 1, 0] = E[3]
            A[i, 1, 1] = E[4]
            A[i, 1, 2] = E[5]
            A[i, 2, 0] = E[6]
            A[i, 2, 1] = E[7]
            A[i, 2, 2] = E[8]
        return impl

    def impl(A, i, E):
        A[i, 0] = E[0]
        A[i, 1] = E[1]
        A[i, 2] = E[2]
        A[i, 3] = E[3]
        A[i, 4] = E[4]
        A[i, 5] = E[5]
        A[i, 6] = E[6]
        A[i, 7] = E[7]
        A[i, 8] = E[8]
    return impl


@inline
def get_sym6(A, i):
    """Row i of an (n, 21) array of packed symmetric matrices as a 21-tuple."""
    return (A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5], A[i, 6], A[i, 7], A[i, 8],
            A[i, 9], A[i, 10], A[i, 11], A[i, 12], A[i, 13], A[i, 14], A[i, 15], A[i, 16],
            A[i, 17], A[i, 18], A[i, 19], A[i, 20])


@inline
def set_sym6(A, i, M):
    """Row i of an (n, 21) array = the packed symmetric 21-tuple M."""
    A[i, 0] = M[0]
    A[i, 1] = M[1]
    A[i, 2] = M[2]
    A[i, 3] = M[3]
    A[i, 4] = M[4]
    A[i, 5] = M[5]
    A[i, 6] = M[6]
    A[i, 7] = M[7]
    A[i, 8] = M[8]
    A[i, 9] = M[9]
    A[i, 10] = M[10]
    A[i, 11] = M[11]
    A[i, 12] = M[12]
    A[i, 13] = M[13]
    A[i, 14] = M[14]
    A[i, 15] = M[15]
    A[i, 16] = M[16]
    A[i, 17] = M[17]
    A[i, 18] = M[18]
    A[i, 19] = M[19]
    A[i, 20] = M[20]


# -------------------------------------------------------------------- 6-vectors

@inline
def add6(x, y):
    """x + y (a 6-tuple) for 6-vectors."""
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5])


@inline
def sub6(x, y):
    """x - y (a 6-tuple) for 6-vectors."""
    return (x[0] - y[0], x[1] - y[1], x[2] - y[2], x[3] - y[3], x[4] - y[4], x[5] - y[5])


@inline
def scale6(x, s):
    """s x (a 6-tuple) for a 6-vector x and a scalar s."""
    return (x[0] * s, x[1] * s, x[2] * s, x[3] * s, x[4] * s, x[5] * s)


@inline
def dot6(x, y):
    """x . y for 6-vectors (summed pairwise: a shorter dependency chain)."""
    return ((x[0] * y[0] + x[1] * y[1]) + (x[2] * y[2] + x[3] * y[3])
            + (x[4] * y[4] + x[5] * y[5]))


@inline
def cross_motion(v, m):
    """``v x m`` (a 6-tuple), the spatial motion cross product (RBDA eq. 2.31)."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    m0, m1, m2, m3, m4, m5 = m[0], m[1], m[2], m[3], m[4], m[5]
    return (v1 * m2 - v2 * m1,
            v2 * m0 - v0 * m2,
            v0 * m1 - v1 * m0,
            v1 * m5 - v2 * m4 + v4 * m2 - v5 * m1,
            v2 * m3 - v0 * m5 + v5 * m0 - v3 * m2,
            v0 * m4 - v1 * m3 + v3 * m1 - v4 * m0)


@inline
def cross_force(v, f):
    """``v x* f`` (a 6-tuple), the spatial force cross product (RBDA eq. 2.32)."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    f0, f1, f2, f3, f4, f5 = f[0], f[1], f[2], f[3], f[4], f[5]
    return (v1 * f2 - v2 * f1 + v4 * f5 - v5 * f4,
            v2 * f0 - v0 * f2 + v5 * f3 - v3 * f5,
            v0 * f1 - v1 * f0 + v3 * f4 - v4 * f3,
            v1 * f5 - v2 * f4,
            v2 * f3 - v0 * f5,
            v0 * f4 - v1 * f3)


# ------------------------------------------------------------------- transforms

@inline
def xform_motion(E, r, v):
    """``bXa v`` (a 6-tuple): ``[E w; E (v_O - r x w)]``; E a 9-tuple, r a 3-tuple."""
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = E
    r0, r1, r2 = r
    w0, w1, w2 = v[0], v[1], v[2]
    l0 = v[3] - (r1 * w2 - r2 * w1)
    l1 = v[4] - (r2 * w0 - r0 * w2)
    l2 = v[5] - (r0 * w1 - r1 * w0)
    return (e00 * w0 + e01 * w1 + e02 * w2,
            e10 * w0 + e11 * w1 + e12 * w2,
            e20 * w0 + e21 * w1 + e22 * w2,
            e00 * l0 + e01 * l1 + e02 * l2,
            e10 * l0 + e11 * l1 + e12 * l2,
            e20 * l0 + e21 * l1 + e22 * l2)


@inline
def xform_force_T(E, r, f):
    """Return ``bXa^T f`` (a 6-tuple): a force given in B coordinates, in A coordinates.

    ``[E^T n + r x E^T f; E^T f]`` (RBDA eq. 2.25); E a 9-tuple, r a 3-tuple.
    """
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = E
    r0, r1, r2 = r
    f0, f1, f2, f3, f4, f5 = f[0], f[1], f[2], f[3], f[4], f[5]
    n0 = e00 * f0 + e10 * f1 + e20 * f2
    n1 = e01 * f0 + e11 * f1 + e21 * f2
    n2 = e02 * f0 + e12 * f1 + e22 * f2
    l0 = e00 * f3 + e10 * f4 + e20 * f5
    l1 = e01 * f3 + e11 * f4 + e21 * f5
    l2 = e02 * f3 + e12 * f4 + e22 * f5
    return (n0 + r1 * l2 - r2 * l1, n1 + r2 * l0 - r0 * l2, n2 + r0 * l1 - r1 * l0,
            l0, l1, l2)


@inline
def mat3_mul(G, F):
    """``G F`` (a 9-tuple) for row-major 9-tuples."""
    g00, g01, g02, g10, g11, g12, g20, g21, g22 = G
    f00, f01, f02, f10, f11, f12, f20, f21, f22 = F
    return (g00 * f00 + g01 * f10 + g02 * f20,
            g00 * f01 + g01 * f11 + g02 * f21,
            g00 * f02 + g01 * f12 + g02 * f22,
            g10 * f00 + g11 * f10 + g12 * f20,
            g10 * f01 + g11 * f11 + g12 * f21,
            g10 * f02 + g11 * f12 + g12 * f22,
            g20 * f00 + g21 * f10 + g22 * f20,
            g20 * f01 + g21 * f11 + g22 * f21,
            g20 * f02 + g21 * f12 + g22 * f22)


@inline
def mat3T_vec(E, x):
    """``E^T x`` (a 3-tuple) for a row-major 9-tuple E and a 3-vector x."""
    return (E[0] * x[0] + E[3] * x[1] + E[6] * x[2],
            E[1] * x[0] + E[4] * x[1] + E[7] * x[2],
            E[2] * x[0] + E[5] * x[1] + E[8] * x[2])


@inline
def axis_rotation(a, c, s):
    """Return the coordinate rotation E (a 9-tuple; parent -> child) about a unit axis.

    For a rotation by angle t about the unit axis a (3-vector); ``c = cos t``, ``s = sin
    t``. E is the transpose of Rodrigues' rotation matrix (RBDA eq. 2.17 convention: ``E =
    rot(t)^T``).
    """
    x, y, z = a[0], a[1], a[2]
    t = 1 - c
    txy = t * x * y
    txz = t * x * z
    tyz = t * y * z
    return (c + t * x * x, txy + s * z, txz - s * y,
            txy - s * z, c + t * y * y, tyz + s * x,
            txz + s * y, tyz - s * x, c + t * z * z)


@inline
def quat_rotation(qw, qx, qy, qz):
    """Return the rotation matrix R (a 9-tuple) of a unit quaternion (w, x, y, z).

    The quaternion is Hamilton, scalar first. ``R`` maps child-frame coordinates to
    parent-frame coordinates (columns are the child axes in the parent frame); the
    coordinate transform parent -> child is ``E = R^T``, the rotation of the conjugate
    quaternion ``(w, -x, -y, -z)``.
    """
    return (1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy),
            2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx),
            2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy))


# ------------------------------------------------------------------- inertias

@inline
def inertia_times(m, h, Ibar, v):
    """Return ``I v`` (a 6-tuple) for a compact rigid-body inertia ``(m, h, Ibar)``.

    ``I v`` (a 6-tuple) for the compact rigid-body inertia ``(m, h, Ibar)`` (RBDA eq. 2.63;
    h a 3-vector, Ibar a row-major 9-tuple) and a 6-vector.
    """
    w0, w1, w2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    h0, h1, h2 = h[0], h[1], h[2]
    i00, i01, i02, i10, i11, i12, i20, i21, i22 = Ibar
    return (i00 * w0 + i01 * w1 + i02 * w2 + h1 * v5 - h2 * v4,
            i10 * w0 + i11 * w1 + i12 * w2 + h2 * v3 - h0 * v5,
            i20 * w0 + i21 * w1 + i22 * w2 + h0 * v4 - h1 * v3,
            m * v3 - (h1 * w2 - h2 * w1),
            m * v4 - (h2 * w0 - h0 * w2),
            m * v5 - (h0 * w1 - h1 * w0))


@inline
def rigid_inertia(m, h, Ibar):
    """Return the packed 21-tuple of the rigid-body inertia ``(m, h, Ibar)`` (RBDA eq. 2.63).

    The packed 21-tuple of the rigid-body inertia ``(m, h, Ibar)`` (RBDA eq. 2.63):
    ``[[Ibar, h^], [h^T, m 1]]`` (h a 3-vector, Ibar a row-major 9-tuple).
    """
    z = m - m
    return (Ibar[0], Ibar[1], Ibar[2], Ibar[4], Ibar[5], Ibar[8],
            z, -h[2], h[1], h[2], z, -h[0], -h[1], h[0], z,
            m, z, z, m, z, m)


@inline
def sym6_index(k, l):
    """Position of entry (k, l) of a symmetric 6x6 matrix in the packed (21,) layout."""
    if k > l:
        k, l = l, k
    if l < 3:
        return k * (5 - k) // 2 + l
    if k < 3:
        return 3 + 3 * k + l
    return 15 + (k - 3) * (8 - k) // 2 + l - 3


@inline
def sym6_from_dense(T):
    """The packed 21-tuple of the symmetric (6, 6) array ``T`` (its upper triangle)."""
    return (T[0, 0], T[0, 1], T[0, 2], T[1, 1], T[1, 2], T[2, 2],
            T[0, 3], T[0, 4], T[0, 5], T[1, 3], T[1, 4], T[1, 5], T[2, 3], T[2, 4], T[2, 5],
            T[3, 3], T[3, 4], T[3, 5], T[4, 4], T[4, 5], T[5, 5])


@inline
def sym6_to_dense(M, T_out):
    """Write the packed 21-tuple ``M`` into the (6, 6) array ``T_out`` (both triangles)."""
    for k in range(6):
        for l in range(k, 6):
            x = M[sym6_index(k, l)]
            T_out[k, l] = x
            T_out[l, k] = x


@inline
def sym6_add(M, N):
    """M + N for packed symmetric 21-tuples."""
    return (M[0] + N[0], M[1] + N[1], M[2] + N[2], M[3] + N[3], M[4] + N[4], M[5] + N[5],
            M[6] + N[6], M[7] + N[7], M[8] + N[8], M[9] + N[9], M[10] + N[10],
            M[11] + N[11], M[12] + N[12], M[13] + N[13], M[14] + N[14], M[15] + N[15],
            M[16] + N[16], M[17] + N[17], M[18] + N[18], M[19] + N[19], M[20] + N[20])


@inline
def sym6_apply(M, x):
    """``M x`` (a 6-tuple) for a packed symmetric 21-tuple M and a 6-vector x."""
    a00, a01, a02, a11, a12, a22, b00, b01, b02, b10, b11, b12, b20, b21, b22, \
        c00, c01, c02, c11, c12, c22 = M
    x0, x1, x2, x3, x4, x5 = x[0], x[1], x[2], x[3], x[4], x[5]
    return (a00 * x0 + a01 * x1 + a02 * x2 + b00 * x3 + b01 * x4 + b02 * x5,
            a01 * x0 + a11 * x1 + a12 * x2 + b10 * x3 + b11 * x4 + b12 * x5,
            a02 * x0 + a12 * x1 + a22 * x2 + b20 * x3 + b21 * x4 + b22 * x5,
            b00 * x0 + b10 * x1 + b20 * x2 + c00 * x3 + c01 * x4 + c02 * x5,
            b01 * x0 + b11 * x1 + b21 * x2 + c01 * x3 + c11 * x4 + c12 * x5,
            b02 * x0 + b12 * x1 + b22 * x2 + c02 * x3 + c12 * x4 + c22 * x5)


@inline
def sym6_apply_half(M, x, angular):
    """Return ``M [x; 0]`` or ``M [0; x]`` (a 6-tuple) for a packed symmetric M.

    ``M [x; 0]`` if ``angular`` else ``M [0; x]`` (a 6-tuple) for a packed symmetric
    21-tuple M and a 3-vector x: the product with a 6-vector that has only an angular or
    only a linear part, such as the motion subspace ``[a; 0]`` of a revolute joint or ``[0;
    a]`` of a prismatic one (half the work of :func:`sym6_apply`).
    """
    a00, a01, a02, a11, a12, a22, b00, b01, b02, b10, b11, b12, b20, b21, b22, \
        c00, c01, c02, c11, c12, c22 = M
    x0, x1, x2 = x[0], x[1], x[2]
    if angular:
        return (a00 * x0 + a01 * x1 + a02 * x2,
                a01 * x0 + a11 * x1 + a12 * x2,
                a02 * x0 + a12 * x1 + a22 * x2,
                b00 * x0 + b10 * x1 + b20 * x2,
                b01 * x0 + b11 * x1 + b21 * x2,
                b02 * x0 + b12 * x1 + b22 * x2)
    return (b00 * x0 + b01 * x1 + b02 * x2,
            b10 * x0 + b11 * x1 + b12 * x2,
            b20 * x0 + b21 * x1 + b22 * x2,
            c00 * x0 + c01 * x1 + c02 * x2,
            c01 * x0 + c11 * x1 + c12 * x2,
            c02 * x0 + c12 * x1 + c22 * x2)


@inline
def sym6_rank1_sub(M, U, w):
    """Return ``M - U w^T`` for a packed symmetric M and ``w`` parallel to ``U``.

    ``M - U w^T`` for a packed symmetric 21-tuple M and 6-vectors with ``w`` parallel to
    ``U`` (e.g. ``w = U / D``), so that the result is symmetric; only ``k <= l`` is formed.
    """
    u0, u1, u2, u3, u4, u5 = U[0], U[1], U[2], U[3], U[4], U[5]
    w0, w1, w2, w3, w4, w5 = w[0], w[1], w[2], w[3], w[4], w[5]
    return (M[0] - u0 * w0, M[1] - u0 * w1, M[2] - u0 * w2,
            M[3] - u1 * w1, M[4] - u1 * w2, M[5] - u2 * w2,
            M[6] - u0 * w3, M[7] - u0 * w4, M[8] - u0 * w5,
            M[9] - u1 * w3, M[10] - u1 * w4, M[11] - u1 * w5,
            M[12] - u2 * w3, M[13] - u2 * w4, M[14] - u2 * w5,
            M[15] - u3 * w3, M[16] - u3 * w4, M[17] - u3 * w5,
            M[18] - u4 * w4, M[19] - u4 * w5, M[20] - u5 * w5)


@inline
def _sym_rot(e00, e01, e02, e10, e11, e12, e20, e21, e22, s00, s01, s02, s11, s12, s22):
    """Upper triangle of ``E^T S E`` for symmetric S (six entries, row-major)."""
    p00 = s00 * e00 + s01 * e10 + s02 * e20
    p01 = s00 * e01 + s01 * e11 + s02 * e21
    p02 = s00 * e02 + s01 * e12 + s02 * e22
    p10 = s01 * e00 + s11 * e10 + s12 * e20
    p11 = s01 * e01 + s11 * e11 + s12 * e21
    p12 = s01 * e02 + s11 * e12 + s12 * e22
    p20 = s02 * e00 + s12 * e10 + s22 * e20
    p21 = s02 * e01 + s12 * e11 + s22 * e21
    p22 = s02 * e02 + s12 * e12 + s22 * e22
    return (e00 * p00 + e10 * p10 + e20 * p20,
            e00 * p01 + e10 * p11 + e20 * p21,
            e00 * p02 + e10 * p12 + e20 * p22,
            e01 * p01 + e11 * p11 + e21 * p21,
            e01 * p02 + e11 * p12 + e21 * p22,
            e02 * p02 + e12 * p12 + e22 * p22)


@inline
def congruence(E, r, M):
    """Return ``bXa^T M bXa`` (a packed 21-tuple) for a packed symmetric M in B coordinates.

    ``bXa^T M bXa`` (a packed 21-tuple) for a packed symmetric 21-tuple M in B coordinates;
    E a 9-tuple, r a 3-tuple.

    This carries an articulated inertia (or composite inertia) from a child frame B to
    its parent frame A (RBDA eqs. 7.38, 6.13). With ``bXa = diag(E, E) [[1, 0], [-r^, 1]]``
    the product is split into a block rotation ``M' = diag(E,E)^T M diag(E,E)`` (blocks
    A', B', C') followed by the shear ``[[1, r^], [0, 1]] M' [[1, 0], [-r^, 1]]``, which
    costs cross products instead of a 6x6 product:
    ``TL = A' + r^ B'^T - (B' + r^ C') r^``, ``TR = B' + r^ C'``, ``BR = C'``.
    """
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = E
    r0, r1, r2 = r
    m00, m01, m02, m11, m12, m22, m03, m04, m05, m13, m14, m15, m23, m24, m25, \
        m33, m34, m35, m44, m45, m55 = M
    a00, a01, a02, a11, a12, a22 = _sym_rot(e00, e01, e02, e10, e11, e12, e20, e21, e22,
                                            m00, m01, m02, m11, m12, m22)
    c00, c01, c02, c11, c12, c22 = _sym_rot(e00, e01, e02, e10, e11, e12, e20, e21, e22,
                                            m33, m34, m35, m44, m45, m55)
    # B' = E^T B E with B = M[0:3, 3:6]
    p00 = m03 * e00 + m04 * e10 + m05 * e20
    p01 = m03 * e01 + m04 * e11 + m05 * e21
    p02 = m03 * e02 + m04 * e12 + m05 * e22
    p10 = m13 * e00 + m14 * e10 + m15 * e20
    p11 = m13 * e01 + m14 * e11 + m15 * e21
    p12 = m13 * e02 + m14 * e12 + m15 * e22
    p20 = m23 * e00 + m24 * e10 + m25 * e20
    p21 = m23 * e01 + m24 * e11 + m25 * e21
    p22 = m23 * e02 + m24 * e12 + m25 * e22
    b00 = e00 * p00 + e10 * p10 + e20 * p20
    b01 = e00 * p01 + e10 * p11 + e20 * p21
    b02 = e00 * p02 + e10 * p12 + e20 * p22
    b10 = e01 * p00 + e11 * p10 + e21 * p20
    b11 = e01 * p01 + e11 * p11 + e21 * p21
    b12 = e01 * p02 + e11 * p12 + e21 * p22
    b20 = e02 * p00 + e12 * p10 + e22 * p20
    b21 = e02 * p01 + e12 * p11 + e22 * p21
    b22 = e02 * p02 + e12 * p12 + e22 * p22
    # TR = B' + r^ C' (column j of r^ C' is r x C'[:, j])
    t00 = b00 + r1 * c02 - r2 * c01
    t10 = b10 + r2 * c00 - r0 * c02
    t20 = b20 + r0 * c01 - r1 * c00
    t01 = b01 + r1 * c12 - r2 * c11
    t11 = b11 + r2 * c01 - r0 * c12
    t21 = b21 + r0 * c11 - r1 * c01
    t02 = b02 + r1 * c22 - r2 * c12
    t12 = b12 + r2 * c02 - r0 * c22
    t22 = b22 + r0 * c12 - r1 * c02
    # TL = A' + Z - W with Z = r^ B'^T (Z[:, j] = r x B'[j, :]) and W = TR r^
    # (W[i, :] = -(r x TR[i, :])); TL is symmetric, so only its upper triangle is formed
    l00 = a00 + (r1 * b02 - r2 * b01) + (r1 * t02 - r2 * t01)
    l01 = a01 + (r1 * b12 - r2 * b11) + (r2 * t00 - r0 * t02)
    l02 = a02 + (r1 * b22 - r2 * b21) + (r0 * t01 - r1 * t00)
    l11 = a11 + (r2 * b10 - r0 * b12) + (r2 * t10 - r0 * t12)
    l12 = a12 + (r2 * b20 - r0 * b22) + (r0 * t11 - r1 * t10)
    l22 = a22 + (r0 * b21 - r1 * b20) + (r0 * t21 - r1 * t20)
    return (l00, l01, l02, l11, l12, l22, t00, t01, t02, t10, t11, t12, t20, t21, t22,
            c00, c01, c02, c11, c12, c22)


# ------------------------------------------------------------------ sin and cos
# sincos: one argument reduction for both functions (musl/FreeBSD __rem_pio2, medium case:
# two Cody-Waite rounds, good to 118 bits) and the fdlibm kernels __sin/__cos on
# [-pi/4, pi/4]. Within 1 ulp of libm's sin and cos (tests/test_kernels.py), for about
# half the cost of calling both; large or non-finite arguments go to libm.
_INV_PIO2 = 6.36619772367581382433e-01
_ROUND = 6755399441055744.0  # 1.5 * 2^52: (x + _ROUND) - _ROUND rounds x to an integer
_PIO2_1 = 1.57079632673412561417e+00  # first 33 bits of pi/2
_PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
_PIO2_2T = 2.02226624879595063154e-21  # pi/2 - _PIO2_1 - _PIO2_2
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


def sincos(x):
    """Return ``(sin x, cos x)`` [x in rad].

    ``(sin x, cos x)`` [x in rad]. In kernels: for float64 one shared argument reduction and
    the fdlibm polynomial kernels, within 1 ulp of libm; for float32 libm's
    ``sinf``/``cosf``.
    """
    return math.sin(x), math.cos(x)


def _sincos_f64(x):
    if not abs(x) <= 4.0e5:  # also NaN and inf
        return math.sin(x), math.cos(x)
    fn = (x * _INV_PIO2 + _ROUND) - _ROUND
    n = int(fn)
    # x = n pi/2 + (y0 + y1), |y0| <= pi/4
    t = x - fn * _PIO2_1
    w = fn * _PIO2_2
    r = t - w
    w = fn * _PIO2_2T - ((t - r) - w)
    y0 = r - w
    y1 = (r - y0) - w
    z = y0 * y0
    z2 = z * z
    rs = _S2 + z * (_S3 + z * _S4) + z * z2 * (_S5 + z * _S6)
    v = z * y0
    s = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * _S1)
    rc = z * (_C1 + z * (_C2 + z * _C3)) + z2 * z2 * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + (z * rc - y0 * y1))
    # quadrant n mod 4 without branches (random angles would mispredict them):
    # odd n swaps sin and cos, n = 1, 2 mod 4 negates sin, n = 2, 3 negates cos
    odd = (n & 1) != 0
    sin_x = c if odd else s
    cos_x = s if odd else c
    if (n + 1) & 2:
        cos_x = -cos_x
    if n & 2:
        sin_x = -sin_x
    return sin_x, cos_x


def _sincos_libm(x):
    return math.sin(x), math.cos(x)


@overload(sincos, jit_options=INLINE)
def _sincos_jit(x):
    if isinstance(x, types.Float) and x.bitwidth == 64:
        return _sincos_f64
    return _sincos_libm


@inline
def motion_apply_inv(E, r, v, out):
    """out = bXa^-1 v = aXb v: ``[E^T w; E^T v_O + r x E^T w]`` (out must not alias v)."""
    w0 = E[0, 0] * v[0] + E[1, 0] * v[1] + E[2, 0] * v[2]
    w1 = E[0, 1] * v[0] + E[1, 1] * v[1] + E[2, 1] * v[2]
    w2 = E[0, 2] * v[0] + E[1, 2] * v[1] + E[2, 2] * v[2]
    l0 = E[0, 0] * v[3] + E[1, 0] * v[4] + E[2, 0] * v[5]
    l1 = E[0, 1] * v[3] + E[1, 1] * v[4] + E[2, 1] * v[5]
    l2 = E[0, 2] * v[3] + E[1, 2] * v[4] + E[2, 2] * v[5]
    out[0] = w0
    out[1] = w1
    out[2] = w2
    out[3] = l0 + r[1] * w2 - r[2] * w1
    out[4] = l1 + r[2] * w0 - r[0] * w2
    out[5] = l2 + r[0] * w1 - r[1] * w0


# ------------------------------------------------- compact transforms in arrays
# (E, r)[i] with E (n, 3, 3) rotating A coordinates into B coordinates and r (n, 3) the
# position of B's origin in A coordinates, as everywhere in this module.

@inline
def xform_get(E, r, i):
    """(E, r)[i] as a 12-tuple: E row by row, then r."""
    return (E[i, 0, 0], E[i, 0, 1], E[i, 0, 2], E[i, 1, 0], E[i, 1, 1], E[i, 1, 2],
            E[i, 2, 0], E[i, 2, 1], E[i, 2, 2], r[i, 0], r[i, 1], r[i, 2])


@inline
def xform_set(E, r, i, t):
    """(E, r)[i] = the 12-tuple t (:func:`xform_get`)."""
    E[i, 0, 0], E[i, 0, 1], E[i, 0, 2] = t[0], t[1], t[2]
    E[i, 1, 0], E[i, 1, 1], E[i, 1, 2] = t[3], t[4], t[5]
    E[i, 2, 0], E[i, 2, 1], E[i, 2, 2] = t[6], t[7], t[8]
    r[i, 0], r[i, 1], r[i, 2] = t[9], t[10], t[11]


@inline
def xform_mul(a, b):
    """Return the composition ``a o b`` (apply b first) of 12-tuple transforms.

    ``a o b`` (apply b first) for 12-tuple transforms: ``E = E_a E_b``, ``r = r_b + E_b^T
    r_a`` (RBDA Table 2.5).
    """
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
            a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
            a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
            a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
            a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8],
            b[9] + b[0] * a[9] + b[3] * a[10] + b[6] * a[11],
            b[10] + b[1] * a[9] + b[4] * a[10] + b[7] * a[11],
            b[11] + b[2] * a[9] + b[5] * a[10] + b[8] * a[11])


@inline
def xform_inv(a):
    """Inverse of a 12-tuple transform: ``(E^T, -E r)``."""
    return (a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8],
            -(a[0] * a[9] + a[1] * a[10] + a[2] * a[11]),
            -(a[3] * a[9] + a[4] * a[10] + a[5] * a[11]),
            -(a[6] * a[9] + a[7] * a[10] + a[8] * a[11]))


@inline
def xform_mul_at(E2, r2, i2, E1, r1, i1, Eo, ro, io):
    """(Eo, ro)[io] = (E2, r2)[i2] o (E1, r1)[i1] (apply 1 first; :func:`xform_mul`)."""
    xform_set(Eo, ro, io, xform_mul(xform_get(E2, r2, i2), xform_get(E1, r1, i1)))


@inline
def xform_inv_at(E, r, i, Eo, ro, io):
    """(Eo, ro)[io] = inverse of (E, r)[i] (:func:`xform_inv`)."""
    xform_set(Eo, ro, io, xform_inv(xform_get(E, r, i)))


@inline
def xform_copy_at(E, r, i, Eo, ro, io):
    """(Eo, ro)[io] = (E, r)[i]."""
    xform_set(Eo, ro, io, xform_get(E, r, i))


@inline
def xform_motion_at(E, r, i, v):
    """Return ``X v`` (a 6-tuple) for ``X = (E[i], r[i])`` and a motion 6-vector v.

    ``X v`` (a 6-tuple) for ``X = (E[i], r[i])`` and a motion 6-vector v (a tuple or an
    array; :func:`xform_motion`, RBDA eq. 2.24).
    """
    return xform_motion(get_mat3(E, i), get_vec3(r, i), v)


@inline
def xform_force_T_at(E, r, i, f):
    """Return ``X^T f`` (a 6-tuple) for ``X = (E[i], r[i])`` and a force 6-vector f.

    ``X^T f`` (a 6-tuple) for ``X = (E[i], r[i])`` and a force 6-vector f: f given in the
    frame X maps to, expressed in the frame it maps from (:func:`xform_force_T`, RBDA eq.
    2.25).
    """
    return xform_force_T(get_mat3(E, i), get_vec3(r, i), f)


@inline
def xform_rows_at(E, r, i, M, m, out, o):
    """Write ``out[o] = X M[m]`` for ``X = (E[i], r[i])`` and (6, 6) blocks.

    out[o] = X M[m] for ``X = (E[i], r[i])`` and (6, 6) blocks: X applied to each column
    (:func:`xform_motion`); out[o] must not alias M[m].
    """
    Ei = get_mat3(E, i)
    ri = get_vec3(r, i)
    for n in range(6):
        y = xform_motion(Ei, ri, (M[m, 0, n], M[m, 1, n], M[m, 2, n], M[m, 3, n],
                                  M[m, 4, n], M[m, 5, n]))
        for a in range(6):
            out[o, a, n] = y[a]


@inline
def xform_dense_at(E, r, i, T, t):
    """Write the dense (6, 6) motion transform of ``(E[i], r[i])`` to ``T[t]``.

    T[t] = the dense (6, 6) motion transform ``[[E, 0], [-E r^, E]]`` of (E[i], r[i]) (RBDA
    eq. 2.24).
    """
    for a in range(6):
        for b in range(6):
            T[t, a, b] = 0.0
    for a in range(3):
        for b in range(3):
            e = E[i, a, b]
            T[t, a, b] = e
            T[t, 3 + a, 3 + b] = e
    # -E r^ : column b of r^ is r x e_b
    for a in range(3):
        T[t, 3 + a, 0] = -(E[i, a, 1] * r[i, 2] - E[i, a, 2] * r[i, 1])
        T[t, 3 + a, 1] = -(E[i, a, 2] * r[i, 0] - E[i, a, 0] * r[i, 2])
        T[t, 3 + a, 2] = -(E[i, a, 0] * r[i, 1] - E[i, a, 1] * r[i, 0])


@inline
def spd_inverse(A, n, out, W):
    """Write the inverse of the SPD block ``A[:n, :n]`` to ``out[:n, :n]`` by Cholesky.

    out[:n, :n] = inverse of the SPD block A[:n, :n] by Cholesky (6 x 6 blocks and smaller
    in the kernels; any n).

    ``W`` is a scratch array of at least (n, n): it receives the Cholesky factor ``L``
    below the diagonal, ``1 / L_jj`` on it and ``L^-1`` transposed above it, and
    ``out = L^-T L^-1`` is formed on its lower triangle and mirrored (exactly symmetric).
    Only the n diagonal entries are divided by: the divisions' latency dominated a free
    joint's ABA step when every entry of the two triangular solves was one.
    A singular or indefinite block yields NaN/inf, which the public wrappers detect on the
    result and report with the joint name.
    """
    if n == 1:
        out[0, 0] = 1 / A[0, 0]
        return
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= W[j, k] * W[j, k]
        r = 1 / (math.sqrt(s) if s > 0 else math.nan)
        W[j, j] = r
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= W[i, k] * W[j, k]
            W[i, j] = t * r
    # L^-1 column c by forward substitution, (L^-1)[i, c] kept in W[c, i] (i > c)
    for c in range(n):
        for i in range(c + 1, n):
            t = W[i, c] * W[c, c]
            for k in range(c + 1, i):
                t += W[i, k] * W[c, k]
            W[c, i] = -t * W[i, i]
    # out[i, c] = sum over k >= i of (L^-1)[k, i] (L^-1)[k, c], c <= i
    for i in range(n):
        for c in range(i + 1):
            t = W[i, i] * (W[c, i] if c < i else W[i, i])
            for k in range(i + 1, n):
                t += W[i, k] * W[c, k]
            out[i, c] = t
            out[c, i] = t


# ------------------------------------------------------------- NumPy (not jitted)

def rigid_inertia_6x6(mass, com, I_com):
    """Dense (6, 6) spatial inertia about the body origin, angular first (RBDA eq. 2.63).

    Parameters
    ----------
    mass : float
        Body mass [kg].
    com : (3,) float64
        Centre of mass in the body frame [m].
    I_com : (3, 3) float64
        Rotational inertia about the COM, body axes [kg m^2].
    """
    c = np.asarray(com, dtype=np.float64)
    cx = skew(c)
    I = np.zeros((6, 6))
    I[:3, :3] = I_com + mass * cx @ cx.T
    I[:3, 3:] = mass * cx
    I[3:, :3] = mass * cx.T
    I[3:, 3:] = mass * np.eye(3)
    return I


def xform_dense(E, r):
    """Return the dense (6, 6) motion transform ``[[E, 0], [-E r^, E]]`` of ``(E, r)``.

    Of the compact (E, r) (RBDA eq. 2.24; plain NumPy).
    """
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E
    X[3:, :3] = -np.asarray(E) @ skew(r)
    return X


def skew(v):
    """(3, 3) cross-product matrix ``v^`` with ``v^ w = v x w`` (plain NumPy)."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rot_x(t):
    """Rotation matrix (child -> parent coordinates) by angle t [rad] about x (NumPy)."""
    c, s = np.cos(t), np.sin(t)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(t):
    """Rotation matrix (child -> parent coordinates) by angle t [rad] about y (NumPy)."""
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(t):
    """Rotation matrix (child -> parent coordinates) by angle t [rad] about z (NumPy)."""
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
