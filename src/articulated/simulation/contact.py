"""One time step with contacts and joint limits (Gayle, Lin & Manocha 2006).

One time step with contacts (Gayle, Lin & Manocha 2006, "GLM", sec. IV): forward
dynamics, unconstrained velocity, detection, impulses, position update, drift projection.
:class:`ContactStepper` holds the options and buffers of a simulator given a
:class:`~articulated.geometry.CollisionModel` (``contacts=``) or ``limits``; the step runs
in the compiled loops (:mod:`articulated.simulation.contact_loop`, and
:mod:`articulated.simulation.adaptive_contact` on the hybrid body).

Per step of size ``h`` from ``(q, qd)``:

1. ``qdd = ABA(q, qd, tau, f_ext)``; this leaves the articulated factorization at ``q``
   (``U D^-1``, ``D^-1``) that the impulse response reuses (GLM IV.A step 1);
2. ``qd* = qd + h qdd`` (semi-implicit Euler);
3. contacts at ``q`` with speculative margins from the velocities ``qd*``
   (:mod:`articulated.algorithms.collision`), each with its look-ahead gap: its gap at
   ``q (+) h qd*`` less ``h`` times its normal speed, so that the rows' linear prediction
   is the gap at the end of the step (:mod:`articulated.algorithms.lookahead`; option
   ``max_arc_error``);
4. joint limits that the step could cross become frictionless unilateral rows (GLM IV.B,
   Kokkevis 2004), solved with the contacts;
5. impulses: ``K`` per row, sequential impulses with friction and restitution
   (:mod:`articulated.algorithms.contact`) give ``qd+``;
6. ``q+ = q (+) (h qd+ + dq)`` with ``dq`` the post-stabilization of the predicted depths.

A step that turns a body by more than ``max_rotation`` moves by RK4 (:func:`step_plan`), in
substeps that turn by at most :data:`RK4_TURN` times that: the impulses act on its mean
velocity, and where there are any its end velocity is RK4's from ``qd + dv``, the impulses
taken at its start
(:func:`~articulated.simulation.contact_loop._finish`). A step whose impulses change the
curvature of its contacts' paths by more than ``max_arc_error`` allows, or turn a body
faster, is taken again so, and the steps after it start in as many substeps
(:func:`carry_substeps`).

Statistics of every step (``CONTACT_STATS``) are recorded into
:attr:`Trajectory.contacts <articulated.simulation.trajectory.Trajectory.contacts>`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..algorithms.collision import Detector
from ..algorithms.contact_rows import model_limits
from ..algorithms.impulse import ImpulseModel, impulse_scratch
from ..algorithms.response import (ResponseOptions, STAT_DETECT, STAT_RESPONSE, response_buffers)
from ..algorithms.kinematics import (
    _world_poses_kernel,
    arc_change,
)
from ..config import inline, JIT
from ..data import data_arrays
from ..geometry import SHAPE_NAMES, CollisionModel
from ..model import model_arrays
from ..spatial import get_mat3

CONTACT_STATS = np.dtype([
    ("n", np.int64), ("limits", np.int64), ("impacts", np.int64), ("sticking", np.int64),
    ("sliding", np.int64),
    ("sweeps", np.int64), ("fallback", np.int64), ("max_depth", np.float64), ("approach_speed", np.float64),
    ("ke_before", np.float64), ("ke_after", np.float64), ("detect_time", np.float64),
    ("response_time", np.float64), ("energy_removed", np.float64), ("residual", np.float64),
    ("solver", np.int64)])
"""Per step: contacts, joint-limit rows, impacts (approach faster than ``rest_speed``; contacts
and limits), contacts sticking and sliding after the solve, sweeps, 1 if the solve fell
back to energy-monotone visits (:func:`~articulated.algorithms.sweeps.solve_impulses`), largest depth at
detection [m] (contacts), fastest approach [m/s] (contacts),
kinetic energy before and after the impulses [J], wall time of detection and of the
response [s], energy [J] the energy bound took out (contact option ``energy_bound``), the
residual of the step's last solve [m/s] (sequential impulses: the largest change of a
row's velocity by a visit of the last sweep; matrix-free: the projected-gradient residual
of :mod:`~articulated.algorithms.apgd`) and the solver (0 sequential impulses, 1
matrix-free; ``sweeps`` then counts its iterations)."""

DEFAULTS = dict(tol=1e-6, sweeps=50, rest_speed=None, project=True, project_sweeps=20,
                allow_initial_penetration=False, depth_tol=1e-4, capacity=64, warm_start=True,
                slip_speed=None, limit_e=0.0, max_rotation=0.05, max_arc_error=1e-4,
                energy_bound=False, dormant=True, solver="auto", iterations=500)

SOLVERS = ("auto", "sequential", "apgd")
"""The contact option ``solver``: ``"sequential"`` impulses (projected Gauss-Seidel,
:mod:`~articulated.algorithms.sweeps`), ``"apgd"`` the matrix-free accelerated projected
gradient (:mod:`~articulated.algorithms.apgd`), ``"auto"`` the latter on steps with at
least :data:`APGD_WORK` ``/ nv`` active contacts of the whole model (adaptive dynamics'
hybrid body: sequential impulses)."""

APGD_WORK = 20000
"""``"auto"`` solves a step matrix-free when its active contacts times the dofs reach this:
a sweep of sequential impulses costs O(contacts nv), an iteration of the matrix-free solve
O(nv + contacts)."""


def apgd_work(solver):
    """The ``apgd_work`` of :class:`~articulated.algorithms.response.ResponseOptions` for the
    contact option ``solver`` (:data:`SOLVERS`)."""
    return {"apgd": 0, "sequential": 1 << 62}.get(solver, APGD_WORK)

SPLIT = -1
"""Code of a step's stages: the velocities after the impulses of an unsplit step ask for
substeps (contact options ``max_rotation``, ``max_arc_error``); the step is taken again in
them."""

KEEP_SLACK = 1e-3
"""Relative rise of the kinetic energy that post-stabilization may cause before the step's
velocities are scaled back (:func:`~articulated.simulation.contact_loop._keep_kinetic`):
an impact placed where it would be after rebounding, or a slow chain pushed out of a
shallow overlap, changes it by far less and keeps its impulses exact."""


@njit(**JIT)
def keep_scale(T0, T1):
    """The factor on the end velocities of a (sub)step whose projection raised their
    kinetic energy from ``T0`` (at the unprojected positions) to ``T1`` [J]: ``sqrt(T0 /
    T1)`` where ``T1 > (1 +`` :data:`KEEP_SLACK` ``) T0``, else 1."""
    if T1 > (1.0 + KEEP_SLACK) * T0 and T1 > 0.0:
        return math.sqrt(max(T0, 0.0) / T1)
    return 1.0


@inline
def moved(dq):
    """Whether post-stabilization's displacement ``dq`` moved any dof (one entry nonzero)."""
    for k in range(dq.shape[0]):
        if dq[k] != 0.0:
            return True
    return False


