"""Armature (a rotor inertia on a joint, MuJoCo's ``dof_armature``): ``M + diag(armature)``
in ABA, CRBA and RNEA, in the kinetic energy, against Pinocchio's and MuJoCo's own
armature; refused by the DCA; set by ModelBuilder and Model.with_armature, checked."""

from __future__ import annotations

import numpy as np
import pytest

import articulated as art
from articulated import models
from articulated.models import random_tree

from conftest import random_state, rel_err


def _armed(model, rng):
    """Random armature, one value per joint (MuJoCo's form), none on free joints."""
    a = np.repeat(rng.uniform(0.01, 0.5, size=model.nb), model.jnt_nv)
    a[np.repeat(model.jnt_type == art.model.JOINT_FREE, model.jnt_nv)] = 0.0
    return model.with_armature(a)


@pytest.mark.parametrize("seed", range(3))
def test_aba_crba_rnea_agree_with_armature_on_every_joint_type(seed):
    """A random tree with every joint type (free, spherical, revolute, prismatic, fixed)
    and armature on every dof but the free joints': ABA = CRBA's ``M^-1 (tau - C)`` with ``M`` the armature
    added on the diagonal of the plain CRBA, and RNEA inverts both, to 1e-9."""
    rng = np.random.default_rng(seed)
    plain = random_tree(12, seed, joint_types=("free", "spherical", "revolute", "prismatic",
                                               "fixed"))
    model = _armed(plain, rng)
    q, qd, tau, f_ext = random_state(model, rng)
    M = art.crba(model, q)
    assert np.allclose(M, art.crba(plain, q) + np.diag(model.dof_armature), rtol=0, atol=1e-12)
    qdd = art.aba(model, q, qd, tau, f_ext)
    bias = art.rnea(model, q, qd, np.zeros(model.nv), f_ext)
    assert rel_err(qdd, np.linalg.solve(M, tau - bias)) < 1e-9
    assert rel_err(art.rnea(model, q, qd, qdd, f_ext), tau) < 1e-9
    assert rel_err(art.aba_modified(model, q, qd, tau, f_ext), qdd) < 1e-9
    assert rel_err(art.crba_forward_dynamics(model, q, qd, tau, f_ext), qdd) < 1e-9
    T, _ = art.energy(model, q, qd)
    assert T == pytest.approx(0.5 * qd @ M @ qd, rel=1e-12)


def test_armature_matches_pinocchio_and_mujoco():
    """Pinocchio's ABA with its ``model.armature`` and MuJoCo's mj_forward with
    ``dof_armature`` (the models of articulated.interop) equal ours to 1e-9."""
    pytest.importorskip("pinocchio")
    mujoco = pytest.importorskip("mujoco")
    from articulated.interop import to_mujoco, to_mujoco_state, to_pinocchio

    rng = np.random.default_rng(7)
    model = _armed(random_tree(10, 7, joint_types=("spherical", "revolute", "prismatic"),
                               floating_base=True), rng)
    q, qd, tau, _ = random_state(model, rng)
    qdd = art.aba(model, q, qd, tau)
    assert rel_err(to_pinocchio(model).aba(q, qd, tau), qdd) < 1e-9
    m, conv = to_mujoco(model)
    d = mujoco.MjData(m)
    conv.set_state(d, q, qd, tau)
    mujoco.mj_forward(m, d)
    assert rel_err(to_mujoco_state(model, m, q, qd, qdd)[2], d.qacc) < 1e-9


def test_simulated_energy_includes_the_rotors():
    """A pendulum with armature, no damping: the recorded total energy (with the rotors'
    ``1/2 a qd^2``) is conserved by RK4 to 1e-8 over 1 s; without the rotor term it is
    not (the term is 10 % of the kinetic energy)."""
    model = models.pendulum(5).with_armature(0.05)
    sim = art.Simulator(model, 1e-3, integrator="rk4", q0=np.full(5, 0.3))
    tr = sim.run(1000, record_every=100)
    drift = np.abs(tr.total - tr.total[0]).max()
    assert drift <= 1e-8 * max(1.0, abs(tr.total[0]))
    rotor = 0.5 * 0.05 * (tr.qd ** 2).sum(axis=1)
    assert rotor.max() > 0.05 * tr.kinetic.max()


def test_dca_and_adaptive_methods_refuse_armature():
    model = models.pendulum(4).with_armature([0.0, 0.1, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"joint 'link1_joint' has armature \[0.1\]; the DCA"):
        art.forward_dynamics(model, model.neutral(), np.zeros(4), np.zeros(4), method="dca")
    with pytest.raises(ValueError, match=r"has armature"):
        art.Simulator(model, 1e-3, method="adaptive", max_active=2)


def test_bad_armature_is_refused_naming_the_joint():
    with pytest.raises(ValueError, match=r"joint 'body_joint': a free joint takes no armature"):
        b = art.ModelBuilder()
        b.add_body("body", None, "free", armature=0.1)
        b.build()
    b = art.ModelBuilder()
    with pytest.raises(ValueError, match=r"body 'a': armature must be finite and >= 0, got -1"):
        b.add_body("a", None, "revolute", armature=-1.0)
    model = models.pendulum(3)
    with pytest.raises(ValueError, match=r"joint 'link2_joint': armature must be finite"):
        model.with_armature([0.0, 0.0, np.nan])
    with pytest.raises(ValueError, match=r"armature must be a scalar or have shape \(2,\)"):
        model.with_armature([1.0, 2.0, 3.0], joints=["link0_joint", "link1_joint"])
    b.add_body("a", None, "revolute", armature=0.25)
    b.add_body("b", "a", "spherical", armature=0.5)
    m = b.build()
    assert m.dof_armature.tolist() == [0.25, 0.5, 0.5, 0.5]


def test_the_description_records_armature_and_limits():
    """A trajectory's model rebuilt from its description has the armature and limits set
    after the scene was built (the description records the edits, in order)."""
    from articulated.models import build_model

    model = models.pendulum(3).with_armature([0.1, 0.2, 0.3]).with_limits(-1.0, 1.0)
    again = build_model(model.description)
    assert again.dof_armature.tolist() == [0.1, 0.2, 0.3]
    assert again.jnt_range.tolist() == [[-1.0, 1.0]] * 3
    assert again.description == model.description
    with pytest.raises(ValueError, match=r"unknown edit 'with_gravity'"):
        build_model(dict(model.description, edits=[["with_gravity", {}]]))
