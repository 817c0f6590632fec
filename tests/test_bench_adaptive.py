"""Smoke test of ``articulated bench adaptive --quick`` (issue 5, item 7): the quick
benchmark runs in seconds and its numbers have the properties the method guarantees."""

import numpy as np
import pytest

from articulated.bench import adaptive as ba
from articulated.bench import crowd, spring


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


def test_fig6(quick):
    res, out = quick
    f6 = res["fig6"]
    rows = f6["rows"]
    assert rows["full"]["tip_err"] == 0.0
    assert rows["breadth_first"]["joints"][0] == 0       # the root node's joint comes first
    assert len(rows["breadth_first"]["joints"]) == f6["k"]
    assert list(f6["labels"]) == [v[0] for v in spring.FIG6_VARIANTS]
    for key in f6["labels"]:
        assert 0 < len(rows[key]["joints"]) <= f6["k"]  # the budget N_A = k is respected
        assert rows[key]["joints"][0] == 0               # a subtree containing the root
        assert np.isfinite(rows[key]["tip_err"]) and np.isfinite(rows[key]["rms_err"])
        assert np.isfinite(rows[key]["ratio"]) and rows[key]["ratio"] > 0
    # the spring pulls the chain away from its hanging start
    assert np.linalg.norm(rows["full"]["points"][-1] - f6["p0"][-1]) > 0.5
    # static equilibria: every k-joint subtree with the root, breadth-first among them,
    # sorted by tip error, each an equilibrium closer to the full one than the start
    st = f6["static"]
    sets = [r["joints"] for r in st["sets"]]
    assert sorted(rows["breadth_first"]["joints"]) in sets
    assert all(len(j) == f6["k"] and j[0] == 0 for j in sets)
    tips = [r["tip_err"] for r in st["sets"]]
    assert tips == sorted(tips) and st["best_ratio"] <= 1.0
    assert all(t < np.linalg.norm(st["full"][-1] - f6["p0"][-1]) for t in tips)
    # the union of the regions' joints: a superset of every region, so a lower potential
    # minimum and (on this scene) a closer equilibrium than any fixed region
    assert all(set(j) <= set(st["union"]["joints"]) for j in sets)
    assert len(st["union"]["joints"]) > f6["k"]
    assert st["union"]["tip_err"] < tips[0]
    # weights: SPD blocks, the mass carried by each joint / the CRBA diagonal
    from articulated import models

    m = models.pendulum(4)
    w = spring.subtree_mass_weights(m)
    assert np.allclose(w[:, 0, 0], [0.4, 0.3, 0.2, 0.1]) and np.allclose(w[0], 0.4 * np.eye(6))
    wi = spring.joint_inertia_weights(m)
    assert wi.shape == (4, 6, 6) and np.all(wi[:, 0, 0] > 0)
    assert wi[0, 0, 0] > wi[1, 0, 0] > wi[2, 0, 0] > wi[3, 0, 0]
    assert (out / "adaptive-spring.png").stat().st_size > 10_000


def test_fig6_sweep(quick):
    """The sweep over the attachment link: one row per link, the spring on that link (the
    anchor 2 m above its hanging end), budgets respected, finite positive ratios."""
    res, _ = quick
    sw = res["fig6_sweep"]
    assert [r["link"] for r in sw["rows"]] == [5, 10, 19]
    for r in sw["rows"]:
        assert r["anchor"][2] == pytest.approx(-(r["link"] + 1) * 0.1 + 2.0)   # 0.1 m links
        assert 0 < len(r["joints"]) <= sw["k"] and r["joints"][0] == 0
        assert r["bfs_tip"] > 0 and np.isfinite(r["ratio"]) and r["ratio"] > 0
    assert "Fig. 6 over the attachment link" in res["report"]


def test_distance_budgets():
    d = np.array([1.0, 2.0, 4.0, 8.0, 100.0])
    b = crowd.distance_budgets(d, 20, np.full(5, 89))
    assert b.sum() == 20 and b.min() >= 1 and np.all(np.diff(b) <= 0)
    assert b[-1] == 1                                    # far away: at least the root
    assert abs(b[0] / b[1] - 2.0) < 0.3                  # ~ 1 / distance
    # caps at the character's joint count, and totals outside [n, sum(sizes)] are clipped
    b = crowd.distance_budgets(d, 30, np.array([3, 3, 89, 89, 89]))
    assert b.sum() == 30 and b[0] == 3 and b[1] == 3
    assert crowd.distance_budgets(d, 2, np.full(5, 89)).tolist() == [1] * 5
    assert crowd.distance_budgets(d, 999, np.full(5, 4)).tolist() == [4] * 5
    with pytest.raises(ValueError):
        crowd.distance_budgets([1.0, -1.0], 3, [2, 2])


