"""Applied forces that the simulators (:func:`articulated.Simulator`) evaluate at every step.

A force object has

* ``apply(model, t, q, qd, tau, f_ext, kin=None)``: **adds** its joint forces into
  ``tau`` (nv,) [N m | N] and its body forces into ``f_ext`` (nb, 6), spatial forces
  ``[n; f]`` about each body origin in body coordinates [N m; N] (the ``f_ext`` argument of
  :func:`articulated.forward_dynamics`);
* ``potential(model, q, kin=None)``: its potential energy [J] if it is conservative
  (``0.0`` otherwise), so that the simulator's total energy ``T + V_gravity + sum V_force``
  is conserved by exact dynamics.

``kin`` is an optional :class:`StateKinematics` shared by all forces of one evaluation, so
world poses and body velocities are computed once. Any object with an ``apply(model, t, q,
qd, tau, f_ext)`` method (and optionally ``potential(model, q)``) can be added to a
simulator; subclass :class:`Force` to receive ``kin``.

Frames: a world force ``F_w`` at a point ``P`` given in body-``b`` coordinates becomes
``f_b = oE_b F_w``, ``n_b = P x f_b`` (RBDA sec. 2.8: spatial force about the body origin;
``oE_b = R_b^T`` is the world -> body rotation).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import namedtuple

import numpy as np

from ..algorithms.kinematics import body_velocities, forward_kinematics
from ..algorithms.hybrid import cached_pose
from ..config import inline
from ..model import JOINT_PRISMATIC, JOINT_REVOLUTE, Model
from ..spatial import get_mat3, get_vec6


class StateKinematics:
    """World poses and body velocities of one state, computed on first use.

    Attributes
    ----------
    R : (nb, 3, 3) float64
        Body -> world rotations (columns are body axes in world coordinates); lazy.
    p : (nb, 3) float64
        Body origins in world coordinates [m]; lazy.
    v : (nb, 6) float64
        Body spatial velocities ``[w; v_O]`` in body coordinates (requires ``qd``); lazy.
    """

    __slots__ = ("model", "q", "qd", "_R", "_p", "_v")

    def __init__(self, model: Model, q, qd=None):
        self.model = model
        self.q = q
        self.qd = qd
        self._R = None
        self._p = None
        self._v = None

    def _poses(self):
        self._R, self._p = forward_kinematics(self.model, self.q)

    @property
    def R(self):
        """Body -> world rotations (nb, 3, 3) float64, computed on first use."""
        if self._R is None:
            self._poses()
        return self._R

    @property
    def p(self):
        """Body origins (nb, 3) float64 in world coordinates [m], computed on first use."""
        if self._p is None:
            self._poses()
        return self._p

    @property
    def v(self):
        """Body spatial velocities ``[w; v_O]`` (nb, 6), body coordinates; needs ``qd``."""
        if self._v is None:
            if self.qd is None:
                raise ValueError("body velocities need qd")
            self._v = body_velocities(self.model, self.q, self.qd)
        return self._v


class _PoseRows:
    """``rows[b]``: part ``k`` (0: R, 1: p) of ``solver.body_pose(b)``."""

    __slots__ = ("solver", "k")

    def __init__(self, solver, k):
        self.solver, self.k = solver, k

    def __getitem__(self, b):
        return self.solver.body_pose(int(b))[self.k]


class FramesKinematics:
    """The ``kin`` argument of :meth:`Force.apply` for the adaptive simulators.

    ``R[b]`` and ``p[b]`` (as :class:`StateKinematics`) computed on demand from a solver's
    hierarchical frames (``solver.body_pose``, O(log n) per body, Redon & Lin 2005 Sec. 5.1)
    instead of a full forward-kinematics pass; ``v`` from ``velocities()`` on first use
    (None: zero body velocities, the quasi-static case).
    """

    def __init__(self, solver, nb, velocities=None):
        self.R = _PoseRows(solver, 0)
        self.p = _PoseRows(solver, 1)
        self._nb = nb
        self._velocities = velocities
        self._v = None

    @property
    def v(self):
        """Body spatial velocities (nb, 6), body coordinates (zero without velocities)."""
        if self._v is None:
            self._v = (np.zeros((self._nb, 6)) if self._velocities is None
                       else self._velocities())
        return self._v


def _kin(model, q, qd, kin):
    return kin if kin is not None else StateKinematics(model, q, qd)


def _vec3(x, what):
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (3,) or not np.isfinite(a).all():
        raise ValueError(f"{what} must be a finite (3,) vector, got {x!r}")
    return a.copy()


def _nonneg(x, what):
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a real number, got {x!r}") from None
    if not (math.isfinite(x) and x >= 0.0):
        raise ValueError(f"{what} must be finite and >= 0, got {x}")
    return x


class Force(ABC):
    """Base class of applied forces (see the module docstring for the protocol)."""

    conservative = False
    """True when :meth:`potential` returns the force's potential energy."""

    def bind(self, model: Model) -> "Force":
        """Check the force against ``model`` and return self.

        Checks body and joint names and sizes; ValueError if it does not fit. Called by the
        simulators' ``add_force``.
        """
        return self

    @abstractmethod
    def apply(self, model: Model, t: float, q, qd, tau, f_ext, kin=None) -> None:
        """Add the force into ``tau`` (nv,) and ``f_ext`` (nb, 6, body coordinates)."""

    def potential(self, model: Model, q, kin=None) -> float:
        """Potential energy [J]; 0.0 for a non-conservative force."""
        return 0.0

    def support(self, model: Model):
        """Return ``(bodies, joints)`` that :meth:`apply` may write forces to.

        The ``f_ext`` rows and ``tau`` entries it may write, as int sequences, or ``None``
        for "any". The quasi-static adaptive simulator updates only the assembly-tree paths
        of these (Redon & Lin 2005, Sec. 5.2); the default (``None, None``) is always
        correct and costs a full update.
        """
        return None, None

    @property
    def conserves_energy(self) -> bool:
        """Return True when the force neither adds nor removes energy.

        It is conservative and has no damping (the simulators watch the total energy only
        then, see :class:`~articulated.simulation.watch.EnergyWatch`).
        """
        return bool(self.conservative)

    def spec(self):
        """Return the force as ``{"type": class name, **constructor arguments}`` (JSON values).

        The force as ``{"type": class name, **constructor arguments}`` (JSON values), so
        that a checkpoint can rebuild it (:func:`force_from_spec`); None when it cannot be
        written (a callable argument, a user's own force: pass it again to
        :func:`articulated.simulation.checkpoint.resume`).
        """
        return None

    def compiled(self, model: Model):
        """Return the force's part of the compiled step loops (:func:`compile_forces`), or None.

        The force's part of the compiled step loops (:func:`compile_forces`), a dict with
        any of ``"body": (kind, body, params)`` (a body force, :data:`FORCE_WORLD`, ...),
        ``"tau": (nv,)`` constant joint forces, ``"damping": (nv,)`` viscous joint
        coefficients, ``"pd": (qadr, vadr, gains (n, 4))`` joint springs-dampers (columns
        kp, kd, q_ref, qd_ref); or None when the force has no compiled form (the default:
        the simulator then calls :meth:`apply` every step, in Python).
        """
        return None


