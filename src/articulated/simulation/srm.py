"""Closed loops by the sequential regularization method (SRM) and a direct reference solver.

The model is a spanning tree (reduced coordinates: tree constraints exact) plus loop joints
``g_L(q) = 0`` (:mod:`articulated.algorithms.loops`). Equations of motion (Ascher & Lin 1999,
eq. 3.3, in tree coordinates):

    H(q) qdd = tau - C(q, qd) + J^T f_ext - G_L(q)^T lambda,      g_L(q) = 0

Our SRM form (what :class:`SRMSolver` does per time step h)
-----------------------------------------------------------
Warm start ``lambda_0`` = the multipliers of the previous step. For s = 1 .. S:

1. one explicit Runge-Kutta step (``"euler"``, ``"rk2"`` = Heun, ``"rk4"``) of the tree
   dynamics from ``(q_n, qd_n)`` with the loop forces ``-G_L^T lambda_{s-1}`` held over the
   step: every stage is one O(n) ABA with the loop forces applied as equal and opposite
   spatial forces on the two bodies of each loop; gives ``(q^s, qd^s)`` at ``t_n + h``;
2. the stabilized constraint residual at that state, O(n + loops):
   ``z_s = G_L qd^s + alpha g_L(q^s)``   (``alpha_2 G v + alpha_3 g`` of srm-notes.md, alpha_1 = 0);
3. the SRM update (explicit: no linear system), for s < S:
   ``lambda_s = lambda_{s-1} + (1 / eps) W z_s``.

The state of pass S is accepted, and ``lambda_{S-1}``, the multipliers it was computed
with, warm-start the next step (also applying the update after the last pass would correct
the same residual twice, once here and once by the next step's trial pass: an undamped
integral controller, unstable for alpha > 0). S = 1 is the trial pass alone (no
correction). Cost per step: S x (stages + 1) O(n) tree passes, whatever the number of
loops. ``W`` chooses the form:

* ``form="scaled"`` (default; our "Alg I"): ``W = blockdiag_l (J_a Ia^-1 J_a^T + J_b Ib^-1
  J_b^T)^-1``, per loop the inverse mobility of its two bodies taken as free bodies (the
  block-diagonal ``D M^-1 D^T`` of the paper's Lemma 3.1). It is never singular, also where
  ``G_L`` loses rank (the square chain's "four links in line"), and makes the best ``eps``
  independent of masses, lengths, time and n: the tree only removes mobility, so the
  eigenvalues ``mu`` of ``G_L H^-1 G_L^T W`` lie in (0, 1] when loops share no body.
* ``form="unscaled"`` (our "Alg II", the notes' literal ``lambda_s = lambda_{s-1} + z/eps``):
  ``W = 1`` [kg]; the admissible ``eps`` depends on the eigenvalues of ``G_L H^-1 G_L^T``,
  which change with the configuration (the paper's criticism of its form 3.10).

Why it converges, and why the iterations do not grow with n: a change ``d lambda`` held
over the step changes the end velocity by ``-h H^-1 G_L^T d lambda`` (plus O(h^2) in
``q``), so ``z_s`` obeys ``z_s ~ (1 - (h / eps) K W) z_{s-1}`` with ``K = G_L H^-1 G_L^T``:
with ``eps = 0.75 h`` (the default) every mode of ``K W`` with eigenvalue mu contracts by
``|1 - mu / 0.75|`` per iteration. The spectrum is set by the local structure of the loops:
for the square chain it is [0.30, 0.96] for every length (so the iterations needed do not
grow with n), for the net its lower end shrinks with the net's size (0.05 at 4 x 4, 0.014
at 8 x 8: a block-diagonal W cannot see the two-dimensional coupling). The fixed point of
the iteration is independent of ``eps`` and ``W``: the step whose end state satisfies
``G_L qd + alpha g_L = 0``, so the loop drift obeys ``d g / dt = -alpha g`` at step ends and
stays bounded. With the warm start the initial residual is small (the multipliers change
by O(h) per step), so S = 3 suffices (the closed-loops results page shows the runs).

Where this differs from the paper (whose equations were lost; see srm-notes.md): in the
paper's SRM (its eqs. 3.6, 3.10, 3.12) ``lambda_s`` is driven by the *current* iterate's
residual along its own trajectory, ``lambda_s(t) = lambda_{s-1}(t) + z(p_s(t), v_s(t)) /
eps``, a penalty ODE that an explicit scheme integrates with ``h = O(eps)``. Restarted at
every step from one shared state, that form degenerates (the first stage's residual is the
same in every iteration, so S iterations only multiply the penalty gain) and warm-started
it turns into an undamped integral controller (checked on a scalar model). We evaluate
the residual at the end of the previous iterate's step (a lagged, Jacobi-in-time SRM
sweep): the same update formula and cost, explicit, O(n) per iteration, and a clean
discrete fixed point. The multipliers are constant over a step, so the trajectory is
second order in h (also with RK4) while the loop drift is controlled to the iteration's
accuracy.

Reference solver (:class:`KKTSolver`)
-------------------------------------
Direct method for small systems: the dense KKT system of tree + loop constraints with
Baumgarte stabilization, ``G_L qdd = -G_L-dot qd - 2 beta G_L qd - beta^2 g_L``, solved by
least squares (rank-deficient ``G_L`` allowed), integrated by the library's RK4/Euler.
O(nv^3) per evaluation.

References
----------
U. Ascher and P. Lin, "Sequential regularization methods for simulating mechanical systems
with many closed loops", SIAM J. Sci. Comput. 21 (1999): sec. 3 (tree + loop-closing
constraints, SRM), sec. 4 (examples 4.1, 4.2, tables 4.1-4.3); srm-notes.md (the SRM
iteration and stabilization terms); J. Baumgarte, "Stabilization of constraints and
integrals of motion in dynamical systems", CMAME 1 (1972).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..algorithms._inputs import check_f_ext
from ..algorithms.aba import aba_kernel
from ..algorithms.crba import crba
from ..algorithms.loops import (LoopWork, add_loop_forces, all_loop_rows, loop_arrays,
                                loop_Gdot_qd, loop_jacobian, loop_residual, loop_scaling,
                                poses_velocities)
from ..algorithms.rnea import bias_forces
from ..config import KERNEL
from ..data import data_arrays
from ..model import Model
from ..configuration import _normalize_kernel, _qdot_kernel
from .stepsize import ATOL, RTOL, StepSizeController, error_norm

SRM_INTEGRATORS = {
    "euler": (np.zeros((1, 1)), np.array([1.0]), np.array([0.0])),
    "rk2": (np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5]), np.array([0.0, 1.0])),
    "rk4": (np.array([[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0],
                      [0.0, 0.0, 1.0, 0.0]]), np.array([1.0, 2.0, 2.0, 1.0]) / 6.0,
            np.array([0.0, 0.5, 0.5, 1.0])),
}
"""Explicit Runge-Kutta tableaux ``(A, b, c)`` of the SRM step: forward Euler, Heun's
second-order method (the paper's "explicit second-order Runge-Kutta"), classical RK4."""

SRM_FORMS = ("scaled", "unscaled")
"""Values of ``form=``: the multiplier update scaled by ``W`` (default) or not."""

DEFAULT_ITERATIONS = 3
"""SRM iterations per step (Ascher & Lin 1999, Tables 4.1, 4.3: 2-3 suffice). Iteration 1
is the warm-started trial pass; each later one corrects the multipliers once."""
DEFAULT_EPS_FACTOR = 0.75
"""``eps = eps_factor * h``. The residual contracts by ``1 - (h / eps) mu`` per iteration,
``mu`` in (0, 1] the eigenvalues of ``K W`` (scaled form), so ``eps >= h / 2`` is stable
and a mild over-relaxation (``eps < h``) speeds up the slow modes; 0.75 was best on the
square chain and net (0.6 diverged there with S = 2)."""
DEFAULT_ALPHA = 5.0
"""Stabilization rate ``alpha`` [1/s] of ``z = G_L qd + alpha g_L``: at the fixed point the
drift obeys ``dg/dt = -alpha g``. A rate fixed in time units (not ``c / h``) keeps the
iteration stable as h shrinks (on the square net ``alpha = 0.2 / h`` with S = 2 diverges
at small h, ``alpha = 5`` does not)."""


SRMModel = namedtuple("SRMModel", (
    "model_i", "model_f", "jtype", "qadr", "vadr", "quat_qadr", "loop_i", "loop_f", "Iinv_a",
    "Iinv_b"))
SRMModel.__doc__ = """Static arrays of an SRM step: the packed model ``model_i, model_f``
(:func:`articulated.model.model_arrays`), the joint layout ``jtype, qadr, vadr`` (nb,) int64
and ``quat_qadr`` (n_quat,) int64 (the first q index of each quaternion), the packed loops
``loop_i, loop_f`` (:func:`articulated.algorithms.loops.loop_arrays`) and their bodies'
inverse inertias ``Iinv_a, Iinv_b`` (:class:`~articulated.algorithms.loops.LoopArrays`)."""

SRMScheme = namedtuple("SRMScheme", ("A", "bw", "cn", "S", "alpha", "scaled"))
SRMScheme.__doc__ = """The method of an SRM step: the Runge-Kutta tableau ``A`` (K, K),
``bw`` (K,), ``cn`` (K,) (:data:`SRM_INTEGRATORS`), ``S`` int the SRM iterations, ``alpha``
float the stabilization rate [1/s] and ``scaled`` bool (the form, :data:`SRM_FORMS`)."""

SRMWork = namedtuple("SRMWork", (
    "data_f", "lam_st", "kq", "kv", "Qs", "Qu", "Vs", "f_tot", "g", "Gv", "Ja", "Jb", "W", "M",
    "x", "K6", "T2", "Y"))
SRMWork.__doc__ = """Data and scratch of an SRM step: the model's packed data ``data_f``
(:func:`articulated.data.data_arrays`), the stage multipliers ``lam_st`` (nc,), the stage
slopes ``kq`` (K, nq), ``kv`` (K, nv), the stage state ``Qs, Qu`` (nq,) (``Qu``
normalized), ``Vs`` (nv,), the body forces ``f_tot`` (nb, 6) [N m; N] and the loop rows
and scaling of :class:`~articulated.algorithms.loops.LoopWork` (``g, Gv, Ja, Jb, W, M, x``,
its ``K`` as ``K6``, ``T2, Y``)."""


@njit(**KERNEL)
def _srm_step_kernel(sm, scheme, q, qd, tau, f_app, h, inv_eps, mult, work, out):
    """One SRM step (module docstring): S iterations of (explicit RK step with the loop
    forces of ``lam``; residual ``z``; ``lam += inv_eps W z``). Returns False if a
    non-finite value appeared.

    ``sm`` an :class:`SRMModel`, ``scheme`` an :class:`SRMScheme`, ``work`` an
    :class:`SRMWork`; inputs ``q`` (nq,), ``qd`` (nv,), ``tau`` (nv,), ``f_app`` (nb, 6) or
    (0, 6), the step ``h`` [s] and ``inv_eps`` [1/s]; ``mult = (lam, dlam)`` (nc,): the
    multipliers at mid-step (warm start in, accepted out) and their change over a step (the
    slope held within the step); ``out = (q_out, qd_out, z_hist, g_hist)``: the state at
    ``t + h`` and the residuals of each iteration (:class:`SRMSolver`)."""
    model_i, model_f, jtype, qadr, vadr = sm.model_i, sm.model_f, sm.jtype, sm.qadr, sm.vadr
    quat_qadr, loop_i, loop_f, Iinv_a, Iinv_b = (sm.quat_qadr, sm.loop_i, sm.loop_f,
                                                  sm.Iinv_a, sm.Iinv_b)
    A, bw, cn, S, alpha, scaled = (scheme.A, scheme.bw, scheme.cn, scheme.S, scheme.alpha,
                                   scheme.scaled)
    lam, dlam = mult
    data_f, lam_st, kq, kv, Qs, Qu, Vs, f_tot = (work.data_f, work.lam_st, work.kq, work.kv,
                                                 work.Qs, work.Qu, work.Vs, work.f_tot)
    g, Gv, Ja, Jb, W, M, x, K6, T2, Y = (work.g, work.Gv, work.Ja, work.Jb, work.W, work.M,
                                         work.x, work.K6, work.T2, work.Y)
    q_out, qd_out, z_hist, g_hist = out
    nb = model_i.shape[1]
    nq = q.shape[0]
    nv = qd.shape[0]
    nc = lam.shape[0]
    K = bw.shape[0]
    has_app = f_app.shape[0] > 0
    dv = data_arrays(data_f, nb, nv)
    v, oE, op, qdd = dv.v, dv.oE, dv.op, dv.qdd
    has_quat = quat_qadr.shape[0] > 0
    for s in range(S):
        for k in range(K):
            for i in range(nq):
                t = q[i]
                for j in range(k):
                    t += h * A[k, j] * kq[j, i]
                Qs[i] = t
                Qu[i] = t
            for i in range(nv):
                t = qd[i]
                for j in range(k):
                    t += h * A[k, j] * kv[j, i]
                Vs[i] = t
            if has_quat:
                _normalize_kernel(quat_qadr, Qu)
            _qdot_kernel(jtype, qadr, vadr, Qs, Vs, kq[k])
            for i in range(nb):
                for l in range(6):
                    f_tot[i, l] = f_app[i, l] if has_app else 0.0
            if nc > 0:
                poses_velocities(model_i, model_f, Qu, Vs, data_f, False)
                all_loop_rows(loop_i, loop_f, oE, op, v, False, g, Gv, Ja, Jb, M, x)
                # lambda(t_n + c h) = lambda_mid + (c - 1/2) dlam
                for r in range(nc):
                    lam_st[r] = lam[r] + (cn[k] - 0.5) * dlam[r]
                add_loop_forces(loop_i, lam_st, 1.0, Ja, Jb, f_tot)
            if not aba_kernel(model_i, model_f, Qu, Vs, tau, f_tot, False, data_f, True):
                return False
            for i in range(nv):
                kv[k, i] = qdd[i]
        for i in range(nq):
            t = q[i]
            for j in range(K):
                t += h * bw[j] * kq[j, i]
            q_out[i] = t
        for i in range(nv):
            t = qd[i]
            for j in range(K):
                t += h * bw[j] * kv[j, i]
            qd_out[i] = t
        if has_quat:
            _normalize_kernel(quat_qadr, q_out)
        for i in range(nq):
            if not math.isfinite(q_out[i]):
                return False
        for i in range(nv):
            if not math.isfinite(qd_out[i]):
                return False
        if nc == 0:
            z_hist[s] = 0.0
            g_hist[s] = 0.0
            continue
        # residual at the end state and the SRM update
        poses_velocities(model_i, model_f, q_out, qd_out, data_f, True)
        all_loop_rows(loop_i, loop_f, oE, op, v, True, g, Gv, Ja, Jb, M, x)
        zmax = 0.0
        gmax = 0.0
        for r in range(nc):
            gr = abs(g[r])
            if gr > gmax:
                gmax = gr
            Gv[r] += alpha * g[r]  # z
            zr = abs(Gv[r])
            if zr > zmax:
                zmax = zr
        z_hist[s] = zmax
        g_hist[s] = gmax
        if not (math.isfinite(zmax) and math.isfinite(gmax)):
            return False
        if s == S - 1:
            break  # keep the multipliers of the accepted pass as the warm start
        if scaled:
            loop_scaling(loop_i, Iinv_a, Iinv_b, Ja, Jb, nc, W, K6, T2, Y)
            nl = loop_i.shape[1]
            for l in range(nl):
                c0 = loop_i[3, l]
                c1 = loop_i[3, l + 1] if l + 1 < nl else nc
                for r in range(c1 - c0):
                    t = 0.0
                    for cc in range(c1 - c0):
                        t += W[l, r, cc] * Gv[c0 + cc]
                    lam[c0 + r] += inv_eps * t
        else:
            for r in range(nc):
                lam[r] += inv_eps * Gv[r]
    return True


def _tolerance(x, what):
    x = float(x)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{what} must be finite and > 0, got {x!r}")
    return x


class SRMDiverged(RuntimeError):
    """An SRM step produced a non-finite state (``eps`` too small for the form, or ``h`` too
    large)."""


class SRMSolver:
    """Time stepping of a model with loop joints by the sequential regularization method.

    Parameters
    ----------
    model : Model
        Spanning tree plus loop joints (``model.nloops`` may be 0).
    dt : float
        Step size h [s] (> 0).
    integrator : {"rk2", "rk4", "euler"}
        Explicit Runge-Kutta scheme (:data:`SRM_INTEGRATORS`).
    iterations : int >= 1
        SRM iterations S per step (default :data:`DEFAULT_ITERATIONS`).
    eps : float, optional
        Regularization parameter [s]; default ``DEFAULT_EPS_FACTOR * h`` (``eps`` is tied to
        the step size, as in the paper).
    alpha : float, optional
        Stabilization rate [1/s] of ``z = G_L qd + alpha g_L``; default
        :data:`DEFAULT_ALPHA`.
    form : {"scaled", "unscaled"}
        The SRM update's ``W`` (module docstring; "scaled" is our Alg I, "unscaled" Alg II).
    rtol, atol : float > 0, optional
        Tolerances of the step-size control (the meaning of
        :mod:`articulated.simulation.stepsize`, as for ``integrator="rk45"``); giving either
        makes :meth:`advance` and :meth:`run` adaptive (the missing one takes its default,
        :data:`~articulated.simulation.stepsize.RTOL`,
        :data:`~articulated.simulation.stepsize.ATOL`): each step's error is estimated by
        step doubling, and ``dt`` is then the first step tried and the largest one. ``eps``
        scales with the step (``eps / h`` stays what it is at ``h = dt``).

    Notes
    -----
    Why step doubling and not an embedded Runge-Kutta pair: the SRM step is not one
    Runge-Kutta step of a fixed vector field. Its multipliers are held over the step and
    corrected by S iterations, so the error that matters (second order in h with every
    tableau, RK4 included: the multipliers' zero-order hold, plus what S iterations leave
    of the constraint residual) is the same in a Runge-Kutta pair's two solutions, which
    share the multipliers, and an embedded estimate would not see it. Two half steps
    against one whole step (Richardson: ``err = (y_{h/2,h/2} - y_h) / (2^p - 1)``, p = 2,
    or 1 for Euler; HNW II.4) measure the whole SRM step as it is, multipliers and
    iterations included, at 1.5 times the cost of the accepted half steps. The accepted
    state is the one of the two half steps (no extrapolation: the extrapolated state
    would not satisfy the stabilized constraint the iteration converged to).

    Attributes
    ----------
    lam : (nc,) float64
        Multipliers of the last step (``-G_L^T lam`` is the loop force [N | N m] held over
        the step).
    dlam : (nc,) float64
        Slope of the multipliers within a step: the stage at RK node c uses ``lam + (c -
        1/2) dlam`` (zero: constant multipliers; a slope extrapolated from the previous step
        raised RK4 to order 3 on the four-bar at convergence, but made the iteration
        unstable on the square chain and net, so it is not used).
    z_hist, g_hist : (S,) float64
        Max ``|z|`` [m/s] and max ``|g_L|`` [m | 1] after each iteration of the last step.
    eps, alpha, h, iterations, integrator, form, rtol, atol
        The settings (``rtol``, ``atol`` None: fixed step).
    adaptive : bool
        Whether ``rtol`` or ``atol`` was given.
    control : StepSizeController or None
        The step-size control (``control.h`` the next step to try, ``control.accepted``,
        ``control.rejected``).
    steps_made : int - SRM steps computed (a doubled step counts 3: whole and two halves)

    Raises ValueError for a bad parameter. Source: module docstring; Ascher & Lin 1999, sec. 3.
    """

    def __init__(self, model: Model, dt: float, *, integrator: str = "rk2",
                 iterations: int = DEFAULT_ITERATIONS, eps: float | None = None,
                 alpha: float | None = None, form: str = "scaled",
                 rtol: float | None = None, atol: float | None = None):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        self.model = model
        h = float(dt)
        if not (math.isfinite(h) and h > 0):
            raise ValueError(f"dt must be finite and > 0, got {dt!r}")
        self.h = h
        if integrator not in SRM_INTEGRATORS:
            raise ValueError(f"unknown SRM integrator {integrator!r}; expected one of "
                             f"{tuple(SRM_INTEGRATORS)}")
        self.integrator = integrator
        if (isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer))
                or iterations < 1):
            raise ValueError(f"iterations must be an integer >= 1, got {iterations!r}")
        self.iterations = int(iterations)
        self.eps = DEFAULT_EPS_FACTOR * h if eps is None else float(eps)
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise ValueError(f"eps must be finite and > 0, got {eps!r}")
        self.alpha = DEFAULT_ALPHA if alpha is None else float(alpha)
        if not (math.isfinite(self.alpha) and self.alpha >= 0):
            raise ValueError(f"alpha must be finite and >= 0, got {alpha!r}")
        if form not in SRM_FORMS:
            raise ValueError(f"unknown SRM form {form!r}; expected one of {SRM_FORMS}")
        self.form = form
        self.adaptive = rtol is not None or atol is not None
        self.rtol = self.atol = self.control = None
        if self.adaptive:
            self.rtol = _tolerance(RTOL if rtol is None else rtol, "rtol")
            self.atol = _tolerance(ATOL if atol is None else atol, "atol")
            # the SRM step is second order with every tableau (multipliers held over it)
            self.control = StepSizeController(1 if integrator == "euler" else 2, h)
        self.steps_made = 0
        A, b, cn = SRM_INTEGRATORS[integrator]
        self._A = np.ascontiguousarray(A)
        self._b = np.ascontiguousarray(b)
        self._c = np.ascontiguousarray(cn)
        K = b.shape[0]
        nq, nv, nb = model.nq, model.nv, model.nb
        self._la = loop_arrays(model)
        self._w = LoopWork(model)
        self._d = model.data()
        self._kq = np.zeros((K, nq))
        self._kv = np.zeros((K, nv))
        self._Qs = np.zeros(nq)
        self._Qu = np.zeros(nq)
        self._Vs = np.zeros(nv)
        self._f_tot = np.zeros((nb, 6))
        self._tau0 = np.zeros(nv)
        self._f_none = np.zeros((0, 6))
        self.lam = np.zeros(model.nc)
        self.dlam = np.zeros(model.nc)
        self._lam_st = np.zeros(model.nc)
        self.z_hist = np.zeros(self.iterations)
        self.g_hist = np.zeros(self.iterations)
        self._sm = self._work = None      # the kernel's bundles, built at the first step

    def reset(self) -> None:
        """Forget the warm start (multipliers to zero)."""
        self.lam[:] = 0.0

    def step(self, q, qd, tau=None, f_ext=None):
        """One SRM step of size h from ``(q, qd)``.

        Parameters
        ----------
        q : (nq,) float64; qd : (nv,) float64
            State at t (consistent or not).
        tau : (nv,) float64, optional
            Applied joint forces, held over the step.
        f_ext : (nb, 6) float64, optional
            Applied body forces (``f_ext`` convention of :func:`articulated.aba`), held over
            the step.

        Returns
        -------
        (q1, qd1) : (nq,), (nv,) float64
            State at t + h (new arrays).

        Raises
        ------
        SRMDiverged
            If the state became non-finite.
        """
        q, qd, tau, f_app = self._inputs(q, qd, tau, f_ext)
        q1 = np.empty(self.model.nq)
        qd1 = np.empty(self.model.nv)
        if not self._step(q, qd, tau, f_app, self.h, 1.0 / self.eps, q1, qd1):
            raise SRMDiverged(
                f"SRM step diverged (h = {self.h:g} s, eps = {self.eps:g} s, form "
                f"{self.form!r}, {self.integrator}, S = {self.iterations}): try form='scaled', "
                f"a larger eps or a smaller step" + (
                    "" if self.adaptive else " (or a step-size control: rtol=...)"))
        return q1, qd1

    def _inputs(self, q, qd, tau, f_ext):
        m = self.model
        return (np.ascontiguousarray(q, dtype=np.float64),
                np.ascontiguousarray(qd, dtype=np.float64),
                self._tau0 if tau is None else np.ascontiguousarray(tau, dtype=np.float64),
                self._f_none if f_ext is None else check_f_ext(m, f_ext, np.float64))

    def _step(self, q, qd, tau, f_app, h, inv_eps, q_out, qd_out) -> bool:
        """One SRM step of size ``h`` into ``q_out, qd_out`` (the kernel); False if a
        non-finite value appeared."""
        m = self.model
        la, w, d = self._la, self._w, self._d
        self.steps_made += 1
        if self._sm is None:
            self._sm = SRMModel(d.model_i, d.model_f, m.jnt_type, m.jnt_qadr, m.jnt_vadr,
                                m.quat_qadr, la.ints, la.floats, la.Iinv_a, la.Iinv_b)
            self._work = SRMWork(d.buf, self._lam_st, self._kq, self._kv, self._Qs, self._Qu,
                                 self._Vs, self._f_tot, w.g, w.Gv, w.Ja, w.Jb, w.W, w.M, w.x,
                                 w.K, w.T2, w.Y)
        scheme = SRMScheme(self._A, self._b, self._c, self.iterations, self.alpha,
                           self.form == "scaled")
        return _srm_step_kernel(self._sm, scheme, q, qd, tau, f_app, h, inv_eps,
                                (self.lam, self.dlam), self._work,
                                (q_out, qd_out, self.z_hist, self.g_hist))

    def advance(self, q, qd, t: float, t_end: float, forces=None):
        """Integrate from ``(q, qd)`` at ``t`` to ``t_end`` [s] with the step-size control.

        With the step-size control (``rtol``/``atol`` given): steps of at most ``dt``, the
        last one ending exactly at ``t_end``, each checked by step doubling (class
        docstring) and repeated smaller when its error norm exceeds 1
        (:class:`~articulated.simulation.stepsize.StepSizeController`). The controller's
        next step carries over to the next call.

        Parameters
        ----------
        q : (nq,) float64; qd : (nv,) float64
            State at ``t``.
        t, t_end : float
            Start and end time [s], ``t_end >= t``.
        forces : callable ``(t, q, qd) -> (tau (nv,), f_ext (nb, 6) or None)``, optional -
            applied forces, sampled at the start of every (half) step and held over it

        Returns
        -------
        (q1, qd1) : (nq,), (nv,) float64
            State at ``t_end`` (new arrays).

        Raises
        ------
        ValueError, SRMDiverged
            ValueError without a step-size control; SRMDiverged when the step size collapses
            (below ``1e-10 dt``: the state is not finite even for tiny steps).
        """
        if not self.adaptive:
            raise ValueError("SRMSolver.advance needs a step-size control (rtol or atol)")
        ctrl = self.control
        m = self.model
        nq = m.nq
        q = np.array(q, dtype=np.float64)
        qd = np.array(qd, dtype=np.float64)
        qb, qdb = np.empty(nq), np.empty(m.nv)      # one whole step
        qh, qdh = np.empty(nq), np.empty(m.nv)      # first half step
        q2, qd2 = np.empty(nq), np.empty(m.nv)      # second half step
        lam0 = np.empty_like(self.lam)
        ratio = self.eps / self.h                   # eps / h, kept at every step size
        richardson = 2.0 ** ctrl.order - 1.0
        t = float(t)
        while t < t_end:
            left = t_end - t
            h_ctrl = ctrl.h                  # <= dt
            h = left if left <= 1.05 * h_ctrl else h_ctrl
            if h < 1e-10 * self.h:
                raise SRMDiverged(
                    f"SRM step size collapsed at t = {t:.6g} s (h = {h:.3g} s after "
                    f"{ctrl.rejected} rejections; rtol = {self.rtol:g}, atol = "
                    f"{self.atol:g}): the state does not stay finite even for tiny steps")
            lam0[:] = self.lam
            tau, f_app = self._forces(forces, t, q, qd)
            inv_eps = 1.0 / (ratio * h)
            ok = self._step(q, qd, tau, f_app, h, inv_eps, qb, qdb)
            self.lam[:] = lam0
            ok = ok and self._step(q, qd, tau, f_app, 0.5 * h, 2.0 * inv_eps, qh, qdh)
            if ok:
                tau, f_app = self._forces(forces, t + 0.5 * h, qh, qdh)
                ok = self._step(qh, qdh, tau, f_app, 0.5 * h, 2.0 * inv_eps, q2, qd2)
            err = math.inf
            if ok:
                err = error_norm((q2 - qb) / richardson, q, q2, self.rtol, self.atol)
            accepted = ctrl.update(err, h)
            if accepted and h < h_ctrl:      # a step cut to end at t_end: keep the pace
                ctrl.h = max(ctrl.h, h_ctrl)
            ctrl.h = min(ctrl.h, self.h)
            if accepted:
                t = t_end if h == left else t + h
                q, q2 = q2, q
                qd, qd2 = qd2, qd
            else:
                self.lam[:] = lam0
        return q, qd

    def _forces(self, forces, t, q, qd):
        if forces is None:
            return self._tau0, self._f_none
        tau, f_ext = forces(t, q, qd)
        return self._inputs(q, qd, tau, f_ext)[2:]

    def run(self, q, qd, steps: int, *, record_every: int = 1):
        """Integrate ``steps`` steps from ``(q, qd)`` (no applied forces besides gravity).

        Returns
        -------
        t : (k,) float64
            Record times [s]; the records include the start and the end.
        Q : (k, nq) float64
            Configurations.
        QD : (k, nv) float64
            Velocities.
        drift : (steps + 1,) float64
            Max ``|g_L|`` of every state [m | 1] (the loop drift).

        Raises
        ------
        SRMDiverged
            The records so far are in its ``.partial``.

        Notes
        -----
        With a step-size control each of the ``steps`` intervals of ``dt`` is covered by
        :meth:`advance` (records and drift at the multiples of ``dt``).
        """
        q = np.array(q, dtype=np.float64)
        qd = np.array(qd, dtype=np.float64)
        drift = np.zeros(steps + 1)
        drift[0] = np.abs(loop_residual(self.model, q)).max(initial=0.0)
        T, Q, QD = [0.0], [q.copy()], [qd.copy()]
        for n in range(1, steps + 1):
            try:
                if self.adaptive:
                    q, qd = self.advance(q, qd, (n - 1) * self.h, n * self.h)
                else:
                    q, qd = self.step(q, qd)
            except SRMDiverged as e:
                e.partial = (np.array(T), np.array(Q), np.array(QD), drift[:n])
                raise
            drift[n] = self.g_hist[-1]
            if n % record_every == 0 or n == steps:
                T.append(n * self.h)
                Q.append(q)
                QD.append(qd)
        return np.array(T), np.array(Q), np.array(QD), drift


