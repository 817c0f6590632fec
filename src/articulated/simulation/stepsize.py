"""Step-size control for one-step methods with a local error estimate.

What ``rtol`` and ``atol`` mean here is what they mean for ``integrator="rk45"`` (scipy's
``RK45``, the solver behind ``solve_ivp``): a step is accepted when the RMS norm of its
error estimate, each component scaled by ``atol + rtol max(|y_n|, |y_n+1|)``, is at most 1
(:func:`error_norm`); the next step size follows the elementary controller of Hairer,
Norsett & Wanner with scipy's safety factor and limits (:class:`StepSizeController`), so
a tolerance asks for the same accuracy from either.

Used by the closed-loop integrator (:meth:`articulated.simulation.srm.SRMSolver.advance`,
error by step doubling). The open-chain ``rk45`` keeps scipy's own controller, which is
this one inside scipy's Dormand-Prince stepper.

References
----------
E. Hairer, S. P. Norsett, G. Wanner, *Solving Ordinary Differential Equations I*, 2nd ed.,
Springer 1993, sec. II.4 (automatic step size control, eqs. 4.10-4.13; Richardson
extrapolation / step doubling, eqs. 4.2-4.4); scipy.integrate.RK45 (safety 0.9, factors
0.2 - 10).
"""

from __future__ import annotations

import math

import numpy as np

RTOL = 1e-6
"""Default relative tolerance (``rk45`` and the SRM step-size control)."""
ATOL = 1e-8
"""Default absolute tolerance [rad | m | rad/s | m/s]."""
SAFETY = 0.9
"""Safety factor of the step-size update (scipy's RK45; HNW II.4 eq. 4.13 "fac")."""
MIN_FACTOR = 0.2
"""Smallest factor by which one step shrinks the next (scipy's RK45; HNW "facmin")."""
MAX_FACTOR = 10.0
"""Largest factor by which one step grows the next (scipy's RK45; HNW "facmax")."""


def error_norm(err, y0, y1, rtol: float, atol: float) -> float:
    """RMS norm of a local error estimate, each component scaled by ``atol + rtol
    max(|y0|, |y1|)`` (HNW II.4 eq. 4.11, as scipy's RK45): a step is accepted when it is
    <= 1. ``err, y0, y1``: (n,) float64; returns inf when ``err`` is not finite."""
    scale = atol + rtol * np.maximum(np.abs(y0), np.abs(y1))
    e = float(np.sqrt(np.mean((err / scale) ** 2))) if err.size else 0.0
    return e if math.isfinite(e) else math.inf


class StepSizeController:
    """The elementary step-size controller (HNW II.4 eq. 4.13) with scipy's constants.

    After a step of size ``h`` with error norm ``err`` (:func:`error_norm`):
    ``h_new = h min(MAX_FACTOR, max(MIN_FACTOR, SAFETY err^(-1/(p+1))))``, with ``p`` the
    order of the method whose error is estimated (the local error is O(h^(p+1))). A step
    with ``err <= 1`` is accepted; right after a rejection the next step does not grow
    (as scipy). A non-finite error rejects the step and shrinks it by ``MIN_FACTOR``.

    Parameters
    ----------
    order : int >= 1
        Order p of the controlled method.
    h : float > 0
        First step to try [s].

    Attributes
    ----------
    h : float
        The next step size to try [s].
    accepted, rejected : int
        Steps accepted and rejected so far.
    """

    def __init__(self, order: int, h: float):
        self.order = int(order)
        self.h = float(h)
        self.accepted = 0
        self.rejected = 0
        self.last_rejected = False

    def update(self, err: float, h: float) -> bool:
        """Judge a step of size ``h`` [s] with error norm ``err``; sets :attr:`h` to the
        next step to try and returns whether the step is accepted."""
        if err <= 1.0:
            factor = MAX_FACTOR if err == 0.0 else min(
                MAX_FACTOR, SAFETY * err ** (-1.0 / (self.order + 1)))
            if self.last_rejected:
                factor = min(1.0, factor)
            self.h = h * factor
            self.accepted += 1
            self.last_rejected = False
            return True
        factor = (max(MIN_FACTOR, SAFETY * err ** (-1.0 / (self.order + 1)))
                  if math.isfinite(err) else MIN_FACTOR)
        self.h = h * factor
        self.rejected += 1
        self.last_rejected = True
        return False

    def state(self) -> np.ndarray:
        """``[h, accepted, rejected, last_rejected]`` (float64) for a checkpoint."""
        return np.array([self.h, self.accepted, self.rejected, float(self.last_rejected)])

    def set_state(self, a) -> None:
        """Restore what :meth:`state` returned."""
        self.h = float(a[0])
        self.accepted = int(a[1])
        self.rejected = int(a[2])
        self.last_rejected = bool(a[3])


__all__ = ["ATOL", "MAX_FACTOR", "MIN_FACTOR", "RTOL", "SAFETY", "StepSizeController",
           "error_norm"]
