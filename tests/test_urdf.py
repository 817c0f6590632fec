"""Tests of articulated.io.urdf.load_urdf: structure, merging of fixed links, error cases, and
dynamics (ABA, RNEA, CRBA) cross-checked against Pinocchio's own URDF parser on hand-written
URDFs and on real robots from example-robot-data."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from articulated import aba, crba, forward_kinematics, rnea
from articulated.model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE,
                               JOINT_TYPES)
from articulated.bench.common import robots_dir
from articulated.io.urdf import load_urdf

DATA = Path(__file__).parent / "data"
MIXED = DATA / "mixed_joints.urdf"
TOL = 1e-9


# --------------------------------------------------------------------------- helpers

@pytest.fixture(scope="module")
def pin():
    return pytest.importorskip(
        "pinocchio", reason="Pinocchio (pip install pin) is the reference URDF parser for "
                            "the dynamics cross-checks")


def rpy(r, p, y):
    """URDF roll-pitch-yaw: R = Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


class PinMap:
    """Maps our q / qd / M to Pinocchio's layout *by joint name* (Pinocchio orders joints its
    own way, uses (cos, sin) for continuous joints, (x, y, z, w) quaternions, and
    [linear; angular] free-flyer velocities)."""

    def __init__(self, model, pm):
        self.pm = pm
        qa, qb, va, vb, cont = [], [], [], [], []
        for i in range(model.nb):
            t = model.jnt_type[i]
            if t == JOINT_FIXED:
                continue
            name = model.joint_name[i]
            jid = pm.getJointId(name)
            assert jid < pm.njoints, f"Pinocchio has no joint {name!r}"
            J = pm.joints[jid]
            a, v = model.jnt_qadr[i], model.jnt_vadr[i]
            if t in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                assert J.nv == 1
                if J.nq == 2:  # continuous joint: Pinocchio stores (cos q, sin q)
                    cont.append((a, J.idx_q))
                else:
                    qa.append(a), qb.append(J.idx_q)
                va.append(v), vb.append(J.idx_v)
            else:
                assert t == JOINT_FREE and J.nq == 7 and J.nv == 6
                # ours [p, w, x, y, z] / [w; v]; Pinocchio [p, x, y, z, w] / [v; w]
                qa += [a, a + 1, a + 2, a + 4, a + 5, a + 6, a + 3]
                qb += [J.idx_q + k for k in range(7)]
                va += [v + k for k in range(6)]
                vb += [J.idx_v + 3, J.idx_v + 4, J.idx_v + 5, J.idx_v, J.idx_v + 1, J.idx_v + 2]
        assert len(va) == model.nv == pm.nv, (model.nv, pm.nv)
        self.qa, self.qb, self.va, self.vb = (np.array(x, dtype=int) for x in (qa, qb, va, vb))
        self.cont = cont

    def q(self, q):
        out = np.zeros(self.pm.nq)
        out[self.qb] = q[self.qa]
        for a, b in self.cont:
            out[b], out[b + 1] = math.cos(q[a]), math.sin(q[a])
        return out

    def v(self, v):
        out = np.zeros(self.pm.nv)
        out[self.vb] = v[self.va]
        return out

    def v_back(self, vp):
        out = np.zeros(len(self.va))
        out[self.va] = vp[self.vb]
        return out

    def M_back(self, Mp):
        P = np.zeros((len(self.va), self.pm.nv))
        P[self.va, self.vb] = 1.0
        return P @ Mp @ P.T


