"""Kinematics: joint transforms, world poses, body velocities, Jacobians, energies, forces.

Besides the public functions, this module holds the inline steps the dynamics kernels share
(RBDA Tables 5.1, 6.2, 7.1): :func:`joint_transform` / :func:`joint_xup` (``Xup_i``),
:func:`joint_motion` (``S_i x_i``), :func:`velocity_step` (``v_i``, ``c_i``),
:func:`steady_acceleration_step` and :func:`arc_change` (how much a velocity change alters
the curvature of a shape's path in a step at constant joint rates),
:func:`base_acceleration` (``a_0 = -g``) for the forward passes, and :func:`pop_children`
(the children's terms of a backward pass). They pass values as tuples and index arrays
element by element (see :mod:`articulated.spatial`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import inline, KERNEL
from ..data import data_arrays
from ..model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL,
                     Model, model_arrays)
from ..spatial import (add6, axis_rotation, cross_motion, get_mat3, get_vec3, get_vec6,
                       inertia_times, mat3T_vec, mat3_mul, quat_rotation,
                       set_mat3, set_vec3, set_vec6, sincos, xform_motion)
from ._inputs import (EntryPoints, as_output, as_state, configuration_status, hot_entry, matrix_ok,
                      vector_ok)


@inline
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


@inline
def joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r):
    """Write ``Xup[i]`` (:func:`joint_transform`) into ``Xup_E[i]``, ``Xup_r[i]`` and return
    it as ``(E, r)`` tuples."""
    E, r = joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q)
    set_mat3(Xup_E, i, E)
    set_vec3(Xup_r, i, r)
    return E, r


@inline
def joint_motion(i, vadr, jnv, S, x):
    """``S_i x_i`` (a 6-tuple): the joint's motion for the joint-space vector ``x`` (nv,)
    (``vJ = S qd`` for velocities, ``S qdd`` for accelerations)."""
    va = vadr[i]
    n = jnv[i]
    z = S.dtype.type(0)
    if n == 6:  # a free joint, S = 1 in body coordinates (the only 6-dof joint)
        return (z + x[va], z + x[va + 1], z + x[va + 2], z + x[va + 3], z + x[va + 4],
                z + x[va + 5])
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


@inline
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


@inline
def base_acceleration(gravity, use_gravity):
    """``a_0 = [0; -g]`` (a 6-tuple), gravity folded in as an acceleration of the world
    (RBDA sec. 5.3), or zero without gravity."""
    z = gravity.dtype.type(0)
    if use_gravity:
        return (z, z, z, -gravity[0], -gravity[1], -gravity[2])
    return (z, z, z, z, z, z)


@inline
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


@inline
def steady_acceleration_step(i, parent, vadr, jnv, S, qd, Xup_E, Xup_r, v, a):
    """``a_i = Xup_i a_parent + v_i x (S_i qd_i)``: body i's spatial acceleration (body
    coordinates) while every joint keeps its rate ``qd`` (``qdd = 0``) and without gravity,
    the forward pass of RBDA eq. 7.31 with the velocity-product terms only; ``v`` (n, 6)
    the bodies' velocities for ``qd`` (:func:`velocity_step`), ``Xup_E`` (n, 9) and
    ``Xup_r`` (n, 3) the transforms. Writes and returns ``a[i]``."""
    ai = cross_motion(get_vec6(v, i), joint_motion(i, vadr, jnv, S, qd))
    p = parent[i]
    if p >= 0:
        ai = add6(xform_motion(get_mat3(Xup_E, i), get_vec3(Xup_r, i), get_vec6(a, p)), ai)
    set_vec6(a, i, ai)
    return ai


@inline
def _stray(v, a, i, c):
    """The acceleration ``y(c) = alpha x c + a_O + omega x (omega x c + v_O)`` (3-tuple,
    body i coordinates) of body i's point ``c`` moving at ``v[i] = [omega; v_O]`` with the
    steady acceleration ``a[i] = [alpha; a_O]`` (:func:`steady_acceleration_step`): where
    a step of ``h`` at constant joint rates (``q (+)= h qd``) carries the point, off the
    straight line ``c + h v_c``, by ``h^2 / 2`` times it to second order."""
    w0, w1, w2, u0, u1, u2 = get_vec6(v, i)
    b0, b1, b2, a0, a1, a2 = get_vec6(a, i)
    c0, c1, c2 = c
    x0 = w1 * c2 - w2 * c1 + u0
    x1 = w2 * c0 - w0 * c2 + u1
    x2 = w0 * c1 - w1 * c0 + u2
    return (w1 * x2 - w2 * x1 + b1 * c2 - b2 * c1 + a0,
            w2 * x0 - w0 * x2 + b2 * c0 - b0 * c2 + a1,
            w0 * x1 - w1 * x0 + b0 * c1 - b1 * c0 + a2)


@inline
def arc_change(v0, a0, v1, a1, i, c, R, n):
    """``(s, r)``: how the acceleration :func:`_stray` of body i's points changes from the motion
    ``(v0, a0)`` to ``(v1, a1)`` of body i (its velocities and steady accelerations,
    ``[omega; v_O]``, ``[alpha; a_O]``, body coordinates) along the unit direction ``n``
    (3-tuple, body coordinates): ``s = n . (y1(c) - y0(c))`` [m/s^2] at the point ``c``
    (signed), and ``r = (|alpha1 - alpha0| + 2 |omega1 - omega0| (|omega0| + |omega1|))
    R`` its most change over the ball of radius ``R`` [m] about ``c`` (``omega x (omega x
    x)`` changes by at most ``2 |d omega| (|omega0| + |omega1|) |x|``)."""
    y0 = _stray(v0, a0, i, c)
    y1 = _stray(v1, a1, i, c)
    s = n[0] * (y1[0] - y0[0]) + n[1] * (y1[1] - y0[1]) + n[2] * (y1[2] - y0[2])
    dw = math.sqrt((v1[i, 0] - v0[i, 0]) ** 2 + (v1[i, 1] - v0[i, 1]) ** 2
                   + (v1[i, 2] - v0[i, 2]) ** 2)
    da = math.sqrt((a1[i, 0] - a0[i, 0]) ** 2 + (a1[i, 1] - a0[i, 1]) ** 2
                   + (a1[i, 2] - a0[i, 2]) ** 2)
    w0 = math.sqrt(v0[i, 0] ** 2 + v0[i, 1] ** 2 + v0[i, 2] ** 2)
    w1 = math.sqrt(v1[i, 0] ** 2 + v1[i, 1] ** 2 + v1[i, 2] ** 2)
    return s, (da + 2.0 * dw * (w0 + w1)) * R


@inline
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


@inline
def body_energy(i, mass, h, Ibar, gravity, vi, oE, op, T, V):
    """``(T, V)`` plus body i's kinetic energy ``1/2 v_i . I_i v_i`` and gravity potential
    ``-m_i g . c_i`` (``c_i`` its world COM) from its velocity ``vi`` (6-tuple, body
    coordinates) and the world poses ``oE`` (nb, 9), ``op`` (nb, 3)."""
    Iv = inertia_times(mass[i], get_vec3(h, i), get_mat3(Ibar, i), vi)
    for k in range(6):
        T += 0.5 * vi[k] * Iv[k]
    return T, body_gravity_potential(i, mass, h, gravity, oE, op, V)


@inline
def body_gravity_potential(i, mass, h, gravity, oE, op, V):
    """``V`` plus body i's gravity potential ``-m_i g . c_i`` (:func:`body_energy`)."""
    for k in range(3):
        # world COM times m: m op + oE^T h
        mc = (mass[i] * op[i, k] + oE[i, k] * h[i, 0] + oE[i, 3 + k] * h[i, 1]
              + oE[i, 6 + k] * h[i, 2])
        V -= gravity[k] * mc
    return V


