"""Formulation stiffness study: Ascher, Pai & Cloutier (1997), "Forward dynamics,
elimination methods, and formulation stiffness in robot simulation", reproduced with our
solvers: the computations of ``articulated bench stiffness``
(:mod:`articulated.bench.stiffness`).

Three reproductions, all with the dynamics in single precision (``dtype=np.float32``: every
operation of the forward dynamics, as in the paper) and a float64 reference next to them:

* **Example 1 / Fig. 1** (:func:`example1_sweep`,
  :func:`~articulated.bench.stiffness_report.plot_example1`): the base-joint
  acceleration of the ill-conditioned 2-link arm (:func:`articulated.models.two_link_arm`,
  the paper's l1 = 2 m, m1 = 10 kg, l2 = 0.02 m, m2 = 0.1 kg, width 0.02 m), at rest, no
  torques, gravity orthogonal to the arm, as the tip joint angle q_1 sweeps 0..2 pi, by CRBA
  (``L^T D L``, the Cholesky of the paper), ABA and the modified ABA.
* **Table 1** (:func:`table1`, :func:`simulate_rk45`): 10 s simulations from rest of the
  2-link chains l1 + l2 = 1 m, m1 + m2 = 1 kg, l_k = m_k, widths 0.1 m, ratio
  r = l2 / (l1 + l2), with scipy's adaptive ``RK45`` (Dormand-Prince 5(4), rtol = atol =
  1e-4): forward-dynamics evaluations of CRBA, ABA and the modified ABA, and the maximum
  condition number of the joint-space inertia matrix along the trajectory. A run that stops
  (an exception, a non-finite state, the step size collapsing, more than ``max_nfev``
  evaluations) is a failure, reported as such.
* **Table 2** (:func:`table2`): Examples 2/3, collinear prismatic joints
  (:func:`articulated.models.prismatic_pair`), m2 = 1, m1 in 1e6..1e9, cases (1)
  H = (0,0,0,0,0,1) and (2) H = (0,0,0,0,1,1)/sqrt(2), tau_1 = 981, tau_2 = 9.81: the base
  joint's pivot D_2 (:func:`articulated.algorithms.aba.articulated_pivots`) and the tip-joint
  acceleration for the three methods. Exact: D_2 = 1, qdd_1 = 971.19 + 981 / m1.

:func:`run_study` runs all three and writes ``formulation-stiffness.md`` and its PNGs into an
output folder (``docs/`` by default), next to the paper's numbers (:data:`PAPER_TABLE1`,
:data:`PAPER_TABLE2`).

Index convention: the paper numbers links from the tip, our models from the base, so the
paper's q_2 (base joint) is our ``q[0]`` and its q_1 (tip joint) our ``q[1]``.

The report (Markdown tables, prose, figures) is :mod:`articulated.bench.stiffness_report`.
"""

from __future__ import annotations

import math
import time

import numpy as np


METHODS = ("crba", "aba", "aba_modified")
"""The forward-dynamics methods compared (``method=`` of :func:`articulated.forward_dynamics`)."""

METHOD_LABEL = {"crba": "CRBA", "aba": "ABA", "aba_modified": "modified ABA"}

R_TABLE1 = (0.1, 0.05, 0.01, 0.005, 0.004, 0.0035, 0.003, 0.0025, 0.002, 0.0018, 0.0015)
"""The link-length ratios r = l2 / (l1 + l2) of the paper's Table 1."""

R_BEYOND = (0.001, 0.0005)
"""Ratios beyond the paper's range, added to the full run (is there a failure further on?)."""

R_QUICK = (0.1, 0.0015)
"""The ratios of ``--quick`` (the best- and the worst-conditioned chain of Table 1)."""

PAPER_TABLE1 = {  # r: (n_ABM, n_CRBM (None: "fail"), O(kappa_max))
    0.1: (3169, 3041, 1e2), 0.05: (4623, 5109, 1e3), 0.01: (8189, 8082, 1e4),
    0.005: (10534, 10420, 1e5), 0.004: (11170, 11835, 1e5), 0.0035: (12375, 13792, 1e5),
    0.003: (11990, 18986, 1e5), 0.0025: (12170, 35406, 1e5), 0.002: (12779, 44294, 1e5),
    0.0018: (12418, 86656, 1e5), 0.0015: (12860, None, 1e5)}
