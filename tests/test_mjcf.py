"""Tests of articulated.io.mjcf.load_mjcf: forward dynamics against MuJoCo's own mj_forward on
dm_control's suite models (tests/data/mjcf, Apache-2.0), joint mapping, ranges, geoms,
equality constraints, and the errors and warnings on what is not supported."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="load_mjcf needs MuJoCo (the test extra)")

from articulated import aba, forward_kinematics, load_mjcf  # noqa: E402
from articulated.geometry import SHAPE_CAPSULE, SHAPE_PLANE, SHAPE_SPHERE  # noqa: E402
from articulated.model import (JOINT_FREE, JOINT_REVOLUTE, JOINT_SPHERICAL,  # noqa: E402
                               loop_residual_np)

DATA = Path(__file__).parent / "data" / "mjcf"
SUITE = ["humanoid", "humanoid_CMU", "cheetah", "walker", "hopper", "swimmer", "acrobot",
         "cartpole", "fish", "finger"]
B = mujoco.mjtDisableBit


def load(src, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_mjcf(src, **kw)


def quat2mat(q):
    """MuJoCo's own quaternion -> rotation (an independent reference for ours)."""
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(q, dtype=np.float64))
    return R.reshape(3, 3)


def mj_plain(m):
    """Make mj_forward compute what our ABA computes with no applied force: no constraints
    (contacts, limits, equalities), no passive forces (springs, dampers, fluid), no
    actuation (the armature stays: ours has it too)."""
    m.opt.disableflags |= (B.mjDSBL_CONSTRAINT | B.mjDSBL_SPRING | B.mjDSBL_DAMPER
                           | B.mjDSBL_ACTUATION)
    m.opt.density = m.opt.viscosity = 0.0
    return m


class MjMap:
    """Our (q, qd, tau, qdd) <-> MuJoCo's (qpos, qvel, qfrc, qacc), joint by joint *by name*.
    Free joints: ours qd = [w; v] (both body coordinates), MuJoCo's qvel = [R v; w]."""

    def __init__(self, model, m):
        self.model, self.m = model, m
        self.j = []
        for i in range(model.nb):
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, model.joint_name[i])
            assert jid >= 0, f"MuJoCo has no joint {model.joint_name[i]!r}"
            self.j.append((i, int(m.jnt_qposadr[jid]), int(m.jnt_dofadr[jid])))

    def to_mj(self, q, qd, tau):
        md, m = self.model, self.m
        qpos, qvel, qfrc = np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)
        for i, pa, da in self.j:
            qa, va, nq, nv = md.jnt_qadr[i], md.jnt_vadr[i], md.jnt_nq[i], md.jnt_nv[i]
            qpos[pa:pa + nq] = q[qa:qa + nq]
            if md.jnt_type[i] == JOINT_FREE:
                R = quat2mat(q[qa + 3:qa + 7])
                qvel[da:da + 6] = np.concatenate([R @ qd[va + 3:va + 6], qd[va:va + 3]])
                qfrc[da:da + 6] = np.concatenate([R @ tau[va + 3:va + 6], tau[va:va + 3]])
            else:
                qvel[da:da + nv], qfrc[da:da + nv] = qd[va:va + nv], tau[va:va + nv]
        return qpos, qvel, qfrc

    def qacc(self, q, qd, qdd):
        md = self.model
        out = np.zeros(self.m.nv)
        for i, pa, da in self.j:
            qa, va, nv = md.jnt_qadr[i], md.jnt_vadr[i], md.jnt_nv[i]
            if md.jnt_type[i] == JOINT_FREE:
                R = quat2mat(q[qa + 3:qa + 7])
                w, v = qd[va:va + 3], qd[va + 3:va + 6]
                # body-coordinate spatial acceleration -> world classical acceleration
                out[da:da + 3] = R @ (qdd[va + 3:va + 6] + np.cross(w, v))
                out[da + 3:da + 6] = qdd[va:va + 3]
            else:
                out[da:da + nv] = qdd[va:va + nv]
        return out