MAX_SUBSTEPS = 64
"""Most substeps of one step (contact options ``max_rotation``, ``max_arc_error``)."""
RK4_TURN = 2.0
"""Most rotation of a body in one RK4 substep, in units of the contact option
``max_rotation`` (the most in one step of semi-implicit Euler). Semi-implicit Euler gains
energy at a rate of about ``h omega^2`` and makes a free-falling rope of 1,000 light links
diverge in steps of 0.1 rad; RK4's error per substep is of order ``(h omega)^5``, so its
substeps may turn further: a free 20-link chain whipping at up to 360 rad/s drifts 4e-4 in
energy over 0.3 s in substeps of 0.1 rad (4e-5 in substeps of 0.05 rad), and the 200-link
pendulum of scene (a) steps twice as fast as in substeps of 0.05 rad. A body's turn does not
bound the stiffness of the velocity-product terms of light links in a long chain, which
:data:`RK4_STIFF` checks."""
RK4_STIFF = 1.0
"""Largest ``h rho`` of an RK4 substep of ``h`` [s], with ``rho = |a3 - a2| / |v3 - v2|``
[1/s] the stiffness along the substep that its second and third stages measure (their
joint accelerations ``a2, a3`` at velocities ``v2, v3``; ``h rho = 2 |a3 - a2| / |a2 -
a1|``; Hairer & Wanner, *Solving ODEs II*, Sec. IV.2): a substep above it is taken again,
the rest of the step in ``ceil(h rho / RK4_STIFF)`` times as many substeps (at most
:data:`MAX_SUBSTEPS`). RK4 is stable up to ``h |lambda|`` of about 2.8; a free-falling
1,000-link rope whose end links turn only 0.05-0.09 rad per 1-ms step reaches ``h rho`` of
1.2-2.3 in such steps (and diverged in them without the check)."""