"""Table 1 of the paper: evaluations of the ABM and the CRBM (None where the CRBM failed)
and the order of magnitude of the maximum condition number of the JSIM."""

PAPER_TABLE2 = {  # (m1, case): (CRBM D_2, qdd_1, ABM D_2, qdd_1, modified D_2, qdd_1)
    (1e7, 1): (1.0, 971.19, 1.0, 971.19, 1.0, 971.19),
    (1e8, 1): (0.0, None, 1.0, 971.19, 1.0, 971.19),
    (1e9, 1): (0.0, None, 1.0, 971.19, 1.0, 971.19),
    (1e6, 2): (1.03, 941.76, 1.03, 941.76, 1.0, 971.19),
    (1e7, 2): (1.5, 647.46, 1.5, 647.46, 1.0, 971.19),
    (1e8, 2): (0.0, None, 0.0, None, 1.0, 971.19),
    (1e9, 2): (0.0, None, 0.0, None, 1.0, 971.19)}
"""Table 2 of the paper (single precision; None: no acceleration, the pivot vanished)."""

M1_TABLE2 = (1e6, 1e7, 1e8, 1e9)
"""The tip masses m1 [kg] of Table 2 (m2 = 1 kg)."""

H_CASES = {1: (0.0, 0.0, 1.0), 2: (0.0, 1.0, 1.0)}
"""The linear part of the joint matrix H of Table 2's cases (1) H = (0,0,0,0,0,1) and
(2) H = (0,0,0,0,1,1)/sqrt(2) (normalized by the model builder)."""

TAU_EXAMPLE3 = (9.81, 981.0)
"""Joint forces of Example 3 in our order: (tau_2 at the base joint, tau_1 at the tip) [N]."""

DEFAULT_MAX_NFEV = 1_000_000
"""A Table 1 run that needs more forward-dynamics evaluations than this is a failure."""


# ---------------------------------------------------------------------------- Example 1

def example1_sweep(n: int = 721, *, l1: float = 2.0, m1: float = 10.0, l2: float = 0.02,
                   m2: float = 0.1, width: float = 0.02) -> dict:
    """The base-joint acceleration of Example 1's arm over a sweep of the tip joint angle
    (Ascher, Pai & Cloutier 1997, Example 1 and Fig. 1).

    The arm (:func:`articulated.models.two_link_arm`) is at rest with the base joint at 0,
    gravity (0, 0, -9.81) m/s^2 orthogonal to it, no joint torques. For each tip angle
    ``q_1`` the forward dynamics runs in float32 by CRBA, ABA and the modified ABA, and in
    float64 by ABA and CRBA (the reference and its cross-check).

    Parameters
    ----------
    n : int >= 2
        Number of tip angles, evenly spaced over [0, 2 pi].
    l1, m1, l2, m2, width : float > 0
        The arm [m, kg] (defaults: the paper's).

    Returns
    -------
    dict with ``q1`` (n,) float64 - tip joint angles [rad]; ``qdd2`` dict method ->
    (n,) float64, the float32 base-joint accelerations [rad/s^2]; ``ref`` (n,) float64, the
    float64 ABA reference; ``ref_crba`` (n,) float64, float64 CRBA; ``err`` dict method ->
    (n,) float64, ``|qdd2 - ref|`` [rad/s^2]; ``kappa`` (n,) float64, the 2-norm condition
    number of the joint-space inertia matrix (float64).

    Notes
    -----
    Raises ValueError for n < 2 or a bad arm parameter.
    """
    from .. import crba, forward_dynamics, models

    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    model = models.two_link_arm(l1, m1, l2, m2, width)
    q1 = np.linspace(0.0, 2.0 * np.pi, n)
    zero = np.zeros(model.nv)
    data32 = model.data(np.float32)
    data64 = model.data(np.float64)
    qdd2 = {m: np.empty(n) for m in METHODS}
    ref = np.empty(n)
    ref_crba = np.empty(n)
    kappa = np.empty(n)
    for k, t in enumerate(q1):
        q = np.array([0.0, t])
        for m in METHODS:
            qdd2[m][k] = forward_dynamics(model, q, zero, zero, method=m, dtype=np.float32,
                                          data=data32)[0]
        ref[k] = forward_dynamics(model, q, zero, zero, method="aba", data=data64)[0]
        ref_crba[k] = forward_dynamics(model, q, zero, zero, method="crba", data=data64)[0]
        kappa[k] = np.linalg.cond(crba(model, q))
    err = {m: np.abs(qdd2[m] - ref) for m in METHODS}
    return dict(q1=q1, qdd2=qdd2, ref=ref, ref_crba=ref_crba, err=err, kappa=kappa)


