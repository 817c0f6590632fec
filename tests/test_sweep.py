"""Sweeps on Dask distributed (articulated.sweep, issue 24): a LocalCluster of two worker
processes gives the serial runs' trajectories bit for bit; a run that diverges or raises is
recorded and the others complete; a killed worker's runs are run again; a re-run resumes;
bad grids are refused before any work is scheduled."""

from __future__ import annotations

import csv
import os
import signal
import threading
import time

import numpy as np
import pytest

from articulated.sweep import SceneSimulation, grid_points, read_index, run_id, sweep

distributed = pytest.importorskip("distributed", reason="Dask distributed (test extra)")

STEPS = 300


def _serial(make, point, steps=STEPS, record_every=10):
    return make(**point).run(steps, record_every=record_every)


def test_twelve_runs_equal_serial_runs_bit_for_bit(client, tmp_path):
    make = SceneSimulation("pendulum", n=8, perturb=0.3)
    grid = {"start_seed": [0, 1, 2], "integrator": ["semi_implicit_euler", "rk4"],
            "method": ["aba", "dca"]}
    res = sweep(make, grid, steps=STEPS, record_every=10, client=client, store=tmp_path)
    assert len(res.rows) == 12 and res.counts() == {"ok": 12, "diverged": 0, "error": 0}
    for k, p in enumerate(grid_points(grid)):
        assert res.rows[k]["params"] == p and res.rows[k]["run"] == run_id(p)
        got, ref = res.trajectory(k), _serial(make, p)
        assert np.array_equal(got.q, ref.q) and np.array_equal(got.qd, ref.qd)
        assert np.array_equal(got.t, ref.t)
        assert res.rows[k]["steps"] == STEPS and res.rows[k]["t_end"] == pytest.approx(0.3)
    # the index a user reopens: one row per run, the parameters as columns
    with open(tmp_path / "index.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and {"param:start_seed", "param:method"} <= set(rows[0])
    # resume: everything is complete, nothing runs again
    again = sweep(make, grid, steps=STEPS, record_every=10, client=client, store=tmp_path)
    assert again.ran == [] and [r["run"] for r in again.rows] == [r["run"] for r in res.rows]
    # one new point: only it runs
    grid2 = dict(grid, start_seed=[0, 1, 2, 3])
    more = sweep(make, grid2, steps=STEPS, record_every=10, client=client, store=tmp_path)
    assert len(more.ran) == 4 and len(read_index(tmp_path)) == 16


def test_diverging_and_failing_runs_are_recorded(client, tmp_path):
    """Explicit Euler at dt = 2 s on a swinging pendulum grows without bound (the step's
    amplification factor is about 1 + (omega h)^2 with omega h ~ 20): SimulationDiverged,
    its partial trajectory kept; an unknown method raises in the factory: an error row."""
    make = SceneSimulation("pendulum", n=4, perturb=0.5, integrator="euler")
    grid = [{"dt": 1e-3}, {"dt": 2.0}, {"dt": 1e-3, "method": "no-such-method"},
            {"dt": 5e-4}]
    res = sweep(make, grid, steps=STEPS, record_every=1, client=client, store=tmp_path)
    status = [r["status"] for r in res.rows]
    assert status == ["ok", "diverged", "error", "ok"]
    div = res.rows[1]
    assert 0 < div["steps"] < STEPS and div["error"].startswith("simulation diverged at step")
    partial = res.trajectory(1)
    assert len(partial) == div["steps"] + 1 and np.isfinite(partial.q).all()
    assert "no-such-method" in res.rows[2]["error"]
    with pytest.raises(ValueError, match="has no trajectory"):
        res.trajectory(2)
    # a re-run retries the error only
    again = sweep(make, grid, steps=STEPS, record_every=1, client=client, store=tmp_path)
    assert again.ran == [res.rows[2]["run"]]


def test_killed_worker_runs_are_run_again(tmp_path):
    """One worker process is killed (SIGKILL) while the sweep runs: its runs are
    rescheduled, every run completes, and the results still equal the serial runs."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    make = SceneSimulation("pendulum", n=40, perturb=0.2)
    grid = {"start_seed": list(range(8))}
    killed = []

    def killer():
        deadline = time.time() + 120
        while time.time() < deadline and not (tmp_path / "index.csv").exists():
            time.sleep(0.02)
        pids = c.run(os.getpid)                     # worker address -> process id
        victim = sorted(pids)[0]
        os.kill(pids[victim], signal.SIGKILL)
        killed.append(victim)

    try:
        th = threading.Thread(target=killer, daemon=True)
        th.start()
        res = sweep(make, grid, steps=4000, record_every=100, client=c, store=tmp_path)
        th.join(5)
    finally:
        c.close()
        cluster.close()
    assert killed, "the worker was not killed"
    assert res.counts()["ok"] == 8
    for k, p in enumerate(grid_points(grid)):
        assert np.array_equal(res.trajectory(k).q, _serial(make, p, 4000, 100).q)


def test_bad_grids_are_refused_before_any_work(tmp_path):
    make = SceneSimulation("pendulum", n=4)
    with pytest.raises(ValueError, match="the grid is empty"):
        sweep(make, {}, steps=10, client="tcp://127.0.0.1:1", store=tmp_path)
    with pytest.raises(ValueError, match="grid parameter 'dt' has no values"):
        sweep(make, {"dt": []}, steps=10, client="tcp://127.0.0.1:1", store=tmp_path)

    def factory(n, dt):
        return None

    with pytest.raises(ValueError, match=r"unknown parameter 'stiffness'"):
        sweep(factory, {"n": [3], "dt": [1e-3], "stiffness": [1.0]}, steps=10,
              client="tcp://127.0.0.1:1", store=tmp_path)
    lock = threading.Lock()

    def unpicklable(n):
        return lock

    with pytest.raises(ValueError, match="cannot be pickled"):
        sweep(unpicklable, {"n": [3]}, steps=10, client="tcp://127.0.0.1:1", store=tmp_path)
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        sweep(make, {"dt": [1e-3]}, steps=0, client="tcp://127.0.0.1:1", store=tmp_path)
    with pytest.raises(ValueError, match="repeats a point"):
        sweep(make, [{"dt": 1e-3}, {"dt": 1e-3}], steps=1, store=tmp_path)
    with pytest.raises(ValueError, match="unknown scene 'pendulm'"):
        SceneSimulation("pendulm")
    assert not (tmp_path / "index.csv").exists()   # nothing was scheduled


def test_bench_sweep_quick_smoke(tmp_path, capsys):
    """``articulated bench sweep --quick`` runs (the benchmark never rots): one table row per
    cluster, positive throughputs."""
    from articulated.bench.sweep import main

    assert main(["--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "sweep-results-quick.md").read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| 1 ") or ln.startswith("| 2 ")]
    assert len(rows) == 2, text
    assert all(float(r.split("|")[3]) > 0 for r in rows)