class PointForce(Force):
    """A constant force applied at a point fixed on a body.

    Parameters
    ----------
    body : str or int
        Body name or index.
    force : (3,) float
        Force [N], in world coordinates (``frame="world"``) or in body coordinates
        (``frame="body"``: a follower force that turns with the body).
    point : (3,) float
        Point of application in body coordinates [m].
    frame : {"world", "body"}

    Notes
    -----
    A constant world force is conservative with potential ``V = -F . x_P`` (``x_P`` the
    point's world position); a body-frame force is not (``potential`` returns 0).
    Raises ValueError for a non-finite or mis-shaped vector, an unknown frame, or (at
    :meth:`bind`) an unknown body.
    """

    def __init__(self, body, force, point=(0.0, 0.0, 0.0), frame: str = "world"):
        if frame not in ("world", "body"):
            raise ValueError(f"frame must be 'world' or 'body', got {frame!r}")
        self.body = body
        self.force = _vec3(force, "PointForce force")
        self.point = _vec3(point, "PointForce point")
        self.frame = frame
        self.conservative = frame == "world"

    def support(self, model):
        return [model.body_id(self.body)], []

    def bind(self, model):
        model.body_id(self.body)
        return self

    def spec(self):
        return _spec(self, body=self.body, force=self.force, point=self.point,
                     frame=self.frame)

    def compiled(self, model):
        return {"body": (FORCE_WORLD if self.frame == "world" else FORCE_BODY,
                         model.body_id(self.body), np.r_[self.point, self.force, np.zeros(6)])}

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        b = model.body_id(self.body)
        if self.frame == "world":
            f = _kin(model, q, qd, kin).R[b].T @ self.force
        else:
            f = self.force
        f_ext[b, :3] += np.cross(self.point, f)
        f_ext[b, 3:] += f

    def potential(self, model, q, kin=None):
        if self.frame != "world":
            return 0.0
        k = _kin(model, q, None, kin)
        b = model.body_id(self.body)
        x = k.p[b] + k.R[b] @ self.point
        return float(-self.force @ x)

    def __repr__(self):
        return f"PointForce(body={self.body!r}, force={self.force.tolist()}, point={self.point.tolist()}, frame={self.frame!r})"