@inline
def state_energy(model_i, model_f, q, qd, data_f):
    """``(T, V)`` [J] of the state ``q, qd`` in one pass over the bodies, which leaves the
    joint transforms, velocities and world poses of the state in the workspace ``data_f``
    (as :func:`_velocities_kernel` and :func:`_world_poses_kernel`): ``T = 1/2 sum v_i .
    I_i v_i + 1/2 qd^T diag(armature) qd`` and ``V = -sum m_i g . c_i``
    (:func:`body_energy`)."""
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
    return T + armature_energy(mv.armature, qd), V


@inline
def armature_energy(arm, qd):
    """Kinetic energy [J] of the dofs' armature (rotors), ``1/2 qd^T diag(arm) qd``."""
    T = 0.0
    for k in range(arm.shape[0]):
        T += 0.5 * arm[k] * qd[k] * qd[k]
    return T


@njit(**KERNEL)
def _energy_kernel(model_i, model_f, q, qd, data_f):
    return state_energy(model_i, model_f, q, qd, data_f)


@njit(**KERNEL)
def _power_kernel(model_i, model_f, q, x, tau, f_ext, data_f):
    """Power [W] of the applied forces at the configuration ``q`` for the joint velocities
    ``x`` (nv,): ``tau . x + sum_i f_ext_i . v_i`` with ``v_i`` body i's velocity for
    ``x`` and ``f_ext`` (nb, 6) or (0, 6) in body coordinates, as :func:`~articulated.
    algorithms.aba.aba` takes it (``Q . x`` with ``Q = tau + J^T f_ext``, the generalized
    applied force). One pass over the bodies (:func:`_velocities_kernel`, whose joint
    transforms and velocities of ``q, x`` it leaves in the workspace)."""
    power = 0.0
    for a in range(x.shape[0]):
        power += tau[a] * x[a]
    nb = f_ext.shape[0]
    if nb == 0:
        return power
    _velocities_kernel(model_i, model_f, q, x, data_f)
    v = data_arrays(data_f, nb, x.shape[0]).v
    for i in range(nb):
        for a in range(6):
            power += f_ext[i, a] * v[i, a]
    return power


