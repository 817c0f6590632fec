"""``articulated bench loops``: closed loops by SRM, reproducing Ascher & Lin (1999), sec. 4.

Tables (printed as Markdown, also written to ``OUT/closed-loops-results.md``):

* 4.1 - square chain (Example 4.1): max loop drift over ``[0, T]`` for S = 2 .. 4 SRM
  iterations per step and the iterations needed (the smallest S whose drift is within a
  factor 2 of the drift with 6 iterations: "no obvious improvement" in the paper's words),
  n = 4 .. 1024 squares (S = 1 is the warm-started trial pass alone: no correction);
* 4.2 - max drift up to t = 4, 5, 6, 10 s for our two SRM forms ("scaled" = Alg I,
  "unscaled" = Alg II) with forward Euler and RK2;
* 4.3 - the square net (Example 4.2) as 4.1, for net sizes 2x2 .. 32x32;
* cost per step vs n (square chain, 64 .. 1024 squares; fitted log-log slope) next to the
  dense reference KKT solver (4 .. 64 squares), ``OUT/closed-loops-cost.png``;
* frame strips of the falling square chain and the Strandbeest leg
  (``OUT/closed-loops-chain.png``, ``OUT/closed-loops-strandbeest.png``).

``--quick`` runs small sizes only (a smoke test for the test suite). Usage:
``articulated bench loops [--quick] [--out DIR]``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from .. import models
from ..algorithms.kinematics import forward_kinematics, point_position
from ..algorithms.loops import consistent_velocity
from ..simulation.srm import KKTSolver, SRMDiverged, SRMSolver
from .common import MarkdownReport, bench_main, markdown_table, new_figure, save_figure

H41 = 0.005
"""Step size [s] of Tables 4.1 and 4.3 (RK2)."""
T41 = 0.4
"""Time window [s] of Table 4.1: before the chain's first singular configuration (a square
flattened to four links in line, about t = 0.5 s for 4 squares; the paper avoids it too)."""
T43 = 2.0
"""Time window [s] of Table 4.3."""


def drift_run(model, h, T, S, integrator="rk2", form="scaled", eps=None, times=None):
    """Max loop drift over [0, T] (or at the given times: max up to each), or inf if the
    run diverged (then the time of divergence is returned as the second item)."""
    s = SRMSolver(model, h, integrator=integrator, iterations=S, form=form, eps=eps)
    q = model.neutral()
    qd = np.zeros(model.nv)
    steps = int(round(T / h))
    drift = np.zeros(steps + 1)
    for n in range(1, steps + 1):
        try:
            q, qd = s.step(q, qd)
        except SRMDiverged:
            return (np.inf if times is None else [np.inf] * len(times)), n * h
        drift[n] = s.g_hist[-1]
        if not drift[n] < 1.0:  # the loops came apart
            return (np.inf if times is None else [np.inf] * len(times)), n * h
    if times is None:
        return float(drift.max()), None
    return [float(drift[: int(round(t / h)) + 1].max()) for t in times], None


def iterations_needed(drifts: dict, tol: float = 2.0) -> int:
    """Smallest S whose drift is within ``tol`` times the drift with the most iterations."""
    ref = drifts[max(drifts)]
    for S in sorted(drifts):
        if drifts[S] <= tol * ref:
            return S
    return max(drifts)


def table_41(sizes, S_list=(2, 3, 4), S_ref=6, h=H41, T=T41):
    rows = []
    for n in sizes:
        m = models.square_chain(n)
        d = {S: drift_run(m, h, T, S)[0] for S in tuple(S_list) + (S_ref,)}
        rows.append((n, d, iterations_needed(d)))
    return rows


def table_43(sizes, S_list=(2, 3, 4), S_ref=6, h=H41, T=T43):
    rows = []
    for r, c in sizes:
        m = models.square_net(r, c)
        d = {S: drift_run(m, h, T, S)[0] for S in tuple(S_list) + (S_ref,)}
        rows.append(((r, c), d, iterations_needed(d)))
    return rows


def table_42(n=4, h=0.005, times=(4.0, 5.0, 6.0, 10.0)):
    m = models.square_chain(n)
    cases = [("scaled (Alg I)", "euler", 2, 0.75), ("scaled (Alg I)", "euler", 3, 0.75),
             ("scaled (Alg I)", "rk2", 2, 0.75), ("scaled (Alg I)", "rk2", 3, 0.75),
             ("unscaled (Alg II)", "euler", 3, 0.75), ("unscaled (Alg II)", "euler", 3, 5.0),
             ("unscaled (Alg II)", "rk2", 3, 5.0), ("unscaled (Alg II)", "rk2", 6, 5.0)]
    rows = []
    for form, integ, S, ef in cases:
        d, t_div = drift_run(m, h, max(times), S, integrator=integ,
                              form="scaled" if form.startswith("scaled") else "unscaled",
                              eps=ef * h, times=times)
        rows.append((form, integ, S, ef, d, t_div))
    return rows


def cost_per_step(sizes, steps=40, repeats=7):
    """Wall time per SRM step [s] (RK2, S = 3) of the square chain after warm-up: the
    fastest of ``repeats`` runs of ``steps`` steps, the sizes measured round-robin (the
    machine is shared; the minimum is the least disturbed run)."""
    runs = []
    for n in sizes:
        m = models.square_chain(n)
        s = SRMSolver(m, H41, integrator="rk2", iterations=3)
        q, qd = m.neutral(), np.zeros(m.nv)
        for _ in range(5):
            q, qd = s.step(q, qd)
        runs.append([n, m, s, q, qd, []])
    for _ in range(repeats):
        for r in runs:
            n, m, s, q, qd, best = r
            t0 = time.perf_counter()
            for _ in range(steps):
                q, qd = s.step(q, qd)
            best.append((time.perf_counter() - t0) / steps)
            r[3], r[4] = q, qd
    return [(n, m.nb, float(np.min(best))) for n, m, s, q, qd, best in runs]


def cost_reference(sizes, steps=3):
    """Return the wall time per RK4 step [s] of the dense KKT reference solver (square chain).

    Measured in a subprocess with single-threaded BLAS (``OPENBLAS_NUM_THREADS=1``, read
    only when NumPy loads): multithreaded OpenBLAS spins on a shared machine, and the SRM
    solver is single-threaded too.
    """
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = ("import json, warnings; warnings.filterwarnings('ignore'); "
            "from articulated.bench.loops import cost_reference_here as f; "
            f"print(json.dumps(f({list(sizes)!r}, {int(steps)})))")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return [tuple(r) for r in json.loads(res.stdout.strip().splitlines()[-1])]


def cost_reference_here(sizes, steps=3):
    from ..simulation.integrators import rk4_step

    out = []
    for n in sizes:
        m = models.square_chain(n)
        k = KKTSolver(m)
        acc = lambda t, q, qd: k.accel(q, qd)[0]  # noqa: E731
        q, qd = m.neutral(), np.zeros(m.nv)
        q, qd = rk4_step(m, acc, 0.0, q, qd, H41)
        t0 = time.perf_counter()
        for _ in range(steps):
            q, qd = rk4_step(m, acc, 0.0, q, qd, H41)
        out.append((n, m.nb, (time.perf_counter() - t0) / steps))
    return out


def fitted_slope(rows, lo, hi):
    """Least-squares slope of log(time) vs log(n) for lo <= n <= hi."""
    x = np.array([np.log(r[0]) for r in rows if lo <= r[0] <= hi])
    y = np.array([np.log(r[2]) for r in rows if lo <= r[0] <= hi])
    return float(np.polyfit(x, y, 1)[0]) if x.size >= 2 else float("nan")


# ------------------------------------------------------------------ figures

def _plot_cost(srm_rows, ref_rows, slope, path):
    fig, ax = new_figure((6.4, 4.4))
    n = np.array([r[0] for r in srm_rows], float)
    t = np.array([r[2] for r in srm_rows]) * 1e3
    ax.loglog(n, t, "o-", label=f"SRM, RK2, S = 3 (fitted slope {slope:.2f})")
    if ref_rows:
        nr = np.array([r[0] for r in ref_rows], float)
        tr = np.array([r[2] for r in ref_rows]) * 1e3
        ax.loglog(nr, tr, "s--", label="reference: dense KKT + Baumgarte, RK4")
    ax.loglog(n, t[0] * n / n[0], "k:", lw=1, label="slope 1")
    ax.set_xlabel("squares n (3n + 1 bodies, n loops)")
    ax.set_ylabel("time per step [ms]")
    ax.set_title("Square chain: cost per time step")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=110)


def _link_segments(model, q):
    """World end points (x, z) of every link: origin and the far end of each body."""
    R, p = forward_kinematics(model, q)
    segs = []
    for b in range(model.nb):
        # the links of the planar models run along the body x axis; their length is the
        # distance to the child joint or loop point: use 2 * COM (uniform rods)
        c = model.body_com[b]
        end = p[b] + R[b] @ (2 * c)
        segs.append(((p[b][0], p[b][2]), (end[0], end[2])))
    return segs


def _plot_chain_strip(path, n=8, h=H41, times=(0.0, 0.4, 0.8, 1.2, 1.6, 2.0)):
    m = models.square_chain(n)
    s = SRMSolver(m, h, integrator="rk2", iterations=3)
    q, qd = m.neutral(), np.zeros(m.nv)
    snaps, k = [], 0
    steps = int(round(max(times) / h))
    for i in range(steps + 1):
        if k < len(times) and abs(i * h - times[k]) < h / 2:
            snaps.append((times[k], q.copy(), s.g_hist[-1] if i else 0.0))
            k += 1
        if i < steps:
            q, qd = s.step(q, qd)
    fig, axes = new_figure((2.6 * len(snaps), 3.2), 1, len(snaps), sharey=True)
    for ax, (t, qs, g) in zip(axes, snaps):
        for (a, b) in _link_segments(m, qs):
            ax.plot([a[0], b[0]], [a[1], b[1]], "-", color="tab:blue", lw=1.5)
        ax.plot([0], [0], "k^", ms=8)
        ax.set_aspect("equal")
        ax.set_xlim(-n - 1.5, n + 1.5)
        ax.set_ylim(-n - 2, 1.5)
        ax.set_title(f"t = {t:.1f} s\ndrift {g:.1e} m", fontsize=8)
        ax.axis("off")
    fig.suptitle(f"Falling chain of {n} unit squares (SRM, RK2, h = {h} s, S = 3)", fontsize=9)
    save_figure(fig, path, dpi=110)


def strandbeest_run(T=60.0, h=0.002, S=3, speed=2 * np.pi):
    """Strandbeest leg from a crank speed [rad/s]: (t, Q, QD, drift)."""
    m = models.strandbeest_leg()
    qd = np.zeros(m.nv)
    qd[0] = speed
    qd = consistent_velocity(m, m.neutral(), qd)
    qd *= speed / qd[0]
    s = SRMSolver(m, h, integrator="rk2", iterations=S)
    return (m,) + s.run(m.neutral(), qd, int(round(T / h)), record_every=max(1, int(0.02 / h)))


def _plot_strandbeest(path, m, t, Q):
    body, pt = m.strandbeest_foot
    foot = np.array([point_position(m, q, body, pt) for q in Q])
    idx = np.linspace(0, min(len(Q) - 1, int(1.2 / (t[1] - t[0]))), 6).astype(int)
    fig, axes = new_figure((2.6 * len(idx), 3.4), 1, len(idx), sharey=True)
    for ax, i in zip(axes, idx):
        ax.plot(foot[:, 0], foot[:, 2], "-", color="0.8", lw=1)
        R, p = forward_kinematics(m, Q[i])
        for b in range(m.nb):
            pts = [p[b]]
            # the link's far joint or the triangle's vertices: the loop/child points
            for l in range(m.nloops):
                if m.loop_body_a[l] == b:
                    pts.append(p[b] + R[b] @ m.loop_ra[l])
                if m.loop_body_b[l] == b:
                    pts.append(p[b] + R[b] @ m.loop_rb[l])
            for c in range(m.nb):
                if m.body_parent[c] == b:
                    pts.append(p[b] + R[b] @ m.jnt_Xtree_r[c])
            if m.body_name[b] == body:
                pts.append(p[b] + R[b] @ pt)
            pts = np.array(pts)
            if len(pts) > 2:
                pts = np.vstack([pts, pts[:1]])
            ax.plot(pts[:, 0], pts[:, 2], "o-", ms=2.5, lw=1.5)
        ax.set_aspect("equal")
        ax.set_title(f"t = {t[i]:.2f} s", fontsize=8)
        ax.axis("off")
    fig.suptitle("Jansen leg (Strandbeest) driven by its crank: SRM, RK2, h = 2 ms; grey: "
                 "foot path", fontsize=9)
    save_figure(fig, path, dpi=110)


# ------------------------------------------------------------------ report

def _fmt(x):
    if x is None:
        return "-"
    if not np.isfinite(x):
        return "diverged"
    return f"{x:.2e}"


HELP = ("closed loops by SRM (Ascher & Lin 1999): Tables 4.1-4.3, cost per step vs n, square "
        "chain and Strandbeest frame strips")
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench loops [--quick] [--out DIR]`` on
    ``parser``."""
    parser.description = "SRM for closed loops (Ascher & Lin 1999, sec. 4)"
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--out", default="docs", metavar="DIR",
                        help="folder for the PNGs and the Markdown results (default docs)")