class Spring(Force):
    """A linear spring (and optional damper) from a point on a body to a fixed world anchor.

    Parameters
    ----------
    body : str or int
        Body name or index.
    point : (3,) float
        Attachment point in body coordinates [m].
    anchor : (3,) float
        Anchor in world coordinates [m].
    stiffness : float
        K >= 0 [N/m].
    rest_length : float
        L0 >= 0 [m].
    damping : float
        C >= 0 [N s/m], acting along the spring line.
    anchor_velocity : (3,) float
        The anchor moves at this constant world velocity [m/s]: ``anchor(t) = anchor + t
        anchor_velocity`` (a spring pulled along, e.g. the thread of ``articulated bench
        contact``); default zero (a fixed anchor).

    Notes
    -----
    With ``d = x_P - anchor(t)``, ``L = |d|``, ``u = d / L``, the world force on the body
    is ``F = -(k (L - L0) + c u . d(d)/dt) u`` (for ``L0 = 0`` the elastic part is ``-k
    d``, defined also at ``L = 0``). Potential ``V = 1/2 k (L - L0)^2`` (the damper adds
    none). The 50-link pendulum of Redon, Galoppo & Lin 2005 (Fig. 6) hangs from such a
    spring. A moving anchor does work: the spring is then not conservative
    (:meth:`potential` returns 0); its compiled form carries the anchor velocity, and the
    compiled loops place the anchor at each evaluation's time (RK4's stages included).
    """

    conservative = True

    def __init__(self, body, point, anchor, stiffness, rest_length=0.0, damping=0.0,
                 anchor_velocity=(0.0, 0.0, 0.0)):
        self.body = body
        self.point = _vec3(point, "Spring point")
        self.anchor = _vec3(anchor, "Spring anchor")
        self.stiffness = _nonneg(stiffness, "Spring stiffness")
        self.rest_length = _nonneg(rest_length, "Spring rest_length")
        self.damping = _nonneg(damping, "Spring damping")
        self.anchor_velocity = _vec3(anchor_velocity, "Spring anchor_velocity")
        self.conservative = not self.anchor_velocity.any()

    def support(self, model):
        return [model.body_id(self.body)], []

    def bind(self, model):
        model.body_id(self.body)
        return self

    @property
    def conserves_energy(self):
        return self.damping == 0.0 and self.conservative

    def spec(self):
        return _spec(self, body=self.body, point=self.point, anchor=self.anchor,
                     stiffness=self.stiffness, rest_length=self.rest_length,
                     damping=self.damping, anchor_velocity=self.anchor_velocity)

    def compiled(self, model):
        return {"body": (FORCE_SPRING, model.body_id(self.body),
                         np.r_[self.point, self.anchor, self.stiffness, self.rest_length,
                               self.damping, self.anchor_velocity])}

    def _geometry(self, model, q, qd, kin, t=0.0):
        k = _kin(model, q, qd, kin)
        b = model.body_id(self.body)
        x = k.p[b] + k.R[b] @ self.point
        return k, b, x - (self.anchor + t * self.anchor_velocity)

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        k, b, d = self._geometry(model, q, qd, kin, t)
        L = math.sqrt(float(d @ d))
        K, L0, c = self.stiffness, self.rest_length, self.damping
        if L0 == 0.0:
            F = -K * d
        elif L > 0.0:
            F = -K * (L - L0) / L * d
        else:
            F = np.zeros(3)  # direction undefined at L = 0
        if c > 0.0 and L > 0.0:
            v = k.v[b]
            xdot = k.R[b] @ (v[3:] + np.cross(v[:3], self.point)) - self.anchor_velocity
            F = F - c * float(d @ xdot) / (L * L) * d
        f = k.R[b].T @ F
        f_ext[b, :3] += np.cross(self.point, f)
        f_ext[b, 3:] += f

    def potential(self, model, q, kin=None):
        if not self.conservative:
            return 0.0
        _, _, d = self._geometry(model, q, None, kin)
        L = math.sqrt(float(d @ d))
        return 0.5 * self.stiffness * (L - self.rest_length) ** 2

    def __repr__(self):
        return (f"Spring(body={self.body!r}, point={self.point.tolist()}, anchor={self.anchor.tolist()}, "
                f"stiffness={self.stiffness}, rest_length={self.rest_length}, damping={self.damping}"
                + (f", anchor_velocity={self.anchor_velocity.tolist()})" if not self.conservative else ")"))


class JointTorque(Force):
    """Applied joint forces ``tau`` (nv,) [N m | N], constant or a function of the state.

    Parameters
    ----------
    tau : (nv,) float or callable
        A constant array or ``callable(t, q, qd) -> (nv,)``.

    Raises
    ------
    ValueError
        At :meth:`bind` for a constant, at :meth:`apply` for a callable's result, when the
        shape is not (nv,). Non-finite values are not rejected here: the simulator reports
        them as a divergence naming this force.
    """

    def __init__(self, tau):
        if callable(tau):
            self.tau = tau
        else:
            a = np.asarray(tau, dtype=np.float64)
            if a.ndim != 1:
                raise ValueError(f"JointTorque tau must be a (nv,) array or a callable, got shape {a.shape}")
            self.tau = a.copy()

    def bind(self, model):
        if not callable(self.tau) and self.tau.shape != (model.nv,):
            raise ValueError(f"JointTorque tau must have shape ({model.nv},), got {self.tau.shape}")
        return self

    conserves_energy = False

    def spec(self):
        return None if callable(self.tau) else _spec(self, tau=self.tau)

    def compiled(self, model):
        return None if callable(self.tau) else {"tau": self.bind(model).tau}

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        if callable(self.tau):
            x = np.asarray(self.tau(t, q, qd), dtype=np.float64)
            if x.shape != (model.nv,):
                raise ValueError(f"JointTorque callable returned shape {x.shape}, expected ({model.nv},)")
            tau += x
        else:
            tau += self.tau

    def __repr__(self):
        return f"JointTorque({'callable' if callable(self.tau) else 'constant'})"


class PiecewiseLinear:
    """A reference that is linear between samples (a first-order hold).

    ``r(t)`` interpolates ``values`` at the sample ``times`` and holds the first and last
    sample outside them (MuJoCo's and Drake's "first-order hold"). A :class:`PDController`
    reference of this kind has a compiled form, so the simulators' compiled loops track it
    (a Python callable is called from inside them, :mod:`articulated.simulation.hooks`).

    Parameters
    ----------
    times : (k,) float
        Sample times [s], finite and strictly increasing, k >= 1.
    values : (k,) or (k, n) float
        The reference at each sample (one column per controlled joint; one column is used
        for every joint).

    Raises
    ------
    ValueError
        For times that are not finite and increasing, values that are not finite,
        or a number of rows other than ``len(times)``.
    """

    def __init__(self, times, values):
        self.times = np.asarray(times, dtype=np.float64).reshape(-1).copy()
        v = np.asarray(values, dtype=np.float64)
        self.values = (v.reshape(-1, 1) if v.ndim == 1 else v).copy()
        t = self.times
        if t.size == 0 or not np.isfinite(t).all() or (np.diff(t) <= 0).any():
            raise ValueError("PiecewiseLinear times must be finite and strictly increasing "
                             f"(at least one), got {t[:5]}...")
        if self.values.ndim != 2 or self.values.shape[0] != t.size:
            raise ValueError(f"PiecewiseLinear values need {t.size} rows (one per time), "
                             f"got shape {np.shape(values)}")
        if not np.isfinite(self.values).all():
            raise ValueError("PiecewiseLinear values must be finite")

    def __call__(self, t):
        """The reference at time ``t`` [s]: (n,) float64 (the formula of the compiled
        :func:`interpolate`)."""
        ts, v = self.times, self.values
        if t <= ts[0]:
            return v[0].copy()
        if t >= ts[-1]:
            return v[-1].copy()
        j = int(np.searchsorted(ts, t, side="right")) - 1
        return v[j] + (v[j + 1] - v[j]) * ((t - ts[j]) / (ts[j + 1] - ts[j]))

    def __repr__(self):
        return f"PiecewiseLinear({self.times.size} samples, {self.values.shape[1]} columns)"


