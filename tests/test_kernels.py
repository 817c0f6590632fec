"""Kernel hygiene (STYLE.md, "Tests"): the ABA, RNEA and CRBA kernels allocate nothing,
write every output and workspace entry they read (NaN pre-fill), compile for float32 with
the same results, and their small helpers (packed symmetric inertias, ``sincos``) agree
with plain NumPy."""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit

import articulated as art
from articulated._views import rows
from articulated.models import random_tree
from articulated.spatial import (congruence, rigid_inertia, rigid_inertia_6x6, sincos, skew,
                                 sym6_from_dense, sym6_index)

from conftest import rel_err


def _models():
    return [art.models.pendulum(12, seed=3),
            random_tree(25, 4, branching=0.7),  # every joint type, fixed base
            random_tree(25, 5, floating_base=True, branching=0.3)]


def _state(model, seed):
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng)
    return (q, rng.normal(size=model.nv), rng.normal(size=model.nv),
            rng.normal(size=model.nv), rng.normal(size=(model.nb, 6)))


def test_kernels_allocate_nothing():
    """NRT allocation statistics stay unchanged across repeated direct kernel calls (run in
    a subprocess: NUMBA_NRT_STATS must be set before numba is imported)."""
    code = textwrap.dedent("""
        import numpy as np
        from numba.core.runtime import rtsys
        import articulated as art
        from articulated.algorithms.aba import aba_kernel
        from articulated.algorithms.crba import _crba_kernel
        from articulated.algorithms.rnea import _rnea_kernel
        from articulated.models import random_tree

        for model in (art.models.pendulum(20), random_tree(20, 1, floating_base=True)):
            rng = np.random.default_rng(0)
            q = model.random_configuration(rng)
            qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
            f_ext = rng.normal(size=(model.nb, 6))
            d = model.data()
            M = np.zeros((model.nv, model.nv))

            def calls():
                aba_kernel(d.model_i, d.model_f, q, qd, tau, d.f_none, False, d.buf, True)
                aba_kernel(d.model_i, d.model_f, q, qd, tau, f_ext, True, d.buf, True)
                _rnea_kernel(d.model_i, d.model_f, q, qd, tau, f_ext, True, d.buf)
                _crba_kernel(d.model_i, d.model_f, q, d.buf, M)

            calls()  # compile
            before = rtsys.get_allocation_stats()
            for _ in range(5):
                calls()
            after = rtsys.get_allocation_stats()
            assert after.alloc == before.alloc and after.free == before.free, (before, after)
            assert after.mi_alloc == before.mi_alloc, (before, after)
        print("OK")
    """)
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0 and "OK" in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("k", range(3))
def test_nan_prefilled_workspace_gives_the_same_results(k):
    """Every workspace entry a kernel reads is written by it first: a workspace full of NaN
    gives bit-identical outputs (mujoco_warp's pre-fill habit)."""
    model = _models()[k]
    q, qd, tau, qdd, f_ext = _state(model, k)
    d = model.data()
    art.aba(model, q, qd, tau, f_ext)
    a_ref = d.a.copy()  # body accelerations, an output of ABA pass 3
    ref = [art.aba(model, q, qd, tau, f_ext), art.aba(model, q, qd, tau),
           art.aba_modified(model, q, qd, tau, f_ext), art.rnea(model, q, qd, qdd, f_ext),
           art.crba(model, q), art.crba_forward_dynamics(model, q, qd, tau, f_ext),
           art.body_velocities(model, q, qd), art.forward_kinematics(model, q)[1]]
    for j, out in enumerate(ref):
        d.buf[:] = np.nan
        d.M[:] = np.nan
        got = [art.aba(model, q, qd, tau, f_ext), art.aba(model, q, qd, tau),
               art.aba_modified(model, q, qd, tau, f_ext), art.rnea(model, q, qd, qdd, f_ext),
               art.crba(model, q), art.crba_forward_dynamics(model, q, qd, tau, f_ext),
               art.body_velocities(model, q, qd), art.forward_kinematics(model, q)[1]][j]
        assert np.isfinite(got).all(), j
        np.testing.assert_array_equal(got, out, err_msg=f"output {j}")
    d.buf[:] = np.nan
    art.aba(model, q, qd, tau, f_ext)
    np.testing.assert_array_equal(d.a, a_ref)