@inline
def _all_finite(x):
    """True if every entry of the 2-D array ``x`` is finite."""
    for i in range(x.shape[0]):
        for k in range(x.shape[1]):
            if not math.isfinite(x[i, k]):
                return False
    return True


@njit(**KERNEL)
def poses_checked_kernel(model_i, model_f, q, data_f):
    """:func:`forward_kinematics`' one compiled call: the checks of ``q``
    (:func:`~articulated.algorithms._inputs.configuration_status`: 1 a wrong shape or
    layout, 2 a non-unit quaternion), then the world poses into ``oE``, ``op``; 3 if they
    are not finite, else 0."""
    mv = model_arrays(model_i, model_f)
    status = configuration_status(mv, q)
    if status != 0:
        return status
    _world_poses_kernel(model_i, model_f, q, data_f)
    return 0 if _all_finite(data_arrays(data_f, mv.parent.shape[0], mv.S.shape[0]).op) else 3


@njit(**KERNEL)
def velocities_checked_kernel(model_i, model_f, q, qd, data_f):
    """:func:`body_velocities`' one compiled call: the checks of ``q`` and ``qd`` (as
    :func:`poses_checked_kernel`), then the body velocities into ``v``; 3 if they are not
    finite, else 0."""
    mv = model_arrays(model_i, model_f)
    status = configuration_status(mv, q)
    if status != 0:
        return status
    if not vector_ok(qd, mv.S.shape[0]):
        return 1
    _velocities_kernel(model_i, model_f, q, qd, data_f)
    return 0 if _all_finite(data_arrays(data_f, mv.parent.shape[0], mv.S.shape[0]).v) else 3


@njit(**KERNEL)
def energy_checked_kernel(model_i, model_f, q, qd, data_f):
    """:func:`energy`'s one compiled call: ``(status, T, V)``, status as
    :func:`velocities_checked_kernel` (``T``, ``V`` only valid for 0)."""
    mv = model_arrays(model_i, model_f)
    status = configuration_status(mv, q)
    if status == 0 and not vector_ok(qd, mv.S.shape[0]):
        status = 1
    if status != 0:
        return status, 0.0, 0.0
    T, V = state_energy(model_i, model_f, q, qd, data_f)
    return (0 if math.isfinite(T) and math.isfinite(V) else 3), T, V