class _JointIndices:
    """``_idx(model)``: the ``(qadr, vadr)`` arrays of the force's joints that ``bind`` keeps
    in ``_bound = (model, qadr, vadr, joints)``, bound again for another model; a joint
    force's :meth:`support` (no body, its joints)."""

    def _idx(self, model):
        if self._bound is None or self._bound[0] is not model:
            self.bind(model)
        return self._bound[1], self._bound[2]

    def support(self, model):
        self._idx(model)
        return [], self._bound[3].tolist()


class PDController(_JointIndices, Force):
    """Proportional-derivative joint control of 1-DOF (revolute, prismatic) joints.

    ``tau_j += kp_j (q_ref_j - q_j) + kd_j (qd_ref_j - qd_j)`` for each controlled joint.

    Parameters
    ----------
    kp, kd : float or (n,) float
        Gains [N m/rad, N m s/rad | N/m, N s/m], >= 0.
    q_ref : float or (n,) float, :class:`PiecewiseLinear`, or callable ``t -> (n,)``
        Reference positions [rad | m].
    qd_ref : float or (n,) float, :class:`PiecewiseLinear`, or callable ``t -> (n,)``, optional
        Reference rates [rad/s | m/s] (default 0).
    joints : sequence of str or int, optional
        Controlled joints (names or indices); default: every revolute and prismatic joint,
        in joint order.

    Notes
    -----
    The proportional part is a joint spring: with a constant ``q_ref`` the potential
    ``V = 1/2 sum kp_j (q_j - q_ref_j)^2`` is reported (0 for a reference that depends on
    time). Constant and :class:`PiecewiseLinear` references have a compiled form (the
    simulators' compiled loops); another callable is called from inside them
    (:mod:`articulated.simulation.hooks`).

    Raises
    ------
    ValueError
        At :meth:`bind`, for a joint that is not 1-DOF, an unknown joint, or
        gains/references whose size does not match the number of joints.
    """

    def __init__(self, kp, kd, q_ref, qd_ref=None, joints=None):
        self.kp = np.atleast_1d(np.asarray(kp, dtype=np.float64))
        self.kd = np.atleast_1d(np.asarray(kd, dtype=np.float64))
        for name, g in (("kp", self.kp), ("kd", self.kd)):
            if g.ndim != 1 or not np.isfinite(g).all() or (g < 0).any():
                raise ValueError(f"PDController {name} must be finite and >= 0, got {g}")
        self.q_ref = q_ref if callable(q_ref) else np.atleast_1d(np.asarray(q_ref, dtype=np.float64))
        self.qd_ref = (0.0 if qd_ref is None else qd_ref)
        if not callable(self.qd_ref):
            self.qd_ref = np.atleast_1d(np.asarray(self.qd_ref, dtype=np.float64))
        self.joints = None if joints is None else list(joints)
        self.conservative = not callable(self.q_ref)
        self._bound = None

    def bind(self, model):
        if self.joints is None:
            js = np.flatnonzero(np.isin(model.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC)))
        else:
            js = np.array([model.joint_id(j) for j in self.joints], dtype=np.int64)
            bad = [int(j) for j in js if model.jnt_type[j] not in (JOINT_REVOLUTE, JOINT_PRISMATIC)]
            if bad:
                raise ValueError(f"PDController: joint {model.joint_name[bad[0]]!r} is not a "
                                 f"1-DOF (revolute or prismatic) joint")
        n = len(js)
        arrays = {"kp": self.kp, "kd": self.kd}
        if not callable(self.q_ref):
            arrays["q_ref"] = self.q_ref
        if not callable(self.qd_ref):
            arrays["qd_ref"] = self.qd_ref
        for name, r in (("q_ref", self.q_ref), ("qd_ref", self.qd_ref)):
            if isinstance(r, PiecewiseLinear):
                arrays[name] = r.values[0]
        for name, a in arrays.items():
            if a.shape not in ((1,), (n,)):
                raise ValueError(f"PDController {name} has {a.shape[0]} entries for {n} joints")
        self._bound = (model, model.jnt_qadr[js], model.jnt_vadr[js], js)
        return self


    @property
    def conserves_energy(self):
        return (self.conservative and not callable(self.qd_ref) and not self.kd.any()
                and not np.any(self.qd_ref))

    def spec(self):
        if callable(self.q_ref) or callable(self.qd_ref):
            return None
        return _spec(self, kp=self.kp, kd=self.kd, q_ref=self.q_ref, qd_ref=self.qd_ref,
                     joints=self.joints)

    def compiled(self, model):
        refs = (self.q_ref, self.qd_ref)
        if any(callable(r) and not isinstance(r, PiecewiseLinear) for r in refs):
            return None
        iq, iv = self._idx(model)
        n = iq.size
        g = np.empty((n, 4))
        tables = []
        for c, x in enumerate((self.kp, self.kd) + refs):
            g[:, c] = x.values[0] if isinstance(x, PiecewiseLinear) else x
        for r in refs:  # one (times, values) per controlled joint, or none
            if isinstance(r, PiecewiseLinear):
                cols = np.broadcast_to(r.values, (r.times.size, n))
                tables.append([(r.times, cols[:, j].copy()) for j in range(n)])
            else:
                tables.append(None)
        return {"pd": (iq.astype(np.int64), iv.astype(np.int64), g, tables)}

    @staticmethod
    def _ref(r, t):
        return np.asarray(r(t), dtype=np.float64) if callable(r) else r

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        iq, iv = self._idx(model)
        tau[iv] += (self.kp * (self._ref(self.q_ref, t) - q[iq])
                    + self.kd * (self._ref(self.qd_ref, t) - qd[iv]))

    def potential(self, model, q, kin=None):
        if callable(self.q_ref):
            return 0.0
        iq, _ = self._idx(model)
        e = q[iq] - self.q_ref
        return float(0.5 * np.sum(self.kp * e * e))

    def __repr__(self):
        return f"PDController(joints={self.joints!r})"


