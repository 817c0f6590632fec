"""The benchmark: MuJoCo cross-checks of the converter it times, and a smoke test of
``bench_fd(quick=True)`` so that the benchmark code never rots (STYLE.md, Benchmarks)."""

import math

import numpy as np
import pytest

import articulated as art
from articulated import models
from articulated.bench import common
from articulated.bench import fd as bench
from articulated.builder import ModelBuilder

from conftest import rel_err


def _chain_revolute_prismatic():
    """A 6-body chain mixing revolute and prismatic joints, tilted placements, offset COMs
    and full (rotated) inertias."""
    b = ModelBuilder(gravity=(0.3, -0.2, -9.81))
    rng = np.random.default_rng(7)
    parent = None
    for k in range(6):
        joint = "revolute" if k % 2 == 0 else "prismatic"
        A = rng.normal(size=(3, 3))
        R, _ = np.linalg.qr(A)
        if np.linalg.det(R) < 0:
            R[:, 0] = -R[:, 0]
        I = np.diag(rng.uniform(0.02, 0.05, 3))
        parent = b.add_body(f"b{k}", parent, joint, axis=rng.normal(size=3),
                            origin_xyz=rng.uniform(-0.3, 0.3, 3), origin_R=R,
                            mass=rng.uniform(0.5, 2.0), com=rng.uniform(-0.2, 0.2, 3),
                            inertia=R @ I @ R.T)
    return b.build()


@pytest.fixture(scope="module")
def mujoco():
    return pytest.importorskip("mujoco", reason="MuJoCo (PyPI 'mujoco', test extra) is a peer "
                                                "oracle; the cross-checks need it")


@pytest.mark.parametrize("name", ["chain", "pendulum30", "pendulum30_nonuniform",
                                  "floating_tree", "humanoid"])
def test_mujoco_forward_matches_aba(mujoco, name):
    """MuJoCo's qacc after mj_forward with qfrc_applied = tau (no damping, armature or
    contacts) equals our ABA to 1e-9 relative, and mj_inverse's qfrc_inverse our RNEA."""
    from articulated.interop import to_mujoco

    model = {"chain": _chain_revolute_prismatic,
             "pendulum30": lambda: models.pendulum(30),
             "pendulum30_nonuniform": lambda: models.pendulum(30, seed=3),
             "floating_tree": lambda: models.random_tree(
                 15, 4, joint_types=("revolute", "prismatic", "spherical", "fixed"),
                 floating_base=True),
             "humanoid": lambda: models.humanoid()}[name]()
    mj, conv = to_mujoco(model)
    assert mj.nv == model.nv and mj.nq == model.nq
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = model.random_configuration(rng)
        qd = rng.normal(size=model.nv)
        tau = rng.normal(size=model.nv)
        d = mujoco.MjData(mj)
        conv.set_state(d, q, qd, tau)
        mujoco.mj_forward(mj, d)
        qdd = art.aba(model, q, qd, tau)
        assert rel_err(conv.qacc_back(q, qd, d.qacc), qdd) < 1e-9
        assert rel_err(conv.qacc(q, qd, qdd), d.qacc) < 1e-9
        qdd_in = rng.normal(size=model.nv)
        d2 = mujoco.MjData(mj)
        conv.set_state(d2, q, qd)
        d2.qacc[:] = conv.qacc(q, qd, qdd_in)
        mujoco.mj_inverse(mj, d2)
        assert rel_err(conv.qfrc_back(q, d2.qfrc_inverse), art.rnea(model, q, qd, qdd_in)) < 1e-9


def test_mujoco_depth_limit_is_reported(mujoco):
    """Bodies nested deeper than about 1,000 levels: an 'n/a (MuJoCo: ...)' note, no crash."""
    mj, conv, note = bench.mujoco_model(models.pendulum(1100))
    assert mj is None and conv is None
    assert note.startswith("n/a (MuJoCo: ") and "DEPTH" in note, note


def test_mujoco_rejects_nested_free_joint(mujoco):
    from articulated.interop import to_mujoco

    b = ModelBuilder()
    b.add_body("base", None, "revolute")
    b.add_body("flyer", "base", "free")
    with pytest.raises(ValueError, match="top-level"):
        to_mujoco(b.build())


