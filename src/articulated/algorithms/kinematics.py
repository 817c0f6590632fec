"""Kinematics: joint transforms, world poses, body velocities, Jacobians, energies, forces.

The two inline steps :func:`joint_xup` and :func:`velocity_step` are the first pass shared by
RNEA, ABA and CRBA (RBDA Tables 5.1, 6.2, 7.1); the kernels here reuse them for forward
kinematics, Jacobians and energy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import INLINE, JIT
from ..model import (JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL, Model)
from ..spatial import (axis_angle_E, crf_add, crm_apply, inertia_apply, motion_apply,
                       motion_apply_inv, quat_to_rot, xform_compose)
from ._inputs import as_state


@njit(**INLINE)
def joint_xup(i, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r):
    """Write ``Xup[i] = X_J(q_i) X_tree[i]`` (parent body -> body i coordinates).

    ``X_J`` per joint type (RBDA Table 4.1 with body-coordinate motion subspaces):
    revolute ``rot(q a)``, prismatic ``xlt(q a)``, spherical ``rot(R(quat))``, free
    ``rot(R(quat)) xlt(p)``. ``EJ`` is a (3, 3) scratch array. Values are kept in locals
    so that stores cannot alias the loads (this is the hottest helper of every pass).
    """
    t = jtype[i]
    a = qadr[i]
    E0 = Xtree_E[i]
    r0 = Xtree_r[i]
    E = Xup_E[i]
    r = Xup_r[i]
    f00 = E0[0, 0]
    f01 = E0[0, 1]
    f02 = E0[0, 2]
    f10 = E0[1, 0]
    f11 = E0[1, 1]
    f12 = E0[1, 2]
    f20 = E0[2, 0]
    f21 = E0[2, 1]
    f22 = E0[2, 2]
    if t == JOINT_REVOLUTE or t == JOINT_SPHERICAL or t == JOINT_FREE:
        if t == JOINT_REVOLUTE:
            axis_angle_E(axis[i], math.cos(q[a]), math.sin(q[a]), EJ)
        elif t == JOINT_SPHERICAL:
            quat_to_rot(q[a], q[a + 1], q[a + 2], q[a + 3], EJ)
            _transpose3(EJ)
        else:
            quat_to_rot(q[a + 3], q[a + 4], q[a + 5], q[a + 6], EJ)
            _transpose3(EJ)
        g00 = EJ[0, 0]
        g01 = EJ[0, 1]
        g02 = EJ[0, 2]
        g10 = EJ[1, 0]
        g11 = EJ[1, 1]
        g12 = EJ[1, 2]
        g20 = EJ[2, 0]
        g21 = EJ[2, 1]
        g22 = EJ[2, 2]
        E[0, 0] = g00 * f00 + g01 * f10 + g02 * f20
        E[0, 1] = g00 * f01 + g01 * f11 + g02 * f21
        E[0, 2] = g00 * f02 + g01 * f12 + g02 * f22
        E[1, 0] = g10 * f00 + g11 * f10 + g12 * f20
        E[1, 1] = g10 * f01 + g11 * f11 + g12 * f21
        E[1, 2] = g10 * f02 + g11 * f12 + g12 * f22
        E[2, 0] = g20 * f00 + g21 * f10 + g22 * f20
        E[2, 1] = g20 * f01 + g21 * f11 + g22 * f21
        E[2, 2] = g20 * f02 + g21 * f12 + g22 * f22
    else:
        E[0, 0] = f00
        E[0, 1] = f01
        E[0, 2] = f02
        E[1, 0] = f10
        E[1, 1] = f11
        E[1, 2] = f12
        E[2, 0] = f20
        E[2, 1] = f21
        E[2, 2] = f22
    x = r0[0]
    y = r0[1]
    z = r0[2]
    if t == JOINT_PRISMATIC:
        d0 = q[a] * axis[i, 0]
        d1 = q[a] * axis[i, 1]
        d2 = q[a] * axis[i, 2]
        x += f00 * d0 + f10 * d1 + f20 * d2
        y += f01 * d0 + f11 * d1 + f21 * d2
        z += f02 * d0 + f12 * d1 + f22 * d2
    elif t == JOINT_FREE:
        d0 = q[a]
        d1 = q[a + 1]
        d2 = q[a + 2]
        x += f00 * d0 + f10 * d1 + f20 * d2
        y += f01 * d0 + f11 * d1 + f21 * d2
        z += f02 * d0 + f12 * d1 + f22 * d2
    r[0] = x
    r[1] = y
    r[2] = z


@njit(**INLINE)
def _transpose3(A):
    t = A[0, 1]
    A[0, 1] = A[1, 0]
    A[1, 0] = t
    t = A[0, 2]
    A[0, 2] = A[2, 0]
    A[2, 0] = t
    t = A[1, 2]
    A[1, 2] = A[2, 1]
    A[2, 1] = t


@njit(**INLINE)
def velocity_step(i, parent, vadr, jnv, S, qd, Xup_E, Xup_r, v, vJ, c):
    """``v_i = Xup_i v_parent + S_i qd_i`` and ``c_i = v_i x (S_i qd_i)`` (RBDA eq. 7.34;
    ``S-dot = 0`` in body coordinates). ``vJ`` (6,) receives ``S_i qd_i``."""
    p = parent[i]
    for k in range(6):
        vJ[k] = 0
    va = vadr[i]
    for d in range(jnv[i]):
        qdk = qd[va + d]
        for k in range(6):
            vJ[k] += S[va + d, k] * qdk
    vi = v[i]
    if p >= 0:
        motion_apply(Xup_E[i], Xup_r[i], v[p], vi)
        for k in range(6):
            vi[k] += vJ[k]
    else:
        for k in range(6):
            vi[k] = vJ[k]
    crm_apply(vi, vJ, c[i])


@njit(**JIT)
def _world_poses_kernel(parent, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r,
                        oE_out, op_out):
    for i in range(parent.shape[0]):
        joint_xup(i, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r)
        p = parent[i]
        if p >= 0:
            xform_compose(oE_out[p], op_out[p], Xup_E[i], Xup_r[i], oE_out[i], op_out[i])
        else:
            for k in range(3):
                op_out[i, k] = Xup_r[i, k]
                for l in range(3):
                    oE_out[i, k, l] = Xup_E[i, k, l]


@njit(**JIT)
def _velocities_kernel(parent, jtype, qadr, vadr, jnv, axis, Xtree_E, Xtree_r, S, q, qd,
                       EJ, vJ, Xup_E, Xup_r, v_out, c_out):
    for i in range(parent.shape[0]):
        joint_xup(i, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r)
        velocity_step(i, parent, vadr, jnv, S, qd, Xup_E, Xup_r, v_out, vJ, c_out)


@njit(**JIT)
def _energy_kernel(parent, mass, h, Ibar, gravity, oE, op, v, Iv):
    """Return (kinetic, potential) from world poses and body velocities.

    T = 1/2 sum v_i . I_i v_i; V = -sum m_i g . (world COM of i).
    """
    T = 0.0
    V = 0.0
    for i in range(parent.shape[0]):
        inertia_apply(mass[i], h[i], Ibar[i], v[i], Iv)
        for k in range(6):
            T += 0.5 * v[i, k] * Iv[k]
        for k in range(3):
            # world COM times m: m op + oE^T h
            mc = mass[i] * op[i, k] + oE[i, 0, k] * h[i, 0] + oE[i, 1, k] * h[i, 1] + oE[i, 2, k] * h[i, 2]
            V -= gravity[k] * mc
    return T, V


@njit(**JIT)
def _jacobian_kernel(parent, vadr, jnv, S, oE, op, body, p_world, tmp, J_out):
    """Columns of the world-frame Jacobian of a point fixed on ``body``: rows 0-2 angular
    velocity, rows 3-5 the point's linear velocity, both in world coordinates."""
    for k in range(J_out.shape[0]):
        for l in range(J_out.shape[1]):
            J_out[k, l] = 0.0
    j = body
    while j >= 0:
        va = vadr[j]
        for d in range(jnv[j]):
            motion_apply_inv(oE[j], op[j], S[va + d], tmp)
            # v_P = v_O + w x P
            J_out[0, va + d] = tmp[0]
            J_out[1, va + d] = tmp[1]
            J_out[2, va + d] = tmp[2]
            J_out[3, va + d] = tmp[3] + tmp[1] * p_world[2] - tmp[2] * p_world[1]
            J_out[4, va + d] = tmp[4] + tmp[2] * p_world[0] - tmp[0] * p_world[2]
            J_out[5, va + d] = tmp[5] + tmp[0] * p_world[1] - tmp[1] * p_world[0]
        j = parent[j]