class JointDamping(Force):
    """Viscous joint friction ``tau -= b qd`` (dissipative).

    Parameters
    ----------
    b : float or (nv,) float
        Damping coefficients >= 0 [N m s/rad | N s/m]; for quaternion joints it acts on the
        body-frame angular velocity components.
    """

    def __init__(self, b):
        self.b = np.asarray(b, dtype=np.float64)
        if self.b.ndim > 1 or not np.isfinite(self.b).all() or (self.b < 0).any():
            raise ValueError(f"JointDamping b must be a finite scalar or (nv,) array >= 0, got {b!r}")

    def bind(self, model):
        if self.b.ndim == 1 and self.b.shape != (model.nv,):
            raise ValueError(f"JointDamping b must have shape ({model.nv},), got {self.b.shape}")
        return self

    def spec(self):
        return _spec(self, b=self.b)

    def compiled(self, model):
        self.bind(model)
        return {"damping": np.broadcast_to(self.b, (model.nv,)).astype(np.float64)}

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        tau -= self.b * qd

    def __repr__(self):
        return f"JointDamping(b={self.b!r})"


class Actuators(_JointIndices, Force):
    """Actuators on 1-DOF joints, driven by a control vector ``ctrl`` (MuJoCo's model).

    Actuator ``u`` on joint ``j`` with gear ``g``: the control is clipped to its range,
    ``c = clip(ctrl_u, ctrlrange_u)``; its force ``f = gain c + b0 + b1 l + b2 v`` with the
    length ``l = g q_j`` and velocity ``v = g qd_j``, clipped to ``forcerange_u``; the joint
    force ``tau_j += g f`` [N m | N]. MuJoCo's ``motor`` is ``gain = 1, b = 0``; its
    ``position`` servo ``gain = kp, b = (0, -kp, -kv)``; its ``velocity`` servo ``gain = kv,
    b = (0, 0, -kv)``; a ``general`` actuator with ``gaintype="fixed"`` and ``biastype``
    ``"none"`` or ``"affine"`` any of these (MuJoCo documentation, "Actuation model").

    Parameters
    ----------
    joints : sequence of str or int
        The actuated joint of each actuator (revolute or prismatic), ``nu`` entries.
    gear, gain : (nu,) float
        Transmission ratio and gain of each actuator.
    bias : (nu, 3) float, optional
        ``(b0, b1, b2)`` of each (default zero).
    ctrlrange, forcerange : (nu, 2) float, optional
        Lower and upper bounds (default unbounded, ``-inf, inf``).
    names : sequence of str, optional
        Actuator names (default ``"actuator<u>"``).
    ctrl : (nu,) float, optional
        Initial controls (default zero).

    Attributes
    ----------
    ctrl : (nu,) float64
        The controls, zero at first; set them between runs (``Simulator.ctrl``).

    Notes
    -----
    Without force bounds it has a compiled form: the servo part is a :class:`PDController`
    row (``kp = -g^2 b1``, ``kd = -g^2 b2``, its references set so that ``kp (q_ref - q) +
    kd (qd_ref - qd)`` adds ``g (gain c + b0)``), the rest a constant joint force; with
    force bounds the simulator calls :meth:`apply` from its compiled loop.

    Raises
    ------
    ValueError
        For sizes that do not match ``nu``, a non-finite parameter, a range whose lower bound
        exceeds its upper bound, and at :meth:`bind` for an unknown joint or one that is
        not 1-DOF (naming the actuator).
    """

    def __init__(self, joints, gear, gain, bias=None, ctrlrange=None, forcerange=None,
                 names=None, ctrl=None):
        self.joints = list(joints)
        nu = len(self.joints)
        self.names = [f"actuator{u}" for u in range(nu)] if names is None else list(names)

        def arr(x, shape, default, what):
            if x is None:
                return np.broadcast_to(np.asarray(default, dtype=np.float64), shape).copy()
            a = np.array(x, dtype=np.float64)
            if a.shape != shape:
                raise ValueError(f"Actuators {what} must have shape {shape}, got {a.shape}")
            return a

        self.gear = arr(gear, (nu,), 1.0, "gear")
        self.gain = arr(gain, (nu,), 1.0, "gain")
        self.bias = arr(bias, (nu, 3), 0.0, "bias")
        inf = np.array([-np.inf, np.inf])
        self.ctrlrange = arr(ctrlrange, (nu, 2), inf, "ctrlrange")
        self.forcerange = arr(forcerange, (nu, 2), inf, "forcerange")
        if len(self.names) != nu:
            raise ValueError(f"Actuators names must have {nu} entries, got {len(self.names)}")
        for what in ("gear", "gain", "bias"):
            a = getattr(self, what).reshape(nu, -1)
            bad = np.flatnonzero(~np.isfinite(a).all(axis=1))
            if bad.size:
                raise ValueError(f"actuator {self.names[bad[0]]!r}: {what} is not finite: "
                                 f"{a[bad[0]]}")
        for what in ("ctrlrange", "forcerange"):
            r = getattr(self, what)
            bad = np.flatnonzero(np.isnan(r).any(axis=1) | (r[:, 0] > r[:, 1]))
            if bad.size:
                raise ValueError(f"actuator {self.names[bad[0]]!r}: {what} must be (lower, "
                                 f"upper) with lower <= upper, got {r[bad[0]]}")
        self.ctrl = arr(ctrl, (nu,), 0.0, "ctrl")
        if not np.isfinite(self.ctrl).all():
            raise ValueError(f"Actuators ctrl must be finite, got {self.ctrl}")
        self._bound = None

    @property
    def nu(self) -> int:
        """Number of actuators."""
        return len(self.joints)

    def bind(self, model):
        js = []
        for u, j in enumerate(self.joints):
            try:
                k = model.joint_id(j)
            except (KeyError, ValueError, IndexError):
                raise ValueError(f"actuator {self.names[u]!r}: unknown joint {j!r}") from None
            if model.jnt_type[k] not in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                raise ValueError(f"actuator {self.names[u]!r}: joint {model.joint_name[k]!r} "
                                 f"is not 1-DOF (revolute or prismatic)")
            js.append(k)
        js = np.array(js, dtype=np.int64)
        self._bound = (model, model.jnt_qadr[js], model.jnt_vadr[js], js)
        return self


    def controls(self) -> np.ndarray:
        """The controls clipped to their ranges, ``c`` (nu,)."""
        return np.clip(self.ctrl, self.ctrlrange[:, 0], self.ctrlrange[:, 1])

    def spec(self):
        return _spec(self, joints=self.joints, gear=self.gear, gain=self.gain, bias=self.bias,
                     ctrlrange=self.ctrlrange, forcerange=self.forcerange, names=self.names,
                     ctrl=self.ctrl)

    def compiled(self, model):
        if np.isfinite(self.forcerange).any():
            return None
        iq, iv = self._idx(model)
        g, b = self.gear, self.bias
        const = g * (self.gain * self.controls() + b[:, 0])
        kp, kd = -g * g * b[:, 1], -g * g * b[:, 2]
        spring, damper = kp != 0.0, (kp == 0.0) & (kd != 0.0)
        gains = np.zeros((self.nu, 4))
        gains[:, 0], gains[:, 1] = kp, kd
        gains[spring, 2] = const[spring] / kp[spring]
        gains[damper, 3] = const[damper] / kd[damper]
        tau = np.zeros(model.nv)
        np.add.at(tau, iv[~(spring | damper)], const[~(spring | damper)])
        pd = spring | (kd != 0.0)
        return {"tau": tau, "pd": (iq[pd].astype(np.int64), iv[pd].astype(np.int64),
                                   gains[pd], [None, None])}

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        iq, iv = self._idx(model)
        g, b = self.gear, self.bias
        f = self.gain * self.controls() + b[:, 0] + b[:, 1] * g * q[iq] + b[:, 2] * g * qd[iv]
        np.add.at(tau, iv, g * np.clip(f, self.forcerange[:, 0], self.forcerange[:, 1]))

    def __repr__(self):
        return f"Actuators(nu={self.nu})"


