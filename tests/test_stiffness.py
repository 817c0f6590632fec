"""Formulation stiffness (issue 6): Ascher, Pai & Cloutier (1997), "Forward dynamics,
elimination methods, and formulation stiffness in robot simulation".

Table 2 rows (Examples 2/3) on our implementation, against the closed form (D_2 = m2 = 1,
qdd_1 = (tau_1 - tau_2) / m2 + tau_1 / m1 in exact arithmetic); the modified ABA equals ABA
in float64 on random trees; the pivots equal a dense NumPy Schur complement; the Example 1
sweep; the study's --quick mode through the CLI.
"""

import numpy as np
import pytest

import articulated as art
from articulated import models
from articulated.bench import stiffness_study as stiffness
from articulated.bench.stiffness import run_study
from articulated.algorithms.aba import articulated_pivots
from articulated.model import JOINT_TYPES

F32_EPS = float(np.finfo(np.float32).eps)
TAU = np.array([9.81, 981.0])  # (tau_2 base, tau_1 tip), the paper's Example 3
CASE_AXIS = {1: (0.0, 0.0, 1.0), 2: (0.0, 1.0, 1.0)}  # H = (0,0,0,0,0,1), (0,0,0,0,1,1)/sqrt2


def exact_qdd1(m1, m2=1.0):
    """Closed form of Example 3 at rest without gravity: tau_1 = m1 (qdd_2 + qdd_1),
    tau_2 = tau_1 + m2 qdd_2, so qdd_2 = (tau_2 - tau_1) / m2, qdd_1 = tau_1 / m1 - qdd_2."""
    return TAU[1] / m1 - (TAU[0] - TAU[1]) / m2


def d2(m1, case, method, dtype=np.float32):
    model = models.prismatic_pair(m1, 1.0, CASE_AXIS[case])
    return float(articulated_pivots(model, np.zeros(2), method=method, dtype=dtype)[0][0, 0])


def qdd1(m1, case, method, dtype=np.float32):
    model = models.prismatic_pair(m1, 1.0, CASE_AXIS[case])
    return float(art.forward_dynamics(model, np.zeros(2), np.zeros(2), TAU, method=method,
                                      dtype=dtype)[1])


# ------------------------------------------------------------------ Table 2 (Examples 2/3)

@pytest.mark.parametrize("case", [1, 2])
@pytest.mark.parametrize("m1", [1e6, 1e7, 1e8, 1e9])
def test_table2_modified_aba_keeps_D2(m1, case):
    """Table 2, modified ABM columns: D_2 = 1.0 and qdd_1 = 971.19 in every row."""
    assert abs(d2(m1, case, "aba_modified") - 1.0) <= 4 * F32_EPS
    assert qdd1(m1, case, "aba_modified") == pytest.approx(exact_qdd1(m1), rel=1e-5)


@pytest.mark.parametrize("m1", [1e8, 1e9])
def test_table2_case2_plain_aba_and_crba_lose_D2(m1):
    """Table 2, case (2), m1 >= 1e8: CRBM and ABM give D_2 = 0 and no acceleration; ours
    raise a ValueError naming the base joint instead of returning NaN."""
    for method in ("aba", "crba"):
        assert abs(d2(m1, 2, method) - 1.0) > 0.5
        with pytest.raises(ValueError, match="joint2"):
            qdd1(m1, 2, method)


@pytest.mark.parametrize("m1", [1e8, 1e9])
def test_table2_case1_aligned_aba_keeps_D2_crba_does_not(m1):
    """Table 2, case (1): with the coordinates aligned with the motion plain ABA keeps
    D_2 = 1, while CRBA forms M_22 = m1 + m2, which is fl(m1) in float32 for m1 > 2^24, so
    its pivot M_22 - M_21^2 / M_11 is exactly 0 (the paper's eq. 9 argument)."""
    assert np.float32(m1) + np.float32(1.0) == np.float32(m1)  # fl(m1 + m2) = fl(m1)
    assert d2(m1, 1, "aba") == pytest.approx(1.0, abs=4 * F32_EPS)
    assert qdd1(m1, 1, "aba") == pytest.approx(exact_qdd1(m1), rel=1e-5)
    assert d2(m1, 1, "crba") == 0.0


def test_table2_float64_is_exact_for_all_methods():
    """In float64 (eps 1e-16, m1 eps = 1e-7 at m1 = 1e9) every method gets D_2 = 1."""
    for case in (1, 2):
        for method in stiffness.METHODS:
            assert d2(1e9, case, method, np.float64) == pytest.approx(1.0, abs=1e-5)
            assert qdd1(1e9, case, method, np.float64) == pytest.approx(exact_qdd1(1e9),
                                                                         rel=1e-6)


