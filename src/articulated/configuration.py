"""Configuration space: integrate on the manifold, normalize quaternions, ``qdot``.

The configuration space of a :class:`~articulated.model.Model`: integrate on the manifold,
normalize quaternions, ``qdot``.

``q`` (nq,) is not a vector space when the model has quaternion joints, and ``qd`` (nv,)
is not ``dq/dt`` for them (see :mod:`articulated.model`). Three operations connect the two:

* :func:`integrate` - ``q (+) v dt``: move along the manifold with a constant velocity
  ``v`` (nv,) for a time ``dt``, *exactly* (the exponential map of each joint's group):

  =============  ===========================================================================
  revolute,      ``q + v dt``
  prismatic
  spherical      ``quat <- quat (x) exp(omega dt / 2)``, omega in body coordinates
                 (right multiplication, because ``omega`` is a body-frame rate)
  free           SE(3) exponential of the body twist ``[omega; v_O]``:
                 ``p <- p + R(quat) V(omega dt) v_O dt``, ``quat <- quat (x) exp(omega dt/2)``
                 with ``V(phi) = 1 + (1 - cos t)/t^2 phi^ + (t - sin t)/t^3 phi^2``,
                 ``t = |phi|``. It is exact for a constant body twist (a screw motion), the
                 choice of Pinocchio's ``integrate`` for a free flyer; to first order in
                 ``dt`` it equals the SO(3) x R^3 step ``p + R(quat) v_O dt``.
  =============  ===========================================================================

* :func:`qdot` - ``dq/dt`` (nq,) from ``(q, qd)``: ``qd`` for 1-DOF joints,
  ``1/2 quat (x) (0, omega)`` for quaternions, ``R(quat) v_O`` for the free-joint position
  (``v_O = R^T dp/dt`` is the origin velocity in body coordinates, the linear half of the
  free joint's ``qd``).
* :func:`normalize` - unit quaternions.

The compiled kernels (``integrate_joint``, ``integrate_joints_inplace`` and the private
ones behind the three wrappers) serve the algorithms and the simulation layer, which step
only some joints in place or work on preallocated buffers.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 4.4 (quaternions)
and appendix; J. Sola, "Quaternion kinematics for the error-state Kalman filter", 2017.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .config import inline, KERNEL
from .model import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL, Model


# ---------------------------------------------------------------------------- kernels

@inline
def _quat_step(q, a, v, b, dt, q_out):
    """``q_out[a:a+4] = q[a:a+4] (x) exp(v[b:b+3] dt / 2)``, normalized."""
    px = v[b] * dt
    py = v[b + 1] * dt
    pz = v[b + 2] * dt
    th = math.sqrt(px * px + py * py + pz * pz)
    h = 0.5 * th
    if h < 1e-3:
        sh = 1.0 - h * h / 6.0 + h * h * h * h / 120.0  # sin(h)/h
    else:
        sh = math.sin(h) / h
    dw = math.cos(h)
    s = 0.5 * sh  # sin(h) / th
    dx = s * px
    dy = s * py
    dz = s * pz
    w = q[a]
    x = q[a + 1]
    y = q[a + 2]
    z = q[a + 3]
    nw = w * dw - x * dx - y * dy - z * dz
    nx = w * dx + x * dw + y * dz - z * dy
    ny = w * dy - x * dz + y * dw + z * dx
    nz = w * dz + x * dy - y * dx + z * dw
    n = math.sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
    q_out[a] = nw / n
    q_out[a + 1] = nx / n
    q_out[a + 2] = ny / n
    q_out[a + 3] = nz / n


@inline
def _rotate_add(q, a, x0, x1, x2, out, o):
    """``out[o:o+3] += R(quat) x`` with ``quat = q[a:a+4] / |q[a:a+4]|``."""
    w = q[a]
    x = q[a + 1]
    y = q[a + 2]
    z = q[a + 3]
    n2 = w * w + x * x + y * y + z * z
    s = 2.0 / n2
    # R x = x + s w (r x x) + s r x (r x x), r = (x, y, z)  (|quat|^2 = n2)
    c0 = y * x2 - z * x1
    c1 = z * x0 - x * x2
    c2 = x * x1 - y * x0
    out[o] += x0 + s * (w * c0 + y * c2 - z * c1)
    out[o + 1] += x1 + s * (w * c1 + z * c0 - x * c2)
    out[o + 2] += x2 + s * (w * c2 + x * c1 - y * c0)


@inline
def integrate_joint(i, jtype, qadr, vadr, q, v, dt, q_out):
    """Integrate joint i's coordinates only: ``q_out = q (+) v dt`` (part of :func:`integrate`).

    Revolute/prismatic ``q + v dt``, quaternion exponential map, SE(3) exponential for the
    free-joint position.
    """
    t = jtype[i]
    a = qadr[i]
    b = vadr[i]
    if t == JOINT_REVOLUTE or t == JOINT_PRISMATIC:
        q_out[a] = q[a] + v[b] * dt
    elif t == JOINT_SPHERICAL:
        _quat_step(q, a, v, b, dt, q_out)
    elif t == JOINT_FREE:
        px = v[b] * dt
        py = v[b + 1] * dt
        pz = v[b + 2] * dt
        ux = v[b + 3] * dt
        uy = v[b + 4] * dt
        uz = v[b + 5] * dt
        th2 = px * px + py * py + pz * pz
        th = math.sqrt(th2)
        h = 0.5 * th
        if h < 1e-3:
            sh = 1.0 - h * h / 6.0 + h * h * h * h / 120.0
        else:
            sh = math.sin(h) / h
        A = 0.5 * sh * sh  # (1 - cos th) / th^2
        if th < 0.1:
            B = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0 - th2 * th2 * th2 / 362880.0
        else:
            B = (th - math.sin(th)) / (th2 * th)
        # V(phi) u = u + A phi x u + B phi x (phi x u)
        c0 = py * uz - pz * uy
        c1 = pz * ux - px * uz
        c2 = px * uy - py * ux
        d0 = py * c2 - pz * c1
        d1 = pz * c0 - px * c2
        d2 = px * c1 - py * c0
        for k in range(3):
            q_out[a + k] = q[a + k]
        _rotate_add(q, a + 3, ux + A * c0 + B * d0, uy + A * c1 + B * d1,
                    uz + A * c2 + B * d2, q_out, a)
        _quat_step(q, a + 3, v, b, dt, q_out)


@njit(**KERNEL)
def _integrate_kernel(jtype, qadr, vadr, q, v, dt, q_out):
    for i in range(jtype.shape[0]):
        integrate_joint(i, jtype, qadr, vadr, q, v, dt, q_out)


@njit(**KERNEL)
def integrate_joints_inplace(joints, n, jtype, qadr, vadr, q, v, dt):
    """``q (+)= v dt`` on ``joints[:n]`` only (in place; quaternions renormalized); cost
    O(n), independent of the model size."""
    for t in range(n):
        integrate_joint(joints[t], jtype, qadr, vadr, q, v, dt, q)


@njit(**KERNEL)
def _qdot_kernel(jtype, qadr, vadr, q, qd, out):
    """dq/dt; quaternion part linear in the (possibly non-unit) stored quaternion, the
    free-joint position part rotated by the normalized one."""
    for i in range(jtype.shape[0]):
        t = jtype[i]
        a = qadr[i]
        b = vadr[i]
        if t == JOINT_REVOLUTE or t == JOINT_PRISMATIC:
            out[a] = qd[b]
        elif t == JOINT_SPHERICAL or t == JOINT_FREE:
            o = a
            if t == JOINT_FREE:
                for k in range(3):
                    out[a + k] = 0.0
                _rotate_add(q, a + 3, qd[b + 3], qd[b + 4], qd[b + 5], out, a)
                o = a + 3
            w = q[o]
            x = q[o + 1]
            y = q[o + 2]
            z = q[o + 3]
            ox = qd[b]
            oy = qd[b + 1]
            oz = qd[b + 2]
            # 1/2 quat (x) (0, omega)
            out[o] = 0.5 * (-x * ox - y * oy - z * oz)
            out[o + 1] = 0.5 * (w * ox + y * oz - z * oy)
            out[o + 2] = 0.5 * (w * oy + z * ox - x * oz)
            out[o + 3] = 0.5 * (w * oz + x * oy - y * ox)


@njit(**KERNEL)
def _normalize_kernel(quat_qadr, q):
    """Normalize the quaternions of q in place; return the index (into quat_qadr) of the first
    quaternion whose norm is zero or not finite (left as is), or -1."""
    bad = -1
    for k in range(quat_qadr.shape[0]):
        a = quat_qadr[k]
        n = math.sqrt(q[a] * q[a] + q[a + 1] * q[a + 1] + q[a + 2] * q[a + 2] + q[a + 3] * q[a + 3])
        if n > 0.0 and n < math.inf:
            for l in range(4):
                q[a + l] /= n
        elif bad < 0:
            bad = k
    return bad


# ---------------------------------------------------------------------------- wrappers

def _check_dt(dt):
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ValueError(f"dt must be a real number, got {dt!r}") from None
    if not math.isfinite(dt):
        raise ValueError(f"dt must be finite, got {dt}")
    return dt


def integrate(model: Model, q, v, dt=1.0) -> np.ndarray:
    """Move a configuration along the manifold: ``q (+) v dt``.

    Parameters
    ----------
    model : Model
    q : (nq,) float64
        Configuration (unit quaternions for spherical/free joints).
    v : (nv,) float64
        Constant joint velocity, same layout and frames as ``qd`` [rad/s | m/s]: body-frame
        angular velocity for quaternion joints, body-frame origin velocity for the
        free-joint translation.
    dt : float
        Duration [s] (any sign; ``v`` and ``dt`` only enter as ``v dt``).

    Returns
    -------
    q_new : (nq,) float64
        Revolute/prismatic ``q + v dt``; quaternions ``quat (x) exp(omega dt / 2)`` (right
        multiplication, normalized); free-joint position by the SE(3) exponential ``p +
        R(quat) V(omega dt) v_O dt`` (exact for a constant body twist; see the module
        docstring).

    Raises
    ------
    ValueError, TypeError
        ValueError for wrong shapes or a non-finite ``dt``; TypeError for non-numeric
        arrays.

    Notes
    -----
    Complexity O(nb), one small numba kernel.

    References: RBDA sec. 4.4; Sola, "Quaternion kinematics for the error-state Kalman
    filter", 2017, eq. 214 (right-multiplied body-frame increment).
    """
    q = model.check_vector(q, "q", model.nq)
    v = model.check_vector(v, "v", model.nv)
    dt = _check_dt(dt)
    out = np.empty_like(q)
    _integrate_kernel(model.jnt_type, model.jnt_qadr, model.jnt_vadr, q, v, dt, out)
    return out


def qdot(model: Model, q, qd) -> np.ndarray:
    """Time derivative of the configuration, ``dq/dt`` (nq,), from ``(q, qd)``.

    Parameters
    ----------
    q : (nq,) float64
        Configuration.
    qd : (nv,) float64
        Joint velocities (body-frame rates for quaternion joints).

    Returns
    -------
    (nq,) float64
        ``qd`` for 1-DOF joints; ``1/2 quat (x) (0, omega)`` [1/s] for quaternions;
        ``R(quat) v_O`` [m/s] (parent/joint coordinates) for the free-joint position. The
        quaternion part is linear in ``quat`` (a non-unit quaternion is used as is);
        rotations use the normalized quaternion.

    Raises
    ------
    ValueError
        For wrong shapes.

    Notes
    -----
    Source: RBDA sec. 4.4 (eq. 4.13, quaternion rate).
    """
    q = model.check_vector(q, "q", model.nq)
    qd = model.check_vector(qd, "qd", model.nv)
    out = np.empty_like(q)
    _qdot_kernel(model.jnt_type, model.jnt_qadr, model.jnt_vadr, q, qd, out)
    return out


def normalize(model: Model, q) -> np.ndarray:
    """Return a copy of ``q`` (nq,) with every quaternion scaled to unit norm.

    Parameters
    ----------
    model : Model
        The articulated body.
    q : (nq,) float64
        Configuration.

    Returns
    -------
    q : (nq,) float64
        A normalized copy.

    Raises
    ------
    ValueError
        Naming the joint if a quaternion has zero or non-finite norm, or for a wrong shape.
    """
    q = model.check_vector(q, "q", model.nq).copy()
    bad = _normalize_kernel(model.quat_qadr, q)
    if bad >= 0:
        j = model._quat_joint(bad)
        a = model.quat_qadr[bad]
        raise ValueError(f"joint {model.joint_name[j]!r}: quaternion q[{a}:{a + 4}] = "
                         f"{q[a:a + 4]} cannot be normalized")
    return q
