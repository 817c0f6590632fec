"""The full DCA's packed node records (issue 20, items 5 and 7) against the reference
layout: the per-joint and per-slot coefficient arrays of the DCA engine
(:class:`articulated.algorithms.engine.DCAEngine`, computed by its own node kernels in
:mod:`articulated.algorithms.node_update`) on random trees with every joint type."""

import numpy as np
import pytest

from articulated.algorithms.dca import (LEAF_H, LEAF_IBAR, LEAF_IINV, LEAF_M, LEAF_X, NR_A,
                                        NR_CA, NR_CB, NR_HA, NR_HB, NR_J, NR_JT, NR_NF, NR_NH,
                                        NR_NHA, NR_NHB, NR_NV, NR_OOA, NR_OOB, NR_PERM, NR_VA)
from articulated.algorithms.dca_solver import DCA
from articulated.algorithms.engine import DCAEngine
from articulated.model import JOINT_TYPES
from articulated.models import random_tree

from conftest import random_state

TOL = 1e-12
"""Largest difference, relative to the largest entry, between the two layouts' values."""


def close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    return np.abs(a - b).max(initial=0.0) <= TOL * max(1.0, np.abs(b).max(initial=0.0))


@pytest.mark.parametrize("n, seed, floating, branching", [
    (1, 0, False, 0.0), (2, 1, True, 0.0), (25, 2, False, 0.0), (40, 3, True, 0.6),
    (60, 4, False, 1.0)])
def test_packed_records_equal_the_reference_layout(n, seed, floating, branching):
    model = random_tree(n, seed, floating_base=floating, branching=branching,
                        joint_types=tuple(JOINT_TYPES))
    rng = np.random.default_rng(seed)
    q, _, tau, f_ext = random_state(model, rng)
    eng = DCAEngine(model)
    eng.set_state(q, tau, f_ext)
    s = DCA(model, eng.tree)
    qdd = s.quasi_statics(q, tau, f_ext)
    t = eng.tree
    # the index record of every node is the tree's and the model's arrays
    nr = s.node_rec
    assert np.array_equal(nr[:, NR_J], t.node_joint)
    assert np.array_equal(nr[:, NR_NH], t.node_nh)
    for i in np.flatnonzero(t.node_joint >= 0):
        J, A, B = t.node_joint[i], t.node_A[i], t.node_B[i]
        assert np.array_equal(nr[i, NR_PERM:NR_PERM + 6], s.perm[J])
        assert (nr[i, NR_A], nr[i, NR_CA], nr[i, NR_CB]) == (A, t.node_ca[i], t.node_cb[i])
        assert (nr[i, NR_NHB], nr[i, NR_HB], nr[i, NR_OOB]) == (
            t.node_nh[B], t.node_hoff[B], s.node_ooff[B])
        if A >= 0:
            assert (nr[i, NR_NHA], nr[i, NR_HA], nr[i, NR_OOA]) == (
                t.node_nh[A], t.node_hoff[A], s.node_ooff[A])
        assert (nr[i, NR_JT], nr[i, NR_NF], nr[i, NR_NV], nr[i, NR_VA]) == (
            model.jnt_type[J], s.nfree[J], model.jnt_nv[J], model.jnt_vadr[J])
    # the constant record of every leaf (post-order) holds its body's inertias and the
    # transforms to its handles' frames
    iu = np.triu_indices(6)
    for lk, i in enumerate(np.flatnonzero(t.node_body >= 0)):
        b, LR = t.node_body[i], s.leaf_rec[lk]
        assert np.array_equal(LR[LEAF_IINV:LEAF_IINV + 21], s.Iinv[b])
        assert close(LR[LEAF_IINV:LEAF_IINV + 21], np.linalg.inv(model.body_I[b])[iu])
        assert LR[LEAF_M] == model.body_mass[b]
        assert np.array_equal(LR[LEAF_H:LEAF_H + 3], model.body_h[b])
        assert np.array_equal(LR[LEAF_IBAR:LEAF_IBAR + 9], model.body_Ibar[b].ravel())
        for k in range(t.node_nh[i]):
            x, o = s.handle_x[t.node_hoff[i] + k], LEAF_X + 12 * k
            assert np.array_equal(LR[o:o + 9], s.H_E[x].ravel())
            assert np.array_equal(LR[o + 9:o + 12], s.H_r[x])
    # every joint type occurs in the larger trees
    if n >= 40:
        assert set(np.unique(model.jnt_type)) == set(JOINT_TYPES.values())
    # coefficients by joint from the records (RGL eq. 2) equal the engine's arrays
    assert close(s.beta, eng.beta)
    assert close(s.gamma, eng.gamma)
    for j in range(model.nb):
        assert close(s.node_VW(j)[1], eng.W[j])            # W from the factor of K_FF
    # off-diagonal handle blocks (the same storage in both) and the accelerations
    assert close(s.Po, eng.Phi[t.n_slots:])
    assert close(qdd, eng.solve(0.0).qdd)