# ----------------------------------------------------------------------- public API

def forward_kinematics(model: Model, q, *, data=None):
    """World poses of every body.

    Parameters
    ----------
    model : Model
    q : (nq,) float64 - configuration

    Returns
    -------
    R : (nb, 3, 3) float64 - body orientations: columns are the body axes in world
        coordinates (``R = oE^T``; maps body to world coordinates)
    p : (nb, 3) float64 - body-frame origins in world coordinates [m]

    Raises ValueError for a wrong shape, non-finite entries or non-unit quaternions.
    Complexity O(nb). Source: RBDA sec. 4.1 (composition of ``X_J X_tree``).
    """
    d = data if data is not None else model.data()
    q = model.check_configuration(q)
    _poses(model, d, q)
    return np.transpose(d.oE, (0, 2, 1)).copy(), d.op.copy()


def _poses(model, d, q):
    ma = model.arrays(d.dtype)
    _world_poses_kernel(*ma.kin(), q, d.EJ, d.Xup_E, d.Xup_r, d.oE, d.op)
    if not np.isfinite(d.op).all():
        model.diagnose_nonfinite(q=q)


def body_velocities(model: Model, q, qd, *, data=None):
    """Spatial velocities of every body in its own coordinates.

    Returns
    -------
    v : (nb, 6) float64 - ``[w; v_O]``: angular velocity [rad/s] and velocity of the body
        origin [m/s], body coordinates (RBDA eq. 5.7: ``v_i = Xup_i v_parent + S_i qd_i``).
    """
    d = data if data is not None else model.data()
    q, qd = as_state(model, q, qd, np.float64)
    ma = model.arrays()
    _velocities_kernel(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.axis, ma.Xtree_E,
                       ma.Xtree_r, ma.S, q, qd, d.EJ, d.tmp[0], d.Xup_E, d.Xup_r,
                       d.v, d.c)
    if not np.isfinite(d.v).all():
        model.diagnose_nonfinite(q=q, qd=qd)
    return d.v.copy()


