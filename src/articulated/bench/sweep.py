"""Sweep throughput (``articulated bench sweep``): the same grid of independent runs on a
``LocalCluster`` of 1 and of W worker processes (one thread each), runs per second and
their ratio, measured in one process in turns (target: >= 1.8x for 2 workers on a 2-core
machine). Each cluster is started and warmed (every worker loads the kernels) before its
timed sweep; the stores are temporary folders. The grid: ``--runs`` pendulum-``--n``
simulations of ``--steps`` steps (RK4, ABA, dt = 1 ms), one random start each (about
0.35 s per run at the defaults on this machine).
"""

from __future__ import annotations

import tempfile
import time

from .common import MarkdownReport, at_least, bench_main, markdown_table

HELP = "sweep throughput on a LocalCluster of 1 and W workers"


def timed_sweep(workers, runs, n, steps, repeats):
    """Median seconds of ``repeats`` sweeps of ``runs`` runs on a fresh LocalCluster of
    ``workers`` single-threaded processes (each sweep into a new store)."""
    from distributed import Client, LocalCluster

    from ..sweep import SceneSimulation, sweep

    make = SceneSimulation("pendulum", n=n, perturb=0.2, integrator="rk4",
                           energy_drift=None)   # the random starts drift 1-4 %: not timed
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    times = []
    try:
        with tempfile.TemporaryDirectory() as tmp:   # warm-up: every worker loads kernels
            sweep(make, {"start_seed": [-1 - k for k in range(2 * workers)]}, steps=10,
                  client=client, store=tmp)
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                res = sweep(make, {"start_seed": list(range(runs))}, steps=steps,
                            record_every=steps // 10 or 1, client=client, store=tmp,
                            warm=False)
                times.append(time.perf_counter() - t0)
                assert res.counts()["ok"] == runs, res.counts()
    finally:
        client.close()
        cluster.close()
    times.sort()
    return times[len(times) // 2]


def add_arguments(parser):
    """Options of ``articulated bench sweep [--quick] [--runs R] [--workers W] [--n N]
    [--steps K] [--repeats M] [--out DIR]``."""
    parser.description = HELP
    parser.add_argument("--quick", action="store_true", help="8 runs, few steps (smoke test)")
    parser.add_argument("--runs", type=at_least(1), default=48, help="runs per sweep (48)")
    parser.add_argument("--workers", type=at_least(2), default=2,
                        help="workers of the parallel cluster (default 2)")
    parser.add_argument("--n", type=at_least(2), default=100, help="pendulum links (100)")
    parser.add_argument("--steps", type=at_least(1), default=5000,
                        help="steps per run (default 5000)")
    parser.add_argument("--repeats", type=at_least(1), default=3,
                        help="timed sweeps per cluster (default 3, median)")
    parser.add_argument("--out", default="docs", metavar="DIR",
                        help="folder of the Markdown results (default docs)")


def run(args) -> int:
    """Print the table and write ``OUT/sweep-results.md`` (``-quick.md``); returns 0."""
    quick = args.quick
    runs, steps, repeats = (8, 500, 1) if quick else (args.runs, args.steps, args.repeats)
    report = MarkdownReport("Sweep throughput on a LocalCluster", args.out, "sweep", quick,
                            suffix=f" ({runs} runs of pendulum-{args.n}, {steps} steps)")
    t1 = timed_sweep(1, runs, args.n, steps, repeats)
    tw = timed_sweep(args.workers, runs, args.n, steps, repeats)
    report.emit(markdown_table(
        ["workers", "sweep s", "runs / s", "throughput / 1 worker"],
        [[1, f"{t1:.2f}", f"{runs / t1:.2f}", "1.00"],
         [args.workers, f"{tw:.2f}", f"{runs / tw:.2f}", f"{t1 / tw:.2f}"]]))
    report.emit()
    path = report.write("sweep-results-quick.md" if quick else "sweep-results.md")
    print(f"wrote {path}")
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.sweep [options]``."""
    return bench_main("sweep", add_arguments, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