def mj_errors(name, intermediate_mass, n_states=3, seed=0, armature=True):
    """Max error of our ABA against mj_forward's qacc, relative to max(1, |qacc|) (both
    without armature for ``armature=False``)."""
    path = DATA / f"{name}.xml"
    model = load(path, intermediate_mass=intermediate_mass)
    m = mj_plain(mujoco.MjModel.from_xml_path(str(path)))
    if not armature:
        model = model.with_armature(0.0)
        m.dof_armature[:] = 0.0
    d = mujoco.MjData(m)
    mp = MjMap(model, m)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(n_states):
        q = model.random_configuration(rng)
        qd, tau = rng.normal(size=model.nv), 5 * rng.normal(size=model.nv)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = mp.to_mj(q, qd, tau)
        mujoco.mj_forward(m, d)
        ours = mp.qacc(q, qd, aba(model, q, qd, tau))
        worst = max(worst, float(np.abs(ours - d.qacc).max() / max(1.0, np.abs(d.qacc).max())))
    return worst


# ----------------------------------------------------------- dynamics against MuJoCo

@pytest.mark.parametrize("name", SUITE)
def test_aba_matches_mj_forward(name):
    """qacc of our ABA equals mj_forward's to 1e-9 (intermediate bodies of multi-joint
    MuJoCo bodies at 1e-12 of the body's mass: see the next test for the default)."""
    assert mj_errors(name, 1e-12) < 1e-9


def test_intermediate_mass_is_the_only_difference():
    """humanoid (bodies with 2 and 3 joints): the difference to MuJoCo is proportional to
    intermediate_mass (so it is the regularization, not a mapping error; without armature,
    which would hide it), and models with one joint per body are exact whatever it is."""
    e9 = mj_errors("humanoid", 1e-9, n_states=1, armature=False)
    e12 = mj_errors("humanoid", 1e-12, n_states=1, armature=False)
    assert 1e-9 < e9 < 1e-5
    assert 500 < e9 / e12 < 2000
    assert mj_errors("acrobot", 1e-3) < 1e-12


# ----------------------------------------------------------------- structure

def test_humanoid_structure():
    """Coordinates are MuJoCo's qpos (same order, same free-joint layout), intermediate
    bodies named after their joint, ranges in radians as MuJoCo compiled them."""
    path = DATA / "humanoid.xml"
    model = load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert (model.nq, model.nv) == (m.nq, m.nv) == (28, 27)
    assert model.jnt_type[0] == JOINT_FREE and model.joint_name[0] == "root"
    # the same order as qpos
    adr = [int(m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)])
           for n in model.joint_name]
    assert adr == list(model.jnt_qadr)
    # right_thigh carries 3 joints: two intermediate bodies, then the thigh itself
    i = model.body_id("right_thigh")
    assert model.body_name[i - 2:i + 1] == ["right_thigh/right_hip_x", "right_thigh/right_hip_z",
                                           "right_thigh"]
    assert len(model.mjcf_intermediate) == sum(max(int(n) - 1, 0) for n in m.body_jntnum) == 9
    for n in model.joint_name:
        jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)
        k = model.joint_id(n)
        if m.jnt_limited[jid]:
            assert model.jnt_range[k].tolist() == m.jnt_range[jid].tolist()
    assert np.deg2rad(-25) == pytest.approx(model.jnt_range[model.joint_id("right_hip_x")][0])
    # masses: ours carries every moving body's mass plus the intermediate fractions
    assert model.total_mass == pytest.approx(m.body_mass[1:].sum(), rel=1e-8)
    assert model.description["sha256"] and model.description["mjcf"].endswith("humanoid.xml")


def test_body_poses_match_mujoco():
    """model.frames puts every MuJoCo body where mj_kinematics does, at random q."""
    path = DATA / "humanoid_CMU.xml"
    model = load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    mp = MjMap(model, m)
    for _ in range(2):
        q = model.random_configuration(rng)
        d.qpos[:] = mp.to_mj(q, np.zeros(model.nv), np.zeros(model.nv))[0]
        mujoco.mj_kinematics(m, d)
        Rb, pb = forward_kinematics(model, q)
        for b in range(1, m.nbody):
            o, R, p = model.frames[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)]
            Rw, pw = (R, p) if o < 0 else (Rb[o] @ R, pb[o] + Rb[o] @ p)
            np.testing.assert_allclose(Rw, d.xmat[b].reshape(3, 3), atol=1e-12)
            np.testing.assert_allclose(pw, d.xpos[b], atol=1e-12)


