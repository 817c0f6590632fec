"""Smoke test of ``articulated bench speedups --quick`` (the adaptive speed-ups of the papers): every row is
measured in one run, beside the full DCA and ABA, and has the properties the methods
guarantee."""

import pytest

from articulated.bench import speedups


@pytest.fixture(scope="module")
def quick():
    return speedups.bench_speedups(quick=True, log=lambda *a: None)


def test_rows_and_report(quick):
    rows = {r["key"]: r for r in quick["rows"]}
    assert list(rows) == ["rl-molecule", "rgl-1", "rgl-6", "rgl-fresh"]
    for r in rows.values():
        assert r["ad_ms"] > 0 and r["dca_ms"] > 0 and r["aba_ms"] > 0
    # the error-bounded solve computes a part of the molecule's 2,000 joints
    assert 0 < rows["rl-molecule"]["joints"] < rows["rl-molecule"]["n"] == 2000
    assert rows["rgl-1"]["joints"] == 1 and rows["rgl-6"]["joints"] == 6
    # one active joint of 60 costs far less than the full DCA step (about 70x here)
    assert rows["rgl-1"]["dca_ms"] / rows["rgl-1"]["ad_ms"] > 5
    report = quick["report"]
    assert "| RGL, pendulum-60, 1 force, N_A = 1 |" in report
    # the small scenes are not the papers': no paper or target speed-up beside them
    line = next(x for x in report.splitlines() if x.startswith("| RL, molecule-2,000"))
    assert line.split("|")[7].strip() == "-" and line.split("|")[8].strip() == "-"
