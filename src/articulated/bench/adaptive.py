"""The adaptive-dynamics benchmark, behind ``articulated bench adaptive``:
the experiments of Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies"
(RGL), Sec. 7, measured with our :class:`articulated.AdaptiveSimulator` next to our own full
DCA and ABA, in one run.

(a) :func:`bench_table1` - RGL Table 1: the 300-link pendulum
    (:func:`articulated.models.pendulum`), ``N_A`` in {1, 50, 100, 150, 200, 250, 300}
    active joints x ``N_F`` in {1, 5, 10, 20, 50, 250} applied forces, active-region update
    every 20 steps (RGL f = 1/20), acceleration update region of ``N_U = N_A`` joints (RGL
    Sec. 7.2: "the size of the acceleration update region was equal to the size of the active
    region"). RGL's N_F is "the number of forces applied at each time step to the pendulum";
    here N_F constant world-frame :class:`articulated.PointForce` s (0.05 N along +y) on N_F
    distinct links spread evenly from the tip (N_F = 1: the last link). Reported per cell:
    median wall time of the hybrid steps (RGL Sec. 4.3), median wall time of the
    active-region updates (RGL Sec. 5.1, every 20th step), the mean over all steps but the
    first (the amortized cost, RGL's "average running time"; the first step converts the
    fully articulated start and builds the tensors of every passive node once, O(n): set-up,
    reported separately) and the speed-up of that mean over a full DCA step and a full ABA
    step with the same forces.
(b) :func:`bench_fig5` - RGL Fig. 5: the 300-link pendulum under gravity alone from the same
    initial state with ``N_A`` = 300, 100, 50, 20, 1: snapshots of the chain (plot
    ``adaptive-pendulum.png``) and the tip's distance to the full model's tip.
(c) :func:`bench_fig6` - RGL Fig. 6: a 50-link pendulum whose last link is tied by a damped
    spring to a world point, with joint damping, run to equilibrium: all 50 joints active
    (the full model), 5 joints chosen breadth-first in the assembly tree and kept fixed,
    5 joints chosen adaptively (``max_active=5``) with the settings of
    :data:`FIG6_VARIANTS`: identity metric weights with ``max_update=5`` as RGL and with the
    whole body as update region, and with per-joint SPD weights from the mass each joint
    carries (:func:`subtree_mass_weights`) or from its joint-space inertia
    (:func:`joint_inertia_weights`). The equilibrium tip position of each (mean over the last
    quarter of the run) against the full model's (plot ``adaptive-spring.png``); and, by
    potential minimisation, the static equilibrium of every possible fixed 5-joint active
    region with straight rigid segments (:func:`static_equilibria`: what the choice of the
    joints alone can achieve).
(d) :func:`bench_crowd` - RGL Fig. 1: ``crowd(200)`` (17,800 bodies, 19,000 DOF), free
    falling humanoids (no ground), 10 of them pushed at the lower back by 400 N along +y
    (away from the camera) for the whole run; per-character joint budgets inversely
    proportional to the distance to a camera point (:func:`distance_budgets`, each >= 1,
    10% of the joints in all, ``max_update`` a tenth of that total, :data:`CROWD_UPDATE`;
    and again with 10% of the degrees of freedom, :func:`crowd_budget_total`),
    300 steps against a full-DCA run of the same scene (its median step is the reference;
    per character: distance of pelvis, centre of mass and farthest body to the full-DCA run
    at the end, linear momentum against the exact impulse) and full ABA steps (plot
    ``adaptive-crowd.png``).

Method. Every adaptive run is a ``Simulator(model, dt, method="adaptive", ...)`` stepped by
``run(steps)``, which records the wall time of every step (``time.perf_counter``, force
evaluation, dynamics and integration included). A step whose index is a multiple of
``update_every`` is an active-region update, the others hybrid steps; the first update (step
0, which starts from the fully articulated body) is left out of the update median. The
reference "full DCA step" and "full ABA step" are the same semi-implicit Euler step (``qd +=
h qdd; q = integrate(q, qd, h)``) with the forces applied from :class:`StateKinematics`
and ``DCA(model).forward_dynamics`` or :func:`articulated.aba`; median over the steps.
Numba kernels are compiled (or loaded from the cache) by a warm-up run before any timing.
Ratios measured in the same run are what to compare across machines.

Run ``articulated bench adaptive [--quick] [--out DIR] [--table1] [--scheduler ADDRESS]``;
``--quick`` uses small models (seconds; the smoke test ``tests/test_bench_adaptive.py``);
``--table1`` runs Table 1 alone; ``--scheduler`` runs its cells on Dask workers
(:func:`articulated.sweep.map_cells`).
"""


