"""SRM step-size control (issue 22, item 4): step doubling with the controller of
``simulation/stepsize.py`` on the falling square chain of Ascher & Lin (1999), Example 4.1."""

import math

import numpy as np
import pytest

import articulated as art
from articulated.simulation.srm import SRMDiverged, SRMSolver, loop_drift
from articulated.simulation.stepsize import StepSizeController, error_norm


def test_error_norm_and_controller_by_hand():
    """The RMS norm of HNW II.4 eq. 4.11 and the elementary controller (eq. 4.13) with
    scipy's RK45 constants (0.9, 0.2, 10), computed by hand."""
    err = np.array([3e-6, -4e-6])
    y0, y1 = np.array([1.0, -2.0]), np.array([3.0, 0.5])
    # scales: 1e-6 + 1e-6 * 3 = 4e-6, 1e-6 + 1e-6 * 2 = 3e-6
    assert error_norm(err, y0, y1, 1e-6, 1e-6) == pytest.approx(
        math.sqrt(((3 / 4) ** 2 + (4 / 3) ** 2) / 2), rel=1e-14)
    assert error_norm(np.array([np.nan]), y0[:1], y1[:1], 1e-6, 1e-6) == math.inf
    c = StepSizeController(2, 0.01)
    assert c.update(0.5, 0.01) and c.h == pytest.approx(0.01 * 0.9 * 0.5 ** (-1 / 3))
    assert not c.update(8.0, 0.02) and c.h == pytest.approx(0.02 * 0.45)   # 0.9 * 8^(-1/3)
    assert not c.update(1e6, 0.009) and c.h == pytest.approx(0.009 * 0.2)  # floor 0.2
    assert c.update(1e-9, 0.0018) and c.h == pytest.approx(0.0018)         # no growth after a rejection
    assert c.update(0.0, 0.0018) and c.h == pytest.approx(0.018)           # at most x10
    assert (c.accepted, c.rejected) == (3, 2)
    d = StepSizeController(2, 1.0)
    d.set_state(c.state())
    assert (d.h, d.accepted, d.rejected, d.last_rejected) == (c.h, 3, 2, False)


def _reference(model, T, dt, h=1e-4):
    """Fixed-step SRM (RK2, S = 3) at a fine step: 4e-8 rad from h = 5e-5 on [0, 0.4] s."""
    s = SRMSolver(model, h, integrator="rk2", iterations=3)
    return s.run(model.neutral(), np.zeros(model.nv), int(round(T / h)),
                 record_every=int(round(dt / h)))[1]


def test_error_follows_the_tolerance_on_the_square_chain():
    """4 squares over [0, 0.4] s (before the first singular passage, Table 4.1's window),
    records every 0.02 s = the largest step: the joint-angle error against a fine fixed-step
    run shrinks with the tolerance as error-per-step control of a second-order method
    gives (global ~ tol^(2/3): 10^(2/3) = 4.6 per decade), within 100 tol, and the
    controller rejects and shrinks steps."""
    m = art.models.square_chain(4)
    T, dt = 0.4, 0.02
    Qr = _reference(m, T, dt)
    err, ctrl = {}, {}
    for tol in (1e-5, 1e-6):
        s = SRMSolver(m, dt, integrator="rk2", iterations=3, rtol=tol, atol=tol)
        t, Q, _, drift = s.run(m.neutral(), np.zeros(m.nv), int(round(T / dt)))
        np.testing.assert_allclose(t, dt * np.arange(21), rtol=0, atol=1e-15)
        err[tol] = np.abs(Q - Qr).max()
        ctrl[tol] = s.control
        assert drift.max() < 1e-3
        assert s.steps_made == 3 * (s.control.accepted + s.control.rejected)
    assert err[1e-6] < 100 * 1e-6 and err[1e-5] < 100 * 1e-5, err
    assert 2.0 < err[1e-5] / err[1e-6] < 10.0, err
    assert ctrl[1e-6].rejected > 0
    assert ctrl[1e-6].accepted > 1.5 * ctrl[1e-5].accepted > 1.5 * 20   # h ~ tol^(1/3), < dt


def test_adaptive_srm_runs_the_long_chain_where_h_0005_diverges():
    """64 squares: the fixed step h = 0.005 s (RK2, S = 3) diverges in the first whip
    (t = 3.6 s, docs/results/closed-loops.md); with rtol = atol = 1e-4 and records every 0.01 s
    the controller runs past it to 4 s, rejecting and shrinking steps, with the loops
    closed within 3 cm (1 m links) and the total energy within 2 % of the largest kinetic
    energy (60 kJ; the fixed step h = 0.0025 s loses 0.9 %). At rtol = atol = 1e-3 it gains
    4 % and the energy watch says to tighten the tolerances."""
    m = art.models.square_chain(64)
    fixed = SRMSolver(m, 0.005, integrator="rk2", iterations=3)
    with pytest.raises(SRMDiverged) as e:
        fixed.run(m.neutral(), np.zeros(m.nv), 800, record_every=100)
    assert 3.0 < e.value.partial[0][-1] < 4.0
    sim = art.Simulator(m, 0.01, "rk2", method="srm", rtol=1e-4, atol=1e-4,
                        srm=dict(iterations=3), energy_drift=0.02)
    traj = sim.run(400, record_every=10)
    np.testing.assert_allclose(traj.t, 0.1 * np.arange(41), rtol=0, atol=1e-12)
    assert np.isfinite(traj.q).all() and np.isfinite(traj.qd).all()
    assert loop_drift(m, traj.q).max() < 0.03
    assert np.abs(traj.total - traj.total[0]).max() < 0.02 * traj.kinetic.max()
    c = sim.srm_solver.control
    assert c.rejected > 50 and c.accepted > 1000           # steps below the record unit
    assert traj.nfev == 3 * (c.accepted + c.rejected)
    assert sim.settings()["rtol"] == 1e-4
    loose = art.Simulator(m, 0.01, "rk2", method="srm", rtol=1e-3, atol=1e-3)
    with pytest.warns(art.EnergyDriftWarning, match="try rtol = 0.0001, atol = 0.0001"):
        loose.run(200, record_every=10)


def test_srm_tolerance_arguments():
    m = art.models.four_bar(loop_kind="point")
    s = SRMSolver(m, 0.01)
    assert not s.adaptive and s.control is None
    with pytest.raises(ValueError, match="step-size control"):
        s.advance(m.neutral(), np.zeros(m.nv), 0.0, 0.1)
    with pytest.raises(ValueError, match="rtol must be finite and > 0"):
        SRMSolver(m, 0.01, rtol=0.0)
    with pytest.raises(ValueError, match="atol must be finite and > 0"):
        SRMSolver(m, 0.01, atol=float("nan"))
    a = SRMSolver(m, 0.01, atol=1e-4)
    assert a.adaptive and a.rtol == 1e-6 and a.atol == 1e-4
    fixed = art.Simulator(m, 0.01, "rk2", method="srm")
    assert fixed.settings()["rtol"] is None and fixed.srm_solver.control is None