def test_ref_ball_and_anchor(tmp_path):
    """A hinge with a ref and an off-origin anchor, a ball joint with an anchor, a slide with
    a ref: q = qpos and the dynamics equal MuJoCo's."""
    xml = """<mujoco><option gravity="0.3 -1 -9"/><worldbody>
      <body name="a" pos="0.1 0.2 0.3" quat="0.9 0.1 0.3 0.2">
        <joint name="h" type="hinge" axis="0.3 1 0.2" pos="0.1 0 0.2" ref="0.4" range="-1 2"/>
        <joint name="s" type="slide" axis="1 0 0.5" ref="-0.2"/>
        <geom type="capsule" size="0.05 0.2" pos="0 0 -0.1"/>
        <body name="b" pos="0 0.3 -0.4" euler="10 20 30">
          <joint name="ball" type="ball" pos="0.05 -0.1 0.1"/>
          <geom type="box" size="0.1 0.05 0.2" pos="0.1 0 0" euler="5 0 7"/>
        </body></body></worldbody></mujoco>"""
    f = tmp_path / "t.xml"
    f.write_text(xml)
    model = load(f, intermediate_mass=1e-13)
    assert model.gravity.tolist() == [0.3, -1.0, -9.0]
    assert model.jnt_type[model.joint_id("ball")] == JOINT_SPHERICAL
    assert model.jnt_type[model.joint_id("h")] == JOINT_REVOLUTE
    # MJCF angles are in degrees unless <compiler angle="radian">
    np.testing.assert_allclose(model.jnt_range[model.joint_id("h")], np.deg2rad([-1.0, 2.0]))
    m = mj_plain(mujoco.MjModel.from_xml_string(xml))
    d = mujoco.MjData(m)
    mp = MjMap(model, m)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = model.random_configuration(rng)
        qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = mp.to_mj(q, qd, tau)
        mujoco.mj_forward(m, d)
        np.testing.assert_allclose(mp.qacc(q, qd, aba(model, q, qd, tau)), d.qacc,
                                   rtol=0, atol=1e-9 * max(1, np.abs(d.qacc).max()))
    # an XML string loads the same model; its description has no path
    s = load(xml, intermediate_mass=1e-13)
    assert s.description["mjcf"] is None
    assert s.description["sha256"] != model.description["sha256"] or xml == f.read_text()


def test_geoms():
    """Colliding geoms become shapes with MuJoCo's sizes, placements, friction and filters;
    the floor plane is static; visual-only geoms are left out."""
    path = DATA / "walker.xml"
    model = load(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    geom = model.collision
    A = geom.arrays()
    colliding = [g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]]
    assert len(geom) == len(colliding)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    Rb, pb = forward_kinematics(model, model.neutral())
    for k, g in enumerate(colliding):
        assert A["name"][k] == mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g)
        assert A["mu"][k] == m.geom_friction[g, 0]
        b = A["body"][k]
        if A["kind"][k] == SHAPE_PLANE:
            assert b == -1
            np.testing.assert_allclose(A["R"][k][:, 2], d.geom_xmat[g].reshape(3, 3)[:, 2])
            continue
        # world pose of the shape at the model's reference configuration (q = qpos0 = 0)
        np.testing.assert_allclose(pb[b] + Rb[b] @ A["pos"][k], d.geom_xpos[g], atol=1e-12)
        np.testing.assert_allclose(Rb[b] @ A["R"][k], d.geom_xmat[g].reshape(3, 3), atol=1e-12)
        if A["kind"][k] == SHAPE_CAPSULE:
            assert A["size"][k][:2].tolist() == [m.geom_size[g, 0], m.geom_size[g, 1]]
    # humanoid: a thigh (3 joints) never collides with the pelvis, as in MuJoCo
    hm = load(DATA / "humanoid.xml").collision
    pairs = {tuple(sorted((hm.model.body_name[hm.arrays()["body"][a]],
                           hm.model.body_name[hm.arrays()["body"][b]])))
             for a, b in hm.arrays()["pairs"] if min(hm.arrays()["body"][[a, b]]) >= 0}
    assert ("pelvis", "right_thigh") not in pairs and ("left_thigh", "right_thigh") in pairs


