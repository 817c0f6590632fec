"""``articulated bench contact-mujoco``: MuJoCo's model of each GLM scene is ours (mass,
DOF, energy of a state), the drive reaches MuJoCo as the same generalized forces (MuJoCo's
own ``mj_applyFT`` for the thread's spring), and a quick run reports real numbers: the
thread through every hole in both simulators, within a few millimetres of each other."""

from __future__ import annotations

import numpy as np
import pytest

import articulated as art
from articulated.bench import contact_mujoco as bench

mujoco = pytest.importorskip("mujoco", reason="MuJoCo (PyPI 'mujoco', test extra) is the peer")


@pytest.fixture(scope="module")
def scenes():
    return {name: bench.build_scene(name, quick=True) for name in bench.SCENES}


@pytest.mark.parametrize("name", bench.SCENES)
def test_mujoco_model_is_ours(scenes, name):
    """Same DOF, total mass, shapes and, at the start with random velocities, the same
    kinetic and potential energy (MuJoCo's mj_energyPos/Vel on the converted state)."""
    from articulated.interop import to_mujoco_state

    s = scenes[name]
    m = s.model
    mj, conv, _ = bench.mujoco_scene(s)
    assert mj.nv == m.nv and mj.opt.timestep == bench.H
    assert abs(mj.body_mass.sum() - m.body_mass.sum()) <= 1e-12 * m.body_mass.sum()
    assert mj.ngeom == len(s.geom.arrays()["body"])
    mj.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d = mujoco.MjData(mj)
    qd = np.random.default_rng(1).normal(size=m.nv)
    d.qpos[:], d.qvel[:] = to_mujoco_state(m, mj, s.q0, qd)
    mujoco.mj_forward(mj, d)
    T, V = art.energy(m, s.q0, qd)
    assert d.energy[1] == pytest.approx(T, rel=1e-10)
    assert d.energy[0] == pytest.approx(V, rel=1e-10, abs=1e-12)
    # every shape where ours is: body pose times the shape's placement, statics as given
    # (MuJoCo keeps the geoms of a body together, the world's first)
    A = s.geom.arrays()
    order = np.argsort(A["body"] + 1, kind="stable")
    A = {k: A[k][order] for k in ("body", "pos", "R", "mu", "size")}
    assert np.array_equal(mj.geom_bodyid, A["body"] + 1)
    R, p = art.forward_kinematics(m, s.q0)
    b = A["body"]
    on = b >= 0
    pos, rot = A["pos"].copy(), A["R"].copy()
    pos[on] = p[b[on]] + np.einsum("gij,gj->gi", R[b[on]], A["pos"][on])
    rot[on] = R[b[on]] @ A["R"][on]
    assert np.allclose(d.geom_xpos, pos, rtol=0, atol=1e-12)
    planes = mj.geom_type == mujoco.mjtGeom.mjGEOM_PLANE
    assert np.allclose(d.geom_xmat.reshape(-1, 3, 3)[~planes], rot[~planes], rtol=0, atol=1e-12)
    assert np.allclose(mj.geom_friction[:, 0], A["mu"], rtol=0, atol=0)
    assert np.array_equal(mj.geom_size[~planes], A["size"][~planes])   # half-sizes both