def energy(model: Model, q, qd, *, data=None):
    """Kinetic and potential energy.

    Returns
    -------
    (T, V) : floats [J]. ``T = 1/2 qd^T M qd = 1/2 sum_i v_i . I_i v_i``;
    ``V = -sum_i m_i g . c_i`` with ``c_i`` the world COM (zero at the world origin).
    """
    d = data if data is not None else model.data()
    body_velocities(model, q, qd, data=d)
    _poses(model, d, model.check_configuration(q))
    ma = model.arrays()
    T, V = _energy_kernel(ma.parent, ma.mass, ma.h, ma.Ibar, ma.gravity, d.oE, d.op, d.v, d.tmp[1])
    return float(T), float(V)


def jacobian(model: Model, q, body, point=(0.0, 0.0, 0.0), *, data=None):
    """World-frame Jacobian of a point fixed on a body.

    Parameters
    ----------
    body : str or int - body name or index
    point : (3,) float - the point in body coordinates [m]

    Returns
    -------
    J : (6, nv) float64 - rows 0-2 map ``qd`` to the body's angular velocity, rows 3-5 to
        the point's linear velocity, both in world coordinates. ``J[3:]`` is the point
        Jacobian. Columns of joints that are not ancestors of ``body`` are zero.
    """
    d = data if data is not None else model.data()
    b = model.body_id(body)
    q = model.check_configuration(q)
    pt = np.asarray(point, dtype=np.float64)
    if pt.shape != (3,) or not np.isfinite(pt).all():
        raise ValueError(f"point must be a finite (3,) vector, got {point!r}")
    _poses(model, d, q)
    p_world = d.op[b] + d.oE[b].T @ pt
    J = np.empty((6, model.nv))
    ma = model.arrays()
    _jacobian_kernel(ma.parent, ma.vadr, ma.jnv, ma.S, d.oE, d.op, b, p_world, d.tmp[0], J)
    return J


def point_position(model: Model, q, body, point=(0.0, 0.0, 0.0), *, data=None):
    """World position (3,) [m] of a point given in body coordinates."""
    d = data if data is not None else model.data()
    b = model.body_id(body)
    _poses(model, d, model.check_configuration(q))
    return d.op[b] + d.oE[b].T @ np.asarray(point, dtype=np.float64)


def body_force(model: Model, q, body, force, point=(0.0, 0.0, 0.0), *, frame="world",
               torque=(0.0, 0.0, 0.0), f_ext=None, data=None):
    """Spatial force on a body, in the body coordinates that ``f_ext`` arguments use.

    Parameters
    ----------
    body : str or int
    force : (3,) float - force [N], in world or body coordinates (``frame``)
    point : (3,) float - point of application, in body coordinates [m]
    frame : {"world", "body"} - coordinates of ``force`` and ``torque``
    torque : (3,) float - an additional pure moment [N m]
    f_ext : (nb, 6) float64, optional - if given, the force is added into it in place

    Returns
    -------
    (6,) float64 - ``[n_O; f]`` about the body origin, body coordinates; or ``f_ext``.
    """
    b = model.body_id(body)
    F = np.asarray(force, dtype=np.float64)
    M = np.asarray(torque, dtype=np.float64)
    P = np.asarray(point, dtype=np.float64)
    for name, x in (("force", F), ("torque", M), ("point", P)):
        if x.shape != (3,) or not np.isfinite(x).all():
            raise ValueError(f"body {model.body_name[b]!r}: {name} must be a finite (3,) vector")
    if frame == "world":
        d = data if data is not None else model.data()
        _poses(model, d, model.check_configuration(q))
        F = d.oE[b] @ F
        M = d.oE[b] @ M
    elif frame != "body":
        raise ValueError(f"frame must be 'world' or 'body', got {frame!r}")
    w = np.concatenate([np.cross(P, F) + M, F])
    if f_ext is not None:
        f_ext[b] += w
        return f_ext
    return w
