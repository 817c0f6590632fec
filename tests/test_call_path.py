"""The public functions' one-state call path (issue 20, item 3): the checked kernels called
through their compiled entry points (``articulated.algorithms._inputs.EntryPoints``),
against Pinocchio on example-robot-data robots, against the converting path bit for bit,
and with bad input (the same ValueErrors naming the shape, joint or body)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import articulated as art
from articulated.algorithms._inputs import EntryPoints
from articulated.bench.common import robots_dir
from articulated.spatial import spd_inverse

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI 'pin', test extra) is the oracle")
from articulated.interop import to_pinocchio  # noqa: E402

ROBOTS = [("double_pendulum.urdf", False), ("ur5_robot.urdf", False),
          ("solo12.urdf", True), ("quadrotor_base.urdf", True)]


def _load(name, floating):
    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed (pip install articulated[robots])")
    path = next(root.rglob(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return art.load_urdf(path, floating_base=floating)


@pytest.fixture(scope="module", params=ROBOTS, ids=lambda r: r[0].split(".")[0])
def robot(request):
    model = _load(*request.param)
    rng = np.random.default_rng(7)
    q = art.normalize(model, model.neutral() + 0.3 * rng.standard_normal(model.nq))
    return model, to_pinocchio(model), q, rng.standard_normal(model.nv), \
        rng.standard_normal(model.nv)


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(1.0, np.abs(b).max()))


def test_dynamics_equal_pinocchio(robot):
    model, pm, q, qd, tau = robot
    for _ in range(2):  # the first call makes the workspace, the second takes the hot path
        qdd = art.aba(model, q, qd, tau)
        _close(qdd, pm.aba(q, qd, tau))
        _close(art.aba_modified(model, q, qd, tau), qdd)
        _close(art.rnea(model, q, qd, qdd), tau)
        _close(art.rnea(model, q, qd, qdd), pm.rnea(q, qd, qdd))
        _close(art.crba(model, q), pm.crba(q))


def test_kinematics_equal_pinocchio(robot):
    model, pm, q, qd, _ = robot
    pin.forwardKinematics(pm.model, pm.data, pm.q(q), pm.v(qd))
    pin.computeJointJacobians(pm.model, pm.data, pm.q(q))
    point = np.array([0.1, -0.2, 0.3])
    for _ in range(2):
        R, p = art.forward_kinematics(model, q)
        v = art.body_velocities(model, q, qd)
        for i in range(model.nb):
            jid = int(pm.joint_of_body[i])
            oMi = pm.data.oMi[jid]
            _close(R[i], oMi.rotation)
            _close(p[i], oMi.translation)
            _close(v[i], np.concatenate([pm.data.v[jid].angular, pm.data.v[jid].linear]))
            _close(art.point_position(model, q, i, point), oMi.act(point))
        b = model.nb - 1
        Jp = pin.getJointJacobian(pm.model, pm.data, int(pm.joint_of_body[b]),
                                  pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        J = art.jacobian(model, q, b)
        _close(J, _jacobian_from_pin(pm, Jp))
        T, V = art.energy(model, q, qd)
        _close(T, pin.computeKineticEnergy(pm.model, pm.data, pm.q(q), pm.v(qd)))
        _close(V, pin.computePotentialEnergy(pm.model, pm.data, pm.q(q)))


def _jacobian_from_pin(pm, Jp):
    """Pinocchio's (6, nv) ``[v; w]`` joint Jacobian in our row and column order."""
    J = np.zeros((6, pm.src.nv))
    J[:, pm._va] = np.vstack([Jp[3:], Jp[:3]])[:, pm._vb]
    return J


def test_hot_path_equals_converting_path(robot):
    """Lists, strided views, int and read-only arrays take the converting path (or, for
    read-only ones, the hot path) and give the hot path's numbers bit for bit."""
    model, _, q, qd, tau = robot
    ref = art.aba(model, q, qd, tau)
    wide = np.zeros((model.nv, 2))
    wide[:, 0] = tau
    ro = qd.copy()
    ro.flags.writeable = False
    assert np.array_equal(art.aba(model, list(q), list(qd), list(tau)), ref)
    assert np.array_equal(art.aba(model, q, qd, wide[:, 0]), ref)
    assert np.array_equal(art.aba(model, q, ro, tau), ref)
    assert np.array_equal(art.aba(model, q, qd, np.round(tau).astype(int)),
                          art.aba(model, q, qd, np.round(tau)))
    M = art.crba(model, q)
    out = np.full((model.nv, model.nv), np.nan)
    assert art.crba(model, list(q), out=out) is out and np.array_equal(out, M)
    R, p = art.forward_kinematics(model, q)
    R2, p2 = art.forward_kinematics(model, list(q))
    assert np.array_equal(R, R2) and np.array_equal(p, p2)
    b = model.body_name[-1]
    J = art.jacobian(model, q, b, [0.1, 0.0, 0.2])
    Jout = np.empty((6, model.nv))
    assert art.jacobian(model, q, model.nb - 1, np.array([0.1, 0.0, 0.2]), out=Jout) is Jout
    assert np.array_equal(Jout, J)
    assert np.array_equal(art.point_position(model, q, b), p[-1])
    assert art.energy(model, q, qd) == art.energy(model, list(q), list(qd))
    assert np.array_equal(art.body_velocities(model, q, qd),
                          art.body_velocities(model, q, list(qd)))


