"""One Trajectory type for every method (issue 21 items 6 and 8): save and load for tree
dynamics, adaptive dynamics and quasi-statics; names, description, units, method and
integrator in the file; the model rebuilt from its description."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import articulated as art
from articulated.models import SCENES, build_model
from articulated.simulation import PointForce, Simulator, Trajectory
from articulated.simulation.trajectory import UNITS

DATA = Path(__file__).parent / "data"


def _same_model(a, b):
    """Every array that defines a model's dynamics, compared exactly."""
    assert a.body_name == b.body_name and a.joint_name == b.joint_name
    for k in ("body_parent", "jnt_type", "jnt_axis", "jnt_Xtree_E", "jnt_Xtree_r",
              "body_mass", "body_com", "body_I_com", "gravity", "jnt_range"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k


def _roundtrip(tr, tmp_path, name):
    path = tmp_path / name
    tr.save(path)
    back = Trajectory.load(path)
    for k in ("t", "q", "qd", "kinetic", "potential", "wall", "active", "update_region",
              "rigidified", "joints", "bound", "nodes"):
        x, y = getattr(tr, k), getattr(back, k)
        assert (x is None) == (y is None), k
        if x is not None:
            assert np.array_equal(x, y), k
    for k in ("nfev", "wall_time", "integrator", "method", "dt", "settings", "body_name",
              "joint_name", "description", "units"):
        assert getattr(back, k) == getattr(tr, k), k
    return back


def test_dynamics_roundtrip_and_rebuild(tmp_path):
    m = art.models.pendulum(6, link_length=0.2)
    tr = Simulator(m, 1e-3, "rk4", q0=np.full(6, 0.2)).run(30, 10)
    back = _roundtrip(tr, tmp_path, "dyn.npz")
    assert back.body_name == [f"link{i}" for i in range(6)]
    assert back.joint_name == [f"link{i}_joint" for i in range(6)]
    assert back.description == {"scene": "pendulum", "kwargs": {
        "n": 6, "link_length": 0.2, "mass": 0.1, "seed": None, "width": None,
        "gravity": [0.0, 0.0, -9.81]}}
    assert back.units["t"] == "s" and back.units["kinetic"] == "J" and back.units == UNITS
    assert (back.method, back.integrator, back.dt) == ("aba", "rk4", 1e-3)
    rebuilt = back.build_model()
    _same_model(rebuilt, m)
    # the rebuilt model gives the recorded energies (an independent evaluation)
    T, V = art.energy(rebuilt, back.q[-1], back.qd[-1])
    assert T == pytest.approx(back.kinetic[-1], rel=1e-12)
    assert V == pytest.approx(back.potential[-1], rel=1e-12)


def test_adaptive_and_quasistatic_share_the_type(tmp_path):
    m = art.models.pendulum(12)
    ad = Simulator(m, 1e-3, method="adaptive", max_active=3, update_every=5,
                   q0=np.full(12, 0.1), forces=[PointForce("link11", (0, 0.5, 0))])
    tr = ad.run(20, 4)
    assert type(tr) is Trajectory and tr.method == "adaptive" and tr.potential is None
    assert tr.active.shape == (6,) and tr.wall.shape == (20,) and tr.active[-1] <= 3
    back = _roundtrip(tr, tmp_path, "ad.npz")
    assert back.settings["max_active"] == 3 and back.settings["update_every"] == 5
    with pytest.raises(ValueError, match="potential"):
        back.total
    qs = Simulator(m, 1e-3, method="quasistatic", forces=[PointForce("link11", (0, 0, 1.0))])
    tq = qs.run(4, 2)
    assert type(tq) is Trajectory and tq.qd is None and tq.kinetic is None
    assert np.array_equal(tq.joints, np.full(4, m.nb))
    back = _roundtrip(tq, tmp_path, "qs.npz")
    assert back.error == "relative_joint" and back.method == "quasistatic"
    _same_model(back.build_model(), m)


def test_scene_descriptions_rebuild_every_scene():
    """Every scene generator records its arguments (defaults filled in); the description
    survives JSON and rebuilds the same model."""
    small = dict(pendulum=dict(n=4), bicycle_chain=dict(n=5), two_link_arm={},
                 prismatic_pair={}, humanoid={}, crowd=dict(k=2), square_chain=dict(n=4),
                 square_net=dict(rows=2, cols=2), four_bar={}, strandbeest_leg={},
                 random_tree=dict(n=8, seed=3), millipede=dict(legs=2, leg_links=2, spine=6),
                 molecule=dict(n=20, seed=1), thread=dict(n=30), snake_bridge=dict(n=41),
                 capsule_chain=dict(n=8), hanging_rope=dict(n=12))
    assert set(small) == set(SCENES)
    for name, kw in small.items():
        m = SCENES[name](**kw)
        d = json.loads(json.dumps(m.description))
        assert d["scene"] == name and all(d["kwargs"][k] == v for k, v in kw.items())
        _same_model(build_model(d), m)
    m, q = art.models.crowd(2, return_configuration=True)
    assert m.description["scene"] == "crowd"
    # a seed without a JSON form: no description rather than a wrong one
    assert art.models.random_tree(5, np.random.default_rng(0)).description is None


def test_build_model_errors(tmp_path):
    b = art.ModelBuilder()
    b.add_body("a", None, "revolute", axis=(0, 1, 0), mass=1.0)
    m = b.build()
    tr = Simulator(m, 1e-3, "rk4").run(3)
    assert tr.description is None and tr.body_name == ["a"]
    with pytest.raises(ValueError, match="no model description"):
        tr.build_model()
    with pytest.raises(ValueError, match="unknown scene 'nope'"):
        build_model({"scene": "nope", "kwargs": {}})
    with pytest.raises(ValueError, match="needs 'scene'"):
        build_model({"kwargs": {}})
    with pytest.raises(ValueError, match="does not exist"):
        build_model({"urdf": str(tmp_path / "gone.urdf"), "kwargs": {}})
    tr = Simulator(art.models.pendulum(3), 1e-3, "rk4").run(3)
    tr.body_name = ["x", "y", "z"]
    with pytest.raises(ValueError, match="bodies"):
        tr.build_model()


def test_urdf_description_checks_the_file(tmp_path):
    """A loader's description: the file by path and SHA-256; a changed file is refused."""
    from articulated.io.urdf import load_urdf
    from articulated.models.description import file_sha256

    path = tmp_path / "robot.urdf"
    shutil.copy(DATA / "mixed_joints.urdf", path)
    d = {"urdf": str(path), "sha256": file_sha256(path), "kwargs": {"floating_base": True}}
    _same_model(build_model(d), load_urdf(path, floating_base=True))
    path.write_text(path.read_text() + "\n<!-- edited -->\n")
    with pytest.raises(ValueError, match="changed since the model was built"):
        build_model(d)


def test_old_files_still_load(tmp_path):
    """Files written before names and descriptions (format 0) load, with empty names."""
    path = tmp_path / "old.npz"
    np.savez(path, t=np.arange(3.0), q=np.zeros((3, 2)), qd=np.zeros((3, 2)),
             kinetic=np.zeros(3), potential=np.ones(3), nfev=np.int64(7),
             wall_time=np.float64(0.5), integrator=np.str_("rk4"), method=np.str_("aba"),
             dt=np.float64(0.01))
    tr = Trajectory.load(path)
    assert (tr.nfev, tr.integrator, tr.method, tr.dt) == (7, "rk4", "aba", 0.01)
    assert tr.body_name == [] and tr.description is None and np.array_equal(tr.total, np.ones(3))
    np.savez(tmp_path / "other.npz", x=np.zeros(2))
    with pytest.raises(ValueError, match="not a trajectory"):
        Trajectory.load(tmp_path / "other.npz")