def test_crowd(quick):
    res, out = quick
    cr = res["crowd"]
    n = cr["characters"]
    b = cr["budgets"]
    assert b.shape == (n,) and b.sum() == cr["budget"] == int(0.1 * cr["nb"])
    assert b.min() >= 1 and np.all(b <= cr["sizes"])
    # budgets decrease with the distance to the camera
    o = np.argsort(cr["distance"])
    assert np.all(np.diff(b[o]) <= 0)
    # every character's active region stayed within its own budget at every update
    assert np.all(cr["most_active"] <= b) and np.all(cr["most_active"] >= 1)
    assert cr["active"] <= cr["budget"] and cr["update_region"] <= cr["budget"]
    assert cr["dca"] > 0 and cr["hybrid"] > 0 and cr["update"] > cr["hybrid"]
    assert cr["finite"]
    pm = cr["pushed_mask"]
    assert pm.sum() == cr["n_push"] == 2
    # free fall without a push: no internal motion, the same as the full DCA
    assert np.all(cr["root_err"][~pm] < 1e-9)
    # pushed characters: simplified but moving (pushed further than the falling ones), the
    # drift from the full DCA finite and below the displacement itself
    assert np.all(cr["root_moved"][pm] > cr["root_moved"][~pm].max() + 1e-3)
    assert np.all(np.isfinite(cr["root_err"])) and np.all(cr["root_err"][pm] > 0)
    assert np.all(cr["root_err"][pm] < cr["root_moved"][pm])
    # linear momentum of each character: the exact impulse (m g + F) t (joint forces and
    # rigidification impulses are internal) up to the integrator's error, which the full
    # DCA run has too; exact without a push
    assert np.all(cr["momentum_err"][~pm] < 1e-9)
    assert np.all(cr["momentum_err"] < 0.05) and np.all(cr["momentum_err_dca"] < 0.05)
    assert (out / "adaptive-crowd.png").stat().st_size > 10_000
    for name in ("adaptive-pendulum.png", "adaptive-spring.png"):
        assert (out / name).stat().st_size > 10_000
    rep = res["report"]
    assert "### Table 1" in rep and "full DCA step" in rep and "target" in rep
    assert "### Crowd" in rep and "momentum" in rep


def test_cli_entry():
    from articulated.cli import BENCHES

    assert "adaptive" in BENCHES
    with pytest.raises(SystemExit):
        ba.main(["--bogus"])


def test_crowd_budget_in_dof(quick):
    res, _ = quick
    from articulated import models

    # crowd(200): 200 free roots (6 DOF each) and 17,600 other joints with 17,800 DOF;
    # 10% of the 19,000 DOF leaves 1,900 - 1,200 = 700 DOF, 700 / (17800 / 17600) = 692.1
    # joints besides the roots
    m = models.crowd(200)
    assert (m.nb, m.nv) == (17_800, 19_000)
    assert crowd.crowd_budget_total(m, 0.1, "dof") == 200 + 692
    assert crowd.crowd_budget_total(m, 0.1) == 1_780
    with pytest.raises(ValueError, match="unit"):
        crowd.crowd_budget_total(m, 0.1, "links")
    cr, cj = res["crowd_dof"], res["crowd"]
    n = cr["characters"]
    assert cr["unit"] == "dof" and cj["unit"] == "joints"
    assert cr["budget"] == crowd.crowd_budget_total(models.crowd(n), 0.1, "dof")
    assert n <= cr["budget"] < cj["budget"]
    assert np.all(cr["most_active"] <= cr["budgets"]) and cr["finite"]
    # the active DOF stay near 10% of the DOF: the roots' 6 and at most 3 per other joint
    assert 6 * n <= cr["most_dof"] <= 6 * n + 3 * (cr["budget"] - n)