def rel_err(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def dynamics_errors(pin, model, pm, n_states=3, seed=0):
    """Max relative errors of our ABA, RNEA and CRBA against Pinocchio at random states."""
    pd = pm.createData()
    mp = PinMap(model, pm)
    rng = np.random.default_rng(seed)
    err = dict(aba=0.0, rnea=0.0, crba=0.0)
    for _ in range(n_states):
        q = model.random_configuration(rng)
        qd, tau, qdd = (rng.normal(size=model.nv) for _ in range(3))
        qp = mp.q(q)
        a_pin = mp.v_back(pin.aba(pm, pd, qp, mp.v(qd), mp.v(tau)))
        t_pin = mp.v_back(pin.rnea(pm, pd, qp, mp.v(qd), mp.v(qdd)))
        Mp = pin.crba(pm, pd, qp).copy()
        M_pin = mp.M_back(np.triu(Mp) + np.triu(Mp, 1).T)
        err["aba"] = max(err["aba"], rel_err(aba(model, q, qd, tau), a_pin))
        err["rnea"] = max(err["rnea"], rel_err(rnea(model, q, qd, qdd), t_pin))
        err["crba"] = max(err["crba"], rel_err(crba(model, q), M_pin))
    return err


def pin_model(pin, path, floating_base, gravity=None):
    pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating_base
          else pin.buildModelFromUrdf(str(path)))
    if gravity is not None:
        pm.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
    return pm


def check_frames(pin, model, pm, n_states=2, seed=1):
    """model.frames agrees with Pinocchio's BODY frames: parent joint and placement, and the
    world pose of every link at random configurations. Returns the max abs error."""
    pd = pm.createData()
    mp = PinMap(model, pm)
    worst = 0.0
    for ln, (b, R, p) in model.frames.items():
        fid = pm.getFrameId(ln, pin.FrameType.BODY)
        assert fid < len(pm.frames), f"Pinocchio has no body frame {ln!r}"
        F = pm.frames[fid]
        jname = "universe" if b < 0 else model.joint_name[b]
        assert pm.names[F.parentJoint] == jname, (ln, pm.names[F.parentJoint], jname)
        worst = max(worst, np.abs(F.placement.rotation - R).max(),
                    np.abs(F.placement.translation - p).max())
    rng = np.random.default_rng(seed)
    for _ in range(n_states):
        q = model.random_configuration(rng)
        pin.framesForwardKinematics(pm, pd, mp.q(q))
        Rb, pb = forward_kinematics(model, q)
        for ln, (b, R, p) in model.frames.items():
            oMf = pd.oMf[pm.getFrameId(ln, pin.FrameType.BODY)]
            Rw, pw = (R, p) if b < 0 else (Rb[b] @ R, pb[b] + Rb[b] @ p)
            worst = max(worst, np.abs(oMf.rotation - Rw).max(), np.abs(oMf.translation - pw).max())
    return worst


# ------------------------------------------------------------- hand-written test robot

