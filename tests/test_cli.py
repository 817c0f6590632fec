"""The command line: --help is complete, simulate writes its outputs, bad input fails cleanly."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from articulated.cli import build_parser, main


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for cmd in ("demo", "simulate", "bench"):
        assert cmd in out


@pytest.mark.parametrize("cmd", ["demo", "simulate", "bench"])
def test_subcommand_help(cmd, capsys):
    with pytest.raises(SystemExit):
        main([cmd, "--help"])
    out = capsys.readouterr().out
    assert "usage: articulated " + cmd in out
    if cmd != "bench":
        for opt in ("--steps", "--dt", "--method", "--integrator", "--out"):
            assert opt in out


def test_simulate_scene_writes_trajectory(tmp_path):
    out = tmp_path / "run"
    rc = main(["simulate", "pendulum", "--n", "10", "--steps", "50", "--dt", "1e-3", "--out", str(out)])
    assert rc == 0
    data = np.load(out / "trajectory.npz")
    assert data["q"].shape[1] == 10
    assert data["t"][-1] == pytest.approx(0.05)
    assert (out / "trajectory.png").stat().st_size > 10_000
    # energy of an undamped RK4 pendulum is conserved to a small fraction
    total = data["kinetic"] + data["potential"]
    assert np.ptp(total) < 1e-6 * abs(total[0])


def test_simulate_urdf(tmp_path):
    from pathlib import Path

    urdf = Path(__file__).parent / "data" / "mixed_joints.urdf"
    rc = main(["simulate", "--urdf", str(urdf), "--steps", "20", "--out", str(tmp_path)])
    assert rc == 0
    assert (tmp_path / "trajectory.npz").exists()


def test_bad_arguments(capsys, tmp_path):
    assert main(["simulate", "--urdf", str(tmp_path / "missing.urdf"), "--out", str(tmp_path)]) == 1
    assert "error" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["simulate", "pendulum", "--dt", "-1"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        main(["simulate", "no_such_scene"])


def test_console_script_entry_point():
    r = subprocess.run([sys.executable, "-m", "articulated.cli", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "articulated" in r.stdout
    assert build_parser().prog == "articulated"


@pytest.mark.parametrize("scene", ["pendulum", "bicycle_chain", "millipede", "molecule", "humanoid",
                                   "crowd", "two_link_arm", "random_tree"])
def test_every_seed_scene_builds_and_simulates(scene, tmp_path):
    """The full-size seed scenes (13,000-link millipede, 50,000-DOF molecule, 200-character
    crowd) build and step: no depth or size limit like Pinocchio's or MuJoCo's."""
    rc = main(["simulate", scene, "--steps", "3", "--dt", "1e-4", "--integrator", "euler",
               "--out", str(tmp_path)])
    assert rc == 0
    data = np.load(tmp_path / "trajectory.npz")
    assert len(data["t"]) == 4
    assert np.isfinite(data["q"]).all() and np.isfinite(data["qd"]).all()
    assert np.abs(data["qd"][-1]).max() > 0  # it moved


AD_ROW = re.compile(r"^  (full DCA|adaptive N_A=\d+|adaptive, by camera)\s+([\d.]+)\s+(\S+)"
                    r"\s+(\S+)\s+x([\d.]+)\s+(\d+)/(\d+)$", re.M)
"""A row of the demo's adaptive-dynamics tables: label, mean us/step, hybrid and update
medians (us or -), DCA time / this time, active joints / budget."""


def _ad_tables(out):
    """The two adaptive-dynamics tables (pendulum, crowd) of the demo output as lists of
    (label, mean, hybrid, update, ratio, active, budget)."""
    tables, rows = [], None
    for m in AD_ROW.finditer(out):
        label, mean, hyb, upd, ratio, active, budget = m.groups()
        if label == "full DCA":
            rows = []
            tables.append(rows)
        num = lambda x: None if x == "-" else float(x)
        rows.append((label, float(mean), num(hyb), num(upd), float(ratio), int(active),
                     int(budget)))
    return tables


def test_demo_runs_and_reports_the_adaptive_speedup(tmp_path, capsys):
    """The main job, small: pendulum timing and simulation, adaptive dynamics (Redon,
    Galoppo & Lin 2005) on the pendulum with N_A = 1 and N_A = n and on a 4-character crowd
    with per-character budgets, then adaptive quasi-statics against the full DCA on a
    molecule (issue 4: the demo shows the adaptive speed-up), and adaptive contact on a
    12-capsule chain dropped onto a plane next to MuJoCo (issue 19)."""
    n, k = 10, 4
    rc = main(["demo", "--n", str(n), "--steps", "20", "--repeats", "2", "--molecule", "400",
               "--qs-steps", "3", "--ad-steps", "40", "--crowd", str(k), "--crowd-steps", "21",
               "--chain", "12", "--contact-steps", "700", "--out", str(tmp_path),
               "--protein", str(Path(__file__).parent / "data" / "4E43.pdb.gz"),
               "--protein-steps", "5"])
    assert rc == 0
    out = capsys.readouterr().out
    # real protein (issue 23): adaptive vs full DCA on 4E43, final structure written
    assert re.search(r"real protein: 4E43.pdb.gz, 3 chains, 754 torsions", out)
    import gemmi

    assert gemmi.read_structure(str(tmp_path / "protein-final.pdb"))[0].count_atom_sites() == 1655
    assert "full DCA" in out and "faster" in out and "relative displacement error" in out
    assert (tmp_path / "trajectory.npz").exists()
    assert (tmp_path / "trajectory.gif").exists() and (tmp_path / "trajectory.html").exists()

    pend, crowd = _ad_tables(out)
    # pendulum: the DCA row, then N_A = 1 and N_A = min(50, n) = n, each within its budget
    assert [r[0] for r in pend] == ["full DCA", "adaptive N_A=1", f"adaptive N_A={n}"]
    dca = pend[0]
    assert dca[1] > 0 and dca[4] == 1.0 and dca[5:] == (n, n)
    for label, mean, hyb, upd, ratio, active, budget in pend[1:]:
        assert budget == int(label.split("=")[1])
        assert 1 <= active <= budget
        assert all(np.isfinite(x) and x > 0 for x in (mean, hyb, upd, ratio))
        # the ratio is the DCA's mean time over this one (both printed to 0.1 us: a few per
        # cent for times of a few us)
        assert ratio == pytest.approx(dca[1] / mean, rel=0.1, abs=0.01)
    # crowd(k): 89 joints per character, budgets totalling about 10% of them
    nb = 89 * k
    assert [r[0] for r in crowd] == ["full DCA", "adaptive, by camera"]
    assert crowd[0][5:] == (nb, nb)
    _, mean, hyb, upd, ratio, active, budget = crowd[1]
    assert 0.05 * nb <= budget <= 0.15 * nb
    assert 1 <= active <= budget
    assert all(np.isfinite(x) and x > 0 for x in (mean, hyb, upd, ratio))
    assert ratio == pytest.approx(crowd[0][1] / mean, rel=0.1, abs=0.01)
    # the most active joints of each character over the run's active regions
    m = re.search(r"max active/budget: nearest (\d+)/(\d+), farthest (\d+)/(\d+) \((.*?)\)",
                  out)
    a_near, b_near, a_far, b_far = map(int, m.groups()[:4])
    assert m.group(5) == "all within"
    assert a_near <= b_near and a_far <= b_far
    assert b_near > b_far >= 1           # budgets decrease with the distance to the camera
    # contact: the chain (12 capsules, radius 1 cm) lies on the plane at rest, both ends of
    # every capsule touching, no depth; MuJoCo's row and the ratios follow
    row = re.search(r"^  articulated N_A=11\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+) mm"
                    r"\s+([\d.]+)$", out, re.M)
    fly, rest, ncon, depth, z = (float(x) for x in row.groups())
    assert fly > 0 and rest > 0 and ncon == 24 and depth <= 1.0
    assert z == pytest.approx(0.01, abs=2e-4)
    mj = re.search(r"^  MuJoCo mj_step\s+([\d.]+)\s+([\d.]+)\s+(\d+)", out, re.M)
    assert mj and float(mj.group(1)) > 0 and int(mj.group(3)) >= 12
    assert re.search(r"MuJoCo's time / ours: x[\d.]+ in flight, x[\d.]+ at rest", out)