@pytest.mark.parametrize("case", [1, 2])
@pytest.mark.parametrize("m1", [1e6, 1e7])
def test_table2_wrong_pivots_explain_wrong_accelerations(m1, case):
    """Every float32 acceleration is consistent with the pivot the method divided by:
    qdd_1 = (tau_1 - tau_2) / D_2 + tau_1 / m1 (the paper's rows: 971.19 / 1.03 ~ 941.76,
    971.19 / 1.5 = 647.46), so ``articulated_pivots`` reports the pivot that
    ``forward_dynamics`` used."""
    for method in stiffness.METHODS:
        D2 = d2(m1, case, method)
        assert qdd1(m1, case, method) == pytest.approx((TAU[1] - TAU[0]) / D2 + TAU[1] / m1,
                                                       rel=1e-4)


def test_table2_rows_of_the_study():
    """stiffness.table2 reports the same, in the paper's layout."""
    rows = {(r["m1"], r["case"]): r for r in stiffness.table2()}
    assert len(rows) == 8
    for (m1, case), r in rows.items():
        assert abs(r["D2"]["aba_modified"] - 1.0) <= 4 * F32_EPS
        assert r["qdd1"]["aba_modified"] == pytest.approx(exact_qdd1(m1), rel=1e-5)
    for m1 in (1e8, 1e9):
        assert rows[(m1, 2)]["qdd1"]["aba"] is None and rows[(m1, 2)]["qdd1"]["crba"] is None
        assert rows[(m1, 1)]["qdd1"]["crba"] is None
        assert rows[(m1, 1)]["D2"]["aba"] == pytest.approx(1.0, abs=4 * F32_EPS)


def test_prismatic_pair_model():
    m = models.prismatic_pair(1e7, 2.0, (0, 3, 4), length_per_mass=1e-3)
    assert (m.nb, m.nq, m.nv) == (2, 2, 2)
    np.testing.assert_allclose(m.jnt_axis, [[0, 0.6, 0.8]] * 2)
    np.testing.assert_allclose(m.body_mass, [2.0, 1e7])
    # D_2 = m2 in float64, whatever the axis
    D = articulated_pivots(m, np.zeros(2), method="aba")
    assert D[0][0, 0] == pytest.approx(2.0, rel=1e-9)
    assert D[1][0, 0] == pytest.approx(1e7, rel=1e-12)
    with pytest.raises(ValueError, match="m1"):
        models.prismatic_pair(0.0)
    with pytest.raises(ValueError, match="axis"):
        models.prismatic_pair(1e6, 1.0, (0, 0, 0))


# ------------------------------------------------------------------ float64 identities

TREES = [(n, seed, base) for n, seed in ((6, 0), (12, 1), (25, 2), (40, 3))
         for base in (False, True)]


@pytest.mark.parametrize("n,seed,floating", TREES)
def test_modified_aba_equals_aba_in_float64(n, seed, floating):
    """Eq. 11 only reorders the computation of D_k: in float64 the modified ABA equals ABA
    to round-off on random trees with every joint type, and both equal the CRBA solution.
    (ABA projects a free joint in closed form, S = 1; the modified ABA keeps the general
    form with its own pivot: up to 1.1e-12 of max |qdd| apart here.)"""
    model = models.random_tree(n, seed, floating_base=floating)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q = model.random_configuration(rng)
        qd = rng.normal(size=model.nv)
        tau = 5 * rng.normal(size=model.nv)
        f_ext = rng.normal(size=(model.nb, 6))
        a = art.aba(model, q, qd, tau, f_ext)
        b = art.aba(model, q, qd, tau, f_ext, modified=True)
        x = art.crba_forward_dynamics(model, q, qd, tau, f_ext)
        scale = max(1.0, np.abs(a).max())
        assert np.abs(a - b).max() <= 4e-12 * scale
        assert np.abs(a - x).max() <= 4e-12 * scale
        assert np.abs(b - x).max() <= 4e-12 * scale


def test_random_trees_cover_every_joint_type():
    types = set()
    for n, seed, floating in TREES:
        types |= set(models.random_tree(n, seed, floating_base=floating).jnt_type.tolist())
    assert types == set(JOINT_TYPES.values())


def _schur_pivots(model, q):
    """Independent oracle: D_k = M_kk - M_kB M_BB^-1 M_Bk with B the dofs below joint k
    (the pivot of block Gaussian elimination from the leaves, Ascher-Pai-Cloutier sec. 2),
    by dense NumPy on the float64 CRBA matrix."""
    M = art.crba(model, q)
    out = []
    for i in range(model.nb):
        va, k = int(model.jnt_vadr[i]), int(model.jnt_nv[i])
        e = model.body_subtree_end[i]
        end = int(model.jnt_vadr[e]) if e < model.nb else model.nv
        blk, sub = np.arange(va, va + k), np.arange(va + k, end)
        D = M[np.ix_(blk, blk)]
        if sub.size:
            D = D - M[np.ix_(blk, sub)] @ np.linalg.solve(M[np.ix_(sub, sub)],
                                                          M[np.ix_(sub, blk)])
        out.append(D)
    return out