@inline
def _body_point(model_i, model_f, q, body, point, data_f):
    """The checks of :func:`jacobian_checked_kernel` and :func:`point_checked_kernel` but
    that of their output, the world poses into the workspace, and the point: ``(status, p)``
    with ``p`` the world position (3-tuple) of ``point`` (body coordinates) on ``body``."""
    mv = model_arrays(model_i, model_f)
    nb = mv.parent.shape[0]
    z = (0.0, 0.0, 0.0)
    if not (vector_ok(point, 3) and 0 <= body < nb):
        return 1, z
    for k in range(3):
        if not math.isfinite(point[k]):
            return 1, z
    status = configuration_status(mv, q)
    if status != 0:
        return status, z
    _world_poses_kernel(model_i, model_f, q, data_f)
    dv = data_arrays(data_f, nb, mv.S.shape[0])
    pw = mat3T_vec(get_mat3(dv.oE, body), (point[0], point[1], point[2]))
    p = (dv.op[body, 0] + pw[0], dv.op[body, 1] + pw[1], dv.op[body, 2] + pw[2])
    return (0 if _all_finite(dv.op) else 3), p


@njit(**KERNEL)
def point_checked_kernel(model_i, model_f, q, body, point, data_f, p_out):
    """:func:`point_position`'s one compiled call: the world position of ``point`` (body
    coordinates) on ``body`` into ``p_out`` (3,); status as :func:`jacobian_checked_kernel`."""
    if not vector_ok(p_out, 3):
        return 1
    status, p = _body_point(model_i, model_f, q, body, point, data_f)
    if status == 0 or status == 3:
        p_out[0], p_out[1], p_out[2] = p
    return status


@njit(**KERNEL)
def jacobian_checked_kernel(model_i, model_f, q, body, point, data_f, J_out):
    """:func:`jacobian`'s one compiled call: the checks of ``q`` (as
    :func:`poses_checked_kernel`), of ``body`` (an index), ``point`` (a finite contiguous
    (3,)) and ``J_out`` (a C-contiguous (6, nv)), the world poses, then the columns of the
    world-frame Jacobian of the point ``point`` (body coordinates) fixed on ``body``: rows
    0-2 angular velocity, rows 3-5 the point's linear velocity, both in world coordinates.
    Returns 0, 1 (a wrong shape, layout, index or point), 2 (a quaternion) or 3 (non-finite
    poses; ``J_out`` is written all the same)."""
    mv = model_arrays(model_i, model_f)
    parent, vadr, jnv, S = mv.parent, mv.vadr, mv.jnv, mv.S
    nb = parent.shape[0]
    nv = S.shape[0]
    if not matrix_ok(J_out, 6, nv):
        return 1
    status, p = _body_point(model_i, model_f, q, body, point, data_f)
    if status == 1 or status == 2:
        return status
    p0, p1, p2 = p
    dv = data_arrays(data_f, nb, nv)
    oE, op = dv.oE, dv.op
    for k in range(6):
        for l in range(nv):
            J_out[k, l] = 0.0
    j = body
    while j >= 0:
        E = get_mat3(oE, j)
        r = get_vec3(op, j)
        va = vadr[j]
        for d in range(jnv[j]):
            # the dof's motion in world coordinates, 0X_j S (RBDA Table 2.5), then the
            # point's velocity v_P = v_O + w x P
            s = get_vec6(S, va + d)
            w0 = E[0] * s[0] + E[3] * s[1] + E[6] * s[2]
            w1 = E[1] * s[0] + E[4] * s[1] + E[7] * s[2]
            w2 = E[2] * s[0] + E[5] * s[1] + E[8] * s[2]
            l0 = E[0] * s[3] + E[3] * s[4] + E[6] * s[5] + r[1] * w2 - r[2] * w1
            l1 = E[1] * s[3] + E[4] * s[4] + E[7] * s[5] + r[2] * w0 - r[0] * w2
            l2 = E[2] * s[3] + E[5] * s[4] + E[8] * s[5] + r[0] * w1 - r[1] * w0
            J_out[0, va + d] = w0
            J_out[1, va + d] = w1
            J_out[2, va + d] = w2
            J_out[3, va + d] = l0 + w1 * p2 - w2 * p1
            J_out[4, va + d] = l1 + w2 * p0 - w0 * p2
            J_out[5, va + d] = l2 + w0 * p1 - w1 * p0
        j = parent[j]
    return status


_POSES_ENTRY = EntryPoints(poses_checked_kernel, lambda d: (d.model_i, d.model_f, d.qdd,
                                                            d.buf))
