"""Fixed-step time integrators on the configuration manifold.

Configurations move by :func:`articulated.configuration.integrate` (``q (+) v dt``, exact
exponential map per joint) and their time derivative is
:func:`articulated.configuration.qdot`; see :mod:`articulated.configuration`.

Integrators
-----------
All fixed-step; ``accel(t, q, qd) -> qdd`` is the forward dynamics (with the applied forces).

* :func:`euler_step` - explicit Euler, ``q1 = q (+) qd dt``, ``qd1 = qd + qdd(q, qd) dt``:
  first order, what the adaptive-dynamics papers use (Redon, Galoppo & Lin 2005, sec. 7:
  "our system proved to be stable enough with a simple explicit Euler integrator").
* :func:`semi_implicit_euler_step` - semi-implicit Euler, ``qd1 = qd + qdd(q, qd) dt``,
  ``q1 = q (+) qd1 dt``: first order; symplectic, so no secular energy drift, when the
  mass matrix is constant (Hairer, Lubich & Wanner, Thm. VI.3.3 is for ``p``, not ``qd``).
  An articulated body's mass matrix depends on ``q``, and in joint velocities the step
  is not symplectic: its explicit velocity-product terms add energy, about
  ``dt^2 |qd1 - qd|_M^2 / 2`` per step for a freely spinning body, so a fast-whipping
  chain gains energy (first order in dt) where RK4 keeps it.
* :func:`rk4_step` - classical Runge-Kutta 4 on the kinematic ODE embedded in
  ``R^nq x R^nv``: ``dq/dt = qdot(q, qd)``, ``dqd/dt = qdd``. The stage quaternions are
  used *as they are* in the quaternion kinematics ``1/2 quat (x) (0, omega)`` (linear in
  ``quat``, so the exact flow keeps ``|quat|`` constant) and *normalized* wherever a rotation
  is needed (forward dynamics, ``R(quat) v_O``); the result is normalized after the full
  step. The embedded vector field is smooth and its exact flow stays on the manifold, so
  RK4 keeps its order 4 and the final normalization moves ``q`` by ``O(dt^5)`` only
  (Hairer, Lubich & Wanner, sec. IV.4: a projection after a step of an order-p method
  keeps order p). The test suite checks order 4 on a tumbling free body.

The adaptive Dormand-Prince RK45 integrator is driven by
:class:`~articulated.simulation.simulator.DynamicsSimulator` (scipy's ``RK45``, the solver
behind ``solve_ivp(method="RK45")``), on the same embedded ODE with the quaternions
normalized inside the right-hand side.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, sec. 4.4 (quaternions)
and appendix; Redon, Galoppo & Lin, "Adaptive Dynamics of Articulated Bodies", SIGGRAPH 2005,
sec. 7 (explicit Euler); E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*,
2006, ch. IV.4 (projection methods) and VI.3 (symplectic Euler).
"""

from __future__ import annotations

import weakref

import numpy as np

from ..configuration import _integrate_kernel, _normalize_kernel, _qdot_kernel
from ..model import Model

INTEGRATORS = ("rk4", "euler", "semi_implicit_euler", "rk45")
"""Names accepted by :func:`articulated.Simulator` (``integrator=``)."""


# ---------------------------------------------------------------------------- steppers
#
# Hot path: plain arrays, no shape checks (the simulator validated the state once).

class _Layout:
    """Index arrays of a model that the steppers need (cached per model)."""

    __slots__ = ("jtype", "qadr", "vadr", "quat_qadr", "nq", "nv", "__weakref__")

    def __init__(self, model):
        self.jtype = model.jnt_type
        self.qadr = model.jnt_qadr
        self.vadr = model.jnt_vadr
        self.quat_qadr = model.quat_qadr
        self.nq = model.nq
        self.nv = model.nv


_LAYOUTS: "weakref.WeakKeyDictionary[Model, _Layout]" = weakref.WeakKeyDictionary()


def _layout(model) -> _Layout:
    L = _LAYOUTS.get(model)
    if L is None:
        L = _LAYOUTS[model] = _Layout(model)
    return L


def _q_plus(L, q, v, dt):
    out = np.empty_like(q)
    _integrate_kernel(L.jtype, L.qadr, L.vadr, q, v, dt, out)
    return out