def test_address_space_cap_turns_runaway_allocation_into_memory_error():
    pytest.importorskip("resource")
    if common.proc_status("VmSize") is None:
        pytest.skip("needs /proc/self/status")
    with pytest.raises(MemoryError):
        with common.address_space_cap(256 * 2 ** 20):
            np.ones(2 * 2 ** 30 // 8)
    np.ones(2 ** 28 // 8)  # the limit is lifted again


def test_time_call_is_positive_and_finite():
    s = common.time_call(lambda: sum(range(100)), repeats=3, target_s=1e-3)
    assert 0 < s < 1e-2


def test_bench_fd_quick_smoke(capsys, tmp_path):
    """The benchmark runs end to end on tiny sizes, prints every table, writes its report."""
    out = tmp_path / "bench.md"
    res = bench.bench_fd(quick=True, out=out)
    names = [s.name for s in res.scenes]
    assert names == [f"pendulum-{n}" for n in bench.QUICK_PENDULUM_SIZES] + [
        "millipede-small", "molecule-300"]
    for sc in res.scenes:
        for m in ("aba", "rnea", "crba"):
            assert math.isfinite(sc.seconds[m]) and sc.seconds[m] > 0, (sc.name, m)
        for m in ("pin.aba", "pin.rnea", "pin.crba", "mj_forward", "mj_inverse"):
            s = sc.seconds.get(m)
            assert (s is None and sc.notes[m].startswith("n/a")) or (math.isfinite(s) and s > 0)
        for m, e in sc.agreement.items():
            assert e < 1e-9, (sc.name, m, e)
    assert [r.n for r in res.scaling] == list(bench.QUICK_SCALING_SIZES)
    for r in res.scaling:
        assert math.isfinite(r.ns_per_dof) and r.ns_per_dof > 0
        assert r.bytes_per_dof > 0
    assert res.seeds and all(s.ok for s in res.seeds)
    assert res.machine["numpy"] == np.__version__
    text = capsys.readouterr().out
    for title in ("Time per DOF", "Ratios", "Scaling", "seed scene"):
        assert title in text
    for name in names:
        assert name in text
    md = out.read_text()
    assert "| pendulum-8 |" in md and "Ratios" in md


def test_main_quick_json(tmp_path, capsys):
    import json

    from articulated.cli import main

    out = tmp_path / "bench.json"
    assert main(["bench", "fd", "--quick", "--no-seeds", "--sizes", "5", "--scaling", "50",
                       "--repeats", "2", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [s["name"] for s in data["scenes"]][0] == "pendulum-5"
    assert data["scaling"][0]["n"] == 50


def test_peer_timings_rows():
    model = models.pendulum(20)
    rows = bench.peer_timings(model, model.neutral(), repeats=5)
    assert rows[0][0] == "articulated.aba" and rows[0][1] > 0
    assert [r[0] for r in rows] == ["articulated.aba", "pinocchio.aba", "mujoco.mj_forward"]
    for _, s, note in rows:
        assert (s is not None and s > 0) or note.startswith("n/a")


def test_bench_simulator_robot_tables_quick():
    """``articulated bench simulator`` tables (c) and (d) on the quick robots (Pinocchio and
    example-robot-data are in the test extras): every row's result equals Pinocchio's to
    1e-8 and every timing is positive."""
    from articulated.bench.simulator import robots_tables

    lines = []
    robots_tables(lambda s="": lines.append(s), quick=True, repeats=1)
    text = "\n".join(lines)
    assert "## (c)" in text and "## (d)" in text, text
    lines = text.splitlines()
    rows = [ln for ln in lines if ln.startswith("|") and ("(fixed)" in ln or "(floating)" in ln)]
    assert len(rows) == 8, text   # 4 robots x 2 bases
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        assert float(cells[2]) > 0 and float(cells[3]) > 0
        assert float(cells[5]) < 1e-8, r
    batch = [ln for ln in lines if "largest difference" in ln]
    assert batch and float(batch[0].split("largest difference ")[1].rstrip(")")) < 1e-8
