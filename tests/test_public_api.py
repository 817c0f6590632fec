"""The public ``aba``'s call forms (issue 20, item 3): the compiled hot path, ``out=``,
batches of states (one compiled call, worker threads) and their errors. Every form is
checked against the plain one-state call, which test_dynamics.py checks against CRBA, RNEA
and Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest

import articulated as art
from articulated.models import random_tree

from conftest import random_state


@pytest.fixture(scope="module")
def tree():
    """A 25-body random tree with a free base and every joint type."""
    return random_tree(25, 3, floating_base=True, branching=1.0)


def _batch(model, B, seed=0):
    rng = np.random.default_rng(seed)
    states = [random_state(model, rng) for _ in range(B)]
    return (np.array([s[k] for s in states]) for k in range(4))


@pytest.mark.parametrize("modified", [False, True])
def test_batch_equals_single_calls_bit_for_bit(tree, modified):
    Q, QD, TAU, F = _batch(tree, 40)
    one = np.array([art.aba(tree, Q[b], QD[b], TAU[b], F[b], modified=modified)
                    for b in range(40)])
    assert np.array_equal(art.aba(tree, Q, QD, TAU, F, modified=modified, threads=1), one)
    assert np.array_equal(art.aba(tree, Q, QD, TAU, F, modified=modified, threads=3), one)
    # no forces, and one force array shared by every state
    none = np.array([art.aba(tree, Q[b], QD[b], TAU[b]) for b in range(40)])
    assert np.array_equal(art.aba(tree, Q, QD, TAU, threads=2), none)
    shared = np.array([art.aba(tree, Q[b], QD[b], TAU[b], F[0]) for b in range(40)])
    assert np.array_equal(art.aba(tree, Q, QD, TAU, F[0]), shared)


def test_batch_float32_and_lists(tree):
    Q, QD, TAU, _ = _batch(tree, 5)
    A32 = art.aba(tree, Q, QD, TAU, dtype=np.float32)
    assert A32.dtype == np.float32 and A32.shape == (5, tree.nv)
    for b in range(5):
        assert np.array_equal(A32[b], art.aba(tree, Q[b], QD[b], TAU[b], dtype=np.float32))
    assert np.array_equal(art.aba(tree, Q.tolist(), QD.tolist(), TAU.tolist()),
                          art.aba(tree, Q, QD, TAU))


def test_out_is_written_and_returned(tree):
    q, qd, tau, f = random_state(tree, np.random.default_rng(1))
    ref = art.aba(tree, q, qd, tau, f)
    out = np.full(tree.nv, np.nan)
    assert art.aba(tree, q, qd, tau, f, out=out) is out
    assert np.array_equal(out, ref)
    out[:] = np.nan
    assert art.aba(tree, q, qd, tau, f_ext=None, out=out) is out
    assert np.array_equal(out, art.aba(tree, q, qd, tau))
    with pytest.raises(ValueError, match=r"out must be a writable C-contiguous float64 array "
                                         r"of shape \(%d,\)" % tree.nv):
        art.aba(tree, q, qd, tau, out=np.zeros(tree.nv + 1))
    with pytest.raises(ValueError, match="out must be"):
        art.aba(tree, q, qd, tau, out=np.zeros(tree.nv, dtype=np.float32))
    Q, QD, TAU, _ = _batch(tree, 3)
    OUT = np.empty((3, tree.nv))
    assert art.aba(tree, Q, QD, TAU, out=OUT) is OUT
    with pytest.raises(ValueError, match=r"shape \(3, %d\)" % tree.nv):
        art.aba(tree, Q, QD, TAU, out=np.empty((2, tree.nv)))


def test_hot_path_equals_checked_path(tree):
    """The compiled hot path (contiguous float64 arrays, no f_ext) and the Python path
    (anything else: lists, strided views, ``modified=1``) give the same numbers."""
    q, qd, tau, _ = random_state(tree, np.random.default_rng(2))
    ref = art.aba(tree, q, qd, tau)
    assert np.array_equal(art.aba(tree, list(q), list(qd), list(tau)), ref)
    wide = np.zeros((tree.nv, 2))
    wide[:, 0] = qd
    assert np.array_equal(art.aba(tree, q, wide[:, 0], tau), ref)  # a strided view
    assert np.array_equal(art.aba(tree, q, qd, tau, modified=1),
                          art.aba(tree, q, qd, tau, modified=True))
    assert not np.array_equal(art.aba(tree, q, qd, tau, modified=True), ref)  # not ABA's bits


def test_errors_name_the_state_and_joint(tree):
    Q, QD, TAU, _ = _batch(tree, 4)
    qa = int(tree.quat_qadr[0])
    bad = Q.copy()
    bad[2, qa:qa + 4] *= 1.5
    with pytest.raises(ValueError, match=r"state 2 of the batch: joint '.*': quaternion"):
        art.aba(tree, bad, QD, TAU)
    bad = QD.copy()
    bad[3, tree.nv - 1] = np.nan
    j = tree.joint_name[tree.dof_body[tree.nv - 1]]
    with pytest.raises(ValueError, match=rf"state 3 of the batch: .*{j}"):
        art.aba(tree, Q, bad, TAU)
    with pytest.raises(ValueError, match=r"qd must have shape \(4, %d\)" % tree.nv):
        art.aba(tree, Q, QD[:3], TAU)
    with pytest.raises(ValueError, match=r"f_ext must have shape"):
        art.aba(tree, Q, QD, TAU, np.zeros((4, tree.nb, 5)))
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        art.aba(tree, Q, QD, TAU, threads=0)
    # one state: the compiled checks hand wrong shapes and quaternions to the diagnosis
    q, qd, tau, _ = random_state(tree, np.random.default_rng(3))
    with pytest.raises(ValueError, match=r"tau must have shape \(%d,\)" % tree.nv):
        art.aba(tree, q, qd, tau[:-1])
    q[qa] += 0.5
    with pytest.raises(ValueError, match=r"quaternion q\[%d:%d\] has norm" % (qa, qa + 4)):
        art.aba(tree, q, qd, tau)


def test_free_joint_projection_is_exact():
    """A free body alone: ``qdd = IA^-1 (tau - v x* I v)`` with the root's projection in
    closed form; a pure force through the centre of mass accelerates it by F / m."""
    b = art.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("box", parent=None, joint="free", mass=2.0, com=(0, 0, 0),
               inertia=np.diag([0.1, 0.2, 0.3]))
    m = b.build()
    q = m.neutral()
    tau = np.array([0, 0, 0, 4.0, -2.0, 1.0])   # [n; f] in body coordinates
    np.testing.assert_allclose(art.aba(m, q, np.zeros(6), tau), [0, 0, 0, 2.0, -1.0, 0.5],
                               rtol=0, atol=1e-15)


def test_rnea_hot_path_and_out(tree):
    """``rnea`` with and without ``f_ext`` (both on the compiled checked path) inverts ``aba``;
    ``out=`` is written and returned."""
    q, qd, tau, f = random_state(tree, np.random.default_rng(4))
    for fx in (None, f):
        qdd = art.aba(tree, q, qd, tau, fx)
        out = np.full(tree.nv, np.nan)
        assert art.rnea(tree, q, qd, qdd, fx, out=out) is out
        np.testing.assert_allclose(out, tau, rtol=0, atol=1e-9 * np.abs(tau).max())
        assert np.array_equal(out, art.rnea(tree, list(q), qd, list(qdd), fx))
    with pytest.raises(ValueError, match=r"f_ext must have shape \(%d, 6\)" % tree.nb):
        art.rnea(tree, q, qd, tau, np.zeros((tree.nb - 1, 6)))
    with pytest.raises(ValueError, match=r"f_ext must have shape \(%d, 6\)" % tree.nb):
        art.aba(tree, q, qd, tau, np.zeros((tree.nb, 6, 1)))


def test_hot_path_compiles_no_other_specialization(tree):
    """Arguments of other dimensions or dtypes are converted or refused in Python: the
    checked kernels keep their float64 and float32 specializations only."""
    from articulated.algorithms.aba import aba_checked_kernel

    q, qd, tau, f = random_state(tree, np.random.default_rng(5))
    art.aba(tree, q, qd, tau)
    art.aba(tree, q, qd, tau, dtype=np.float32)
    before = len(aba_checked_kernel.signatures)
    with pytest.raises(ValueError, match="qd must have shape"):
        art.aba(tree, q, qd[None], tau)
    with pytest.raises(ValueError, match="f_ext must have shape"):
        art.aba(tree, q, qd, tau, f[..., None])
    art.aba(tree, q.astype(np.float32), qd, tau)          # converted to float64
    art.aba(tree, q, qd.astype(int), tau, f.astype(np.float32))
    assert len(aba_checked_kernel.signatures) == before <= 2