def _qdot(L, q, qd):
    out = np.empty_like(q)
    _qdot_kernel(L.jtype, L.qadr, L.vadr, q, qd, out)
    return out


def _unit(L, q):
    """Normalized copy (no error on a zero quaternion: the caller checks finiteness)."""
    if L.quat_qadr.shape[0] == 0:
        return q
    u = q.copy()
    _normalize_kernel(L.quat_qadr, u)
    return u


def euler_step(model: Model, accel, t: float, q, qd, dt: float):
    """One explicit (forward) Euler step on the manifold.

    ``qd1 = qd + dt qdd(t, q, qd)``, ``q1 = integrate(q, qd, dt)`` (the *old* velocity).

    Parameters
    ----------
    model : Model
        The articulated body.
    accel : callable ``(t, q, qd) -> qdd (nv,)``
        Forward dynamics incl. applied forces.
    t : float
        Time [s].
    q : (nq,) float64
        Configuration.
    qd : (nv,) float64
        Joint velocities.
    dt : float
        Step [s].

    Returns
    -------
    q1, qd1 : (nq,), (nv,) float64
        State at ``t + dt``.

    Notes
    -----
    One ``accel`` evaluation. Global error O(dt). Source: Redon, Galoppo & Lin 2005, sec. 7.
    """
    L = _layout(model)
    qdd = accel(t, q, qd)
    return _q_plus(L, q, qd, dt), qd + dt * qdd


def semi_implicit_euler_step(model: Model, accel, t: float, q, qd, dt: float):
    """Take one semi-implicit (symplectic) Euler step.

    ``qd1 = qd + dt qdd(t, q, qd)``, ``q1 = integrate(q, qd1, dt)`` (the *new* velocity).

    Arguments and returns as :func:`euler_step`. Global error O(dt). Symplectic, so the
    energy error stays bounded, only for a constant mass matrix (Hairer, Lubich & Wanner
    2006, Thm. VI.3.3, in momenta); fast-rotating light links gain energy at first order
    in dt (module docstring).
    """
    L = _layout(model)
    qd1 = qd + dt * accel(t, q, qd)
    return _q_plus(L, q, qd1, dt), qd1


def rk4_step(model: Model, accel, t: float, q, qd, dt: float):
    """One classical Runge-Kutta 4 step of ``dq/dt = qdot(q, qd)``, ``dqd/dt = qdd``.

    The stage configurations ``q + c dt k`` keep their (slightly non-unit) quaternions in the
    quaternion kinematics and are normalized for the forward dynamics and for rotations; the
    result is normalized (see the module docstring for why this keeps order 4).
    Arguments and returns as :func:`euler_step`; four ``accel`` evaluations; global error
    O(dt^4). Source: Hairer, Norsett & Wanner, *Solving ODEs I*, sec. II.1.
    """
    L = _layout(model)
    h2 = 0.5 * dt
    k1v = accel(t, q, qd)
    k1q = _qdot(L, q, qd)
    Y = q + h2 * k1q
    V = qd + h2 * k1v
    k2v = accel(t + h2, _unit(L, Y), V)
    k2q = _qdot(L, Y, V)
    Y = q + h2 * k2q
    V = qd + h2 * k2v
    k3v = accel(t + h2, _unit(L, Y), V)
    k3q = _qdot(L, Y, V)
    Y = q + dt * k3q
    V = qd + dt * k3v
    k4v = accel(t + dt, _unit(L, Y), V)
    k4q = _qdot(L, Y, V)
    s = dt / 6.0
    q1 = q + s * (k1q + 2.0 * (k2q + k3q) + k4q)
    if L.quat_qadr.shape[0]:
        _normalize_kernel(L.quat_qadr, q1)
    qd1 = qd + s * (k1v + 2.0 * (k2v + k3v) + k4v)
    return q1, qd1


STEPPERS = {
    "euler": euler_step,
    "semi_implicit_euler": semi_implicit_euler_step,
    "rk4": rk4_step,
}
"""Fixed-step integrators by name (``rk45`` is adaptive and lives in
:class:`~articulated.simulation.simulator.DynamicsSimulator`)."""
