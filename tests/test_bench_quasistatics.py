"""Smoke test of ``articulated bench quasistatics --quick`` (issue 4, item 6): the quick
benchmark runs in seconds and its numbers have the properties the method guarantees."""

import numpy as np
import pytest

from articulated.bench import quasistatics as bq


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("qs")
    res = bq.bench_quasistatics(quick=True, out=out, log=lambda *a: None)
    return res, out


def test_molecule_table(quick):
    res, _ = quick
    mol = res["molecule"]
    assert mol["n"] == 2000 and [row["nf"] for row in mol["rows"]] == list(bq.NF_TABLE)
    for row in mol["rows"]:
        dca = row["dca"]
        assert dca["joints"] == mol["nb"]              # the DCA computes every joint
        assert dca["bound"] == 0.0
        ad = row["adaptive"]
        assert [r["eps"] for r in ad] == list(bq.EPS_TABLE)
        joints = np.array([r["joints"] for r in ad])
        # more joints as eps decreases (means over the steps: allow 2% slack per step)
        assert np.all(joints[1:] >= 0.98 * joints[:-1]), joints
        for r in ad:
            assert r["bound"] <= r["eps"]              # certified bound respected every step
            assert 0 < r["joints"] <= mol["nb"]
            # a partial solver needs at least the joints above eps * max |qdd| (start state)
            assert r["joints"] >= 0.95 * r["lower"], (row["nf"], r["eps"])
            assert r["ms"] > 0 and r["speedup"] > 0
        # displacement error shrinks with eps and is small at 2^-19
        assert ad[-1]["e_f"] < 1e-3 and ad[-1]["e_max"] < 1e-3
        assert ad[-1]["e_f"] < ad[0]["e_f"]
    # one force touches few joints at a loose bound
    assert mol["rows"][0]["adaptive"][0]["joints"] < 0.1 * mol["nb"]


def test_scaling_and_millipede(quick):
    res, _ = quick
    sc = res["scaling"]
    assert len(sc["rows"]) == 5 and sc["dca"]["ratio"] > 3    # DCA is linear in n
    for r in sc["rows"]:
        assert r["small_joints"] <= 200 and r["large_joints"] <= 2000
        assert r["small_us_per_joint"] > 0 and r["large_us_per_joint"] > 0
    mp = res["millipede"]
    assert [r["eps"] for r in mp["rows"]] == list(bq.EPS_SWEEP)
    assert mp["dca"]["joints"] == mp["nb"]
    j = np.array([r["joints"] for r in mp["rows"]])
    assert j[-1] > j[0] and np.all(j[1:] >= 0.98 * j[:-1])
    assert all(r["bound"] <= r["eps"] for r in mp["rows"])
    assert j[-1] < mp["nb"]                                   # local response: not all joints


def test_bicycle_and_outputs(quick):
    res, out = quick
    bc = res["bicycle"]
    tip = np.array([r["tip_err"] for r in bc["rows"]])
    assert np.all(np.diff(tip) < 0)                           # closer to the DCA as eps shrinks
    moved = np.linalg.norm(bc["dca"]["xy"][-1] - bc["p0"][-1])
    assert moved > 0.02 and tip[-1] < 0.05 * moved            # the chain bends; 2^-7 tracks it
    for name in ("quasistatics-millipede.png", "quasistatics-bicycle.png",
                 "quasistatics-molecule.png"):
        assert (out / name).stat().st_size > 10_000
    rep = res["report"]
    assert "| N_f |" in rep and "full DCA" in rep and "target" in rep


def test_cli_entry():
    from articulated.cli import BENCHES

    assert "quasistatics" in BENCHES
    with pytest.raises(SystemExit):
        bq.main(["--steps", "0"])
