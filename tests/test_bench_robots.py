"""``articulated bench robots --quick``: solo12 as ``articulated simulate --robot solo12
--floating-base --floor`` runs it, plain and holding its standing pose, against MuJoCo on
the same model, shapes and floor; the benchmark's numbers are real ones."""

from __future__ import annotations

import numpy as np
import pytest

import articulated as art
from articulated.bench import robots as bench
from articulated.cli import main


@pytest.fixture(scope="module")
def erd():
    if art.robots.data_dir() is None:
        pytest.skip("example-robot-data is not installed (the robots extra)")


def test_fixed_base_robots_are_left_out_with_a_reason(erd):
    run, skipped = bench.candidates(["solo12", "ur5", "talos", "allegro_left_hand"])
    assert run == ["solo12", "talos"]
    assert dict(skipped) == {"ur5": "arm on a fixed base",
                             "allegro_left_hand": "hand on a fixed base"}
    assert set(bench.FIXED_BASE) <= set(art.robots.names())
    assert bench.held_pose(art.robots.srdf_path("solo12")) == "standing"
    assert bench.held_pose(art.robots.srdf_path("talos")) == "half_sitting"
    assert bench.held_pose(None) == "neutral"


def test_quick_run_on_solo12_stands_as_mujoco_does(erd, tmp_path, monkeypatch, capsys):
    pytest.importorskip("mujoco")
    results = {}
    measure = bench.measure

    def keep(name, *a, **kw):
        results[name] = measure(name, *a, **kw)
        return results[name]

    monkeypatch.setattr(bench, "measure", keep)
    assert main(["bench", "robots", "--quick", "--out", str(tmp_path)]) == 0
    r = results["solo12"]
    assert (r["nv"], r["shapes"], r["pose"]) == (18, 17, "standing")
    plain, held, mj = r["plain"], r["held"], r["mujoco"]
    assert plain["error"] is None and held["error"] is None and mj["error"] is None
    for x in (plain, held, mj):
        assert np.isfinite([x["step"], x["depth"]]).all() and x["step"] > 0
    # ours: at most 1 mm deep in both runs; standing upright at rest
    assert plain["depth"] <= 1e-3 and held["depth"] <= 1e-3
    assert held["tilt"] < 5.0 and mj["tilt"] < 5.0
    # the standing base height above the floor: 0.23 m, ours and MuJoCo's within 5 mm
    assert 0.2 < held["z_rest"] < 0.26
    assert abs(held["z_rest"] - mj["z_rest"]) < 5e-3
    text = (tmp_path / "robots-results-quick.md").read_text()
    assert "| solo12 | 18 | 17 | ok |" in text
    assert "ur5: left out, arm on a fixed base" not in text   # --quick: solo12 only