def test_mixed_joints_structure():
    m = load_urdf(MIXED)
    # depth-first from the root, children in file order; fixed links merged away
    assert m.body_name == ["upper_arm", "forearm", "carriage", "wheel_link", "tip"]
    assert m.joint_name == ["shoulder", "elbow", "slider", "wheel", "wheel_tip"]
    assert [int(t) for t in m.jnt_type] == [JOINT_TYPES[t] for t in
                                            ("revolute", "revolute", "prismatic", "revolute", "revolute")]
    assert list(m.body_parent) == [-1, 0, 1, -1, 3]
    assert (m.nq, m.nv) == (5, 5)
    np.testing.assert_allclose(m.jnt_axis[1], np.array([0.3, -0.5, 0.8]) / math.sqrt(0.98), rtol=1e-15)
    np.testing.assert_array_equal(m.jnt_axis[4], [1.0, 0.0, 0.0])  # default axis
    # joint placement = URDF <origin>: axes R in parent coordinates (jnt_Xtree_E = R^T)
    np.testing.assert_allclose(m.jnt_Xtree_E[0].T, rpy(0.3, -0.2, 0.5), atol=1e-15)
    np.testing.assert_allclose(m.jnt_Xtree_r[0], [0.1, 0.0, 0.2], atol=1e-15)
    # the wheel joint hangs off the bracket, which is welded to the (fixed) root: its
    # placement in the world composes the two origins
    Rb, pb = rpy(0.0, 0.4, -0.8), np.array([-0.1, 0.1, 0.05])
    np.testing.assert_allclose(m.jnt_Xtree_E[3].T, Rb @ rpy(0, 0, 0.3), atol=1e-15)
    np.testing.assert_allclose(m.jnt_Xtree_r[3], pb + Rb @ [0.0, 0.05, 0.0], atol=1e-15)
    # merged links stay reachable
    assert set(m.frames) == {"base", "upper_arm", "forearm", "imu", "carriage", "tool",
                             "bracket", "wheel_link", "tip"}
    b, R, p = m.frames["imu"]
    assert b == m.body_id("forearm")
    np.testing.assert_allclose(R, rpy(3.14159, 0.0, 1.5708), atol=1e-15)
    np.testing.assert_allclose(p, [0.05, 0.01, 0.0], atol=1e-15)
    assert m.frames["tool"][0] == m.body_id("carriage")
    assert m.frames["bracket"][0] == -1 and m.frames["base"][0] == -1
    # masses: the massless imu adds nothing, the tool is merged into the carriage, the
    # fixed-base root and the bracket welded to it are not bodies
    np.testing.assert_allclose(m.body_mass, [1.2, 0.8, 0.3 + 0.5, 0.25, 0.1], rtol=1e-15)
    # carriage COM = mass-weighted mean of its own COM and the tool's
    Rt, pt = rpy(0.2, -0.6, 0.9), np.array([0.0, 0.03, 0.08])
    c_tool = pt + Rt @ [0.02, -0.01, 0.04]
    np.testing.assert_allclose(m.body_com[2], (0.3 * np.array([0, 0, 0.02]) + 0.5 * c_tool) / 0.8,
                               atol=1e-15)
    # rotated inertial frame: I_com in link axes = R I R^T
    Ri = rpy(-0.4, 0.1, 0.7)
    I = np.array([[0.012, 0.0005, 0.0], [0.0005, 0.011, -0.0004], [0.0, -0.0004, 0.004]])
    np.testing.assert_allclose(m.body_I_com[0], Ri @ I @ Ri.T, atol=1e-17)
    np.testing.assert_allclose(m.body_com[0], [0.0, 0.02, 0.15], atol=1e-17)
    assert m.urdf_regularized == []


def test_mixed_joints_inertias_match_pinocchio(pin):
    """Merged masses, COMs and inertias equal Pinocchio's per-joint inertias."""
    for fb in (False, True):
        m = load_urdf(MIXED, floating_base=fb)
        pm = pin_model(pin, MIXED, fb)
        for i in range(m.nb):
            Y = pm.inertias[pm.getJointId(m.joint_name[i])]
            assert abs(Y.mass - m.body_mass[i]) <= 1e-14 * Y.mass
            np.testing.assert_allclose(m.body_com[i], Y.lever, rtol=0, atol=1e-14)
            np.testing.assert_allclose(m.body_I_com[i], Y.inertia, rtol=0,
                                       atol=1e-13 * np.abs(Y.inertia).max())


@pytest.mark.parametrize("floating_base", [False, True])
def test_mixed_joints_dynamics_match_pinocchio(pin, floating_base):
    g = np.array([0.3, -0.2, -9.7])
    m = load_urdf(MIXED, floating_base=floating_base, gravity=g)
    np.testing.assert_array_equal(m.gravity, g)
    pm = pin_model(pin, MIXED, floating_base, gravity=g)
    if floating_base:
        assert m.joint_name[0] == "root_joint" and m.jnt_type[0] == JOINT_FREE
        assert m.body_name[0] == "base" and (m.nq, m.nv) == (12, 11)
        # the root body carries the base and the bracket welded to it
        np.testing.assert_allclose(m.body_mass[0], 3.4, rtol=1e-15)
    err = dynamics_errors(pin, m, pm, n_states=4)
    assert max(err.values()) < TOL, err
    assert check_frames(pin, m, pm) < 1e-12