def main(argv=None) -> int:
    """``python -m articulated.bench.loops [--quick] [--out DIR]``: as ``articulated bench
    loops``."""
    return bench_main("loops", add_arguments, run, argv)


def run(args) -> int:
    """Run the tables and figures of the module docstring with the options of
    :func:`add_arguments`: print the Markdown, write it to ``OUT/closed-loops-results.md``
    (``-quick.md`` with ``--quick``) and the PNGs into ``OUT``; returns 0."""
    warnings.filterwarnings("ignore", module="numba")
    quick = args.quick
    report = MarkdownReport("SRM closed-loop benchmark", args.out, "loops", quick)
    out, emit = report.out, report.emit

    sizes41 = (4, 16) if quick else (4, 16, 64, 256, 1024)
    emit(f"## Table 4.1: square chain, RK2, h = {H41} s, eps = 0.75 h, max drift over "
         f"[0, {T41}] s [m]")
    emit("")
    emit(markdown_table(["n", "S = 2", "S = 3", "S = 4", "S = 6", "iterations needed"],
                        ([f"{n}"] + [_fmt(d[S]) for S in (2, 3, 4, 6)] + [f"{need}"]
                         for n, d, need in table_41(sizes41))))
    emit("")

    emit("## Table 4.2: square chain (4 squares), h = 0.005 s: max drift up to t [m]")
    emit("")
    rows = []
    for form, integ, S, ef, d, t_div in (table_42(times=(1.0, 2.0)) if quick else table_42()):
        note = f"diverged at t = {t_div:.2f} s" if t_div is not None else ""
        vals = list(d) + ["-"] * (4 - len(d))
        rows.append([f"{form}", f"{integ}", f"{S}", f"{ef}"]
                    + [_fmt(v) if not isinstance(v, str) else v for v in vals] + [note])
    emit(markdown_table(["form", "integrator", "S", "eps / h", "t = 4", "t = 5", "t = 6",
                         "t = 10", "note"], rows))
    emit("")

    sizes43 = ((2, 2), (4, 4)) if quick else ((2, 2), (4, 4), (8, 8), (16, 16), (32, 32))
    emit(f"## Table 4.3: square net, RK2, h = {H41} s, eps = 0.75 h, max drift over "
         f"[0, {T43}] s [m]")
    emit("")
    emit(markdown_table(["net", "loops", "S = 2", "S = 3", "S = 4", "S = 6",
                         "iterations needed"],
                        ([f"{r} x {c}", f"{r * c}"] + [_fmt(d[S]) for S in (2, 3, 4, 6)]
                         + [f"{need}"] for (r, c), d, need in table_43(sizes43))))
    emit("")

    sizes_cost = (16, 32, 64) if quick else (64, 128, 256, 512, 1024)
    srm_rows = cost_per_step(sizes_cost, steps=20 if quick else 40)
    ref_rows = cost_reference((4, 8) if quick else (4, 8, 16, 32, 64))
    lo, hi = (16, 64) if quick else (64, 1024)
    slope = fitted_slope(srm_rows, lo, hi)
    emit("## Cost per step (square chain; RK2, S = 3: 9 O(n) tree passes per step)")
    emit("")
    emit(markdown_table(["n", "bodies", "SRM [ms/step]", "us per body"],
                        ([f"{n}", f"{nb}", f"{t * 1e3:.3f}", f"{t * 1e6 / nb:.2f}"]
                         for n, nb, t in srm_rows)))
    emit("")
    emit(f"Fitted log-log slope of time per step, n = {lo} .. {hi}: **{slope:.3f}**")
    emit("")
    emit(markdown_table(["n", "bodies", "reference KKT [ms/step]"],
                        ([f"{n}", f"{nb}", f"{t * 1e3:.2f}"] for n, nb, t in ref_rows)))
    emit("")
    _plot_cost(srm_rows, ref_rows, slope, out / "closed-loops-cost.png")
    _plot_chain_strip(out / "closed-loops-chain.png", n=4 if quick else 8)
    m, t, Q, QD, drift = strandbeest_run(T=2.0 if quick else 60.0)
    n10 = min(len(drift) - 1, int(round(10.0 / 0.002)))
    emit(f"## Strandbeest leg: RK2, h = 0.002 s, S = 3, {t[-1]:.0f} s simulated")
    emit("")
    emit(f"max drift {drift.max():.2e} m; first 10 s {drift[:n10].max():.2e} m; last 10 s "
         f"{drift[-n10:].max():.2e} m; crank speed {QD[0, 0]:.2f} -> {QD[-1, 0]:.2f} rad/s; "
         f"finite: {bool(np.isfinite(Q).all())}")
    emit("")
    _plot_strandbeest(out / "closed-loops-strandbeest.png", m, t, Q)
    report.write("closed-loops-results-quick.md" if quick else "closed-loops-results.md")
    return 0


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