def test_bad_input_names_shape_joint_body(robot):
    model, _, q, qd, tau = robot
    nq, nv = model.nq, model.nv
    for fn, args in ((art.aba, (q[:-1], qd, tau)), (art.rnea, (q[:-1], qd, tau)),
                     (art.crba, (q[:-1],)), (art.forward_kinematics, (q[:-1],)),
                     (art.body_velocities, (q[:-1], qd)), (art.energy, (q[:-1], qd)),
                     (art.jacobian, (q[:-1], 0)), (art.point_position, (q[:-1], 0))):
        with pytest.raises(ValueError, match=r"q must have shape \(%d,\)" % nq):
            fn(model, *args)
    with pytest.raises(ValueError, match=r"qd must have shape \(%d,\)" % nv):
        art.body_velocities(model, q, qd[:-1])
    with pytest.raises(ValueError, match=r"out must be a writable C-contiguous float64 array "
                                         r"of shape \(%d, %d\)" % (nv, nv)):
        art.crba(model, q, out=np.empty((nv, nv + 1)))
    ro = np.empty(nv)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be a writable"):
        art.aba(model, q, qd, tau, out=ro)
    with pytest.raises(ValueError, match="body index %d out of range" % model.nb):
        art.jacobian(model, q, model.nb)
    with pytest.raises(ValueError, match="point must be a finite"):
        art.point_position(model, q, 0, np.array([0.0, np.nan, 0.0]))
    bad = qd.copy()
    bad[-1] = np.inf
    j = model.joint_name[model.dof_body[nv - 1]]
    with pytest.raises(ValueError, match=rf"joint '{j}': qd\[{nv - 1}\] is .*inf"):
        art.aba(model, q, bad, tau)
    with pytest.raises(ValueError, match=rf"joint '{j}': qd\[{nv - 1}\] is .*inf"):
        art.energy(model, q, bad)
    if model.quat_qadr.size:
        a = int(model.quat_qadr[0])
        bq = q.copy()
        bq[a] += 0.5
        for fn, args in ((art.aba, (bq, qd, tau)), (art.crba, (bq,)),
                         (art.jacobian, (bq, 0)), (art.forward_kinematics, (bq,))):
            with pytest.raises(ValueError, match=r"quaternion q\[%d:%d\] has norm" % (a, a + 4)):
                fn(model, *args)


def test_entry_point_is_the_dispatchers_version():
    """The hot path calls the very version numba's dispatcher would (no other compile):
    the entry point kept per dtype is that overload's."""
    from articulated.algorithms.aba import _ABA_ENTRY, aba_checked_kernel

    model = _load("double_pendulum.urdf", False)
    q = model.neutral()
    z = np.zeros(model.nv)
    for dt in (np.float64, np.float32):
        art.aba(model, q, z, z, dtype=dt)
        art.aba(model, q.astype(dt), z.astype(dt), z.astype(dt), dtype=dt)
    assert isinstance(_ABA_ENTRY, EntryPoints) and len(_ABA_ENTRY) == 2
    entries = {cres.entry_point for cres in aba_checked_kernel.overloads.values()}
    assert set(_ABA_ENTRY.values()) <= entries
    assert len(aba_checked_kernel.signatures) == 2


@pytest.mark.parametrize("n", [2, 3, 6])
def test_spd_inverse_is_the_symmetric_inverse(n):
    """spd_inverse (a free joint's ``D^-1`` in ABA) against NumPy's inverse; exactly
    symmetric; an indefinite block gives NaN, not a number."""
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, n))
    A = X @ X.T + 0.1 * np.eye(n)
    out, W = np.empty((n, n)), np.empty((n, n))
    spd_inverse(A, n, out, W)
    np.testing.assert_allclose(out @ A, np.eye(n), rtol=0, atol=1e-12 * np.linalg.cond(A))
    assert np.array_equal(out, out.T)
    spd_inverse(-A, n, out, W)
    assert np.isnan(out).all()


def test_contiguous_arrays_take_the_hot_path(robot, monkeypatch):
    """Contiguous arrays of the workspace's dtype never reach the converting path (which
    is made to fail here): one compiled call does the checks and the computation."""
    from articulated.algorithms import aba as aba_mod
    from articulated.algorithms import crba as crba_mod
    from articulated.algorithms import kinematics as kin_mod
    from articulated.algorithms import rnea as rnea_mod

    model, _, q, qd, tau = robot
    f = np.zeros((model.nb, 6))
    calls = [lambda: art.aba(model, q, qd, tau), lambda: art.aba(model, q, qd, tau, f),
             lambda: art.aba_modified(model, q, qd, tau), lambda: art.rnea(model, q, qd, tau),
             lambda: art.rnea(model, q, qd, tau, f), lambda: art.crba(model, q),
             lambda: art.forward_kinematics(model, q), lambda: art.body_velocities(model, q, qd),
             lambda: art.energy(model, q, qd), lambda: art.jacobian(model, q, 0),
             lambda: art.point_position(model, q, 0)]
    before = [c() for c in calls]  # makes the workspace and the entry points

    def fail(*args, **kw):
        raise AssertionError("the converting path was taken")

    for mod in (aba_mod, crba_mod, rnea_mod, kin_mod):
        monkeypatch.setattr(mod, "workspace", fail, raising=False)
        monkeypatch.setattr(mod, "as_state", fail, raising=False)
    monkeypatch.setattr(model, "data", fail)
    monkeypatch.setattr(model, "check_configuration", fail)
    for c, ref in zip(calls, before):
        res = c()
        for a, b in zip(res if isinstance(res, tuple) else (res,),
                        ref if isinstance(ref, tuple) else (ref,)):
            assert np.array_equal(a, b)