_VELOCITIES_ENTRY = EntryPoints(velocities_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.qdd, d.qdd, d.buf))
_ENERGY_ENTRY = EntryPoints(energy_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.qdd, d.qdd, d.buf))
_JACOBIAN_ENTRY = EntryPoints(jacobian_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.qdd, 0, d.qdd, d.buf, np.empty((6, d.nv), d.dtype)))
_POINT_ENTRY = EntryPoints(point_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.qdd, 0, d.qdd, d.buf, d.qdd))
_ORIGIN = (0.0, 0.0, 0.0)
_ORIGIN_ARRAY = np.zeros(3)
_ORIGIN_ARRAY.flags.writeable = False


# ----------------------------------------------------------------------- public API

def forward_kinematics(model: Model, q, *, data=None):
    """World poses of every body.

    Parameters
    ----------
    model : Model
    q : (nq,) float64
        Configuration.

    Returns
    -------
    R : (nb, 3, 3) float64
        Body orientations: columns are the body axes in world coordinates (``R = oE^T``;
        maps body to world coordinates).
    p : (nb, 3) float64
        Body-frame origins in world coordinates [m].

    Raises
    ------
    ValueError
        For a wrong shape, non-finite entries or non-unit quaternions.

    Notes
    -----
    Complexity O(nb). Source: RBDA sec. 4.1 (composition of ``X_J X_tree``).
    """
    d = data if data is not None else model._data.get(np.float64)
    ep = hot_entry(_POSES_ENTRY, d, q)
    if ep is None or ep(d.model_i, d.model_f, q, d.buf) != 0:
        d = data if data is not None else model.data()
        _poses(model, d, model.check_configuration(q))
    return np.transpose(d.oE, (0, 2, 1)).copy(), d.op.copy()


def _poses(model, d, q):
    """World poses into ``d.oE``, ``d.op`` for a checked ``q``; a ValueError naming the
    joint of a non-finite entry of ``q``."""
    if poses_checked_kernel(d.model_i, d.model_f, q, d.buf) != 0:
        model.diagnose_nonfinite(q=q)


def body_velocities(model: Model, q, qd, *, data=None):
    """Return the spatial velocities of every body in its own coordinates.

    Parameters
    ----------
    model : Model
        The articulated body.
    q : (nq,) float64
        Configuration.
    qd : (nv,) float64
        Joint velocities [rad/s | m/s].
    data : Data, optional
        Workspace (default: the model's cached one).

    Returns
    -------
    v : (nb, 6) float64
        ``[w; v_O]``: angular velocity [rad/s] and velocity of the body origin [m/s], body
        coordinates (RBDA eq. 5.7: ``v_i = Xup_i v_parent + S_i qd_i``).
    """
    d = data if data is not None else model._data.get(np.float64)
    ep = hot_entry(_VELOCITIES_ENTRY, d, q, qd)
    if ep is None or ep(d.model_i, d.model_f, q, qd, d.buf) != 0:
        d = data if data is not None else model.data()
        q, qd = as_state(model, q, qd, np.float64)
        if velocities_checked_kernel(d.model_i, d.model_f, q, qd, d.buf) != 0:
            model.diagnose_nonfinite(q=q, qd=qd)
    return d.v.copy()


def energy(model: Model, q, qd, *, data=None):
    """Return the kinetic and the gravitational potential energy.

    Parameters
    ----------
    model : Model
        The articulated body.
    q : (nq,) float64
        Configuration.
    qd : (nv,) float64
        Joint velocities [rad/s | m/s].
    data : Data, optional
        Workspace (default: the model's cached one).

    Returns
    -------
    T, V : float
        Energies [J]: ``T = 1/2 qd^T M qd = 1/2 sum_i v_i . I_i v_i``;
        ``V = -sum_i m_i g . c_i`` with ``c_i`` the world COM (zero at the world origin).
    """
    d = data if data is not None else model._data.get(np.float64)
    ep = hot_entry(_ENERGY_ENTRY, d, q, qd)
    status, T, V = (ep(d.model_i, d.model_f, q, qd, d.buf) if ep is not None
                    else (1, 0.0, 0.0))
    if status != 0:
        d = data if data is not None else model.data()
        q, qd = as_state(model, q, qd, np.float64)
        status, T, V = energy_checked_kernel(d.model_i, d.model_f, q, qd, d.buf)
        if status != 0:
            model.diagnose_nonfinite(q=q, qd=qd)
    return float(T), float(V)