CARRY_STEPS = 10
"""Steps that start in the substeps their predecessors' impulses asked for
(:func:`carry_substeps`) before one fewer is tried."""


CARRY_MAX = 4
"""Most substeps carried to the next steps (:func:`carry_substeps`): more are asked for by
a single impact (a rope's landing asks for up to :data:`MAX_SUBSTEPS`), which the steps
after it do not need."""


@inline
def carry_substeps(nsub, ns, asked):
    """After a step taken in ``ns`` substeps (``asked``: some of them because its impulses
    asked for them, :data:`SPLIT`), the substeps the next one starts in, ``nsub[1]`` (0:
    as its plan says), with ``nsub[2]`` counting the steps since they were asked for: the
    number asked for is kept for :data:`CARRY_STEPS` steps, then one fewer each time (below
    2: none); more than :data:`CARRY_MAX` are not carried. A chain pressed in a whole-body
    contact (the snake of scene (c)) asks for 2-3 substeps in every step, and a step that
    tries whole first throws away the solve of its first try. ``nsub`` (3,) int64
    in/out."""
    if asked:
        nsub[1] = ns if ns <= CARRY_MAX else 0
        nsub[2] = 0
    elif nsub[1] > 0:
        nsub[2] += 1
        if nsub[2] >= CARRY_STEPS:
            nsub[1] = nsub[1] - 1 if nsub[1] > 2 else 0
            nsub[2] = 0


@inline
def rk4_stiffness(num, den, a1sq):
    """``h rho = 2 sqrt(num / den)`` of an RK4 substep (:data:`RK4_STIFF`) from ``num =
    |a3 - a2|^2`` and ``den = |a2 - a1|^2``, its stages' joint accelerations (``a1sq =
    |a1|^2``); 0 where the accelerations change along the substep by no more than 1e-10
    of their size (round-off, whose ratio means nothing: a body spinning freely about a
    principal axis), at most 1e6."""
    if not (den > 1e-20 * a1sq) or not math.isfinite(num):
        return 0.0
    return min(2.0 * math.sqrt(num / den), 1e6)


@inline
def split_rest(ns, i, h, k):
    """``(ns', h')``: a step in ``ns`` substeps of ``h`` [s] whose substep ``i`` asks for
    ``k`` substeps (:data:`SPLIT`) takes its rest, ``(ns - i) h``, again from substep ``i``
    in ``min((ns - i) k, MAX_SUBSTEPS - i)`` equal substeps (never fewer than before): a
    step has at most :data:`MAX_SUBSTEPS` in all, and the callers split only a step with
    fewer."""
    rest = max(ns - i, min((ns - i) * k, MAX_SUBSTEPS - i))
    return i + rest, h * (ns - i) / rest


@njit(**JIT)
def step_plan(h, w2, acc, theta, arc):
    """How the whole model takes a step of ``h`` [s] (contact options ``max_rotation``
    ``theta`` [rad] and ``max_arc_error`` ``arc`` [m]; <= 0: not used), with ``w2`` the
    largest squared angular velocity of a body [rad^2/s^2] and ``acc`` the largest change
    of a contact's stray acceleration [m/s^2]
    (:func:`contacts_arc_change`): 0, one step of semi-implicit Euler, where no body turns
    by more than ``theta``; else ``k >= 1`` substeps moved by RK4, ``k = ceil(h |omega| /
    (RK4_TURN theta))`` (:data:`RK4_TURN`), or ``ceil(sqrt(h^2 acc / (2 arc)))`` where that
    is more (at most :data:`MAX_SUBSTEPS`). 0 where a value is not finite (the response reports the
    divergence)."""
    turn = 0.0
    if theta > 0.0:
        turn = h * math.sqrt(w2)
    ka = 0.0
    if arc > 0.0:
        ka = math.sqrt(0.5 * h * h * acc / arc)
    if not (math.isfinite(turn) and math.isfinite(ka)):
        return 0
    k = 0
    if theta > 0.0 and turn > theta:
        k = max(math.ceil(turn / (RK4_TURN * theta) - 1e-12), 1)
    if ka > 1.0 + 1e-12:
        k = max(k, math.ceil(ka - 1e-12))
    return int(min(k, MAX_SUBSTEPS))


