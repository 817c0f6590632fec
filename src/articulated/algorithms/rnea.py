"""Recursive Newton-Euler algorithm (inverse dynamics), RBDA Table 5.1."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import KERNEL
from ..data import data_arrays
from ..model import Model, model_arrays
from ..spatial import (add6, add_vec6, cross_force, dot6, get_mat3, get_vec3, get_vec6,
                       inertia_times, set_vec6, sub6, xform_force_T, xform_motion)
from ._inputs import (EntryPoints, as_f_ext, as_state, as_vector, deliver, hot_entry,
                      report_nonfinite, state_status, workspace)
from .kinematics import base_acceleration, joint_motion, joint_xup, velocity_step


@njit(**KERNEL)
def _rnea_kernel(
    # model (packed, see ModelArrays)
    model_i, model_f,
    # inputs
    q, qd, qdd, f_ext, use_gravity,
    # data (packed, see Data): writes Xup, v, c, a, f and the output tau
    data_f,
):
    """Inverse dynamics into ``tau``; returns False if ``tau`` is not finite.

    ``f_ext`` is (nb, 6), or (0, 6) for no external forces.
    """
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    Xtree_rot, axis, Xtree_E, Xtree_r = mv.Xtree_rot, mv.axis, mv.Xtree_E, mv.Xtree_r
    mass, h, Ibar, S, gravity = mv.mass, mv.h, mv.Ibar, mv.S, mv.gravity
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, v, c, a, f, tau = dv.Xup_E, dv.Xup_r, dv.v, dv.c, dv.a, dv.f, dv.tau
    has_f_ext = f_ext.shape[0] > 0
    a0 = base_acceleration(gravity, use_gravity)
    # forward pass: v_i, a_i, f_i = I a + v x* I v - f_ext (RBDA eqs. 5.7-5.9)
    for i in range(nb):
        E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
        vi = velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)
        p = parent[i]
        if p >= 0:
            ai = xform_motion(E, r, get_vec6(a, p))
        else:
            ai = xform_motion(E, r, a0)
        ai = add6(add6(ai, get_vec6(c, i)), joint_motion(i, vadr, jnv, S, qdd))
        set_vec6(a, i, ai)
        m = mass[i]
        hi = get_vec3(h, i)
        Ii = get_mat3(Ibar, i)
        fi = add6(inertia_times(m, hi, Ii, ai), cross_force(vi, inertia_times(m, hi, Ii, vi)))
        if has_f_ext:
            fi = sub6(fi, get_vec6(f_ext, i))
        set_vec6(f, i, fi)
    # backward pass: tau_i = S_i^T f_i, f_parent += Xup^T f_i (RBDA eqs. 5.10-5.11)
    finite = True
    for i in range(nb - 1, -1, -1):
        va = vadr[i]
        fi = get_vec6(f, i)
        for d in range(jnv[i]):
            x = dot6(get_vec6(S, va + d), fi) + mv.armature[va + d] * qdd[va + d]
            tau[va + d] = x
            if not math.isfinite(x):
                finite = False
        p = parent[i]
        if p >= 0:
            add_vec6(f, p, xform_force_T(get_mat3(Xup_E, i), get_vec3(Xup_r, i), fi))
    return finite


@njit(**KERNEL)
def rnea_checked_kernel(model_i, model_f, q, qd, qdd, f_ext, gravity, data_f, tau_out):
    """The public :func:`rnea`'s one compiled call: :func:`~articulated.algorithms._inputs.
    state_status`, then the RNEA kernel; returns 0 (done), 1 (a wrong shape), 2 (a
    non-unit quaternion) or 3 (a non-finite result), diagnosed by the caller."""
    mv = model_arrays(model_i, model_f)
    status = state_status(mv, q, qd, qdd, f_ext, tau_out)
    if status != 0:
        return status
    if not _rnea_kernel(model_i, model_f, q, qd, qdd, f_ext, gravity, data_f):
        return 3
    nv = mv.S.shape[0]
    tau = data_arrays(data_f, mv.parent.shape[0], nv).tau
    for k in range(nv):
        tau_out[k] = tau[k]
    return 0


_RNEA_ENTRY = EntryPoints(rnea_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.tau, d.tau, d.tau, d.f_none, True, d.buf, d.tau))


def rnea_into(d, q, qd, qdd, f, gravity=True):
    """Run the RNEA kernel with the workspace ``d`` on validated arrays; the result is left
    in ``d.tau``. Returns False if it is not finite."""
    return _rnea_kernel(d.model_i, d.model_f, q, qd, qdd, f, bool(gravity), d.buf)


def rnea(model: Model, q, qd, qdd, f_ext=None, *, gravity: bool = True, dtype=np.float64,
         data=None, out=None) -> np.ndarray:
    """Compute inverse dynamics by the recursive Newton-Euler algorithm (RNEA).

    ``tau = M(q) qdd + C(q, qd) - J^T f_ext``.

    Parameters
    ----------
    q : (nq,) float64
        Configuration.
    qd : (nv,) float64
        Joint velocities [rad/s | m/s].
    qdd : (nv,) float64
        Joint accelerations [rad/s^2 | m/s^2].
    f_ext : (nb, 6) float64, optional
        External spatial forces, body coordinates (``[n; f]`` about each body origin) [N m;
        N].
    gravity : bool
        Include the model's gravity (as a base acceleration ``-g``).
    dtype, data : as :func:`articulated.aba`
    out : (nv,) array of ``dtype``, optional
        Written and returned instead of a new array.

    Returns
    -------
    tau : (nv,) ndarray of ``dtype``
        Joint forces [N m | N]. After the call ``model.data().f`` (nb, 6) holds the
        spatial force each joint transmits to its body.

    Raises
    ------
    ValueError, TypeError
        As :func:`articulated.aba`.

    Notes
    -----
    O(nb). Source: Featherstone, RBDA 2008, Table 5.1.
    """
    d = data if data is not None else model._data.get(dtype)
    ep = hot_entry(_RNEA_ENTRY, d, q, qd, qdd, f_ext, out)
    if ep is not None:
        r = np.empty(d.nv, d.dtype) if out is None else out  # as in aba: the kernel writes it
        if ep(d.model_i, d.model_f, q, qd, qdd, d.f_none if f_ext is None else f_ext,
              gravity, d.buf, r) == 0:
            return r
    dt, d = workspace(model, dtype, data)
    q, qd = as_state(model, q, qd, dt)
    qdd = as_vector(model, qdd, "qdd", model.nv, dt)
    f = as_f_ext(model, f_ext, d)
    if not rnea_into(d, q, qd, qdd, f, gravity):
        report_nonfinite(model, d.tau, d, q=q, qd=qd, qdd=qdd, f_ext=f)
    return deliver(d.tau, out)


def bias_forces(model: Model, q, qd, f_ext=None, *, dtype=np.float64, data=None):
    """Compute the bias forces ``C(q, qd) - J^T f_ext``, i.e. ``rnea(q, qd, 0)``.

    Coriolis, centrifugal, gravity and external terms. Parameters and errors as
    :func:`rnea`.

    Returns
    -------
    C : (nv,) ndarray of ``dtype``
        Bias forces [N m | N].
    """
    return rnea(model, q, qd, np.zeros(model.nv), f_ext, dtype=dtype, data=data)


def gravity_torques(model: Model, q, *, dtype=np.float64, data=None):
    """Compute the generalized gravity forces ``g(q) = rnea(q, 0, 0)``.

    Parameters and errors as :func:`rnea`.

    Returns
    -------
    g : (nv,) ndarray of ``dtype``
        Gravity forces [N m | N]; ``g = dV/dq`` for 1-DOF joints.
    """
    return rnea(model, q, np.zeros(model.nv), np.zeros(model.nv), dtype=dtype, data=data)
