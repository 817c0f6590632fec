"""The DCA benchmark: :func:`bench_dca`, behind ``articulated bench dca``.

Times Featherstone's divide-and-conquer algorithm (:class:`articulated.algorithms.dca_solver.DCA`,
balanced and serial assembly) against our ABA (:func:`articulated.aba`) on pendulum-300,
pendulum-3000, the millipede and the 50,000-DOF molecule, *in the same run*, and prints
ns per DOF and the ratios DCA / ABA (machines are noisy; ratios measured side by side are
what to compare). Then the memory of the DCA's coefficients (bytes per DOF, O(n)) and the
process' peak RSS, and the assembly-tree statistics (height, maximum handle count) of
pendulum-300, the millipede, molecule-50k and the 200-character crowd.

Method: as :mod:`articulated.bench.fd` (:func:`~articulated.bench.common.time_call`): one
call first (JIT compilation or cache load, reported separately), then the median over
``repeats`` batches of calls; the inputs are a random configuration, velocities and torques (seed 0). Each DCA result is
checked against ABA's before it is timed (column ``err``: max |qdd_DCA - qdd_ABA| over
max(1, max |qdd_ABA|)).

Targets: DCA (balanced) at most 3x ABA on pendulum-300 and molecule-50k; ns/DOF
flat in n (linear time); bytes/DOF flat (O(n) memory with a bounded handle count).
"""

from __future__ import annotations

import math
import time

import numpy as np

from .common import bench_main, machine_info, markdown_table, peak_rss_bytes, time_call

TARGET_RATIO = 3.0
"""Largest accepted DCA / ABA time ratio on pendulum-300 and molecule-50k."""


def _scenes(quick):
    from .. import models

    if quick:
        return [("pendulum-30", lambda: models.pendulum(30)),
                ("pendulum-300", lambda: models.pendulum(300)),
                ("millipede-small", lambda: models.millipede(legs=10, leg_links=3, spine=30)),
                ("molecule-2000", lambda: models.molecule(2000))]
    return [("pendulum-300", lambda: models.pendulum(300)),
            ("pendulum-3000", lambda: models.pendulum(3000)),
            ("millipede", lambda: models.millipede()),
            ("molecule-50k", lambda: models.molecule(50_000))]


def _tree_scenes(quick):
    from .. import models

    if quick:
        return [("pendulum-300", lambda: models.pendulum(300)),
                ("millipede-small", lambda: models.millipede(legs=10, leg_links=3, spine=30)),
                ("molecule-2000", lambda: models.molecule(2000)),
                ("crowd-3", lambda: models.crowd(3))]
    return [("pendulum-300", lambda: models.pendulum(300)),
            ("millipede", lambda: models.millipede()),
            ("molecule-50k", lambda: models.molecule(50_000)),
            ("crowd-200", lambda: models.crowd(200))]


def _state(model, seed=0):
    rng = np.random.default_rng(seed)
    return (model.random_configuration(rng), rng.normal(size=model.nv),
            rng.normal(size=model.nv))