@inline
def contacts_arc_change(con, nc, owner, shift, lp, rb, v0, ab0, v1, ab1, oE):
    """The largest, over the contacts ``con`` (``nc`` of them), of how much the motion
    ``(v1, ab1)`` changes from ``(v0, ab0)`` (the bodies' (or rigid pieces') velocities
    and steady accelerations, (n, 6)) the acceleration along the contact's normal with
    which its two shapes stray from their straight lines: ``|s_a - s_b| + r_a + r_b`` of
    :func:`~articulated.algorithms.kinematics.arc_change` over its two shapes (arguments
    as :func:`~articulated.simulation.adaptive_contact.hybrid_impulse_substeps` and
    :func:`~articulated.simulation.contact_loop._impulse_substeps` pass them). The impulses' share of the contact's stray, which the
    look-ahead gaps (:mod:`~articulated.algorithms.lookahead`, taken at ``v0``) do not
    see. O(nc)."""
    acc = 0.0
    for c in range(nc):
        s = 0.0
        r = 0.0
        nw = con.normal[c]
        for side in range(2):
            g = con.geom[c, side]
            b = owner[g] - shift
            if b >= 0:
                oEb = get_mat3(oE, b)
                n = (oEb[0] * nw[0] + oEb[1] * nw[1] + oEb[2] * nw[2],
                     oEb[3] * nw[0] + oEb[4] * nw[1] + oEb[5] * nw[2],
                     oEb[6] * nw[0] + oEb[7] * nw[1] + oEb[8] * nw[2])
                ds, dr = arc_change(v0, ab0, v1, ab1, b, (lp[g, 0], lp[g, 1], lp[g, 2]),
                                    rb[g], n)
                s += ds if side == 0 else -ds
                r += dr
        acc = max(acc, abs(s) + r)
    return acc


@njit(**JIT)
def body_substeps(model_i, model_f, data_f, h, theta):
    """:func:`step_plan` of the whole model's step of ``h`` [s] by the bodies' angular
    velocities in the workspace ``data_f`` (:func:`~articulated.algorithms.kinematics.
    _velocities_kernel` at the step's ``q`` and unconstrained velocities) and the contact
    option ``max_rotation`` ``theta`` [rad]. O(nb)."""
    mv = model_arrays(model_i, model_f)
    nb = mv.parent.shape[0]
    dv = data_arrays(data_f, nb, mv.S.shape[0])
    v = dv.v
    w2 = 0.0
    for b in range(nb):
        w2 = max(w2, v[b, 0] * v[b, 0] + v[b, 1] * v[b, 1] + v[b, 2] * v[b, 2])
    return step_plan(h, w2, 0.0, theta, 0.0)


