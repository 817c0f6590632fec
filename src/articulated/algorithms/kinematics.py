"""Kinematics: joint transforms, world poses, body velocities, Jacobians, energies, forces.

Besides the public functions, this module holds the inline steps the dynamics kernels share
(RBDA Tables 5.1, 6.2, 7.1): :func:`joint_transform` / :func:`joint_xup` (``Xup_i``),
:func:`joint_motion` (``S_i x_i``), :func:`velocity_step` (``v_i``, ``c_i``),
:func:`base_acceleration` (``a_0 = -g``) for the forward passes, and :func:`pop_children`
(the children's terms of a backward pass). They pass values as tuples and index arrays
element by element (see :mod:`articulated.spatial`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import INLINE_IR, KERNEL
from ..data import data_arrays
from ..model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL,
                     Model, model_arrays)
from ..spatial import (add6, axis_rotation, cross_motion, get_mat3, get_vec3, get_vec6,
                       inertia_times, mat3T_vec, mat3_mul, motion_apply_inv, quat_rotation,
                       set_mat3, set_vec3, set_vec6, sincos, xform_motion)
from ._inputs import as_state


@njit(**INLINE_IR)
def joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q):
    """``Xup_i = X_J(q_i) X_tree[i]`` (parent body -> body i coordinates) as ``(E, r)``,
    a row-major 9-tuple and a 3-tuple in the dtype of the model arrays.

    ``X_J`` per joint type (RBDA Table 4.1 with body-coordinate motion subspaces):
    revolute ``rot(q a)``, prismatic ``xlt(q a)``, spherical ``rot(R(quat))``, free
    ``rot(R(quat)) xlt(p)``. The joint rotation is multiplied by the placement rotation only
    where there is one (``Xtree_rot[i]``).
    """
    t = jtype[i]
    a = qadr[i]
    r0 = get_vec3(Xtree_r, i)
    if t == JOINT_FIXED or t == JOINT_PRISMATIC:
        E = get_mat3(Xtree_E, i)
    else:
        if t == JOINT_REVOLUTE:
            s, c = sincos(q[a])
            EJ = axis_rotation(get_vec3(axis, i), c, s)
        elif t == JOINT_SPHERICAL:
            # E_J = R(quat)^T = R(conjugate quat)
            EJ = quat_rotation(q[a], -q[a + 1], -q[a + 2], -q[a + 3])
        else:
            EJ = quat_rotation(q[a + 3], -q[a + 4], -q[a + 5], -q[a + 6])
        E = mat3_mul(EJ, get_mat3(Xtree_E, i)) if Xtree_rot[i] else EJ
    if t == JOINT_PRISMATIC or t == JOINT_FREE:
        # r = r0 + E0^T d with d the translation in joint coordinates
        if t == JOINT_PRISMATIC:
            d = (q[a] * axis[i, 0], q[a] * axis[i, 1], q[a] * axis[i, 2])
        else:
            d = (q[a], q[a + 1], q[a + 2])
        d = mat3T_vec(get_mat3(Xtree_E, i), d)
        r = (r0[0] + d[0], r0[1] + d[1], r0[2] + d[2])
    else:
        r = r0
    f = Xtree_E.dtype.type  # float32 models: round the rotation to float32 once, here
    return ((f(E[0]), f(E[1]), f(E[2]), f(E[3]), f(E[4]), f(E[5]), f(E[6]), f(E[7]), f(E[8])),
            (f(r[0]), f(r[1]), f(r[2])))


@njit(**INLINE_IR)
def joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r):
    """Write ``Xup[i]`` (:func:`joint_transform`) into ``Xup_E[i]``, ``Xup_r[i]`` and return
    it as ``(E, r)`` tuples."""
    E, r = joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q)
    set_mat3(Xup_E, i, E)
    set_vec3(Xup_r, i, r)
    return E, r


@njit(**INLINE_IR)
def joint_motion(i, vadr, jnv, S, x):
    """``S_i x_i`` (a 6-tuple): the joint's motion for the joint-space vector ``x`` (nv,)
    (``vJ = S qd`` for velocities, ``S qdd`` for accelerations)."""
    va = vadr[i]
    n = jnv[i]
    z = S.dtype.type(0)
    j0 = j1 = j2 = j3 = j4 = j5 = z
    for d in range(n):
        xd = x[va + d]
        j0 += S[va + d, 0] * xd
        j1 += S[va + d, 1] * xd
        j2 += S[va + d, 2] * xd
        j3 += S[va + d, 3] * xd
        j4 += S[va + d, 4] * xd
        j5 += S[va + d, 5] * xd
    return j0, j1, j2, j3, j4, j5


@njit(**INLINE_IR)
def pop_children(i, subtree_end, stack, top):
    """Pop the rows the children of body i pushed onto ``stack`` in a backward pass, summed
    in place into one row; returns ``(row, top)``, the row holding the sum and the new top.

    A backward pass visits the bodies in reverse pre-order, which is a post-order, so when
    it reaches i the rows of i's children are the top ones; each body pushes its own row
    (its term of the parent's sum, e.g. ``Xup^T Ia Xup`` in ABA pass 2) after processing.
    For a leaf the row is the last one of ``stack``, which the pass keeps zero. A chain
    never sums, and the stack stays as deep as the tree is bushy, so it stays in cache.
    """
    n = 0
    j = i + 1
    while j < subtree_end[i]:  # the children of i
        n += 1
        j = subtree_end[j]
    if n == 0:
        return stack.shape[0] - 1, top
    top -= n
    for k in range(1, n):
        for l in range(stack.shape[1]):
            stack[top, l] += stack[top + k, l]
    return top, top


@njit(**INLINE_IR)
def base_acceleration(gravity, use_gravity):
    """``a_0 = [0; -g]`` (a 6-tuple), gravity folded in as an acceleration of the world
    (RBDA sec. 5.3), or zero without gravity."""
    z = gravity.dtype.type(0)
    if use_gravity:
        return (z, z, z, -gravity[0], -gravity[1], -gravity[2])
    return (z, z, z, z, z, z)


@njit(**INLINE_IR)
def velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c):
    """``v_i = Xup_i v_parent + S_i qd_i`` and ``c_i = v_i x (S_i qd_i)`` (RBDA eq. 7.34;
    ``S-dot = 0`` in body coordinates) with ``Xup_i = (E, r)``. Writes ``v[i]`` and
    ``c[i]``; returns ``v_i`` (a 6-tuple)."""
    vJ = joint_motion(i, vadr, jnv, S, qd)
    p = parent[i]
    if p >= 0:
        vi = add6(xform_motion(E, r, get_vec6(v, p)), vJ)
    else:
        vi = vJ
    set_vec6(v, i, vi)
    set_vec6(c, i, cross_motion(vi, vJ))
    return vi


@njit(**INLINE_IR)
def world_pose_step(i, parent, E, r, oE, op):
    """World pose of body i from its parent's and ``Xup = (E, r)``: ``iX0 = iXp pX0``,
    ``oE_i = E oE_p``, ``op_i = op_p + oE_p^T r`` (RBDA Table 2.5); a root body's is Xup."""
    p = parent[i]
    if p >= 0:
        oE_p = get_mat3(oE, p)
        op_p = get_vec3(op, p)
        d = mat3T_vec(oE_p, r)
        set_mat3(oE, i, mat3_mul(E, oE_p))
        set_vec3(op, i, (op_p[0] + d[0], op_p[1] + d[1], op_p[2] + d[2]))
    else:
        set_mat3(oE, i, E)
        set_vec3(op, i, r)


@njit(**KERNEL)
def _world_poses_kernel(model_i, model_f, q, data_f):
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, Xtree_rot, axis = mv.parent, mv.jtype, mv.qadr, mv.Xtree_rot, mv.axis
    Xtree_E, Xtree_r, S = mv.Xtree_E, mv.Xtree_r, mv.S
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, oE, op = dv.Xup_E, dv.Xup_r, dv.oE, dv.op
    for i in range(nb):
        E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
        world_pose_step(i, parent, E, r, oE, op)


@njit(**KERNEL)
def _velocities_kernel(model_i, model_f, q, qd, data_f):
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    Xtree_rot, axis, Xtree_E, Xtree_r, S = mv.Xtree_rot, mv.axis, mv.Xtree_E, mv.Xtree_r, mv.S
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, v, c = dv.Xup_E, dv.Xup_r, dv.v, dv.c
    for i in range(nb):
        E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
        velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)