# ---------------------------------------------------------------------------- Table 1

def table1_chain(r: float, *, width: float = 0.1):
    """The 2-link chain of Table 1 with link-length ratio ``r = l2 / (l1 + l2)``:
    l1 + l2 = 1 m, m1 + m2 = 1 kg, l_k = m_k (numerically), widths 0.1 m (Ascher, Pai &
    Cloutier 1997, Table 1). Returns a :class:`articulated.Model` (q[0] base, q[1] tip).
    Raises ValueError unless 0 < r < 1."""
    from .. import models

    if not 0.0 < r < 1.0:
        raise ValueError(f"r must be in (0, 1), got {r!r}")
    return models.two_link_arm(l1=1.0 - r, m1=1.0 - r, l2=r, m2=r, width=width)


class _TooManyEvaluations(Exception):
    pass


def simulate_rk45(model, method: str, dtype=np.float32, *, t_end: float = 10.0,
                  tol: float = 1e-4, max_nfev: int = DEFAULT_MAX_NFEV,
                  keep_states: bool = False) -> dict:
    """Simulate ``model`` from rest at q = 0 without joint torques with scipy's adaptive
    ``RK45`` (Dormand-Prince 5(4), ``rtol = atol = tol``) and count the forward-dynamics
    evaluations, as in Table 1 of Ascher, Pai & Cloutier (1997).

    The state ``y = (q, qd)`` is float64 (scipy's); the right-hand side
    ``(qd, forward_dynamics(q, qd, 0, method, dtype))`` computes in ``dtype``.

    Parameters
    ----------
    model : Model without quaternion joints
    method : {"crba", "aba", "aba_modified", "dca"}
        Forward-dynamics method.
    dtype : float32 or float64
        Precision of the forward dynamics.
    t_end : float > 0
        Simulated time [s].
    tol : float > 0
        Relative and absolute tolerance of the step-size control.
    max_nfev : int
        Evaluations after which the run is stopped as a failure.
    keep_states : bool
        Return the accepted states (for condition numbers and errors).

    Returns
    -------
    dict with ``nfev`` (int, evaluations made, including a failed run's), ``steps``
    (accepted steps), ``rejected`` (rejected step attempts; scipy's RK45 costs 6
    evaluations per attempt), ``ok`` (bool), ``status`` ("ok" or a one-line reason:
    exception, non-finite state, step size collapsed, too many evaluations), ``t`` (time
    reached [s]), ``wall_s``, and with ``keep_states`` ``t_steps`` (k,) and ``y_steps``
    (k, 2 nv) float64, the initial and accepted states.

    Notes
    -----
    Failures are reported in the result, never raised.
    """
    # scipy's RK45 stepped by hand rather than solve_ivp: Table 1 counts the rejected step
    # attempts of each accepted step and stops at the first non-finite state or at
    # max_nfev with the time reached, which solve_ivp's loop does not report
    from scipy.integrate import RK45

    from .. import forward_dynamics

    nq, nv = model.nq, model.nv
    if nq != nv:
        raise ValueError("simulate_rk45 needs a model without quaternion joints (nq == nv)")
    dt = np.dtype(dtype)
    data = model.data(dt)
    tau = np.zeros(nv, dtype=dt)
    count = [0]

    def fun(t, y):
        count[0] += 1
        if count[0] > max_nfev:
            raise _TooManyEvaluations
        qdd = forward_dynamics(model, y[:nq], y[nq:], tau, method=method, dtype=dt, data=data)
        return np.concatenate((y[nq:], qdd.astype(np.float64)))

    y0 = np.zeros(nq + nv)
    t_steps, y_steps = [0.0], [y0]
    steps = attempts = 0
    status = "ok"
    w0 = time.perf_counter()
    solver = None
    try:
        solver = RK45(fun, 0.0, y0, t_end, rtol=tol, atol=tol)
        while solver.status == "running":
            n0 = count[0]
            msg = solver.step()
            attempts += (count[0] - n0) // 6
            if solver.status == "failed":
                status = f"step size collapsed at t = {solver.t:.4g} s ({msg})"
                break
            if not np.isfinite(solver.y).all():
                status = f"non-finite state at t = {solver.t:.4g} s"
                break
            steps += 1
            if keep_states:
                t_steps.append(solver.t)
                y_steps.append(solver.y.copy())
    except _TooManyEvaluations:
        count[0] = max_nfev
        status = f"more than {max_nfev} evaluations"
    except (ValueError, ArithmeticError) as e:
        status = f"{type(e).__name__}: {e}"
    out = dict(nfev=count[0], steps=steps, rejected=max(0, attempts - steps),
               ok=status == "ok", status=status, t=float(solver.t) if solver else 0.0,
               wall_s=time.perf_counter() - w0)
    if keep_states:
        out["t_steps"] = np.array(t_steps)
        out["y_steps"] = np.array(y_steps)
    return out