@pytest.mark.parametrize("n,seed,floating", TREES[::2])
def test_pivots_equal_dense_schur_complement(n, seed, floating):
    model = models.random_tree(n, seed, floating_base=floating)
    q = model.random_configuration(np.random.default_rng(seed))
    ref = _schur_pivots(model, q)
    for method in stiffness.METHODS:
        D = articulated_pivots(model, q, method=method)
        assert len(D) == model.nb
        for i, (a, b) in enumerate(zip(D, ref)):
            assert a.shape == b.shape == (model.jnt_nv[i],) * 2
            if b.size:
                assert np.abs(a - b).max() <= 1e-9 * np.abs(b).max(), (method, i)


def test_pivots_reject_unknown_method():
    with pytest.raises(ValueError, match="unknown method"):
        articulated_pivots(models.two_link_arm(), np.zeros(2), method="dca")


# ------------------------------------------------------------------ Example 1 (Fig. 1)

def test_example1_sweep():
    """Fig. 1: float64 CRBA and ABA agree; in float32 CRBA's base-joint acceleration is far
    noisier than ABA's (measured against float64), and the modified ABA's is no worse."""
    s = stiffness.example1_sweep(181)
    ref = s["ref"]
    assert np.abs(s["ref_crba"] - ref).max() <= 1e-9 * np.abs(ref).max()
    err = {m: np.abs(s["qdd2"][m] - ref) for m in stiffness.METHODS}
    assert err["crba"].max() > 10 * err["aba"].max()
    assert err["aba_modified"].max() <= err["aba"].max()
    assert err["aba"].max() < 1e-4 * np.abs(ref).max()  # ABA float32: smooth and accurate
    # the arm is ill-conditioned over the whole sweep
    assert s["kappa"].min() > 1e3


# ------------------------------------------------------------------ Table 1 and the study

def test_simulate_rk45_reports_failures_not_numbers():
    model = stiffness.table1_chain(0.01)
    run = stiffness.simulate_rk45(model, "aba", t_end=10.0, max_nfev=500)
    assert not run["ok"] and "more than 500 evaluations" in run["status"]
    assert run["nfev"] == 500 and run["t"] < 10.0
    singular = models.prismatic_pair(1e9, 1.0, CASE_AXIS[2], gravity=(0, 0, -9.81))
    run = stiffness.simulate_rk45(singular, "crba", t_end=1.0)
    assert not run["ok"] and "ValueError" in run["status"] and "joint2" in run["status"]


def test_study_quick(tmp_path):
    """The study's --quick mode writes the report and both PNGs, and shows the paper's
    Table 1 trend at r = 0.0015 (CRBA needs several times ABA's evaluations; ABA and the
    modified ABA stay near the float64 count; CRBA's float32 round-off is far rougher)."""
    res = run_study(True, out_dir=tmp_path, log=lambda *a: None)
    md = (tmp_path / "formulation-stiffness.md").read_text()
    for needle in ("## Table 1", "## Table 2", "## Example 1", "aba_modified", "| 0.0015 |",
                   "articulated bench stiffness --quick"):
        assert needle in md
    for png in ("formulation-stiffness-fig1.png", "formulation-stiffness-table1.png"):
        assert (tmp_path / png).stat().st_size > 10_000
    row = {r["r"]: r for r in res["table1"]}[0.0015]
    runs, ref = row["runs"], row["ref"]
    assert all(run["ok"] for run in runs.values()) and ref["ok"]
    assert runs["crba"]["nfev"] > 2 * runs["aba"]["nfev"]
    for m in ("aba", "aba_modified"):
        assert abs(runs[m]["nfev"] - ref["nfev"]) < 0.2 * ref["nfev"]
    # CRBA's float32 round-off is rough noise; ABA's and the modified ABA's is not
    assert row["roughness"]["crba"] > 100 * row["roughness"]["aba"]
    assert row["roughness"]["aba_modified"] <= row["roughness"]["aba"]
    assert row["kappa_max"] > 1e5


def test_cli_bench_stiffness_is_registered(capsys):
    from articulated.cli import BENCHES, main

    assert "stiffness" in BENCHES
    with pytest.raises(SystemExit) as e:
        main(["bench", "stiffness", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out and "--out" in out