from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .adaptive_runs import (DT, UPDATE_EVERY, adaptive_simulator, chain_points, initial_state,
                            reference_run, split_times, spread_forces, warm_up)
from .common import bench_main, finish_report, machine_info, new_figure, save_figure
from .crowd import bench_crowd, plot_crowd
from .spring import bench_fig6, bench_fig6_sweep, plot_fig6

NA_TABLE = (1, 50, 100, 150, 200, 250, 300)
NF_TABLE = (1, 5, 10, 20, 50, 250)
NA_QUICK = (1, 10, 20, 30, 40, 50, 60)
NF_QUICK = (1, 5)
NA_FIG5 = (300, 100, 50, 20, 1)
NA_FIG5_QUICK = (60, 20, 10, 4, 1)

PAPER_TABLE1 = {  # RGL Table 1 [ms], rows N_F, columns N_A = 1 .. 250 and the DCA (300)
    1: (0.02, 0.51, 1.71, 2.97, 4.04, 5.40, 5.89),
    5: (0.07, 0.49, 1.54, 3.21, 4.34, 5.19, 5.89),
    10: (0.16, 0.73, 1.47, 3.03, 4.22, 5.16, 5.88),
    20: (0.40, 0.90, 1.60, 3.00, 4.72, 5.56, 5.90),
    50: (0.98, 1.40, 2.16, 3.58, 4.99, 5.59, 5.92),
    250: (1.83, 2.30, 2.97, 4.28, 5.43, 6.31, 6.04),
}

TARGETS = dict(na1=100.0, na50=8.0, crowd=10.0, fig6=1.0 / 3.0)
"""Targets: speed-ups over the full DCA (pendulum-300, N_F = 1: N_A = 1 and 50;
crowd at 10%) and the largest adaptive / breadth-first equilibrium-error ratio (Fig. 6)."""


# ------------------------------------------------------------------------- (a) Table 1

def bench_table1(n=300, steps=200, *, na_values=NA_TABLE, nf_values=NF_TABLE, log=print,
                 client=None):
    """RGL Table 1 on ``pendulum(n)``: per (N_F, N_A) the hybrid-step, region-update and
    mean step times of the adaptive simulator (``max_active = max_update = N_A``, update
    every 20 steps), and per N_F the full DCA and ABA step times; ``steps`` steps each from
    :func:`initial_state`. For N_A = n the final state is compared with the DCA run's
    (``err_full``: max |q - q_DCA|, identical dynamics up to round-off).

    Each run is one cell (:func:`table1_cell`); ``client`` (a ``distributed.Client`` or a
    scheduler address) runs the cells on Dask workers, one cell per single-threaded worker
    at a time (:func:`articulated.sweep.map_cells`); None runs them here, one after
    another."""
    from ..sweep import map_cells

    kinds = ("dca", "aba") + tuple(na_values)
    cells = [(n, steps, nf, kind) for nf in nf_values for kind in kinds]
    results = iter(map_cells(table1_cell, cells, client=client, warm=warm_up))
    rows = []
    for nf in nf_values:
        ref = {kind: next(results) for kind in kinds}
        row = dict(nf=nf, dca=ref["dca"]["median"], aba=ref["aba"]["median"], cells=[])
        for na in na_values:
            c = ref[na]
            c.update(speedup_dca=row["dca"] / c["mean"], speedup_aba=row["aba"] / c["mean"],
                     hybrid_speedup_dca=row["dca"] / c["hybrid"])
            if na >= n:
                c["err_full"] = float(np.abs(c.pop("q") - ref["dca"]["q"]).max())
            row["cells"].append(c)
        rows.append(row)
        log(f"table 1, N_F = {nf}: DCA {row['dca'] * 1e3:.3f} ms/step, " + ", ".join(
            f"N_A={c['na']}: {c['mean'] * 1e3:.3f}" for c in row["cells"]))
    return dict(n=n, steps=steps, update_every=UPDATE_EVERY, rows=rows)


