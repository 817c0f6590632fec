"""The command line: --help is complete, simulate writes its outputs, bad input fails cleanly."""

import subprocess
import sys

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


def test_demo_runs_and_reports_the_adaptive_speedup(tmp_path, capsys):
    """The main job, small: pendulum timing and simulation, then adaptive quasi-statics
    against the full DCA on a molecule (issue 4: the demo shows the adaptive speed-up)."""
    rc = main(["demo", "--n", "10", "--steps", "20", "--repeats", "2", "--molecule", "400",
               "--qs-steps", "3", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "full DCA" in out and "faster" in out and "relative displacement error" in out
    assert (tmp_path / "trajectory.npz").exists()