# ------------------------------------------------------------------ written forces

def _spec(obj, /, **arguments):
    """``{"type": class name, **arguments}`` with arrays as lists (:meth:`Force.spec`)."""
    out = {"type": type(obj).__name__}
    for k, v in arguments.items():
        out[k] = v.tolist() if isinstance(v, np.ndarray) else (
            v.item() if isinstance(v, np.generic) else v)
    return out


def force_from_spec(spec) -> Force:
    """The built-in force that :meth:`Force.spec` wrote. Raises ValueError for an unknown
    type or arguments the constructor rejects."""
    kinds = {c.__name__: c for c in (PointForce, Spring, JointTorque, PDController,
                                     JointDamping, Actuators)}
    kw = dict(spec)
    cls = kinds.get(kw.pop("type", None))
    if cls is None:
        raise ValueError(f"unknown force type in {spec!r}; built-in forces: {sorted(kinds)}")
    try:
        return cls(**kw)
    except TypeError as e:
        raise ValueError(f"cannot rebuild the force {spec!r}: {e}") from None


# ------------------------------------------------------------------ compiled forces

FORCE_WORLD, FORCE_BODY, FORCE_SPRING = 0, 1, 2
"""Kinds of the body forces of :meth:`Force.compiled`: a world-frame or body-frame
:class:`PointForce`, a :class:`Spring`. ``params`` (12,): point (body coordinates), then the
force (world or body coordinates) and six zeros, or the anchor (world, at t = 0) and
stiffness, rest length, damping, anchor velocity (world)."""

ForceArrays = namedtuple("ForceArrays", ("kind", "body", "params", "tau", "damping", "pd_qadr",
                                         "pd_vadr", "pd_gains", "pd_tab", "pd_tt", "pd_tv",
                                         "joint", "hook", "hq", "hqd", "hstop"),
                          defaults=(-1, np.zeros(0), np.zeros(0), np.zeros(1, np.int64)))
ForceArrays.__doc__ = """The applied forces of a simulator in the compiled loops' form
(:func:`compile_forces`): body forces ``kind, body`` (nf,) int64 and ``params`` (nf, 12)
(:data:`FORCE_WORLD`, ...); the sum of the constant joint forces ``tau`` (nv,) [N m | N]
(:class:`JointTorque`); the sum of the viscous joint coefficients ``damping`` (nv,)
(:class:`JointDamping`); the joint springs-dampers of :class:`PDController` with constant
references, one row per controlled joint: ``pd_qadr, pd_vadr`` (np,) int64 and
``pd_gains`` (np, 4) = (kp, kd, q_ref, qd_ref); references that are
:class:`PiecewiseLinear`: ``pd_tab`` (np, 4) int64 = (first sample, samples) of the row's
q_ref and of its qd_ref in ``pd_tt`` (times [s]) and ``pd_tv`` (values) (0 samples: the
constant of ``pd_gains``); ``joint`` (bool) whether there is any joint force (constant,
damping or PD); ``hook`` (int) the forces evaluated in Python
(:mod:`~articulated.simulation.hooks`; -1: none), its scratch ``hq`` (nq,), ``hqd``
(nv,) (empty without it) and ``hstop`` (1,) int64, which it sets to 1 on Ctrl-C (the
loops stop after the step)."""


