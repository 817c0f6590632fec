"""Smoke test of ``articulated bench proteins --quick`` (issue 23) on the committed structure
tests/data/4E43.pdb.gz: the benchmark runs, and its numbers have the properties the method
guarantees (certified bound, at least the lower-bound joints, the assembly has twice the
structure)."""

from pathlib import Path

import pytest

pytest.importorskip("gemmi")

from articulated.bench import proteins as bp

PDB = Path(__file__).parent / "data" / "4E43.pdb.gz"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("proteins")
    return bp.bench_proteins(quick=True, structure=PDB, out=out, log=lambda *a: None)


def test_load_rows(quick):
    one, two = quick["load"]["rows"]
    assert two["chains"] == 2 * one["chains"] and two["residues"] == 2 * one["residues"]
    assert two["atoms"] == 2 * one["atoms"] and two["dof"] == 2 * one["dof"]
    assert one["dof"] == quick["structure"]["dof"] and 0 < one["seconds"] < 60


def test_table1_and_placements(quick):
    t1 = quick["table1"]
    assert [row["nf"] for row in t1["rows"]] == [1, 10]
    for row in t1["rows"]:
        assert row["dca"]["joints"] == t1["nb"] and row["dca"]["bound"] == 0.0
        for r in row["adaptive"]:
            assert r["bound"] <= r["eps"]
            assert 0.95 * r["lower"] <= r["joints"] <= t1["nb"]
        assert row["adaptive"][-1]["e_f"] < 1e-3
    pl = quick["placements"]
    assert len(pl["rows"]) == 3
    for r in pl["rows"]:
        assert 0 < r["fraction"] <= 1 and r["joints"] >= 0.95 * r["lower"]
        assert r["speedup"] > 0 and r["e_f"] < 1e-3
    assert "target: >= 100x" in quick["report"]
    pu = quick["pull"]
    assert pu["moved_nm"] > 0.01 and pu["e_f"] < 1e-2 and pu["joints"] < quick["table1"]["nb"]
    assert [Path(f).name for f in quick["figures"]] == ["quasistatics-protein.png",
                                                        "quasistatics-protein-pull.png"]
    assert all(Path(f).stat().st_size > 10_000 for f in quick["figures"])
