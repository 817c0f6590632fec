"""Long runs (issue 22 items 3-4): checkpoints and bit-identical resume (ABA, DCA, SRM,
adaptive dynamics with its active region), Ctrl-C, failed writes, the energy watch and
the divergence report."""

from __future__ import annotations

import os
import signal
import threading
import warnings

import numpy as np
import pytest

import articulated as art
from articulated.simulation import (CheckpointError, EnergyDriftWarning, Force, PointForce,
                                    RunInterrupted, SimulationDiverged, Simulator, Spring,
                                    Trajectory)
from articulated.simulation import checkpoint as ckmod

RECORDED = ("t", "q", "qd", "kinetic", "potential", "active", "update_region", "rigidified")


class Killed(Exception):
    """Stands for a killed process: raised right after the n-th checkpoint write."""


def _kill_after(monkeypatch, n):
    """Make the run die after its n-th checkpoint write (the file then holds that one)."""
    original = ckmod.Checkpointer.write
    calls = []

    def write(self, *args, **kwargs):
        original(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == n:
            raise Killed

    monkeypatch.setattr(ckmod.Checkpointer, "write", write)
    return calls


def _same(a: Trajectory, b: Trajectory):
    """Bit-identical records (wall times aside)."""
    for k in RECORDED:
        x, y = getattr(a, k), getattr(b, k)
        assert (x is None) == (y is None), k
        if x is not None:
            assert x.shape == y.shape and np.array_equal(x, y), k


def _crumpled(n, seed=0):
    m = art.models.pendulum(n)
    return m, np.random.default_rng(seed).uniform(-0.3, 0.3, m.nq)


CASES = {
    "aba-rk4": lambda: (art.models.pendulum(12), dict(integrator="rk4", method="aba"),
                        [Spring("link11", (0, 0, 0), anchor=(0.3, 0, -1.0), stiffness=2.0)]),
    "dca-semi-implicit": lambda: (art.models.pendulum(12),
                                  dict(integrator="semi_implicit_euler", method="dca"),
                                  [PointForce("link11", (0.0, 0.2, 0.0))]),
    "srm-rk2": lambda: (art.models.four_bar(loop_kind="point"),
                        dict(integrator="rk2", method="srm", srm=dict(iterations=3)), []),
    "srm-adaptive": lambda: (art.models.four_bar(loop_kind="point"),
                             dict(integrator="rk2", method="srm", rtol=1e-7, atol=1e-7), []),
    "adaptive": lambda: (art.models.pendulum(40),
                         dict(method="adaptive", max_active=6, update_every=10),
                         [PointForce("link39", (0.0, 0.3, 0.0))]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_resume_is_bit_identical(case, tmp_path, monkeypatch):
    """A run that dies after its third checkpoint (steps 0, 40, 80) and is resumed from the
    file alone (model from its description, forces from their parameters) gives the
    uninterrupted run's records bit for bit."""
    model, settings, forces = CASES[case]()
    dt = 0.005 if case.startswith("srm") else 1e-3
    q0 = (model.neutral() if case.startswith("srm")
          else np.random.default_rng(1).uniform(-0.3, 0.3, model.nq))
    steps, every = 230, 7
    ref = Simulator(model, dt, q0=q0, forces=forces, **settings).run(steps, every)
    path = tmp_path / "run.npz"
    sim = Simulator(model, dt, q0=q0, forces=forces, **settings)
    calls = _kill_after(monkeypatch, 3)
    with pytest.raises(Killed):
        sim.run(steps, every, checkpoint=path, checkpoint_every=40)
    monkeypatch.undo()
    part = Trajectory.load(path)                    # a checkpoint is a trajectory file too
    assert len(calls) == 3 and part.t[-1] == pytest.approx(77 * dt)
    for k in RECORDED:
        if getattr(part, k) is not None:
            assert np.array_equal(getattr(part, k), getattr(ref, k)[:len(part)]), k
    done = Simulator.resume(path)
    _same(done, ref)
    assert done.nfev == ref.nfev and not done.interrupted
    _same(Trajectory.load(path), ref)               # the last checkpoint is the whole run
    if case == "adaptive":
        assert done.rigidified.sum() > 0 and done.active[1:].max() == 6


def test_resume_needs_user_forces_and_a_model(tmp_path, monkeypatch):
    """A user's Python force is not written: resume asks for the forces; a model built by
    hand has no description: resume asks for the model."""

    class Push(Force):
        def apply(self, model, t, q, qd, tau, f_ext, kin=None):
            tau[0] += 0.1

    b = art.ModelBuilder()
    b.add_body("a", None, "revolute", axis=(0, 1, 0), mass=1.0, com=(0, 0, -0.5),
               inertia=np.diag([0.1, 0.1, 0.01]))
    m = b.build()
    path = tmp_path / "user.npz"
    ref = Simulator(m, 1e-3, "rk4", forces=[Push()], q0=[0.4]).run(60, 5)
    _kill_after(monkeypatch, 2)
    with pytest.raises(Killed):
        Simulator(m, 1e-3, "rk4", forces=[Push()], q0=[0.4]).run(60, 5, checkpoint=path,
                                                                  checkpoint_every=25)
    monkeypatch.undo()
    with pytest.raises(ValueError, match="Push"):
        Simulator.resume(path, model=m)
    with pytest.raises(ValueError, match="no model description"):
        Simulator.resume(path, forces=[Push()])
    _same(Simulator.resume(path, model=m, forces=[Push()]), ref)
    with pytest.raises(ValueError, match="bodies"):
        Simulator.resume(path, model=art.models.pendulum(2), forces=[Push()])


def test_settings_that_cannot_be_checkpointed(tmp_path):
    m = art.models.pendulum(3)
    with pytest.raises(ValueError, match="rk45"):
        Simulator(m, 1e-3, "rk45").run(5, checkpoint=tmp_path / "a.npz")
    with pytest.raises(ValueError, match="checkpoint_every"):
        Simulator(m, 1e-3, "rk4").run(5, checkpoint=tmp_path / "a.npz", checkpoint_every=0)
    with pytest.raises(ValueError, match="without checkpoint"):
        Simulator(m, 1e-3, "rk4").run(5, checkpoint_every=2)
    with pytest.raises(ValueError, match="not a checkpoint"):
        Simulator(m, 1e-3, "rk4").run(5).save(tmp_path / "plain.npz")
        Simulator.resume(tmp_path / "plain.npz")


def test_failed_write_keeps_the_trajectory(tmp_path, monkeypatch):
    """A missing folder fails before the first step; a disk that fills up mid-run raises
    CheckpointError with the records so far, and the simulator holds the state reached."""
    m = art.models.pendulum(4)
    sim = Simulator(m, 1e-3, "rk4", q0=np.full(4, 0.2))
    with pytest.raises(CheckpointError, match="cannot write the checkpoint") as e:
        sim.run(100, 10, checkpoint=tmp_path / "missing" / "run.npz")
    assert len(e.value.trajectory) == 1 and sim.t == 0.0
    original = ckmod.write_atomic
    calls = []

    def full_disk(path, arrays):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        original(path, arrays)

    monkeypatch.setattr(ckmod, "write_atomic", full_disk)
    ref = Simulator(m, 1e-3, "rk4", q0=np.full(4, 0.2)).run(100, 10)
    with pytest.raises(CheckpointError, match="No space left") as e:
        sim.run(100, 10, checkpoint=tmp_path / "run.npz", checkpoint_every=30)
    tr = e.value.trajectory
    assert len(tr) == 7 and np.array_equal(tr.q, ref.q[:7])       # records of steps 0..60
    assert sim.t == pytest.approx(0.06) and np.array_equal(sim.q, tr.q[-1])
    assert Trajectory.load(tmp_path / "run.npz").t[-1] == pytest.approx(0.03)  # the last good one
    assert not list(tmp_path.glob(".*tmp"))                         # no temporary file left


def _sigint_at_step(step):
    class Interrupt(Force):
        """Presses Ctrl-C (SIGINT to this process) when the simulation reaches ``step``."""
        conservative = True

        def __init__(self):
            self.n = 0

        def apply(self, model, t, q, qd, tau, f_ext, kin=None):
            self.n += 1
            if self.n == step:
                os.kill(os.getpid(), signal.SIGINT)

    return Interrupt()


def test_ctrl_c_returns_the_records_and_resumes(tmp_path):
    """Ctrl-C in a Python-path run returns the records so far (no traceback), saves the
    checkpoint at the interrupted step, and resume finishes the run bit for bit."""
    m = art.models.pendulum(5)
    q0 = np.full(5, 0.3)
    ref = Simulator(m, 1e-3, "semi_implicit_euler", q0=q0, forces=[_sigint_at_step(10 ** 9)]
                    ).run(120, 9)
    path = tmp_path / "run.npz"
    with pytest.warns(RunInterrupted, match="after step 47 of 120"):
        tr = Simulator(m, 1e-3, "semi_implicit_euler", q0=q0, forces=[_sigint_at_step(47)]
                       ).run(120, 9, checkpoint=path, checkpoint_every=100)
    assert tr.interrupted and len(tr) == 6 and np.array_equal(tr.q, ref.q[:6])
    _same(Simulator.resume(path, forces=[_sigint_at_step(10 ** 9)]), ref)


def test_ctrl_c_stops_the_compiled_loop():
    """SIGINT from another thread during a long compiled run: it stops within its stretch
    of steps (about 0.2 s) with the records so far, equal to the uninterrupted ones."""
    m = art.models.pendulum(20)
    q0 = np.full(20, 0.1)
    sim = Simulator(m, 1e-4, "rk4", q0=q0)
    sim.run(10)                                                      # compiled
    sim = Simulator(m, 1e-4, "rk4", q0=q0)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.warns(RunInterrupted):
        tr = sim.run(5_000_000, 1000)
    timer.join()
    assert tr.interrupted and 1 < len(tr) < 5001
    k = int(round(sim.t / 1e-4))
    ref = Simulator(m, 1e-4, "rk4", q0=q0).run(k, 1000)
    n = len(tr)
    assert np.array_equal(tr.q, ref.q[:n]) and np.array_equal(sim.q, ref.q[-1])


def test_energy_watch_fires_on_the_crumpled_pendulum():
    """Issue 22: pendulum-300 from a crumpled start (joints uniform in +-0.3 rad),
    semi-implicit Euler at 1 ms gains energy with no word: the watch warns once, within
    0.6 s, naming the step, the drift and a smaller step."""
    m, q0 = _crumpled(300)
    sim = Simulator(m, 1e-3, "semi_implicit_euler", q0=q0)
    with pytest.warns(EnergyDriftWarning) as w:
        tr = sim.run(600, 10)
    assert len(w) == 1
    msg = str(w[0].message)
    assert "at step" in msg and "try dt <=" in msg
    # an independent look at the same records: the drift at the step it names
    step = int(msg.split("at step ")[1].split()[0])
    E = tr.total
    i = step // 10
    assert abs(E[i] - E[0]) / abs(E[0]) > 0.01 and abs(E[i - 1] - E[0]) / abs(E[0]) <= 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnergyDriftWarning)
        sim.run(100, 10)                                        # once per simulator
        Simulator(m, 1e-3, "semi_implicit_euler", q0=q0, energy_drift=None).run(600, 10)


def test_energy_watch_quiet_on_the_demo_pendulum():
    """`articulated demo` settings (cli.py): pendulum-300, first joint at 1.2 rad, others
    +-0.05 rad, RK4 at 1 ms, 4000 steps: no warning; nor with forces that do work."""
    from articulated.cli import _initial_configuration

    m = art.models.pendulum(300)
    q0 = _initial_configuration(m, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnergyDriftWarning)
        tr = Simulator(m, 1e-3, "rk4", q0=q0).run(4000, 10)
        # the crumpled pendulum gains energy as above, but a force that does work (a
        # negligible damping here) turns the watch off
        m2, q2 = _crumpled(300)
        t2 = Simulator(m2, 1e-3, "semi_implicit_euler", q0=q2,
                       forces=[art.JointDamping(1e-9)]).run(600, 10)
    assert np.abs(t2.total - t2.total[0]).max() > 0.01 * abs(t2.total[0])
    drift = np.abs(tr.total - tr.total[0]).max() / abs(tr.total[0])
    assert drift < 1e-3


def test_diverged_names_the_joint_and_keeps_the_last_state():
    m = art.models.pendulum(3)
    sim = Simulator(m, 0.5, "euler", q0=[1.0, 1.0, 1.0], qd0=[1e3, -1e3, 1e3],
                    energy_drift=None)
    with pytest.raises(SimulationDiverged) as e:
        sim.run(1000)
    err = e.value
    assert err.joint in m.joint_name and f"Joint {err.joint!r} went first" in str(err)
    assert np.isfinite(err.q).all() and np.isfinite(err.qd).all()
    assert np.array_equal(err.q, sim.q) and np.array_equal(err.trajectory.q[-1], err.q)


def test_cli_simulate_checkpoint(tmp_path):
    """`articulated simulate pendulum --checkpoint PATH`: the checkpoint holds the run,
    equal to the trajectory file the command writes."""
    from articulated.cli import main

    path = tmp_path / "ck.npz"
    assert main(["simulate", "pendulum", "--n", "4", "--steps", "60", "--checkpoint",
                 str(path), "--checkpoint-every", "25", "--out", str(tmp_path)]) == 0
    a, b = Trajectory.load(path), Trajectory.load(tmp_path / "trajectory.npz")
    _same(a, b)
    assert a.t[-1] == pytest.approx(0.06) and a.description["scene"] == "pendulum"