def test_floating_joint_matches_pinocchio(pin):
    """A URDF ``floating`` joint becomes a ``free`` joint (massless root welded to world)."""
    path = DATA / "floating_joint.urdf"
    m = load_urdf(path)
    assert m.joint_name == ["drone", "arm"] and m.jnt_type[0] == JOINT_FREE
    assert m.frames["base"][0] == -1
    np.testing.assert_allclose(m.jnt_Xtree_r[0], [0, 0, 0.5] + rpy(0, 0, 0.3) @ [0.2, -0.1, 0.3],
                               atol=1e-15)
    err = dynamics_errors(pin, m, pin_model(pin, path, False), n_states=4)
    assert max(err.values()) < TOL, err
    # floating base on top: the massive 'base' (with its massless root) is the free body
    m2 = load_urdf(path, floating_base=True)
    assert m2.joint_name == ["root_joint", "drone", "arm"] and m2.nv == 13
    assert m2.body_name[0] == "world_anchor" and m2.body_mass[0] == 2.0
    pm2 = pin_model(pin, path, True)
    err = dynamics_errors(pin, m2, pm2, n_states=4)
    assert max(err.values()) < TOL, err
    assert check_frames(pin, m2, pm2) < 1e-12


def test_joint_limits_do_not_change_the_dynamics():
    """<limit> fills jnt_range (tests/test_urdf_collision.py); ABA ignores it."""
    m = load_urdf(MIXED)
    assert m.jnt_limited.sum() == 3
    q = np.full(m.nq, 3.0)  # far outside every <limit>
    qdd = aba(m, q, np.zeros(m.nv), np.zeros(m.nv))
    assert np.all(np.isfinite(qdd)) and np.abs(qdd).max() > 0.1


def test_accepts_pathlike_and_str():
    a, b = load_urdf(MIXED), load_urdf(str(MIXED))
    np.testing.assert_array_equal(a.body_I, b.body_I)
    assert a.urdf_path == str(MIXED)


# ----------------------------------------------------------------- massless links

def test_massless_moving_subtree_raises():
    with pytest.raises(ValueError, match=r"joint 'finger_joint' moves link 'finger'.*zero mass"):
        load_urdf(DATA / "massless_subtree.urdf")


def test_massless_virtual_link_raises_by_default():
    with pytest.raises(ValueError, match=r"joint 'hip_x' moves link 'hip_virtual'.*"
                                         r"massless_body_mass"):
        load_urdf(DATA / "virtual_link.urdf")


def test_massless_virtual_link_opt_in(pin):
    path = DATA / "virtual_link.urdf"
    m = load_urdf(path, massless_body_mass=1e-9)
    assert m.urdf_regularized == ["hip_virtual"]
    assert m.body_mass[0] == 1e-9 and m.body_mass[1] == 5.0
    # Pinocchio keeps the link massless: the difference is O(1e-9 kg / 5 kg)
    err = dynamics_errors(pin, m, pin_model(pin, path, False), n_states=3)
    assert max(err.values()) < 1e-8, err
    with pytest.raises(ValueError, match="massless_body_mass"):
        load_urdf(path, massless_body_mass=-1.0)


# ---------------------------------------------------------------------- bad input

def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no_such_robot.urdf"):
        load_urdf(DATA / "no_such_robot.urdf")


def test_planar_joint_is_unsupported():
    with pytest.raises(ValueError, match=r"joint 'table_slide'.*unsupported type 'planar'"):
        load_urdf(DATA / "planar_joint.urdf")