def test_thread_spring_reaches_mujoco_as_applyFT_of_the_same_force(scenes):
    """The thread's spring (a moving anchor, damping along the line) evaluated at MuJoCo's
    state: qfrc_applied equals mj_applyFT of the force computed here by hand at the head;
    the joint damping is MuJoCo's dof_damping (hinges only)."""
    from articulated.interop import to_mujoco_state

    s = scenes["b"]
    m = s.model
    mj, conv, drive = bench.mujoco_scene(s)
    spring, damping = s.forces()
    assert np.array_equal(mj.dof_damping[:6], np.zeros(6))
    assert np.allclose(mj.dof_damping[6:], damping.b[6:], rtol=0, atol=0)
    q = s.q0.copy()
    q[:3] += (0.01, -0.004, 0.003)
    qd = np.random.default_rng(2).normal(scale=0.3, size=m.nv)
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:] = to_mujoco_state(m, mj, q, qd)
    t = 0.1
    mujoco.mj_forward(mj, d)
    head, vel = d.xpos[1].copy(), d.qvel[:3].copy()   # body 0's origin and its velocity
    dd = head - (spring.anchor + t * spring.anchor_velocity)
    ddot = vel - spring.anchor_velocity
    F = -spring.stiffness * dd - spring.damping * (dd @ ddot) / (dd @ dd) * dd
    want = np.zeros(mj.nv)
    mujoco.mj_applyFT(mj, d, F, np.zeros(3), head, 1, want)
    got = drive.qfrc(t, d.qpos, d.qvel)
    assert np.abs(F).max() > 1.0
    assert np.allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_snake_gait_reaches_mujoco_as_our_pd_torques(scenes):
    """The snake's PD gait at t = 0.3 s: qfrc_applied is kp (q_ref(t) - q) on every hinge
    (our PDController.apply with qd = 0, mapped back), kd is MuJoCo's dof_damping."""
    s = scenes["c"]
    m = s.model
    mj, conv, drive = bench.mujoco_scene(s)
    pd = s.forces()[0]
    t = 0.3
    q = s.q0.copy()
    q[7:] += np.random.default_rng(3).normal(scale=0.1, size=m.nv - 6)
    got = drive.qfrc(t, conv.qpos(q), np.zeros(mj.nv))
    tau = np.zeros(m.nv)
    pd.apply(m, t, q, np.zeros(m.nv), tau, np.zeros((m.nb, 6)))
    assert np.abs(tau).max() > 0.1
    assert np.allclose(conv.qfrc_back(q, got), tau, rtol=0, atol=1e-12)
    assert np.array_equal(mj.dof_damping[6:], np.full(m.nv - 6, pd.kd[0]))
    assert not mj.dof_damping[:6].any()


def test_quick_thread_goes_through_every_hole_in_both(scenes):
    """The quick thread (45 DOF, 600 steps): our full model and MuJoCo run it, every
    crossing of a wall plane inside its hole, the heads within 5 mm of each other, finite
    times, depths at most 1 mm."""
    s = scenes["b"]
    art.bench.contact.warm_up(("full",))
    ours = bench.run_ours(s, 10)
    mj = bench.run_mujoco(s, 10)
    for r in (ours, mj):
        assert r["diverged"] is None and len(r["part"]) == 10
        assert np.isfinite(r["part"]).all() and (r["part"] > 0).all()
        assert np.isfinite(r["depth"]).all() and r["depth"].max() <= 1e-3
    h0, past0, out0 = bench.thread_outcome(s, ours["q"][-1])
    h1, past1, out1 = bench.thread_outcome(s, mj["q"][-1])
    assert out0 == 0 and out1 == 0
    assert h0 > 0.45 and abs(h0 - h1) < 5e-3
    assert ours["depth"].max() < mj["depth"].max()


def test_quick_snake_moves_along_the_beam_in_both(scenes):
    """The quick snake (45 DOF, 600 steps of the rolling gait): its centre of mass moves
    2-3 cm along the beam in our full model and in MuJoCo (defaults), within 1 cm of each
    other; ours at most 0.1 mm deep, MuJoCo's soft contacts deeper."""
    s = scenes["c"]
    art.bench.contact.warm_up(("full",))
    ours = bench.run_ours(s, 10)
    mj = bench.run_mujoco(s, 10)
    shift = [bench.body_com(s.model, r["q"][-1])[0] - bench.body_com(s.model, s.q0)[0]
             for r in (ours, mj)]
    assert ours["diverged"] is None and mj["diverged"] is None
    assert all(0.015 < x < 0.04 for x in shift) and abs(shift[0] - shift[1]) < 0.01
    assert ours["depth"].max() < 1e-4 < mj["depth"].max()


def test_cli_quick_pendulum_writes_the_table(tmp_path):
    """``articulated bench contact-mujoco --quick --only a`` writes its table (two runs of
    ours, two of MuJoCo) and figure."""
    from articulated.cli import BENCHES, main

    assert "contact-mujoco" in BENCHES
    assert main(["bench", "contact-mujoco", "--quick", "--only", "a",
                 "--out", str(tmp_path)]) == 0
    text = (tmp_path / "contact-mujoco-results-quick.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ours") or
            line.startswith("| MuJoCo")]
    assert len(rows) == 4 and all("ran 0.3 s" in r for r in rows)
    assert (tmp_path / "contact-mujoco-quick.png").stat().st_size > 10_000
