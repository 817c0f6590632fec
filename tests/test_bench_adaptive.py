"""Smoke test of ``articulated bench adaptive --quick`` (issue 5, item 7): the quick
benchmark runs in seconds and its numbers have the properties the method guarantees."""

import numpy as np
import pytest

from articulated import bench_adaptive as ba


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("adaptive")
    res = ba.bench_adaptive(quick=True, out=out, log=lambda *a: None)
    return res, out


def test_table1(quick):
    res, _ = quick
    t1 = res["table1"]
    assert t1["n"] == 60 and [r["nf"] for r in t1["rows"]] == list(ba.NF_QUICK)
    for row in t1["rows"]:
        assert row["dca"] > 0 and row["aba"] > 0
        assert [c["na"] for c in row["cells"]] == list(ba.NA_QUICK)
        for c in row["cells"]:
            assert c["active"] <= c["na"]                 # the budget N_A is respected
            assert c["hybrid"] > 0 and c["update"] > 0 and c["mean"] > 0
            assert c["updates"] == 3                      # 60 steps, an update every 20
            # a region update (full coefficient passes) costs more than a hybrid step
            assert c["update"] > c["hybrid"]
        assert "err_full" in row["cells"][-1]


def test_fig5_cost_and_exactness(quick):
    res, out = quick
    rows = {r["na"]: r for r in res["fig5"]["rows"]}
    n = res["fig5"]["n"]
    # every joint active: the same motion as semi-implicit Euler with the full DCA
    assert rows[n]["q_err"] < 1e-9 and rows[n]["tip_err"] < 1e-9
    # the hybrid step's cost grows with N_A (pendulum-60: about 5x from 1 to 60 joints)
    assert rows[n]["hybrid"] > 2.0 * rows[1]["hybrid"]
    # one active joint: the chain swings as one rigid body, visibly different
    assert rows[1]["tip_err"] > 0.1
    # kinetic energy of each run is finite and the chain moves
    for r in rows.values():
        assert np.isfinite(r["kinetic"]).all() and r["kinetic"][-1] > 0


def test_fig6_and_crowd(quick):
    res, out = quick
    f6 = res["fig6"]
    rows = f6["rows"]
    assert rows["full"]["tip_err"] == 0.0
    assert rows["breadth_first"]["joints"][0] == 0       # the root node's joint comes first
    assert len(rows["breadth_first"]["joints"]) == f6["k"]
    for key in ("adaptive", "adaptive_U_all"):
        assert 0 < len(rows[key]["joints"]) <= f6["k"]
        assert np.isfinite(rows[key]["tip_err"])
    # the spring pulls the chain away from its hanging start
    assert np.linalg.norm(rows["full"]["points"][-1] - f6["p0"][-1]) > 0.5
    cr = res["crowd"]
    assert cr["active"] <= cr["budget"] and cr["update_region"] <= cr["budget"]
    assert cr["dca"] > 0 and cr["hybrid"] > 0 and cr["update"] > cr["hybrid"]
    for name in ("adaptive-pendulum.png", "adaptive-spring.png"):
        assert (out / name).stat().st_size > 10_000
    rep = res["report"]
    assert "### Table 1" in rep and "full DCA step" in rep and "target" in rep


def test_cli_entry():
    from articulated.cli import BENCHES

    assert "adaptive" in BENCHES
    with pytest.raises(SystemExit):
        ba.main(["--bogus"])