def test_sphere_and_exclude(tmp_path):
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
      <body name="a"><freejoint/><geom name="ga" type="sphere" size="0.1"/></body>
      <body name="b"><freejoint/><geom name="gb" type="sphere" size="0.2" friction="0.7"/></body>
      <body name="c"><freejoint/><geom name="gc" type="sphere" size="0.2" contype="0" conaffinity="0"/></body>
      </worldbody><contact><exclude body1="a" body2="b"/></contact></mujoco>"""
    model = load(xml)
    A = model.collision.arrays()
    assert A["name"] == ["floor", "ga", "gb"]
    assert A["kind"][1] == SHAPE_SPHERE and A["size"][2][0] == 0.2 and A["mu"][2] == 0.7
    names = [(A["name"][a], A["name"][b]) for a, b in A["pairs"]]
    assert ("ga", "gb") not in names and ("ga", "floor") in names and ("gb", "floor") in names
    assert load(xml, collision=False).collision is None


def residuals(model, q):
    """g_L(q) from the NumPy reference of the loop rows and our forward kinematics."""
    Rb, pb = forward_kinematics(model, q)
    out = []
    for k in range(model.nloops):
        a, b = model.loop_body_a[k], model.loop_body_b[k]
        pose = [(np.eye(3), np.zeros(3)) if x < 0 else (Rb[x], pb[x]) for x in (a, b)]
        out.append(loop_residual_np(model.loop_kind[k], *pose[0], *pose[1], model.loop_Ea[k],
                                    model.loop_ra[k], model.loop_Eb[k], model.loop_rb[k],
                                    model.loop_axis[k], model.loop_T[k]))
    return np.concatenate(out)


def test_connect_and_weld_become_loop_joints():
    """A four-bar closed by <connect> and a box welded to a link: loop joints whose
    residual is zero at qpos0 and whose size matches MuJoCo's constraint violation."""
    xml = """<mujoco><worldbody>
      <body name="l1"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -1" size=".05"/>
        <body name="l2" pos="0 0 -1"><joint name="j2" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 1 0 0" size=".05"/></body></body>
      <body name="l3" pos="1 0 0"><joint name="j3" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -1" size=".05"/></body>
      <body name="box" pos="0.5 0 0.5"><freejoint name="bf"/><geom type="box" size=".1 .1 .1"/></body>
      </worldbody><equality><connect name="close" body1="l2" body2="l3" anchor="1 0 0"/>
      <weld name="glue" body1="l3" body2="box"/></equality></mujoco>"""
    model = load(xml)
    assert model.nloops == 2 and model.loop_name == ["close", "glue"]
    q0 = model.neutral()
    q0[model.jnt_qadr[model.joint_id("bf")]:][:3] = (0.5, 0, 0.5)
    assert np.abs(residuals(model, q0)).max() < 1e-12
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mp = MjMap(model, m)
    rng = np.random.default_rng(1)
    q = model.random_configuration(rng, scale=0.3)
    d.qpos[:] = mp.to_mj(q, np.zeros(model.nv), np.zeros(model.nv))[0]
    mujoco.mj_forward(m, d)
    g = residuals(model, q)
    rows = [np.flatnonzero(d.efc_id == k) for k in range(2)]
    ec = d.efc_pos[rows[0]]
    assert np.linalg.norm(g[:3]) == pytest.approx(np.linalg.norm(ec), rel=1e-9)
    assert np.linalg.norm(g[3:6]) == pytest.approx(np.linalg.norm(d.efc_pos[rows[1]][:3]),
                                                  rel=1e-9)


# ------------------------------------------------------------- errors and warnings