class ContactStepper:
    """Steps a model with contacts; see the module doc.

    Parameters
    ----------
    model : Model
    geom : CollisionModel or None
        Of this model (None: joint limits only).
    dt : float
        The step [s].
    limits : bool
        Enforce the model's joint limits (``jnt_range``; default False).
    tol : float
        The sweeps stop when no visit changes its contact's velocity by more than this [m/s]
        (default 1e-6).
    sweeps : int
        Most sequential-impulse sweeps per step (default 50).
    rest_speed : float
        Approach speed [m/s] below which a contact is resting (``e = 0``); default ``2 |g|
        dt`` (what gravity adds in two steps).
    project : bool
        Post-stabilize positions (Cline & Pai 2003; default True).
    project_sweeps : int
        Most sweeps of the position projection (default 20); it stops when no sweep moves a
        contact by more than ``tol dt`` [m].
    allow_initial_penetration : bool
        Accept a start with shapes overlapping deeper than ``depth_tol`` [m] (default False:
        ValueError).
    capacity : int
        Initial room for contacts (grows as needed).
    warm_start : bool
        Start each contact from its impulse of the last step (default True).
    slip_speed : float
        Slip [m/s] above which a contact outside its friction cone slides against its slip
        velocity (below it: along its sticking impulse); default ``rest_speed``.
    limit_e : float
        Restitution of the joint limits, in [0, 1] (default 0).
    max_rotation : float or None
        Most rotation [rad] of any body in one step of semi-implicit Euler (default 0.05):
        a step whose fastest body turns faster than ``max_rotation / dt`` (its world
        angular velocity after the dynamics, or after the impulses) moves by RK4 instead,
        in ``k = ceil(dt |omega| / (2 max_rotation))`` equal substeps (each turns at most
        twice ``max_rotation``, :data:`RK4_TURN`; at most :data:`MAX_SUBSTEPS`), each a
        whole step of
        the pipeline with the applied forces held, its unconstrained motion by RK4 (four
        ABA passes) and its end velocity, where there are impulses, RK4's from the
        velocities they leave at its start (five more ABA passes). Semi-implicit Euler
        treats the velocity-product terms explicitly and gains energy where joints turn
        fast; RK4's error per substep is of order ``(h omega)^5``. None: always
        semi-implicit Euler.
    max_arc_error : float or None
        Most distance [m] by which a shape in contact may stray in one step, along the
        contact's normal, from where the rows and the projection predict it (default
        1e-4). The position update turns every joint at a constant rate, so a shape moves
        on a curve, off the straight line ``d + h v_n`` of a row by ``h^2 / 2`` times its
        acceleration (tenths of a millimetre for a link swinging around a cylinder); the
        detection stage measures it: each contact's gap is replaced by its gap at the end
        of the step under the unconstrained motion, from the narrow phase there, less ``h
        v_n`` (:mod:`~articulated.algorithms.lookahead`). The impulses change the motion
        and so its curvature: after them, the largest change over the contacts of the
        acceleration along the normal, ``acc``
        (:func:`~articulated.algorithms.kinematics.arc_change`, bounded over each shape's
        bounding ball), asks for ``k = ceil(sqrt(h^2 acc / (2 max_arc_error)))`` equal
        substeps (or more for ``max_rotation``; at most :data:`MAX_SUBSTEPS`), the step
        taken again in them. None: neither (the rows predict along straight lines:
        cheaper, deeper where chains whip against something).
    energy_bound : bool
        (default False) a step (each substep) may not end with more total energy ``E = T +
        V`` (kinetic and gravity potential) than it began with plus the work of the applied
        forces over it (trapezoidal rule, ``W = h Q . (qd + qd+) / 2``, ``Q = tau + J^T
        f_ext``); an excess, from the integrator (semi-implicit Euler gains energy where
        fast links whip: first order in h) or the position projection, is taken out of the
        kinetic energy by scaling ``qd+`` (its projection onto the energy level in the
        mass-matrix metric: Hairer, Lubich & Wanner, Geometric Numerical Integration, IV.4),
        and recorded as ``energy_removed``. A stabilizer, off by default: the excess is
        taken from every velocity alike, also from motion that did not cause it (a pile of
        chains runs with it, but falls damped). Adaptive
        dynamics applies it to the hybrid body in O(N_A)
        (:func:`~articulated.simulation.adaptive_contact.hybrid_energy_bound`).

    solver : str
        ``"auto"`` (default), ``"sequential"`` or ``"apgd"`` (:data:`SOLVERS`): the
        contact impulses by sequential impulses (projected Gauss-Seidel with Coulomb
        friction, :mod:`~articulated.algorithms.sweeps`) or by the matrix-free accelerated
        projected gradient on the cone complementarity problem
        (:mod:`~articulated.algorithms.apgd`; O(nv + contacts) per iteration, no ``M^-1
        J^T`` rows); ``"auto"`` takes the latter where the active contacts times ``nv``
        reach :data:`APGD_WORK`, and sequential impulses on adaptive dynamics' hybrid
        body (its rows span the active joints only). See docs/guide/contact.md.
    iterations : int
        Most iterations of a matrix-free solve (default 500); it stops when its residual
        is at most ``tol`` [m/s] (the projection's at ``tol dt`` [m]).

    Raises
    ------
    ValueError
        A geometry of another model, unknown options, non-positive ``tol``, ``sweeps``,
        ``rest_speed``, a pair without a narrow phase.
    """

    def __init__(self, model, geom, dt, limits=False, **options):
        if geom is not None and not isinstance(geom, CollisionModel):
            raise TypeError(f"contacts must be an articulated.CollisionModel, got {type(geom).__name__}")
        if geom is not None and geom.model is not model:
            raise ValueError("the CollisionModel was built for another model")
        unknown = set(options) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"unknown contact option(s) {sorted(unknown)}; expected {sorted(DEFAULTS)}")
        o = dict(DEFAULTS, **options)
        if o["rest_speed"] is None:
            o["rest_speed"] = 2.0 * float(np.linalg.norm(model.gravity)) * dt
        if o["slip_speed"] is None:
            o["slip_speed"] = o["rest_speed"]
        for key in ("tol", "depth_tol"):
            if not (math.isfinite(float(o[key])) and float(o[key]) > 0):
                raise ValueError(f"contact option {key} must be finite and > 0, got {o[key]}")
        if not (math.isfinite(float(o["rest_speed"])) and float(o["rest_speed"]) >= 0):
            raise ValueError(f"contact option rest_speed must be finite and >= 0, got {o['rest_speed']}")
        if o["solver"] not in SOLVERS:
            raise ValueError(f"contact option solver must be one of {SOLVERS}, got {o['solver']!r}")
        for key in ("sweeps", "project_sweeps", "iterations"):
            if int(o[key]) < 1:
                raise ValueError(f"contact option {key} must be >= 1, got {o[key]}")
        if o["max_rotation"] is not None and not (math.isfinite(float(o["max_rotation"]))
                                                  and float(o["max_rotation"]) > 0):
            raise ValueError(f"contact option max_rotation must be finite and > 0 (or None), "
                             f"got {o['max_rotation']}")
        if o["max_arc_error"] is not None and not (math.isfinite(float(o["max_arc_error"]))
                                                   and float(o["max_arc_error"]) > 0):
            raise ValueError(f"contact option max_arc_error must be finite and > 0 (or None), "
                             f"got {o['max_arc_error']}")
        if not (0.0 <= float(o["limit_e"]) <= 1.0):
            raise ValueError(f"contact option limit_e must be in [0, 1], got {o['limit_e']}")
        self.options = o
        self.model = model
        self.geom = geom
        self.dt = float(dt)
        self.detector = Detector(geom, int(o["capacity"])) if geom is not None else None
        self.limits = model_limits(model) if limits else model_limits(model)._replace(
            dof=np.zeros(0, np.int64))
        if limits and not model.jnt_limited.any():
            raise ValueError("limits=True, but no joint of the model has limits (jnt_range)")
        # limit keys follow the contact keys (16 per shape pair)
        self.key0 = 16 * (len(geom.arrays()["pairs"]) if geom is not None else 0)
        d = self.data = model.data()
        ma = self.ma = model.arrays()
        self.im = ImpulseModel(ma.parent, ma.vadr, ma.jnv, ma.S)
        nb, nv = model.nb, model.nv
        self.sc = impulse_scratch(nb, nv)
        self.opt = ResponseOptions(self.dt, float(o["tol"]), int(o["sweeps"]),
                                   float(o["rest_speed"]), float(o["slip_speed"]),
                                   bool(o["warm_start"]), bool(o["project"]),
                                   int(o["project_sweeps"]), float(o["limit_e"]), self.key0,
                                   bool(o["energy_bound"]), bool(o["dormant"]),
                                   int(o["iterations"]), apgd_work(o["solver"]))
        nlim = len(self.limits.dof)
        cap = (self.detector.out.dist.shape[0] if self.detector else 0) + 2 * nlim
        self.rb = response_buffers(max(cap, 1), nb, nv, nlim)
        self.last = np.zeros((), CONTACT_STATS)
        self.substeps = 1
        self.failure = None

    @property
    def rows(self):
        """The :class:`~articulated.algorithms.contact_rows.ContactRows` of the last step (a row's
        ``JT`` only below its ``span``: the rest may hold an earlier step's values)."""
        return self.rb.rows

    def check_initial(self, q):
        """ValueError naming the shapes and bodies if shapes overlap deeper than
        ``depth_tol`` at ``q`` (unless ``allow_initial_penetration``), or naming the joint
        if ``q`` is outside a joint's limits by more than ``depth_tol``."""
        if len(self.limits.dof):
            self.model.check_limits(q, self.options["depth_tol"])
        if self.options["allow_initial_penetration"] or self.detector is None:
            return
        d = self.data
        _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
        n = self.detector.detect(d.oE, d.op, np.zeros((self.model.nb, 6)), self.dt)
        out = self.detector.out
        for c in range(n):
            if -out.dist[c] > self.options["depth_tol"]:
                a, b = (int(x) for x in out.geom[c])
                raise ValueError(
                    f"initial interpenetration {-out.dist[c]:.3g} m > depth_tol "
                    f"{self.options['depth_tol']:g} m between {self._shape(a)} and "
                    f"{self._shape(b)}; move them apart or pass allow_initial_penetration=True")

    def _shape(self, g):
        A = self.geom.arrays()
        b = int(A["body"][g])
        where = "the world" if b < 0 else f"body {self.model.body_name[b]!r}"
        return f"shape {g} ({SHAPE_NAMES[int(A['kind'][g])]} on {where})"

    def contact_list(self):
        """The contacts of the last step: a list of dicts with ``shapes, bodies`` (names;
        None for the world), ``point, normal`` (3,) world [m], ``depth`` [m] (negative: a
        gap) and ``impulse`` (3,) world [N s] (on body a; body b receives the opposite)."""
        res = []
        if self.detector is None:
            return res
        out = self.detector.out
        names = self.model.body_name
        row = self.row_of()
        for c in range(int(self.detector.n)):   # the last substep's (``last``: the step's most)
            ba, bb = (int(x) for x in out.body[c])
            r = row.get(c)
            impulse = (np.zeros(3) if r is None else
                       self.rows.frame[r].T @ self.rb.rows.P[r])  # dormant: no impulse
            res.append(dict(shapes=(int(out.geom[c, 0]), int(out.geom[c, 1])),
                            bodies=(names[ba] if ba >= 0 else None, names[bb] if bb >= 0 else None),
                            point=out.point[c].copy(), normal=out.normal[c].copy(),
                            depth=float(-out.dist[c]), impulse=impulse))
        return res

    def row_of(self):
        """``{contact index: row index}`` of the last (sub)step's active contacts (the
        detector's order; a dormant speculative contact has no row, contact option
        ``dormant``)."""
        sp = self.rb.spec
        return {int(c): r for r, c in enumerate(sp.cidx[:int(sp.count[0])])}


def runaway_message(joint):
    """The error of a contact step that moved ``joint`` (its name) by more than
    :data:`~articulated.algorithms.projection.MAX_STEP_DISPLACEMENT` (every pipeline's)."""
    return (f"the contact response moved joint {joint!r} by more than pi (rad or m) in one "
            f"step: the impulses or the position projection diverged")


def stats_log(cstats, rate):
    """The rows ``cstats`` (k, 16) of a compiled loop's statistics (the order of
    :data:`CONTACT_STATS`, times in cycles of :func:`~articulated.simulation.cycles._cycles`,
    ``rate`` cycles per second, None: not timed) as a (k,) :data:`CONTACT_STATS` array,
    times in seconds."""
    if rate:
        cstats[:, STAT_DETECT:STAT_RESPONSE + 1] /= rate
    log = np.zeros(len(cstats), CONTACT_STATS)
    for k, name in enumerate(CONTACT_STATS.names):
        log[name] = cstats[:, k]
    return log