def compile_forces(model, forces):
    """The :class:`ForceArrays` of ``forces`` (each :meth:`Force.compiled`), or None when one
    of them has no compiled form (a user's Python force, a callable reference)."""
    parts = [f.compiled(model) if callable(getattr(f, "compiled", None)) else None
             for f in forces]
    if any(p is None for p in parts):
        return None
    body = [p["body"] for p in parts if "body" in p]
    pd = [p["pd"] for p in parts if "pd" in p]
    tab, tt, tv, k = [], [], [], 0
    for r in pd:
        for j in range(r[0].size):
            row = []
            for table in r[3]:
                if table is None:
                    row += [0, 0]
                    continue
                times, values = table[j]
                row += [k, times.size]
                tt.append(times)
                tv.append(values)
                k += times.size
            tab.append(row)
    tau = np.zeros(model.nv)
    damping = np.zeros(model.nv)
    for p in parts:
        tau += p.get("tau", 0.0)
        damping += p.get("damping", 0.0)
    return ForceArrays(
        np.array([r[0] for r in body], dtype=np.int64),
        np.array([r[1] for r in body], dtype=np.int64),
        np.array([r[2] for r in body], dtype=np.float64).reshape(len(body), 12),
        tau, damping,
        np.concatenate([r[0] for r in pd] + [np.zeros(0, dtype=np.int64)]),
        np.concatenate([r[1] for r in pd] + [np.zeros(0, dtype=np.int64)]),
        np.concatenate([r[2] for r in pd] + [np.zeros((0, 4))]),
        np.array(tab, dtype=np.int64).reshape(len(tab), 4),
        np.concatenate(tt + [np.zeros(0)]), np.concatenate(tv + [np.zeros(0)]),
        bool(tau.any() or damping.any() or pd))


@inline
def body_force_row(i, kind, params, R, p, V, has_v, f_ext, b, t):
    """Add compiled body force ``i`` at time ``t`` [s] into ``f_ext[b]`` (body coordinates,
    about the body origin), as :meth:`PointForce.apply` and :meth:`Spring.apply` do, from
    the body's world pose: ``R`` (9-tuple, row-major) body -> world rotation, ``p``
    (3-tuple) body origin in world [m], and with ``has_v`` ``V`` (6-tuple) the body's
    spatial velocity about the world origin in world coordinates (a point x moves at
    ``V[3:] + V[:3] x x``); a spring's anchor is at ``anchor + t anchor_velocity``. Returns
    False when the row is not finite."""
    k = kind[i]
    P0, P1, P2 = params[i, 0], params[i, 1], params[i, 2]
    if k == FORCE_BODY:
        f0, f1, f2 = params[i, 3], params[i, 4], params[i, 5]
    else:
        if k == FORCE_WORLD:
            F0, F1, F2 = params[i, 3], params[i, 4], params[i, 5]
        else:
            x0 = p[0] + R[0] * P0 + R[1] * P1 + R[2] * P2
            x1 = p[1] + R[3] * P0 + R[4] * P1 + R[5] * P2
            x2 = p[2] + R[6] * P0 + R[7] * P1 + R[8] * P2
            d0 = x0 - (params[i, 3] + t * params[i, 9])
            d1 = x1 - (params[i, 4] + t * params[i, 10])
            d2 = x2 - (params[i, 5] + t * params[i, 11])
            K, L0, c = params[i, 6], params[i, 7], params[i, 8]
            L = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            if L0 == 0.0:
                s = -K
            elif L > 0.0:
                s = -K * (L - L0) / L
            else:
                s = 0.0
            if c > 0.0 and L > 0.0 and has_v:
                w0, w1, w2 = V[0], V[1], V[2]
                v0 = V[3] + w1 * x2 - w2 * x1 - params[i, 9]
                v1 = V[4] + w2 * x0 - w0 * x2 - params[i, 10]
                v2 = V[5] + w0 * x1 - w1 * x0 - params[i, 11]
                s -= c * (d0 * v0 + d1 * v1 + d2 * v2) / (L * L)
            F0, F1, F2 = s * d0, s * d1, s * d2
        f0 = R[0] * F0 + R[3] * F1 + R[6] * F2
        f1 = R[1] * F0 + R[4] * F1 + R[7] * F2
        f2 = R[2] * F0 + R[5] * F1 + R[8] * F2
    f_ext[b, 0] += P1 * f2 - P2 * f1
    f_ext[b, 1] += P2 * f0 - P0 * f2
    f_ext[b, 2] += P0 * f1 - P1 * f0
    f_ext[b, 3] += f0
    f_ext[b, 4] += f1
    f_ext[b, 5] += f2
    for a in range(6):
        if not math.isfinite(f_ext[b, a]):
            return False
    return True