def table1_cell(n, steps, nf, kind):
    """One run of :func:`bench_table1` on ``pendulum(n)`` from :func:`initial_state` with
    ``nf`` forces (:func:`spread_forces`), ``steps`` steps: ``kind`` ``"dca"`` or ``"aba"``,
    the full reference stepping (:func:`reference_run`): dict(median [s], q (nq,) final);
    an int N_A, the adaptive simulator: :func:`split_times` of its steps with ``na``,
    ``active`` (active joints at the end) and, for N_A >= n, ``q`` (final)."""
    from .. import models

    model = models.pendulum(n)
    q0 = initial_state(model)
    if kind in ("dca", "aba"):
        q, _, wall = reference_run(model, q0, np.zeros(model.nv), spread_forces(model, nf),
                                   steps, kind)
        return dict(median=float(np.median(wall)), q=q)
    sim = adaptive_simulator(model, q0, kind, spread_forces(model, nf))
    tr = sim.run(steps, record_every=steps)
    c = split_times(tr.wall)
    c.update(na=kind, active=int(tr.active[-1]))
    if kind >= n:
        c["q"] = sim.q.copy()
    return c


# ------------------------------------------------------------------------- (b) Fig. 5

def bench_fig5(n=300, steps=2000, *, na_values=NA_FIG5, frames=8, log=print):
    """RGL Fig. 5: ``pendulum(n)`` under gravity from :func:`initial_state` with each N_A:
    chain snapshots at ``frames`` instants, the tip distance to the full model's at the end,
    the mean time per step and the mean kinetic energy."""
    from .. import models

    model = models.pendulum(n)
    q0 = initial_state(model)
    qf, _, wd = reference_run(model, q0, np.zeros(model.nv), [], steps, "dca")
    ref_tip = chain_points(model, qf)[-1]
    every = max(1, steps // frames)
    rows = []
    for na in na_values:
        sim = adaptive_simulator(model, q0, na)
        tr = sim.run(steps, record_every=every)
        snaps = [chain_points(model, q) for q in tr.q]
        tips = np.array([s[-1] for s in snaps])
        rows.append(dict(na=na, t=tr.t, snaps=snaps, tips=tips, kinetic=tr.kinetic,
                         tip_err=float(np.linalg.norm(snaps[-1][-1] - ref_tip)),
                         q_err=float(np.abs(sim.q - qf).max()), **split_times(tr.wall)))
        log(f"fig. 5, N_A = {na}: {tr.wall.mean() * 1e3:.3f} ms/step, final tip "
            f"{rows[-1]['tip_err']:.3f} m from the full model's")
    return dict(n=n, steps=steps, dt=DT, dca=float(np.median(wd)), rows=rows)


def plot_fig5(res, path):
    """RGL Fig. 5 picture of :func:`bench_fig5`: one panel per N_A, chain snapshots coloured
    by time and the tip path; returns the path of the PNG."""
    import matplotlib

    rows = res["rows"]
    fig, axes = new_figure((3.0 * len(rows), 3.6), 1, len(rows), sharey=True)
    cmap = matplotlib.colormaps["viridis"]
    for ax, r in zip(np.atleast_1d(axes), rows):
        T = max(r["t"][-1], 1e-300)
        for t, s in zip(r["t"], r["snaps"]):
            ax.plot(s[:, 1], s[:, 2], "-", lw=1.0, color=cmap(t / T))
        ax.plot(r["tips"][:, 1], r["tips"][:, 2], "k.", ms=3)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title(f"N_A = {r['na']}\n{r['mean'] * 1e3:.2f} ms/step")
        ax.set_xlabel("y [m]")
    np.atleast_1d(axes)[0].set_ylabel("z [m]")
    fig.suptitle(f"pendulum-{res['n']} under gravity, same start, {res['steps']} steps of "
                 f"{res['dt']:g} s (colour: time; full DCA {res['dca'] * 1e3:.2f} ms/step)")
    return save_figure(fig, path, dpi=100)


# ------------------------------------------------------------------------- report

def _ms(x):
    return "n/a" if x is None or not np.isfinite(x) else f"{x * 1e3:.3f}"


def format_report(res) -> str:
    lines = []
    m = res.get("machine")
    if m:
        lines.append(f"machine: {m.get('cpu')} ({m.get('cores')} cores), Python "
                     f"{m.get('python')}, numpy {m.get('numpy')}, numba {m.get('numba')}, "
                     f"commit {m.get('commit')}, {m.get('date')}, load {m.get('load_start')}")
        lines.append("")
    t1 = res["table1"]
    n = t1["n"]
    lines.append(f"### Table 1: pendulum-{n}, update every {t1['update_every']} steps, "
                 f"N_U = N_A, {t1['steps']} steps per cell (ms per step)")
    lines.append("")
    lines.append("| N_F | N_A | hybrid step | region update | mean (amortized) | full DCA step "
                 "| full ABA step | speed-up vs DCA (mean) | vs DCA (hybrid only) | vs ABA "
                 "(mean) | RGL Table 1 |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in t1["rows"]:
        paper = PAPER_TABLE1.get(row["nf"]) if n == 300 else None
        for i, c in enumerate(row["cells"]):
            p = "" if paper is None or i >= len(paper) else f"{paper[i]:.2f}"
            lines.append(f"| {row['nf']} | {c['na']} | {_ms(c['hybrid'])} | "
                         f"{_ms(c['update'])} | {_ms(c['mean'])} | {_ms(row['dca'])} | "
                         f"{_ms(row['aba'])} | {c['speedup_dca']:.2f} | "
                         f"{c['hybrid_speedup_dca']:.2f} | {c['speedup_aba']:.2f} | {p} |")
    firsts = [c["first"] for r in t1["rows"] for c in r["cells"] if c["na"] < n]
    if firsts:
        lines.append("")
        lines.append(f"Set-up (the first step of each run, left out of the means: conversion "
                     f"from the fully articulated start, tensors of every passive node): "
                     f"{min(firsts) * 1e3:.1f}-{max(firsts) * 1e3:.1f} ms.")
    errs = [c["err_full"] for r in t1["rows"] for c in r["cells"] if "err_full" in c]
    if errs:
        lines.append("")
        lines.append(f"N_A = {n} (every joint active) vs the full-DCA run with the same "
                     f"forces, final q: max abs(dq) = {max(errs):.1e} rad.")
    f5 = res.get("fig5")
    if f5:
        lines.append("")
        lines.append(f"### Fig. 5: pendulum-{f5['n']} under gravity, {f5['steps']} steps "
                     f"(full DCA {_ms(f5['dca'])} ms/step)")
        lines.append("")
        lines.append("| N_A | hybrid step | region update | mean ms/step | final tip distance "
                     "to the full model [m] | final max abs(q - q_DCA) [rad] | kinetic energy at "
                     "the end [J] |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for r in f5["rows"]:
            lines.append(f"| {r['na']} | {_ms(r['hybrid'])} | {_ms(r['update'])} | "
                         f"{_ms(r['mean'])} | {r['tip_err']:.3f} | {r['q_err']:.1e} | "
                         f"{r['kinetic'][-1]:.3f} |")
    f6 = res.get("fig6")
    if f6:
        lines.append("")
        lines.append(f"### Fig. 6: pendulum-{f6['n']} with a spring, {f6['steps']} steps of "
                     f"{f6['dt']:g} s, equilibrium = mean of the last quarter")
        lines.append("")
        lines.append("| run | active joints (end) | tip error [m] | RMS joint-position error "
                     "[m] | tip wobble (std) [m] | tip / breadth-first | RMS / breadth-first |")
        lines.append("|---|---|---:|---:|---:|---:|---:|")
        keys = [("full", f"all {f6['n']} joints"),
                ("breadth_first", f"{f6['k']} breadth-first (fixed)")]
        keys += [(key, f"{f6['k']} adaptive, {label}") for key, label in f6["labels"].items()]
        for key, label in keys:
            r = f6["rows"][key]
            j = "all" if key == "full" else ", ".join(map(str, r["joints"]))
            rat = (f"{r['ratio']:.2f} | {r['rms_ratio']:.2f}" if "ratio" in r else " | ")
            lines.append(f"| {label} | {j} | {r['tip_err']:.4f} | {r['rms_err']:.4f} | "
                         f"{r['tip_spread']:.4f} | {rat} |")
        st = f6.get("static")
        if st:
            lines.append("")
            lines.append(f"Static equilibria (potential minimum) of every fixed {f6['k']}-joint "
                         f"active region (a subtree of the assembly tree containing the root; "
                         f"rigidified joints straight), errors against the full model's static "
                         f"equilibrium; breadth-first is number {st['bfs_rank']} of "
                         f"{len(st['sets'])}, the best is x{st['best_ratio']:.2f} of it:")
            lines.append("")
            lines.append("| active joints | tip error [m] | RMS joint-position error [m] |")
            lines.append("|---|---:|---:|")
            for r in st["sets"]:
                mark = " (breadth-first)" if r is st["bfs"] else ""
                lines.append(f"| {', '.join(map(str, r['joints']))}{mark} | "
                             f"{r['tip_err']:.4f} | {r['rms_err']:.4f} |")
            u = st["union"]
            lines.append("")
            lines.append(f"The {len(u['joints'])} joints these regions use ("
                         f"{', '.join(map(str, u['joints']))}), all free at once (what a run "
                         f"that keeps moving its region could reach by relaxing one region "
                         f"after another): tip error {u['tip_err']:.5f} m, "
                         f"x{st['union_ratio']:.3f} of breadth-first; RMS "
                         f"{u['rms_err']:.4f} m.")
    sw = res.get("fig6_sweep")
    if sw:
        lines.append(f"### Fig. 6 over the attachment link: pendulum-{sw['n']}, spring on "
                     f"link i, anchor 3 m to the side and 2 m above the link's hanging end, "
                     f"{sw['steps']} steps, {sw['k']} joints, RGL settings (identity "
                     f"weights, N_U = {sw['k']})")
        lines.append("")
        lines.append("| spring on link | anchor [m] | breadth-first tip error [m] | adaptive "
                     "tip error [m] | tip / breadth-first | RMS / breadth-first | adaptive "
                     "joints (end) |")
        lines.append("|---:|---|---:|---:|---:|---:|---|")
        for r in sw["rows"]:
            lines.append(f"| {r['link']} | ({r['anchor'][0]:g}, {r['anchor'][1]:g}, "
                         f"{r['anchor'][2]:g}) | {r['bfs_tip']:.4f} | {r['tip']:.4f} | "
                         f"{r['ratio']:.2f} | {r['rms_ratio']:.2f} | "
                         f"{', '.join(map(str, r['joints']))} |")
        lines.append("")
    cr = res.get("crowd")
    if cr:
        lines.append("")
        b = cr["budgets"]
        lines.append(f"### Crowd: crowd({cr['characters']}) = {cr['nb']} bodies, {cr['dof']} "
                     f"DOF, {cr['n_push']} push forces, per-character budgets ~ 1/distance "
                     f"to the camera ({b.min()}..{b.max()} joints, N_A = {cr['budget']} in "
                     f"all, update region N_U = {cr['max_update']}), {cr['steps']} steps (ms "
                     f"per step)")
        lines.append("")
        lines.append("| budget | joints (N_A) | most active DOF | hybrid step | region update "
                     "| mean (amortized) | full DCA step | full ABA step | speed-up vs DCA "
                     "(mean) | vs DCA (hybrid only) | rigidified at last update |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in (cr, res.get("crowd_dof")):
            if r is None:
                continue
            lines.append(f"| {r['fraction']:.0%} of the {r['unit']} | {r['budget']} | "
                         f"{r['most_dof']} ({r['most_dof'] / r['dof']:.1%}) | "
                         f"{_ms(r['hybrid'])} | {_ms(r['update'])} | {_ms(r['mean'])} | "
                         f"{_ms(r['dca'])} | {_ms(r['aba'])} | {r['speedup_dca']:.2f} | "
                         f"{r['hybrid_speedup_dca']:.2f} | {r['rigidified']} |")
        pm = cr["pushed_mask"]
        lines.append("")
        lines.append(f"Every character's active joints <= its budget at every region update: "
                     f"{bool(np.all(cr['most_active'] <= b))}. The {int((~pm).sum())} "
                     f"characters not pushed (free fall): pelvis at most "
                     f"{cr['root_err'][~pm].max() if (~pm).any() else 0:.1e} m from the "
                     f"full-DCA run's. Pushed characters at the end (distances to the full-DCA "
                     f"run; momentum error relative to the exact impulse (m g + F) t, "
                     f"adaptive / full DCA):")
        lines.append("")
        lines.append("| character | distance to camera [m] | budget | pelvis [m] | centre of "
                     "mass [m] | farthest body [m] | pelvis moved (full DCA) [m] | momentum "
                     "error adaptive / DCA |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k in cr["pushed"][np.argsort(cr["distance"][cr["pushed"]])]:
            lines.append(f"| {k} | {cr['distance'][k]:.1f} | {b[k]} | "
                         f"{cr['root_err'][k]:.3f} | {cr['com_err'][k]:.4f} | "
                         f"{cr['body_err'][k]:.3f} | {cr['root_moved'][k]:.3f} | "
                         f"{cr['momentum_err'][k]:.1e} / {cr['momentum_err_dca'][k]:.1e} |")
    lines.append("")
    lines.extend(_targets(res))
    if res.get("total_s") is not None:
        lines.append(f"total {res['total_s']:.0f} s; peak RSS "
                     f"{res.get('peak_rss_bytes', 0) / 1e9:.2f} GB")
    return "\n".join(lines)


def _targets(res):
    out = []
    t1 = res["table1"]
    row = next((r for r in t1["rows"] if r["nf"] == 1), None)
    if row is not None:
        cells = {c["na"]: c for c in row["cells"]}
        for na, key in ((1, "na1"), (50, "na50")):
            if na in cells:
                s = cells[na]["speedup_dca"]
                out.append(f"target pendulum-{t1['n']}, N_F = 1, N_A = {na}: >= "
                           f"{TARGETS[key]:g}x the full DCA: x{s:.2f} (hybrid steps alone "
                           f"x{cells[na]['hybrid_speedup_dca']:.2f}) "
                           f"{'met' if s >= TARGETS[key] else 'NOT met'}")
    for cr in (res.get("crowd"), res.get("crowd_dof")):
        if not cr:
            continue
        s = cr["speedup_dca"]
        out.append(f"target crowd({cr['characters']}) at {cr['fraction']:.0%} of the "
                   f"{cr['unit']}: >= {TARGETS['crowd']:g}x the full DCA: x{s:.2f} "
                   f"{'met' if s >= TARGETS['crowd'] else 'NOT met'}")
    f6 = res.get("fig6")
    if f6:
        r = f6["ratio"]
        best = min((f6["rows"][key]["ratio"], key) for key in f6["labels"])
        st = f6.get("static")
        out.append(f"target Fig. 6: adaptive / breadth-first tip error <= 1/3: {r:.2f} "
                   f"{'met' if r <= TARGETS['fig6'] else 'NOT met'} (RGL settings; best "
                   f"variant {best[1]}: {best[0]:.2f}"
                   + (f"; best fixed {f6['k']}-joint region with straight rigid segments, "
                      f"static: {st['best_ratio']:.2f}" if st else "") + ")")
    sw = res.get("fig6_sweep")
    if sw:
        met = [r for r in sw["rows"] if r["ratio"] <= TARGETS["fig6"]]
        out.append(f"target Fig. 6 over the attachment link (RGL settings): met for "
                   f"{len(met)} of {len(sw['rows'])} links (" + ", ".join(
                       f"link {r['link']}: {r['ratio']:.2f}" for r in sw["rows"]) + ")")
    return out


def bench_adaptive(quick=False, out="docs", *, log=print, table1_only=False,
                   client=None) -> dict:
    """Run (a)-(d) and print the report (Markdown tables); write ``adaptive-pendulum.png``,
    ``adaptive-spring.png`` and ``adaptive-crowd.png`` into ``out``.

    quick : bool - pendulum-60 (N_A scaled to 1..60, N_F in {1, 5}, 60 steps), Fig. 5 on
        pendulum-60, Fig. 6 on pendulum-20 for 4,000 steps (3 joints), crowd(4) for 100
        steps with 2 pushes: seconds.
    table1_only : bool - Table 1 only (no figures)
    client : distributed.Client, scheduler address or None - run Table 1's cells on Dask
        workers (:func:`bench_table1`); None: here
    Returns dict(table1, fig5, fig6, fig6_sweep, crowd, crowd_dof, machine, peak_rss_bytes,
    total_s, figures, report)."""
    t0 = time.perf_counter()
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    res = dict(machine=machine_info())
    warm_up()
    if quick:
        res["table1"] = bench_table1(60, 60, na_values=NA_QUICK, nf_values=NF_QUICK, log=log,
                                     client=client)
    else:
        res["table1"] = bench_table1(log=log, client=client)
    if table1_only:
        res["figures"] = []
        return finish_report(res, t0, format_report, log)
    if quick:
        res["fig5"] = bench_fig5(60, 600, na_values=NA_FIG5_QUICK, log=log)
        res["fig6"] = bench_fig6(20, 4000, k=3, log=log)
        res["fig6_sweep"] = bench_fig6_sweep(20, 4000, k=3, links=(5, 10, 19), log=log)
        res["crowd"] = bench_crowd(4, 100, n_push=2, log=log)
        res["crowd_dof"] = bench_crowd(4, 100, unit="dof", n_push=2, log=log)
    else:
        res["fig5"] = bench_fig5(log=log)
        res["fig6"] = bench_fig6(log=log)
        res["fig6_sweep"] = bench_fig6_sweep(log=log)
        res["crowd"] = bench_crowd(log=log)
        res["crowd_dof"] = bench_crowd(unit="dof", log=log)
    res["figures"] = [plot_fig5(res["fig5"], outdir / "adaptive-pendulum.png"),
                      plot_fig6(res["fig6"], outdir / "adaptive-spring.png"),
                      plot_crowd(res["crowd"], outdir / "adaptive-crowd.png")]
    return finish_report(res, t0, format_report, log)


HELP = ("adaptive dynamics (Redon, Galoppo & Lin 2005): pendulum Table 1, Figs. 5-6, crowd vs "
        "our full DCA and ABA; plots into docs/")
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench adaptive [--quick] [--out DIR]`` on
    ``parser``."""
    parser.description = ("Redon, Galoppo & Lin (2005) Sec. 7 benchmarks with our adaptive "
                          "dynamics next to our full DCA and ABA: pendulum Table 1, Fig. 5, "
                          "spring Fig. 6, crowd Fig. 1 (see docs/adaptive.md).")
    parser.add_argument("--quick", action="store_true", help="small models, few steps (seconds)")
    parser.add_argument("--out", default="docs", metavar="DIR",
                        help="folder for the PNG figures (default docs)")
    parser.add_argument("--table1", action="store_true",
                        help="Table 1 only (the N_A x N_F grid; no figures)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run Table 1's cells on the Dask workers of this scheduler "
                             "(tcp://host:8786), one cell per single-threaded worker at a "
                             "time; default: here, one after another (docs/scale-out.md)")


def run(args) -> int:
    """Run :func:`bench_adaptive` with the options of :func:`add_arguments`; returns 0."""
    bench_adaptive(args.quick, args.out, table1_only=args.table1, client=args.scheduler)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.adaptive [--quick] [--out DIR]``: as ``articulated
    bench adaptive``."""
    return bench_main("adaptive", add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