def test_malformed_xml():
    path = DATA / "malformed.urdf"
    with pytest.raises(ValueError, match="malformed") as e:
        load_urdf(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("body, match", [
    ("<link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
     "<child link='nowhere'/></joint>", r"joint 'j': unknown child link 'nowhere'"),
    ("<link name='a'/><link name='b'/><link name='c'/>"
     "<joint name='j1' type='fixed'><parent link='b'/><child link='c'/></joint>"
     "<joint name='j2' type='fixed'><parent link='c'/><child link='b'/></joint>",
     r"not connected to the root link 'a'"),
    ("<link name='a'/><link name='b'/>", r"exactly one root link"),
    ("<link name='a'/><link name='b'/>"
     "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 0'/>"
     "</joint>", r"joint 'j': axis"),
    ("<link name='a'/><link name='b'><inertial><mass value='-1'/></inertial></link>"
     "<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint>",
     r"link 'b': mass"),
    ("<link name='a'/>", r"no moving joint"),
    ("<link/>", r"a <link> \(line 1\) has no name"),
    ("<link name='a'/><link name='b'/><joint name='j' type='fixed'><child link='b'/></joint>",
     r"joint 'j' has no <parent link=...>"),
    ("<link name='a'><visual><origin xyz='0 0 0'/></visual></link>",
     r"link 'a': a <visual> \(line 1\) has no <geometry> shape"),
    ("<link name='a'/><link name='b'><inertial><mass value='heavy'/></inertial></link>"
     "<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint>",
     r"link 'b': <inertial><mass> value='heavy': not a number"),
])
def test_bad_urdf_content(tmp_path, body, match):
    path = tmp_path / "bad.urdf"
    path.write_text(f"<?xml version='1.0'?><robot name='bad'>{body}</robot>")
    with pytest.raises(ValueError, match=match) as e:
        load_urdf(path)
    assert str(path) in str(e.value)


_J = ("<link name='a'/><link name='b'><inertial><origin xyz='{c}'/><mass value='{m}'/>"
      "<inertia ixx='{i}' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"
      "<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
      "<origin xyz='{x}' rpy='{r}'/><axis xyz='{a}'/><limit lower='{lo}' upper='1' "
      "effort='1' velocity='1'/><dynamics damping='{d}'/></joint>")
_OK = dict(c="0 0 0", m="1", i="1", x="0 0 0", r="0 0 0", a="0 0 1", lo="-1", d="0")


@pytest.mark.parametrize("field, value, match", [
    ("x", "nan 0 0", r"joint 'j': <origin> xyz='nan 0 0': not finite"),
    ("r", "0 inf 0", r"joint 'j': <origin> rpy='0 inf 0': not finite"),
    ("r", "0 0", r"joint 'j': <origin> rpy='0 0': expected 3 value"),
    ("a", "0 NaN 1", r"joint 'j': <axis> xyz='0 NaN 1': not finite"),
    ("lo", "-inf", r"joint 'j': <limit> lower='-inf': not finite"),
    ("d", "nan", r"joint 'j': <dynamics> damping='nan': not finite"),
    ("c", "0 0 -inf", r"link 'b': <inertial><origin> xyz='0 0 -inf': not finite"),
    ("m", "1e999", r"link 'b': <inertial><mass> value='1e999': not finite"),
    ("i", "NAN", r"link 'b': <inertial><inertia> ixx='NAN': not finite"),
])
def test_non_finite_numbers_name_the_element(tmp_path, field, value, match):
    """issue 22: a NaN in a joint's <origin> used to raise numpy's LinAlgError."""
    path = tmp_path / "nan.urdf"
    path.write_text(f"<robot name='n'>{_J.format(**dict(_OK, **{field: value}))}</robot>")
    with pytest.raises(ValueError, match=match):
        load_urdf(path)
    path.write_text(f"<robot name='n'>{_J.format(**_OK)}</robot>")
    assert load_urdf(path).nv == 1


def test_hostile_xml_is_not_expanded(tmp_path):
    """Entities are never expanded (billion laughs, external files), nothing is fetched,
    and a file over max_bytes is refused before parsing."""
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    xxe = (f"<?xml version='1.0'?><!DOCTYPE r [<!ENTITY x SYSTEM 'file://{secret}'>]>"
           "<robot name='&x;'><link name='a'/><link name='b'/><joint name='j' "
           "type='revolute'><parent link='a'/><child link='b'/></joint></robot>")
    laughs = ("<?xml version='1.0'?><!DOCTYPE r [<!ENTITY a 'aaaaaaaaaa'>"
              + "".join(f"<!ENTITY {c} '{('&' + p + ';') * 10}'>"
                        for p, c in zip("abcdefgh", "bcdefghi"))
              + "]><robot name='r'><link name='&i;'/></robot>")
    for k, text in enumerate((xxe, laughs)):
        path = tmp_path / f"h{k}.urdf"
        path.write_text(text)
        try:
            m = load_urdf(path, floating_base=True, repair="inertia")
        except ValueError as e:
            assert str(path) in str(e)
        else:
            assert "s3cret" not in repr(m.body_name) and max(map(len, m.body_name)) < 100
    big = tmp_path / "big.urdf"
    big.write_text(f"<robot name='n'>{_J.format(**_OK)}</robot>")
    with pytest.raises(ValueError, match=r"exceeds the size cap max_bytes=100"):
        load_urdf(big, max_bytes=100)
    assert load_urdf(big, max_bytes=None).description["kwargs"]["max_bytes"] is None


def test_description_rebuilds_the_model():
    m = load_urdf(MIXED, floating_base=True)
    d = m.description
    import hashlib
    assert d["urdf"] == str(MIXED.resolve())
    assert d["sha256"] == hashlib.sha256(MIXED.read_bytes()).hexdigest()
    m2 = load_urdf(d["urdf"], **d["kwargs"])
    assert m2.body_name == m.body_name and np.array_equal(m2.body_I, m.body_I)


def test_not_a_robot(tmp_path):
    path = tmp_path / "x.urdf"
    path.write_text("<?xml version='1.0'?><sdf version='1.6'><model name='m'/></sdf>")
    with pytest.raises(ValueError, match="not <robot>"):
        load_urdf(path)


def test_point_mass_link_is_rejected_with_its_name(tmp_path):
    """Model needs a positive-definite inertia per body (Pinocchio accepts point masses)."""
    path = tmp_path / "point.urdf"
    path.write_text("<?xml version='1.0'?><robot name='p'><link name='a'/><link name='ball'>"
                    "<inertial><mass value='1'/><inertia ixx='0' ixy='0' ixz='0' iyy='0' "
                    "iyz='0' izz='0'/></inertial></link><joint name='j' type='revolute'>"
                    "<parent link='a'/><child link='ball'/></joint></robot>")
    with pytest.raises(ValueError, match=r"body 'ball': inertia is not positive definite"):
        load_urdf(path)


# ------------------------------------------------------- example-robot-data robots

@pytest.fixture(scope="module")
def robots():
    d = robots_dir()
    if d is None:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data, "
                    "or the 'robots' extra): real-robot URDF cross-checks skipped")
    return d