def test_unsupported_elements_are_named():
    with pytest.raises(ValueError, match=r"equality 'coupling' of type tendon is not supported"):
        load(DATA / "manipulator.xml")
    with pytest.warns(UserWarning, match=r"ignores tendons \['fins_flap', 'fins_sym'\]"):
        load_mjcf(DATA / "fish.xml")
    with pytest.warns(UserWarning, match=r"joint friction loss \(dry friction\) on joints "
                                         r"\['hinge'\]"):
        load_mjcf(DATA / "finger.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # damping, armature and motors are all kept
        load_mjcf(DATA / "acrobot.xml", collision=False)


# ------------------------------------------------------- passive forces and actuation

MJ_DEFAULTS = ["humanoid", "humanoid_CMU", "cheetah", "walker", "hopper", "acrobot",
               "cartpole"]


def mj_defaults(m):
    """mj_forward with MuJoCo's passive forces, armature and actuation as the file has them,
    constraints (contacts, limits) off: what our forward dynamics with ``model.forces``
    computes."""
    m.opt.disableflags |= B.mjDSBL_CONSTRAINT
    return m


@pytest.mark.parametrize("name", MJ_DEFAULTS)
def test_passive_forces_armature_and_actuators_match_mj_forward(name):
    """qacc with the file's damping, stiffness, armature and actuators (zero and random
    ctrl, including values outside ctrlrange, which both clip) equals mj_forward's, through
    the public state converters and the simulator's ctrl; 1e-9 relative (intermediate
    bodies at 1e-12 of their body's mass)."""
    from articulated import Simulator
    from articulated.interop import from_mujoco_state, to_mujoco_state

    path = DATA / f"{name}.xml"
    model = load(path, intermediate_mass=1e-12)
    m = mj_defaults(mujoco.MjModel.from_xml_path(str(path)))
    d = mujoco.MjData(m)
    assert model.has_armature or name in ("acrobot", "cartpole")
    sim = Simulator(model, 1e-3, limits=False)
    assert sim.ctrl.shape == (m.nu,) and m.nu > 0
    rng = np.random.default_rng(3)
    for k in range(3):
        q = model.random_configuration(rng)
        qd = rng.normal(size=model.nv)
        u = np.zeros(m.nu) if k == 0 else rng.uniform(-1.5, 1.5, size=m.nu)
        sim.ctrl = u
        d.qpos[:], d.qvel[:] = to_mujoco_state(model, m, q, qd)
        d.ctrl[:] = u
        mujoco.mj_forward(m, d)
        tau, f_ext = sim.generalized_forces(0.0, q, qd)
        qdd = aba(model, q, qd, tau, f_ext)
        _, _, qacc = to_mujoco_state(model, m, q, qd, qdd)
        scale = max(1.0, float(np.abs(d.qacc).max()))
        assert np.abs(qacc - d.qacc).max() <= 1e-9 * scale, name
        q2, qd2, qdd2 = from_mujoco_state(model, m, d.qpos, d.qvel, d.qacc)
        assert np.abs(q2 - q).max() <= 1e-12 and np.abs(qd2 - qd).max() <= 1e-12
        assert np.abs(qdd2 - qdd).max() <= 1e-9 * scale
    assert np.array_equal(sim.ctrl, u)


def test_compiled_step_applies_the_files_forces_and_the_new_ctrl():
    """cheetah (springs, dampers, armature, motors): one compiled semi-implicit Euler step
    equals the step by hand from our ABA with the forces applied in Python, before and after
    ``sim.ctrl`` changes (the compiled loop reads the new controls)."""
    from articulated import Simulator, integrate

    model = load(DATA / "cheetah.xml", collision=False)
    h = 1e-3
    rng = np.random.default_rng(4)
    q0 = model.random_configuration(rng)
    qd0 = rng.normal(size=model.nv)
    sim = Simulator(model, h, integrator="semi_implicit_euler", q0=q0, qd0=qd0,
                    limits=False)          # the step by hand has no limit rows
    for u in (np.zeros(6), rng.uniform(-1, 1, size=6)):
        sim.ctrl = u
        q, qd = sim.q.copy(), sim.qd.copy()
        tau, f_ext = sim.generalized_forces(sim.t, q, qd)
        qd1 = qd + h * aba(model, q, qd, tau, f_ext)
        q1 = integrate(model, q, h * qd1)
        sim.run(1)
        assert np.abs(sim.qd - qd1).max() <= 1e-12 * max(1.0, np.abs(qd1).max())
        assert np.abs(sim.q - q1).max() <= 1e-12


def test_model_forces_are_optional_and_written_to_checkpoints(tmp_path):
    """``model_forces=False`` leaves them out; a checkpoint rebuilds the run with the
    controls it had, once (not twice)."""
    from articulated import Simulator
    from articulated.simulation import Actuators, JointDamping, PDController
    from articulated.simulation.factory import restore

    model = load(DATA / "cheetah.xml", collision=False)
    kinds = [type(f) for f in model.forces]
    assert kinds == [JointDamping, PDController, Actuators]
    assert Simulator(model, 1e-3, model_forces=False, limits=False).forces == []
    sim = Simulator(model, 1e-3, limits=False)    # a run with limit rows is not checkpointed
    sim.ctrl = np.full(6, 0.5)
    sim.run(5, checkpoint=tmp_path / "run.npz", checkpoint_every=5)
    again, _, _ = restore(tmp_path / "run.npz", model=model)
    assert [type(f) for f in again.forces] == kinds
    assert np.array_equal(again.ctrl, np.full(6, 0.5))


@pytest.mark.parametrize("xml, match", [
    ("<mujoco><worldbody><body><joint/><geom size='nan'/></body></worldbody></mujoco>",
     r"geom 'geom0'.*not finite|MuJoCo cannot load it"),
    ("<mujoco><worldbody><body name='b' pos='0 inf 0'><joint/><geom size='.1'/></body>"
     "</worldbody></mujoco>", r"body 'b': pos is not finite|MuJoCo cannot load it"),
    ("<mujoco><worldbody><body><joint name='j' axis='0 nan 1'/><geom size='.1'/></body>"
     "</worldbody></mujoco>", r"joint 'j'.*not finite|MuJoCo cannot load it"),
    ("<mujoco><worldbody><body><inertial pos='0 0 0' mass='nan' diaginertia='1 1 1'/><joint/>"
     "</body></worldbody></mujoco>", r"not finite|MuJoCo cannot load it"),
    ("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>", r"has no joint"),
    ("<mujoco><worldbody><body><joint/><geom size='.1'/></body></mujoco>", r"MuJoCo cannot load"),
    ("<robot name='r'><link name='a'/></robot>", r"MuJoCo cannot load|has no joint"),
    ("<mujoco><option gravity='0 0 nan'/><worldbody><body><joint/><geom size='.1'/></body>"
     "</worldbody></mujoco>", r"gravity.*not finite|MuJoCo cannot load it"),
])
def test_bad_mjcf_raises_value_error(xml, match):
    with pytest.raises(ValueError, match=match):
        load(xml)


def test_size_cap_and_missing_file(tmp_path):
    xml = "<mujoco><worldbody><body><joint/><geom size='.1'/></body></worldbody></mujoco>"
    with pytest.raises(ValueError, match=r"exceeds the size cap max_bytes=10"):
        load(xml, max_bytes=10)
    assert load(xml, max_bytes=None).nv == 1
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.xml")
    with pytest.raises(ValueError, match="intermediate_mass"):
        load(xml, intermediate_mass=0.0)


def test_entities_are_not_expanded(tmp_path):
    """MuJoCo's XML parser (tinyxml2) neither expands DTD entities nor reads external ones:
    an external-entity file and a billion-laughs file load with the entity text verbatim."""
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    xxe = (f"<?xml version='1.0'?><!DOCTYPE r [<!ENTITY x SYSTEM 'file://{secret}'>]>"
           "<mujoco><worldbody><body name='&x;'><joint/><geom size='.1'/></body>"
           "</worldbody></mujoco>")
    laughs = ("<?xml version='1.0'?><!DOCTYPE r [<!ENTITY a 'aaaaaaaaaa'>"
              + "".join(f"<!ENTITY {c} '{('&' + p + ';') * 10}'>"
                        for p, c in zip("abcdefgh", "bcdefghi"))
              + "]><mujoco><worldbody><body name='&i;'><joint/><geom size='.1'/></body>"
              "</worldbody></mujoco>")
    assert load(xxe).body_name == ["&x;"]
    assert load(laughs).body_name == ["&i;"]


def test_limits_on_as_the_file_says():
    """cartpole's slider is ``limited`` to [-1.8, 1.8] m: a simulator enforces it by default
    (the cart pushed by ``ctrl = 1``, 10 N, stops at the limit); ``limits=False`` lets it
    run past; a model without limited joints is stepped as before (no limit rows)."""
    from articulated import Simulator
    from articulated.models import pendulum

    model = load(DATA / "cartpole.xml", collision=False)
    assert model.enforce_limits
    j = int(np.flatnonzero(model.jnt_limited)[0])
    assert model.joint_name[j] == "slider" and np.array_equal(model.jnt_range[j], [-1.8, 1.8])
    x = {}
    for limits in (None, False):
        sim = Simulator(model, 1e-3, limits=limits)
        sim.ctrl = np.ones(1)
        x[limits] = sim.run(1500, progress=False).q[:, model.jnt_qadr[j]]
    assert 1.8 - 1e-2 <= x[None].max() <= 1.8 + 1e-3
    assert x[False].max() > 2.5
    swimmer = load(DATA / "swimmer.xml", collision=False)
    assert swimmer.enforce_limits == bool(swimmer.jnt_limited.any())
    plain = pendulum(3)
    assert not plain.enforce_limits and Simulator(plain, 1e-3).integrator == "rk4"