@pytest.mark.parametrize("k", range(3))
def test_float32_matches_float64(k):
    """The same kernels compiled for float32 arrays agree with float64 to 1e-3."""
    model = _models()[k]
    q, qd, tau, qdd, f_ext = _state(model, k)
    for f in (lambda dt: art.aba(model, q, qd, tau, f_ext, dtype=dt),
              lambda dt: art.aba_modified(model, q, qd, tau, f_ext, dtype=dt),
              lambda dt: art.rnea(model, q, qd, qdd, f_ext, dtype=dt),
              lambda dt: art.crba(model, q, dtype=dt)):
        x32, x64 = f(np.float32), f(np.float64)
        assert x32.dtype == np.float32 and x64.dtype == np.float64
        assert rel_err(x32, x64) < 1e-3


def test_packed_symmetric_inertia_helpers():
    """The packed layout, the rigid inertia and the congruence ``X^T M X`` against dense
    NumPy (RBDA eqs. 2.24, 2.63)."""
    rng = np.random.default_rng(0)
    assert sorted({sym6_index(k, l) for k in range(6) for l in range(6)}) == list(range(21))
    assert all(sym6_index(k, l) == sym6_index(l, k) for k in range(6) for l in range(6))
    A = rng.normal(size=(6, 6))
    M = A @ A.T
    E = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    r = rng.normal(size=3)
    X = np.block([[E, np.zeros((3, 3))], [-E @ skew(r), E]])
    C = congruence(tuple(E.ravel()), tuple(r), sym6_from_dense(M))
    np.testing.assert_allclose(C, sym6_from_dense(X.T @ M @ X), rtol=1e-12, atol=1e-12)
    m, com, Ic = 2.0, rng.normal(size=3), np.diag([0.1, 0.2, 0.25])
    Ibar = Ic + m * (com @ com * np.eye(3) - np.outer(com, com))
    np.testing.assert_allclose(rigid_inertia(m, tuple(m * com), tuple(Ibar.ravel())),
                               sym6_from_dense(rigid_inertia_6x6(m, com, Ic)), atol=1e-14)


@njit
def _sincos_many(x, s_out, c_out):
    for i in range(x.size):
        s_out[i], c_out[i] = sincos(x[i])


def test_sincos_within_one_ulp_of_libm():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-4.0, 4.0, 50000), rng.uniform(-4e5, 4e5, 20000),
                        np.arange(-40, 41) * (math.pi / 4), [0.0, -0.0, 5e-324, 1e-300, 5e5,
                                                             -3e9, np.inf, np.nan]])
    s, c = np.empty_like(x), np.empty_like(x)
    _sincos_many(x, s, c)
    with np.errstate(invalid="ignore"):
        for got, ref in ((s, np.sin(x)), (c, np.cos(x))):
            fin = np.isfinite(ref)
            assert np.all(np.abs(got - ref)[fin] <= np.spacing(np.abs(ref))[fin])
            assert np.isnan(got[~fin]).all()
    neg_zero = np.flatnonzero((x == 0) & np.signbit(x))
    assert neg_zero.size and np.signbit(s[neg_zero]).all()  # sin(-0) = -0
    x32 = x[np.isfinite(x) & (np.abs(x) < 1e5)].astype(np.float32)
    s32, c32 = np.empty_like(x32), np.empty_like(x32)
    _sincos_many(x32, s32, c32)  # float32: libm's sinf/cosf
    assert np.abs(s32 - np.sin(x32)).max() < 1e-6 and np.abs(c32 - np.cos(x32)).max() < 1e-6


@njit(_nrt=False)
def _rows_in_kernel(a, m, n):
    v = rows(a[1:], m, n)
    v[m - 1, n - 1] = -7           # a view: writes reach the buffer
    return v.shape[0], v.shape[1], v.strides[0], v[m - 1, 0]


def test_rows_view_of_packed_buffers():
    """``_views.rows`` (the reshape-free view the packed-buffer unpacking uses): the same
    entries, shape and strides as NumPy's reshape of the buffer's first m n entries, a view
    and not a copy, for float and int buffers, in a kernel without NRT and in one with NRT
    (the view returned to Python keeps its buffer alive)."""
    for dtype in (np.float64, np.int64):
        a = np.arange(20).astype(dtype)
        ref = a[1:].copy()[:12].reshape((3, 4))
        m, n, s0, x = _rows_in_kernel(a, 3, 4)
        assert (m, n, s0) == (3, 4, 4 * a.itemsize) and x == ref[2, 0]
        assert a[12] == -7 and a[13] == 13
        v = _rows_nrt(a.copy(), 2, 5)          # the only reference to its buffer
        assert v.shape == (2, 5) and v.base is not None
        np.testing.assert_array_equal(v, np.arange(10).reshape(2, 5).astype(dtype))
        v[1, 4] = 3
        assert v[1, 4] == 3
    assert _rows_nrt(np.zeros(4), 0, 6).shape == (0, 6)


@njit
def _rows_nrt(a, m, n):
    return rows(a, m, n)