# (name, path in example-robot-data's robots/, floating-base variants to check)
ROBOTS = [
    ("ur5", "ur_description/urdf/ur5_robot.urdf", (False,)),
    ("panda", "panda_description/urdf/panda.urdf", (False,)),            # mimic finger
    ("kinova", "kinova_description/robots/kinova.urdf", (False,)),
    ("z1", "z1_description/urdf/z1.urdf", (False,)),
    ("xarm7", "xarm_description/urdf/xarm7.urdf", (False,)),
    ("double_pendulum", "double_pendulum_description/urdf/double_pendulum_continuous.urdf", (False,)),
    ("baxter", "baxter_description/urdf/baxter.urdf", (False,)),
    ("pr2", "pr2_description/urdf/pr2.urdf", (False, True)),             # prismatic torso
    ("tiago_dual", "tiago_description/robots/tiago_dual.urdf", (False,)),  # 101 bodies
    ("solo12", "solo_description/robots/solo12.urdf", (False, True)),
    ("anymal", "anymal_b_simple_description/robots/anymal.urdf", (False, True)),
    ("anymal_c", "anymal_c_simple_description/urdf/anymal.urdf", (True,)),
    ("go1", "go1_description/urdf/go1.urdf", (False, True)),
    ("a1", "a1_description/urdf/a1.urdf", (True,)),
    ("hyq", "hyq_description/robots/hyq_no_sensors.urdf", (True,)),
    ("bolt", "bolt_description/robots/bolt.urdf", (True,)),
    ("talos", "talos_data/robots/talos_reduced.urdf", (False, True)),
    ("talos_full", "talos_data/robots/talos_full_v2.urdf", (True,)),
    ("g1", "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf", (True,)),
    ("centauro", "centauro_description/urdf/centauro.urdf", (True,)),
    ("simple_humanoid", "simple_humanoid_description/urdf/simple_humanoid.urdf", (True,)),
]
_CASES = [pytest.param(path, fb, id=f"{name}-{'floating' if fb else 'fixed'}")
          for name, path, fbs in ROBOTS for fb in fbs]