def nfev_cell(run) -> str:
    """A Table 1 cell: the evaluations of a :func:`simulate_rk45` run, or why it failed."""
    return str(run["nfev"]) if run["ok"] else f"fail ({run['status']})"


ROUGHNESS_DELTA = 1e-4
"""State perturbation [rad, rad/s] over which :func:`float32_error` measures roughness."""


def float32_error(model, ys, method: str, *, delta: float = ROUGHNESS_DELTA) -> tuple:
    """Size and roughness of the float32 round-off of a forward-dynamics method along states.

    At each state y (rounded to float32, so that only the arithmetic differs) the error is
    ``e(y) = qdd_float32(y) - qdd_float64(y)`` (both by ``method``; no joint torques). The
    *error* is ``max_y |e(y)|_inf``, the *roughness* ``max_y |e(y + delta) - e(y)|_inf``
    (every state component shifted by ``delta``), both divided by ``max_y |qdd(y)|_inf``. A
    smooth error (a bias that varies slowly with the state, which an adaptive integrator
    treats like a slightly different model) has a roughness far below its size; round-off
    noise that changes randomly from one state to the next (the paper's "roughness of the
    calculated accelerations", Fig. 1) has a roughness as large as its size, and is what an
    embedded error estimate reads as truncation error.

    Parameters
    ----------
    model : Model without quaternion joints
    ys : (k, nq + nv) float64
        States (q, qd).
    method : str
        Forward-dynamics method.
    delta : float
        The state shift of the roughness.

    Returns
    -------
    (error, roughness) : floats, relative to the largest |qdd|; ``inf`` where the float32
    forward dynamics raises (a vanished pivot).
    """
    from .. import forward_dynamics

    nq = model.nq
    tau = np.zeros(model.nv)
    data32, data64 = model.data(np.float32), model.data(np.float64)

    def e(y):
        y = y.astype(np.float32).astype(np.float64)
        q, qd = y[:nq], y[nq:]
        exact = forward_dynamics(model, q, qd, tau, method=method, data=data64)
        return forward_dynamics(model, q, qd, tau, method=method, dtype=np.float32,
                                data=data32) - exact, exact

    err = rough = scale = 0.0
    try:
        for y in ys:
            e0, exact = e(y)
            e1, _ = e(y + delta)
            scale = max(scale, float(np.abs(exact).max()))
            err = max(err, float(np.abs(e0).max()))
            rough = max(rough, float(np.abs(e1 - e0).max()))
    except ValueError:
        return math.inf, math.inf
    scale = max(scale, 1e-300)
    return err / scale, rough / scale


