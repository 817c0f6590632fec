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

Every helper writes into an output array argument (suffix ``out``) and returns nothing, so
the kernels that inline them allocate nothing. They are generic in the float dtype: with
float32 arrays every product stays in float32 (no float64 literals enter the arithmetic).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .config import INLINE


@njit(**INLINE)
def cross3(a, b, out):
    """out = a x b for (3,) arrays (out may not alias a or b)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(**INLINE)
def xform_compose(E1, r1, E2, r2, E_out, r_out):
    """Compact product ``cXa = cXb bXa`` with ``bXa = (E1, r1)``, ``cXb = (E2, r2)``.

    ``E = E2 E1`` and ``r = r1 + E1^T r2`` (RBDA Table 2.5). Outputs must not alias inputs.
    """
    for i in range(3):
        for j in range(3):
            E_out[i, j] = E2[i, 0] * E1[0, j] + E2[i, 1] * E1[1, j] + E2[i, 2] * E1[2, j]
    for i in range(3):
        r_out[i] = r1[i] + E1[0, i] * r2[0] + E1[1, i] * r2[1] + E1[2, i] * r2[2]


@njit(**INLINE)
def motion_apply(E, r, v, out):
    """out = bXa v: ``[E w; E (v_O - r x w)]`` (out must not alias v)."""
    w0 = v[0]
    w1 = v[1]
    w2 = v[2]
    l0 = v[3] - (r[1] * w2 - r[2] * w1)
    l1 = v[4] - (r[2] * w0 - r[0] * w2)
    l2 = v[5] - (r[0] * w1 - r[1] * w0)
    for i in range(3):
        out[i] = E[i, 0] * w0 + E[i, 1] * w1 + E[i, 2] * w2
        out[3 + i] = E[i, 0] * l0 + E[i, 1] * l1 + E[i, 2] * l2


@njit(**INLINE)
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


@njit(**INLINE)
def force_apply(E, r, f, out):
    """out = bXa* f: ``[E (n - r x f); E f]`` (force from A to B coordinates)."""
    n0 = f[0] - (r[1] * f[5] - r[2] * f[4])
    n1 = f[1] - (r[2] * f[3] - r[0] * f[5])
    n2 = f[2] - (r[0] * f[4] - r[1] * f[3])
    for i in range(3):
        out[i] = E[i, 0] * n0 + E[i, 1] * n1 + E[i, 2] * n2
        out[3 + i] = E[i, 0] * f[3] + E[i, 1] * f[4] + E[i, 2] * f[5]


@njit(**INLINE)
def force_apply_T_add(E, r, f, out):
    """out += bXa^T f, the force f given in B coordinates expressed in A coordinates.

    ``bXa^T f = [E^T n + r x E^T f; E^T f]`` (RBDA eq. 2.25); out must not alias f.
    """
    n0 = E[0, 0] * f[0] + E[1, 0] * f[1] + E[2, 0] * f[2]
    n1 = E[0, 1] * f[0] + E[1, 1] * f[1] + E[2, 1] * f[2]
    n2 = E[0, 2] * f[0] + E[1, 2] * f[1] + E[2, 2] * f[2]
    l0 = E[0, 0] * f[3] + E[1, 0] * f[4] + E[2, 0] * f[5]
    l1 = E[0, 1] * f[3] + E[1, 1] * f[4] + E[2, 1] * f[5]
    l2 = E[0, 2] * f[3] + E[1, 2] * f[4] + E[2, 2] * f[5]
    out[0] += n0 + r[1] * l2 - r[2] * l1
    out[1] += n1 + r[2] * l0 - r[0] * l2
    out[2] += n2 + r[0] * l1 - r[1] * l0
    out[3] += l0
    out[4] += l1
    out[5] += l2


@njit(**INLINE)
def crm_apply(v, m, out):
    """out = v x m (spatial motion cross product, RBDA eq. 2.31); out must not alias."""
    out[0] = v[1] * m[2] - v[2] * m[1]
    out[1] = v[2] * m[0] - v[0] * m[2]
    out[2] = v[0] * m[1] - v[1] * m[0]
    out[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit(**INLINE)
def crf_add(v, f, out):
    """out += v x* f (spatial force cross product, RBDA eq. 2.32)."""
    out[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] += v[1] * f[5] - v[2] * f[4]
    out[4] += v[2] * f[3] - v[0] * f[5]
    out[5] += v[0] * f[4] - v[1] * f[3]


@njit(**INLINE)
def inertia_apply(m, h, Ibar, v, out):
    """out = I v for the compact rigid-body inertia ``(m, h, Ibar)`` (RBDA eq. 2.63)."""
    w0 = v[0]
    w1 = v[1]
    w2 = v[2]
    out[0] = Ibar[0, 0] * w0 + Ibar[0, 1] * w1 + Ibar[0, 2] * w2 + h[1] * v[5] - h[2] * v[4]
    out[1] = Ibar[1, 0] * w0 + Ibar[1, 1] * w1 + Ibar[1, 2] * w2 + h[2] * v[3] - h[0] * v[5]
    out[2] = Ibar[2, 0] * w0 + Ibar[2, 1] * w1 + Ibar[2, 2] * w2 + h[0] * v[4] - h[1] * v[3]
    out[3] = m * v[3] - (h[1] * w2 - h[2] * w1)
    out[4] = m * v[4] - (h[2] * w0 - h[0] * w2)
    out[5] = m * v[5] - (h[0] * w1 - h[1] * w0)


@njit(**INLINE)
def mat6_vec_add(M, v, out):
    """out += M v for a (6, 6) matrix."""
    for i in range(6):
        out[i] += (M[i, 0] * v[0] + M[i, 1] * v[1] + M[i, 2] * v[2]
                   + M[i, 3] * v[3] + M[i, 4] * v[4] + M[i, 5] * v[5])


@njit(**INLINE)
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


@njit(**INLINE)
def congruence_add(E, r, M, out):
    """out += bXa^T M bXa for a symmetric (6, 6) matrix M in B coordinates.

    This carries an articulated inertia (or composite inertia) from a child frame B to
    its parent frame A (RBDA eqs. 7.38, 6.13). With ``bXa = diag(E, E) [[1, 0], [-r^, 1]]``
    the product is split into a block rotation ``M' = diag(E,E)^T M diag(E,E)`` (blocks
    A', B', C') followed by the shear ``[[1, r^], [0, 1]] M' [[1, 0], [-r^, 1]]``, which
    costs cross products instead of a 6x6 product:
    ``TL = A' + r^ B'^T - (B' + r^ C') r^``, ``TR = B' + r^ C'``, ``BR = C'``.
    Everything is kept in registers (no scratch, no aliasing between loads and stores).
    M and out must not alias.
    """
    e00 = E[0, 0]
    e01 = E[0, 1]
    e02 = E[0, 2]
    e10 = E[1, 0]
    e11 = E[1, 1]
    e12 = E[1, 2]
    e20 = E[2, 0]
    e21 = E[2, 1]
    e22 = E[2, 2]
    r0 = r[0]
    r1 = r[1]
    r2 = r[2]
    a00, a01, a02, a11, a12, a22 = _sym_rot(e00, e01, e02, e10, e11, e12, e20, e21, e22,
                                            M[0, 0], M[0, 1], M[0, 2], M[1, 1], M[1, 2], M[2, 2])
    c00, c01, c02, c11, c12, c22 = _sym_rot(e00, e01, e02, e10, e11, e12, e20, e21, e22,
                                            M[3, 3], M[3, 4], M[3, 5], M[4, 4], M[4, 5], M[5, 5])
    # B' = E^T B E with B = M[0:3, 3:6]
    m03 = M[0, 3]
    m04 = M[0, 4]
    m05 = M[0, 5]
    m13 = M[1, 3]
    m14 = M[1, 4]
    m15 = M[1, 5]
    m23 = M[2, 3]
    m24 = M[2, 4]
    m25 = M[2, 5]
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
    out[0, 0] += l00
    out[0, 1] += l01
    out[0, 2] += l02
    out[1, 0] += l01
    out[1, 1] += l11
    out[1, 2] += l12
    out[2, 0] += l02
    out[2, 1] += l12
    out[2, 2] += l22
    out[0, 3] += t00
    out[0, 4] += t01
    out[0, 5] += t02
    out[1, 3] += t10
    out[1, 4] += t11
    out[1, 5] += t12
    out[2, 3] += t20
    out[2, 4] += t21
    out[2, 5] += t22
    out[3, 0] += t00
    out[4, 0] += t01
    out[5, 0] += t02
    out[3, 1] += t10
    out[4, 1] += t11
    out[5, 1] += t12
    out[3, 2] += t20
    out[4, 2] += t21
    out[5, 2] += t22
    out[3, 3] += c00
    out[3, 4] += c01
    out[3, 5] += c02
    out[4, 3] += c01
    out[4, 4] += c11
    out[4, 5] += c12
    out[5, 3] += c02
    out[5, 4] += c12
    out[5, 5] += c22


@njit(**INLINE)
def quat_to_rot(qw, qx, qy, qz, R_out):
    """Rotation matrix R (3, 3) of the unit quaternion (w, x, y, z) (Hamilton, scalar first).

    ``R`` maps child-frame coordinates to parent-frame coordinates (columns are the child
    axes in the parent frame); the coordinate transform parent -> child is ``E = R^T``.
    """
    R_out[0, 0] = 1 - 2 * (qy * qy + qz * qz)
    R_out[0, 1] = 2 * (qx * qy - qw * qz)
    R_out[0, 2] = 2 * (qx * qz + qw * qy)
    R_out[1, 0] = 2 * (qx * qy + qw * qz)
    R_out[1, 1] = 1 - 2 * (qx * qx + qz * qz)
    R_out[1, 2] = 2 * (qy * qz - qw * qx)
    R_out[2, 0] = 2 * (qx * qz - qw * qy)
    R_out[2, 1] = 2 * (qy * qz + qw * qx)
    R_out[2, 2] = 1 - 2 * (qx * qx + qy * qy)


@njit(**INLINE)
def axis_angle_E(a, c, s, E_out):
    """Coordinate rotation E (parent -> child) for a rotation by angle t about unit axis a.

    ``c = cos t``, ``s = sin t``. E is the transpose of Rodrigues' rotation matrix
    (RBDA eq. 2.17 convention: ``E = rot(t)^T``).
    """
    t = 1 - c
    x = a[0]
    y = a[1]
    z = a[2]
    E_out[0, 0] = c + t * x * x
    E_out[1, 1] = c + t * y * y
    E_out[2, 2] = c + t * z * z
    E_out[0, 1] = t * x * y + s * z
    E_out[1, 0] = t * x * y - s * z
    E_out[0, 2] = t * x * z - s * y
    E_out[2, 0] = t * x * z + s * y
    E_out[1, 2] = t * y * z + s * x
    E_out[2, 1] = t * y * z - s * x


def rigid_inertia_6x6(mass, com, I_com):
    """Dense (6, 6) spatial inertia about the body origin, angular first (RBDA eq. 2.63).

    Parameters
    ----------
    mass : float - body mass [kg]
    com : (3,) float64 - centre of mass in the body frame [m]
    I_com : (3, 3) float64 - rotational inertia about the COM, body axes [kg m^2]
    """
    c = np.asarray(com, dtype=np.float64)
    cx = skew(c)
    I = np.zeros((6, 6))
    I[:3, :3] = I_com + mass * cx @ cx.T
    I[:3, 3:] = mass * cx
    I[3:, :3] = mass * cx.T
    I[3:, 3:] = mass * np.eye(3)
    return I


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


@njit(**INLINE)
def spd_inverse(A, n, out, W):
    """out[:n, :n] = inverse of the SPD block A[:n, :n] by Cholesky (n <= 6).

    ``W`` is a (6, 6) scratch array. A singular or indefinite block yields NaN/inf, which
    the public wrappers detect on the result and report with the joint name.
    """
    if n == 1:
        out[0, 0] = 1 / A[0, 0]
        return
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= W[j, k] * W[j, k]
        W[j, j] = math.sqrt(s) if s > 0 else math.nan
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= W[i, k] * W[j, k]
            W[i, j] = t / W[j, j]
    # out = L^-T L^-1, column by column: solve L y = e_c, then L^T x = y
    for c in range(n):
        for i in range(n):
            out[i, c] = 1 if i == c else 0
            t = out[i, c]
            for k in range(i):
                t -= W[i, k] * out[k, c]
            out[i, c] = t / W[i, i]
        for i in range(n - 1, -1, -1):
            t = out[i, c]
            for k in range(i + 1, n):
                t -= W[k, i] * out[k, c]
            out[i, c] = t / W[i, i]