@pytest.mark.filterwarnings("ignore:.*lower == upper:UserWarning")  # centauro's wheels
@pytest.mark.parametrize("sub, floating_base", _CASES)
def test_robot_matches_pinocchio(pin, robots, sub, floating_base):
    path = robots / sub
    m = load_urdf(path, floating_base=floating_base)
    pm = pin_model(pin, path, floating_base)
    assert m.nv == pm.nv
    err = dynamics_errors(pin, m, pm, n_states=2)
    assert max(err.values()) < TOL, err
    assert check_frames(pin, m, pm, n_states=1) < 1e-10
    # total mass: fixed base drops what is welded to the world, floating keeps everything
    total = sum(pm.inertias[j].mass for j in range(1, pm.njoints))
    assert abs(m.total_mass - total) <= 1e-12 * total


def test_romeo_massless_hand_is_rejected(pin, robots):
    """romeo.urdf's finger joints move links with no mass at all: Pinocchio's ABA returns
    NaN on it; load_urdf refuses it up front, naming the joint and link."""
    path = robots / "romeo_description/urdf/romeo.urdf"
    with pytest.raises(ValueError, match=r"joint 'LHand' moves link 'LFinger11Link'"):
        load_urdf(path, floating_base=True)
    pm = pin_model(pin, path, True)
    q = pin.neutral(pm)
    assert not np.isfinite(pin.aba(pm, pm.createData(), q, np.zeros(pm.nv), np.zeros(pm.nv))).all()


def test_human_virtual_links(pin, robots):
    """human.urdf builds 3-DOF joints from massless virtual links: a ValueError by default,
    loadable with massless_body_mass, then within O(massless_body_mass) of Pinocchio."""
    path = robots / "human_description/robots/human.urdf"
    with pytest.raises(ValueError, match=r"joint 'left_hip_Z' moves link 'left_upperleg_virtual'"):
        load_urdf(path)
    m = load_urdf(path, floating_base=True, massless_body_mass=1e-9)
    assert len(m.urdf_regularized) == 19
    err = dynamics_errors(pin, m, pin_model(pin, path, True), n_states=2)
    assert max(err.values()) < 1e-7, err


def test_mimic_joints_are_independent(robots):
    """panda_finger_joint2 mimics panda_finger_joint1; it is loaded as its own joint."""
    m = load_urdf(robots / "panda_description/urdf/panda.urdf")
    i1, i2 = m.joint_id("panda_finger_joint1"), m.joint_id("panda_finger_joint2")
    assert m.jnt_type[i1] == m.jnt_type[i2] == JOINT_PRISMATIC
    assert m.nv == 9
    q = m.neutral()
    q[m.jnt_qadr[i1]] = 0.02  # the mimic joint does not follow
    tau = rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))
    assert np.isfinite(tau).all() and q[m.jnt_qadr[i2]] == 0.0


# ------------------------------------------------- the whole of example-robot-data

# what even repair="inertia" cannot load, and why (Pinocchio refuses ur3.urdf too; it loads
# the two single-link robots with a fixed base as models with no joint, which a Model
# cannot be)
NOT_LOADABLE = {
    ("ur_description/urdf/ur3.urdf", False): "has no <link>",
    ("ur_description/urdf/ur3.urdf", True): "has no <link>",
    ("hector_description/robots/quadrotor_base.urdf", False): "has no moving joint",
    ("iris_description/robots/iris_simple.urdf", False): "has no moving joint",
}


def patch_inertias(pin, model, pm):
    """Give Pinocchio our repaired bodies' inertias (body frame = joint frame in both), so
    that everything but the repair itself is compared."""
    for name in model.urdf_repairs:
        i = model.body_id(name)
        pm.inertias[pm.getJointId(model.joint_name[i])] = pin.Inertia(
            float(model.body_mass[i]), model.body_com[i].copy(), model.body_I_com[i].copy())