def jacobian(model: Model, q, body, point=_ORIGIN, *, data=None, out=None):
    """World-frame Jacobian of a point fixed on a body.

    Parameters
    ----------
    body : str or int
        Body name or index.
    point : (3,) float
        The point in body coordinates [m].

    Returns
    -------
    J : (6, nv) float64
        Rows 0-2 map ``qd`` to the body's angular velocity, rows 3-5 to the point's linear
        velocity, both in world coordinates. ``J[3:]`` is the point Jacobian. Columns of
        joints that are not ancestors of ``body`` are zero. Written into ``out`` (a writable
        C-contiguous (6, nv) float64 array) and returned if given.

    Raises
    ------
    ValueError
        For a wrong shape (of ``out`` too), a non-finite entry or non-unit
        quaternion of ``q``, a non-finite ``point``, an unknown body.
    """
    d = data if data is not None else model._data.get(np.float64)
    b = body if type(body) is int else model.body_id(body)
    pt = _ORIGIN_ARRAY if point is _ORIGIN else point
    ep = hot_entry(_JACOBIAN_ENTRY, d, q, pt, out=out, out_ndim=2)
    if ep is not None:
        J = np.empty((6, d.nv)) if out is None else out
        if ep(d.model_i, d.model_f, q, b, pt, d.buf, J) == 0:
            return J
    d = data if data is not None else model.data()
    b = model.body_id(body)
    q = model.check_configuration(q)
    pt = np.asarray(point, dtype=np.float64)
    if pt.shape != (3,) or not np.isfinite(pt).all():
        raise ValueError(f"point must be a finite (3,) vector, got {point!r}")
    J = as_output(out, (6, model.nv), np.float64)
    if jacobian_checked_kernel(d.model_i, d.model_f, q, b, pt, d.buf, J) != 0:
        model.diagnose_nonfinite(q=q)
    return J


def point_position(model: Model, q, body, point=_ORIGIN, *, data=None):
    """Return the world position [m] of a point given in body coordinates.

    Parameters
    ----------
    model : Model
        The articulated body.
    q : (nq,) float64
        Configuration.
    body : str or int
        Body name or index.
    point : (3,) float64
        The point in body coordinates [m] (default: the body origin).
    data : Data, optional
        Workspace (default: the model's cached one).

    Returns
    -------
    p : (3,) float64
        World position [m].

    Raises
    ------
    ValueError
        As :func:`jacobian`.
    """
    d = data if data is not None else model._data.get(np.float64)
    b = body if type(body) is int else model.body_id(body)
    pt = _ORIGIN_ARRAY if point is _ORIGIN else point
    ep = hot_entry(_POINT_ENTRY, d, q, pt)
    if ep is not None:
        p = np.empty(3)
        if ep(d.model_i, d.model_f, q, b, pt, d.buf, p) == 0:
            return p
    d = data if data is not None else model.data()
    b = model.body_id(body)
    q = model.check_configuration(q)
    pt = np.asarray(point, dtype=np.float64)
    if pt.shape != (3,) or not np.isfinite(pt).all():
        raise ValueError(f"point must be a finite (3,) vector, got {point!r}")
    p = np.empty(3)
    if point_checked_kernel(d.model_i, d.model_f, q, b, pt, d.buf, p) != 0:
        model.diagnose_nonfinite(q=q)
    return p


def body_force(model: Model, q, body, force, point=(0.0, 0.0, 0.0), *, frame="world",
               torque=(0.0, 0.0, 0.0), f_ext=None, data=None):
    """Spatial force on a body, in the body coordinates that ``f_ext`` arguments use.

    Parameters
    ----------
    body : str or int
    force : (3,) float
        Force [N], in world or body coordinates (``frame``).
    point : (3,) float
        Point of application, in body coordinates [m].
    frame : {"world", "body"}
        Coordinates of ``force`` and ``torque``.
    torque : (3,) float
        An additional pure moment [N m].
    f_ext : (nb, 6) float64, optional
        If given, the force is added into it in place.

    Returns
    -------
    (6,) float64
        ``[n_O; f]`` about the body origin, body coordinates; or ``f_ext``.
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