def bench_timings(quick=False, *, repeats=7, log=print) -> list[dict]:
    """ns/DOF of ABA and of the DCA (balanced and serial assembly) on the benchmark scenes,
    with the DCA / ABA ratios, agreement, bytes/DOF and tree height / handles."""
    from .. import aba
    from ..algorithms.dca_solver import DCA

    rows = []
    for name, make in _scenes(quick):
        t0 = time.perf_counter()
        model = make()
        build_s = time.perf_counter() - t0
        q, qd, tau = _state(model)
        row = dict(scene=name, nb=model.nb, dof=model.nv, build_s=build_s)
        t0 = time.perf_counter()
        ref = aba(model, q, qd, tau)
        row["aba_first_s"] = time.perf_counter() - t0
        row["aba_ns"] = time_call(lambda: aba(model, q, qd, tau), repeats) / model.nv * 1e9
        row["aba_bytes_per_dof"] = model.data().nbytes() / model.nv
        for kind in ("balanced", "serial"):
            t0 = time.perf_counter()
            s = DCA(model, kind)
            row[f"{kind}_setup_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            qdd = s.forward_dynamics(q, qd, tau)
            row[f"{kind}_first_s"] = time.perf_counter() - t0
            row[f"{kind}_err"] = float(np.abs(qdd - ref).max() / max(1.0, np.abs(ref).max()))
            row[f"{kind}_ns"] = time_call(lambda: s.forward_dynamics(q, qd, tau),
                                          repeats) / model.nv * 1e9
            row[f"{kind}_ratio"] = row[f"{kind}_ns"] / row["aba_ns"]
            row[f"{kind}_bytes_per_dof"] = s.nbytes() / model.nv
            row[f"{kind}_height"] = s.tree.height
            row[f"{kind}_max_handles"] = s.tree.max_handles
            del s
        rows.append(row)
        log(f"{name}: ABA {row['aba_ns']:.0f} ns/DOF, DCA {row['balanced_ns']:.0f} "
            f"(x{row['balanced_ratio']:.2f}), serial {row['serial_ns']:.0f} "
            f"(x{row['serial_ratio']:.2f})")
    return rows


def tree_statistics(quick=False) -> list[dict]:
    """Assembly-tree statistics of the balanced and serial trees (height, handles, build
    time) on pendulum-300, the millipede, molecule-50k and crowd(200)."""
    from ..assembly import build_assembly

    rows = []
    for name, make in _tree_scenes(quick):
        model = make()
        t0 = time.perf_counter()
        t = build_assembly(model)
        build_s = time.perf_counter() - t0
        ser = build_assembly(model, "serial")
        s = t.stats()
        per_tree = model.nb // max(1, t.roots.size)
        rows.append(dict(scene=name, nb=model.nb, roots=int(t.roots.size), height=t.height,
                         log2=math.ceil(math.log2(max(per_tree, 1))) + 1,
                         max_handles=t.max_handles,
                         max_internal_handles=t.max_internal_handles,
                         mean_handles=s["mean_handles"], phi_blocks=t.n_blocks,
                         serial_height=ser.height, serial_max_handles=ser.max_handles,
                         build_s=build_s))
    return rows


def _profile_scenes(quick):
    from .. import models

    if quick:
        return [("pendulum-30", lambda: models.pendulum(30)),
                ("molecule-2000", lambda: models.molecule(2000))]
    return [("pendulum-300", lambda: models.pendulum(300)),
            ("millipede", lambda: models.millipede()),
            ("molecule-50k", lambda: models.molecule(50_000))]


def node_flops(tree) -> tuple[float, float]:
    """Floating-point operations (multiplications, additions, divisions) per internal node
    of the main pass and of the back-substitution, counted from the formulas of
    :mod:`articulated.algorithms.dca` for a revolute joint (``K_FF`` 5 x 5) and averaged
    over the tree's internal nodes from their handle counts: K 100 (closed form,
    :func:`~articulated.algorithms.blocks._xj_congruence_add`), factor 55, beta and
    gamma 79; per handle of C: ``C_k`` 72 (from A) or 0 (from B), ``C_k^T gamma`` and
    ``b_k`` 78, ``Z_k`` 120; per diagonal block 240, per off-diagonal block 359 (+36 with
    a base).
    Back-substitution: 72 per handle, 12 for ``X_J`` on A's sum, 65 for the solve, 12 for
    qdd, 30 for the body-frame force, 18 for the forces handed down."""
    main = back = 0.0
    n = 0
    for i in range(tree.n_nodes):
        if tree.node_joint[i] < 0:
            continue
        A = tree.node_A[i]
        nAo = tree.node_nh[A] - 1 if A >= 0 else 0
        nC = int(tree.node_nh[i])
        nB = nC - nAo
        f = 100 + 55 + 79 + nAo * (72 + 78 + 120) + nB * (78 + 120) + 240 * nC
        same = nAo * (nAo - 1) // 2 + nB * (nB - 1) // 2
        f += 359 * nC * (nC - 1) // 2 + 36 * same
        main += f
        back += 72 * nC + (12 if nAo else 0) + 65 + 12 + 30 + 18
        n += 1
    return main / max(n, 1), back / max(n, 1)


def phase_profile(quick=False, *, repeats=7, log=print) -> list[dict]:
    """ns per joint of the passes of the full DCA (balanced assembly) next to ABA's whole
    call, each pass run in one compiled loop (no call overhead): kinematics, main pass
    (leaves and node coefficients, RGL eqs. 2-3), back-substitution (eqs. 4-5); the call
    from Python (``DCA.forward_dynamics``); and :func:`node_flops` per internal node. The
    "rest" of :func:`format_profile` is the call minus the passes: the call overhead and,
    on scenes larger than the cache, the misses of one pass on what the previous evicted.
    Minimum over ``3 repeats`` batches of a few milliseconds (the least disturbed by other
    processes on a shared machine)."""
    import timeit

    from .. import aba
    from ..algorithms.bundles import DCAInputs
    from ..algorithms.dca import dca_pass_loop
    from ..algorithms.dca_solver import DCA

    rows = []
    for name, make in _profile_scenes(quick):
        model = make()
        q, qd, tau = _state(model)
        s = DCA(model, "balanced")
        s.forward_dynamics(q, qd, tau)
        inp = DCAInputs(q, qd, tau, s.f_none, False)
        args = (s.kernel_model, inp, s.kernel_scratch, s.kernel_data)
        nb = model.nb
        reps = max(1, 10_000 // nb)

        def best(fn, number):
            fn()
            return min(timeit.Timer(fn).repeat(repeat=3 * repeats, number=number)) / number

        row = dict(scene=name, nb=nb, nodes=int(s.tree.n_nodes))
        row["aba_ns"] = best(lambda: aba(model, q, qd, tau), reps) / nb * 1e9
        row["call_ns"] = best(lambda: s.forward_dynamics(q, qd, tau), reps) / nb * 1e9
        for k, key in enumerate(("kin_ns", "main_ns", "back_ns")):
            row[key] = best(lambda: dca_pass_loop(k, reps, *args), 1) / reps / nb * 1e9
        row["main_flops"], row["back_flops"] = node_flops(s.tree)
        rows.append(row)
        log(f"{name}: ABA {row['aba_ns']:.0f} ns/joint; DCA call {row['call_ns']:.0f}: "
            f"kinematics {row['kin_ns']:.0f}, main {row['main_ns']:.0f}, back "
            f"{row['back_ns']:.0f}")
    return rows


def format_profile(rows) -> str:
    """The Markdown table of :func:`phase_profile`."""
    heads = ["scene", "ABA ns/joint", "DCA call ns/joint", "DCA/ABA", "kinematics",
             "main pass", "back-subst.", "rest", "flops/node main, back"]
    return markdown_table(heads, (
        [r["scene"], f"{r['aba_ns']:.0f}", f"{r['call_ns']:.0f}",
         f"{r['call_ns'] / r['aba_ns']:.2f}", f"{r['kin_ns']:.0f}", f"{r['main_ns']:.0f}",
         f"{r['back_ns']:.0f}",
         f"{r['call_ns'] - r['kin_ns'] - r['main_ns'] - r['back_ns']:.0f}",
         f"{r['main_flops']:.0f}, {r['back_flops']:.0f}"] for r in rows))


def format_report(timings, trees, machine=None, peak_rss=None) -> str:
    """The Markdown tables printed by :func:`bench_dca`."""
    lines = []
    if machine:
        lines.append(f"machine: {machine.get('cpu')} ({machine.get('cores')} cores), Python "
                     f"{machine.get('python')}, numpy {machine.get('numpy')}, numba "
                     f"{machine.get('numba')}, commit {machine.get('commit')}, "
                     f"{machine.get('date')}")
        lines.append("")
    heads = ["scene", "DOF", "ABA ns/DOF", "DCA balanced ns/DOF", "DCA/ABA",
             "DCA serial ns/DOF", "serial/ABA", "err (bal, ser)", "bytes/DOF DCA (ABA Data)",
             "height bal/ser", "max handles bal/ser", "first call DCA"]
    lines.append(markdown_table(heads, (
        [r["scene"], f"{r['dof']}", f"{r['aba_ns']:.0f}", f"{r['balanced_ns']:.0f}",
         f"{r['balanced_ratio']:.2f}", f"{r['serial_ns']:.0f}", f"{r['serial_ratio']:.2f}",
         f"{r['balanced_err']:.0e}, {r['serial_err']:.0e}",
         f"{r['balanced_bytes_per_dof']:.0f} ({r['aba_bytes_per_dof']:.0f})",
         f"{r['balanced_height']}/{r['serial_height']}",
         f"{r['balanced_max_handles']}/{r['serial_max_handles']}",
         f"{r['balanced_first_s']:.2f} s"] for r in timings)))
    lines.append("")
    heads = ["scene", "bodies", "roots", "height", "ceil(log2 n/roots)+1",
             "max handles (all / internal)", "mean handles", "Phi blocks (all)",
             "serial height / max handles", "build"]
    lines.append(markdown_table(heads, (
        [r["scene"], f"{r['nb']}", f"{r['roots']}", f"{r['height']}", f"{r['log2']}",
         f"{r['max_handles']} / {r['max_internal_handles']}", f"{r['mean_handles']:.2f}",
         f"{r['phi_blocks']}", f"{r['serial_height']} / {r['serial_max_handles']}",
         f"{r['build_s']:.2f} s"] for r in trees)))
    lines.append("")
    for r in timings:
        if r["scene"] in ("pendulum-300", "molecule-50k"):
            ok = r["balanced_ratio"] <= TARGET_RATIO
            lines.append(f"target DCA <= {TARGET_RATIO:g}x ABA on {r['scene']}: "
                         f"x{r['balanced_ratio']:.2f} {'met' if ok else 'NOT met'}")
    pend = {r["scene"]: r for r in timings}
    if "pendulum-300" in pend and "pendulum-3000" in pend:
        g = pend["pendulum-3000"]["balanced_ns"] / pend["pendulum-300"]["balanced_ns"]
        lines.append(f"linearity: DCA ns/DOF pendulum-3000 / pendulum-300 = {g:.2f}")
    if peak_rss:
        lines.append(f"peak RSS of the benchmark process: {peak_rss / 1e9:.2f} GB")
    return "\n".join(lines)


def bench_dca(quick=False, *, repeats=7, log=print) -> dict:
    """Run the DCA benchmark and print its report (Markdown tables).

    Parameters
    ----------
    quick : bool
        Small scenes only (seconds; the smoke test); otherwise pendulum-300, pendulum-3000,
        millipede (13,000 bodies), molecule-50k and crowd(200).
    repeats : int
        Timing samples per function (median reported).
    log : callable
        Progress and report output (``print``).

    Returns
    -------
    dict with ``timings`` (list of per-scene dicts: ``aba_ns``, ``balanced_ns``,
    ``serial_ns`` [ns/DOF], ratios, ``*_err``, ``*_bytes_per_dof``, heights, handles),
    ``trees`` (assembly-tree statistics), ``profile`` (:func:`phase_profile`), ``machine``,
    ``peak_rss_bytes`` and ``report`` (the printed Markdown).
    """
    machine = machine_info()
    timings = bench_timings(quick, repeats=repeats, log=log)
    trees = tree_statistics(quick)
    profile = phase_profile(quick, repeats=repeats, log=log)
    peak = peak_rss_bytes()
    report = format_report(timings, trees, machine, peak)
    report += "\n\nProfile (ns per joint, minimum of the batches):\n\n" + format_profile(profile)
    log(report)
    return dict(timings=timings, trees=trees, profile=profile, machine=machine,
                peak_rss_bytes=peak, report=report)


HELP = "DCA vs our ABA, balanced vs serial assembly, assembly-tree statistics"
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench dca [--quick]`` on ``parser``."""
    parser.description = ("DCA benchmark: Featherstone's divide-and-conquer algorithm "
                          "(balanced and serial assembly) against our ABA, and assembly-tree "
                          "statistics.")
    parser.add_argument("--quick", action="store_true",
                        help="small scenes only (seconds; the smoke test)")


def run(args) -> int:
    """Run :func:`bench_dca` with the options of :func:`add_arguments`; returns 0."""
    bench_dca(quick=args.quick)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.dca [--quick]``: as ``articulated bench dca``."""
    return bench_main("dca", add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