def test_every_robot_loads_with_repair(pin, robots):
    """All 69 URDFs of example-robot-data, fixed and floating base, with repair="inertia":
    134 of 138 load (the 4 others are named in NOT_LOADABLE with their reason), and every
    loaded one equals Pinocchio's ABA to 1e-8 at a random state (Pinocchio given our
    repaired inertias where repair changed a body); the repairs are warned about."""
    files = sorted(robots.rglob("*.urdf"))
    assert len(files) == 69
    refused, repaired, worst = {}, set(), 0.0
    rng = np.random.default_rng(0)
    for f in files:
        sub = str(f.relative_to(robots))
        for fb in (False, True):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    m = load_urdf(f, floating_base=fb, repair="inertia")
                except ValueError as e:
                    refused[sub, fb] = str(e)
                    continue
            if m.urdf_repairs:
                repaired.add(f.stem)
                msg = [str(x.message) for x in w if "repair='inertia' changed" in str(x.message)]
                assert len(msg) == 1 and all(repr(n) in msg[0] for n in m.urdf_repairs)
            pm = pin_model(pin, f, fb)
            patch_inertias(pin, m, pm)
            mp = PinMap(m, pm)
            q = m.random_configuration(rng)
            qd, tau = rng.normal(size=m.nv), rng.normal(size=m.nv)
            a_pin = mp.v_back(pin.aba(pm, pm.createData(), mp.q(q), mp.v(qd), mp.v(tau)))
            err = rel_err(aba(m, q, qd, tau), a_pin)
            assert err < 1e-8, (sub, fb, err)
            worst = max(worst, err)
    assert set(refused) == set(NOT_LOADABLE), sorted(refused)
    for key, why in NOT_LOADABLE.items():
        assert why in refused[key]
    assert repaired == {"human", "icub", "icub_reduced", "romeo", "romeo_small",
                        "romeo_laas_small"}


def test_repair_inertia_values(tmp_path):
    """The repairs in closed form: a massless link gets boundmass at its origin, a point
    mass the inertia of a ball of water of its mass, a triangle-violating inertia has its
    two smaller principal moments raised equally to I1 + I2 = I3 (1 + 1e-6); the strict
    default still raises."""
    urdf = """<robot name="r"><link name="base"/>
      <link name="virtual"/>
      <link name="point"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
        <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
      <link name="rod"><inertial><mass value="1"/>
        <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.5"/></inertial></link>
      <joint name="j0" type="revolute"><parent link="base"/><child link="virtual"/>
        <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j1" type="revolute"><parent link="virtual"/><child link="point"/>
        <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="continuous"><parent link="point"/><child link="rod"/>
        <origin xyz="0 0 -1"/><axis xyz="0 0 1"/></joint></robot>"""
    f = tmp_path / "r.urdf"
    f.write_text(urdf)
    with pytest.raises(ValueError, match="repair='inertia'"):
        load_urdf(f)
    with pytest.warns(UserWarning, match=r"changed 3 bodies: 'virtual': mass 0 -> 1e-06 kg"):
        m = load_urdf(f, repair="inertia", boundinertia=1e-7)
    v, p, r = (m.body_id(n) for n in ("virtual", "point", "rod"))
    assert m.body_mass[v] == 1e-6 and np.all(m.body_com[v] == 0)
    np.testing.assert_allclose(m.body_I_com[v], 1e-7 * np.eye(3), rtol=1e-12)
    assert m.body_mass[p] == 2.0 and m.body_com[p].tolist() == [0, 0, -0.5]
    radius = (3 * 2.0 / (4 * np.pi * 1000.0)) ** (1 / 3)       # 7.8 cm
    np.testing.assert_allclose(m.body_I_com[p], 0.4 * 2.0 * radius ** 2 * np.eye(3), rtol=1e-12)
    # 0.1 + 0.2 < 0.5: both raised by 0.1 + 0.25e-6 -> I1 + I2 = 0.5 (1 + 1e-6)
    np.testing.assert_allclose(np.diag(m.body_I_com[r]), [0.20000025, 0.30000025, 0.5],
                               rtol=1e-12)
    assert set(m.urdf_repairs) == {"virtual", "point", "rod"}
    assert m.description["kwargs"]["repair"] == "inertia"
    with pytest.raises(ValueError, match="repair must be None or 'inertia'"):
        load_urdf(f, repair="all")