@inline
def body_force_potential(i, kind, params, R, p):
    """Potential energy [J] of compiled body force ``i`` at the body pose ``R, p`` (as
    :func:`body_force_row`): ``-F . x_P`` for a world :class:`PointForce`,
    ``1/2 k (L - L0)^2`` for a :class:`Spring` with a fixed anchor, 0 for a body-frame
    force and a moving anchor (as :meth:`Spring.potential`)."""
    k = kind[i]
    if k == FORCE_BODY or (k == FORCE_SPRING and (params[i, 9] != 0.0 or params[i, 10] != 0.0
                                                  or params[i, 11] != 0.0)):
        return 0.0
    P0, P1, P2 = params[i, 0], params[i, 1], params[i, 2]
    x0 = p[0] + R[0] * P0 + R[1] * P1 + R[2] * P2
    x1 = p[1] + R[3] * P0 + R[4] * P1 + R[5] * P2
    x2 = p[2] + R[6] * P0 + R[7] * P1 + R[8] * P2
    if k == FORCE_WORLD:
        return -(params[i, 3] * x0 + params[i, 4] * x1 + params[i, 5] * x2)
    d0, d1, d2 = x0 - params[i, 3], x1 - params[i, 4], x2 - params[i, 5]
    e = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - params[i, 7]
    return 0.5 * params[i, 6] * e * e


@inline
def interpolate(tt, tv, k0, n, t):
    """The :class:`PiecewiseLinear` value at time ``t`` [s] of the ``n`` samples from
    ``k0`` of times ``tt`` and values ``tv`` (binary search; the end samples held)."""
    if t <= tt[k0]:
        return tv[k0]
    if t >= tt[k0 + n - 1]:
        return tv[k0 + n - 1]
    lo, hi = k0, k0 + n - 1          # tt[lo] <= t < tt[hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tt[mid] <= t:
            lo = mid
        else:
            hi = mid
    return tv[lo] + (tv[lo + 1] - tv[lo]) * ((t - tt[lo]) / (tt[lo + 1] - tt[lo]))


@inline
def joint_forces(fa, q, qd, tau, t):
    """``tau`` (nv,) = the joint forces of :class:`ForceArrays` ``fa`` at ``q, qd`` and
    time ``t`` [s]: constant ``tau``, ``- damping qd``, and ``kp (q_ref - q) + kd (qd_ref -
    qd)`` per PD row (references constant or :func:`interpolate`), as
    :class:`JointTorque`, :class:`JointDamping`, :class:`PDController` apply them.
    Returns the index of the first non-finite entry, or -1."""
    for k in range(tau.shape[0]):
        tau[k] = fa.tau[k] - fa.damping[k] * qd[k]
    g = fa.pd_gains
    tab = fa.pd_tab
    for r in range(fa.pd_qadr.shape[0]):
        v = fa.pd_vadr[r]
        qr = g[r, 2] if tab[r, 1] == 0 else interpolate(fa.pd_tt, fa.pd_tv, tab[r, 0],
                                                          tab[r, 1], t)
        vr = g[r, 3] if tab[r, 3] == 0 else interpolate(fa.pd_tt, fa.pd_tv, tab[r, 2],
                                                          tab[r, 3], t)
        tau[v] += g[r, 0] * (qr - q[fa.pd_qadr[r]]) + g[r, 1] * (vr - qd[v])
    for k in range(tau.shape[0]):
        if not math.isfinite(tau[k]):
            return k
    return -1


@inline
def joint_force_potential(fa, q):
    """Potential energy [J] of the PD joint springs of ``fa``: ``1/2 kp (q - q_ref)^2``
    (0 for a reference that depends on time, as :meth:`PDController.potential`)."""
    V = 0.0
    g = fa.pd_gains
    for r in range(fa.pd_qadr.shape[0]):
        if fa.pd_tab[r, 1]:
            continue
        e = q[fa.pd_qadr[r]] - g[r, 2]
        V += 0.5 * g[r, 0] * e * e
    return V


@inline
def apply_joint_forces(fa, q, qd, tau, t):
    """The joint forces of :class:`ForceArrays` ``fa`` at ``q, qd`` and time ``t`` [s] into
    ``tau`` (nv,) when it has any (``fa.joint``; :func:`joint_forces`: every dof, O(n), the
    rigidified joints' too, which the active-region update reads), for the adaptive
    simulator at the start of a step (they need no kinematics). Returns False when one is
    not finite."""
    return not fa.joint or joint_forces(fa, q, qd, tau, t) < 0


@inline
def apply_compiled_forces(fa, near, Vw, pose_args, f_ext, t):
    """Write the compiled body forces of :class:`ForceArrays` ``fa`` into the rows of their
    bodies in ``f_ext`` (nb, 6) (body coordinates, about the body origin; the rows are
    cleared first) for the adaptive simulator (:func:`body_force_row`). World poses come
    from the hierarchical frames, ``cached_pose(b, pose_args)`` (O(1) while b's rigid
    piece stays; ``pose_args`` ends with its scratch ``Xr``, ``xq``), world velocities from
    ``Vw[near[b]]`` (spatial velocity about the world origin in world coordinates of the
    nearest active joint on b's path; zero when there is none), at time ``t`` [s]. Returns
    False when a force is not finite."""
    kind, body, params = fa.kind, fa.body, fa.params
    nf = body.shape[0]
    Xr = pose_args[-2]
    xq = pose_args[-1]
    for i in range(nf):
        for a in range(6):
            f_ext[body[i], a] = 0.0
    for i in range(nf):
        b = body[i]
        cached_pose(b, pose_args)     # (Xr, xq)[0]: E body -> world, r world origin
        E = get_mat3(Xr, 0)
        r = xq[0]
        p = (-(E[0] * r[0] + E[1] * r[1] + E[2] * r[2]),
             -(E[3] * r[0] + E[4] * r[1] + E[5] * r[2]),
             -(E[6] * r[0] + E[7] * r[1] + E[8] * r[2]))
        j = near[b]
        if not body_force_row(i, kind, params, E, p, get_vec6(Vw, max(j, 0)), j >= 0, f_ext,
                              b, t):
            return False
    return True