def table1(ratios=R_TABLE1, *, t_end: float = 10.0, tol: float = 1e-4,
           max_nfev: int = DEFAULT_MAX_NFEV, log=print) -> list[dict]:
    """Table 1 of Ascher, Pai & Cloutier (1997) with our solvers.

    For each ratio r (:func:`table1_chain`): a float32 run of every method in
    :data:`METHODS` and a float64 ABA reference run (:func:`simulate_rk45`). Along the
    reference trajectory (its accepted states): ``kappa_max``, the largest 2-norm condition
    number of the joint-space inertia matrix (float64 CRBA), and for every method the size
    and roughness of its float32 round-off (:func:`float32_error`).

    Returns
    -------
    list of dicts, one per r: ``r``, ``runs`` (method -> :func:`simulate_rk45` result,
    float32), ``ref`` (the float64 ABA run, without states), ``kappa_max`` (float),
    ``error`` and ``roughness`` (method -> float, relative to max |qdd|).
    """
    from .. import crba

    rows = []
    for r in ratios:
        model = table1_chain(r)
        runs = {m: simulate_rk45(model, m, np.float32, t_end=t_end, tol=tol, max_nfev=max_nfev)
                for m in METHODS}
        ref = simulate_rk45(model, "aba", np.float64, t_end=t_end, tol=tol, max_nfev=max_nfev,
                            keep_states=True)
        ys = ref.pop("y_steps")
        ref.pop("t_steps")
        kappa = max(float(np.linalg.cond(crba(model, y[:model.nq]))) for y in ys)
        error, roughness = {}, {}
        for m in METHODS:
            error[m], roughness[m] = float32_error(model, ys, m)
        row = dict(r=r, runs=runs, ref=ref, kappa_max=kappa, error=error, roughness=roughness)
        rows.append(row)
        log("r = %-7g " % r + "  ".join(
            f"{METHOD_LABEL[m]}: {nfev_cell(runs[m])}" for m in METHODS)
            + f"  ABA float64: {nfev_cell(ref)}  kappa_max = {kappa:.2g}")
    return rows


# ---------------------------------------------------------------------------- Table 2

def table2(masses=M1_TABLE2, cases=(1, 2), *, dtype=np.float32) -> list[dict]:
    """Table 2 of Ascher, Pai & Cloutier (1997) (Examples 2 and 3) with our solvers.

    For each case and tip mass m1 (:func:`articulated.models.prismatic_pair`, m2 = 1 kg,
    at rest, no gravity, ``tau = (9.81, 981)`` N at (base, tip)): the base joint's pivot
    D_2 [kg] as each method forms it (:func:`articulated.algorithms.aba.articulated_pivots`)
    and the tip-joint acceleration qdd_1 [m/s^2] (``forward_dynamics(...)[1]``; None where
    the forward dynamics raises, i.e. the pivot vanished), in ``dtype``.

    Returns
    -------
    list of dicts: ``case``, ``m1``, ``D2`` (method -> float), ``qdd1`` (method -> float or
    None), ``error`` (method -> the exception message or None), ``exact_D2`` (1.0) and
    ``exact_qdd1`` (971.19 + 981 / m1, from the closed form).
    """
    from .. import forward_dynamics, models
    from ..algorithms.aba import articulated_pivots

    rows = []
    tau = np.array(TAU_EXAMPLE3)
    for case in cases:
        for m1 in masses:
            model = models.prismatic_pair(m1, 1.0, H_CASES[case])
            q = qd = np.zeros(2)
            row = dict(case=case, m1=m1, D2={}, qdd1={}, error={}, exact_D2=1.0,
                       exact_qdd1=(TAU_EXAMPLE3[1] - TAU_EXAMPLE3[0]) / 1.0
                       + TAU_EXAMPLE3[1] / m1)
            for m in METHODS:
                row["D2"][m] = float(articulated_pivots(model, q, method=m, dtype=dtype)[0][0, 0])
                try:
                    row["qdd1"][m] = float(forward_dynamics(model, q, qd, tau, method=m,
                                                            dtype=dtype)[1])
                    row["error"][m] = None
                except ValueError as e:
                    row["qdd1"][m] = None
                    row["error"][m] = str(e)
            rows.append(row)
    return rows


# ---------------------------------------------------------------------------- cost


def method_cost(quick: bool = False, repeats: int = 5) -> dict:
    """Microseconds per ``forward_dynamics`` call of each method in :data:`METHODS`, float64
    and float32, on the Example 1 arm and a 3D pendulum (300 links; 30 with ``quick``),
    random state (seed 0): {scene: {(method, dtype name): us}} (best of ``repeats``)."""
    import timeit

    from .. import forward_dynamics, models

    out = {}
    n = 30 if quick else 300
    for name, model in (("two_link_arm", models.two_link_arm()),
                        (f"pendulum-{n}", models.pendulum(n))):
        rng = np.random.default_rng(0)
        q = model.random_configuration(rng)
        qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        res = out[name] = {}
        for dt in (np.float64, np.float32):
            data = model.data(dt)
            for m in METHODS:
                def f():
                    return forward_dynamics(model, q, qd, tau, method=m, dtype=dt, data=data)
                f()
                k = 20 if model.nv > 100 and m == "crba" else 200
                res[(m, np.dtype(dt).name)] = min(timeit.repeat(f, number=k, repeat=repeats)) \
                    / k * 1e6
    return out