# ------------------------------------------------------------------ reference solver

class KKTSolver:
    """Dense KKT solve of tree and loop constraints with Baumgarte stabilization.

    A direct reference for small systems (see the module docstring).

    ``qdd, lambda`` solve ``H qdd + G^T lambda = tau - C + J^T f_ext`` and
    ``G qdd = -G-dot qd - 2 beta G qd - beta^2 g`` (least squares in ``lambda``, so a
    rank-deficient ``G`` is fine). O(nv^3 + nc nv^2) per evaluation.

    Parameters
    ----------
    model : Model
    beta : float >= 0
        Baumgarte rate [1/s] (critically damped drift).
    rcond : float
        Relative cut-off of the least-squares solve for ``lambda`` (singular values of ``G
        H^-1 G^T`` below ``rcond`` times the largest are dropped).
    """

    def __init__(self, model: Model, beta: float = 20.0, rcond: float = 1e-8):
        self.model = model
        self.beta = float(beta)
        self.rcond = float(rcond)

    def accel(self, q, qd, tau=None, f_ext=None):
        """``(qdd (nv,), lambda (nc,))`` at a state [rad/s^2 | m/s^2], [N | N m]."""
        m = self.model
        tau = np.zeros(m.nv) if tau is None else np.asarray(tau, dtype=np.float64)
        H = crba(m, q)
        rhs = tau - bias_forces(m, q, qd, f_ext)
        if m.nc == 0:
            return np.linalg.solve(H, rhs), np.zeros(0)
        G = loop_jacobian(m, q)
        b = self.beta
        gamma = -loop_Gdot_qd(m, q, qd) - 2 * b * (G @ qd) - b * b * loop_residual(m, q)
        L = np.linalg.cholesky(H)
        Hinv_GT = np.linalg.solve(L.T, np.linalg.solve(L, G.T))
        Hinv_rhs = np.linalg.solve(L.T, np.linalg.solve(L, rhs))
        Kmat = G @ Hinv_GT
        lam = np.linalg.lstsq(Kmat, G @ Hinv_rhs - gamma, rcond=self.rcond)[0]
        return Hinv_rhs - Hinv_GT @ lam, lam

    def run(self, q, qd, dt: float, steps: int, *, integrator: str = "rk4",
            record_every: int = 1):
        """Integrate with the library's fixed-step integrators.

        Returns ``(t, Q, QD, drift)`` as :meth:`SRMSolver.run`.
        """
        from .integrators import STEPPERS

        step = STEPPERS[integrator]
        acc = lambda t, q_, qd_: self.accel(q_, qd_)[0]  # noqa: E731
        q = np.array(q, dtype=np.float64)
        qd = np.array(qd, dtype=np.float64)
        drift = np.zeros(steps + 1)
        drift[0] = np.abs(loop_residual(self.model, q)).max(initial=0.0)
        T, Q, QD = [0.0], [q.copy()], [qd.copy()]
        for n in range(1, steps + 1):
            q, qd = step(self.model, acc, (n - 1) * dt, q, qd, dt)
            drift[n] = np.abs(loop_residual(self.model, q)).max(initial=0.0)
            if n % record_every == 0 or n == steps:
                T.append(n * dt)
                Q.append(q)
                QD.append(qd)
        return np.array(T), np.array(Q), np.array(QD), drift


def loop_drift(model: Model, Q) -> np.ndarray:
    """Return the max ``|g_L|`` [m | 1] of each configuration of ``Q`` (k, nq)."""
    return np.array([np.abs(loop_residual(model, q)).max(initial=0.0) for q in Q])


__all__ = ["DEFAULT_ALPHA", "DEFAULT_EPS_FACTOR", "DEFAULT_ITERATIONS", "KKTSolver",
           "SRMDiverged", "SRMSolver", "SRM_FORMS", "SRM_INTEGRATORS", "loop_drift"]