@njit(**INLINE_IR)
def body_energy(i, mass, h, Ibar, gravity, vi, oE, op, T, V):
    """``(T, V)`` plus body i's kinetic energy ``1/2 v_i . I_i v_i`` and gravity potential
    ``-m_i g . c_i`` (``c_i`` its world COM) from its velocity ``vi`` (6-tuple, body
    coordinates) and the world poses ``oE`` (nb, 9), ``op`` (nb, 3)."""
    Iv = inertia_times(mass[i], get_vec3(h, i), get_mat3(Ibar, i), vi)
    for k in range(6):
        T += 0.5 * vi[k] * Iv[k]
    for k in range(3):
        # world COM times m: m op + oE^T h
        mc = (mass[i] * op[i, k] + oE[i, k] * h[i, 0] + oE[i, 3 + k] * h[i, 1]
              + oE[i, 6 + k] * h[i, 2])
        V -= gravity[k] * mc
    return T, V


@njit(**INLINE_IR)
def state_energy(model_i, model_f, q, qd, data_f):
    """``(T, V)`` [J] of the state ``q, qd`` in one pass over the bodies, which leaves the
    joint transforms, velocities and world poses of the state in the workspace ``data_f``
    (as :func:`_velocities_kernel` and :func:`_world_poses_kernel`): ``T = 1/2 sum v_i .
    I_i v_i`` and ``V = -sum m_i g . c_i`` (:func:`body_energy`)."""
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    Xtree_rot, axis, Xtree_E, Xtree_r, S = mv.Xtree_rot, mv.axis, mv.Xtree_E, mv.Xtree_r, mv.S
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, v, c, oE, op = dv.Xup_E, dv.Xup_r, dv.v, dv.c, dv.oE, dv.op
    T = 0.0
    V = 0.0
    for i in range(nb):
        E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
        vi = velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)
        world_pose_step(i, parent, E, r, oE, op)
        T, V = body_energy(i, mv.mass, mv.h, mv.Ibar, mv.gravity, vi, oE, op, T, V)
    return T, V


@njit(**KERNEL)
def _energy_kernel(model_i, model_f, q, qd, data_f):
    return state_energy(model_i, model_f, q, qd, data_f)


@njit(**KERNEL)
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
    _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
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
    _velocities_kernel(d.model_i, d.model_f, q, qd, d.buf)
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
    q, qd = as_state(model, q, qd, np.float64)
    T, V = _energy_kernel(d.model_i, d.model_f, q, qd, d.buf)
    if not (math.isfinite(T) and math.isfinite(V)):
        model.diagnose_nonfinite(q=q, qd=qd)
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
