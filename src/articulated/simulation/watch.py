"""Instability caught early: the energy-drift watch.

Instability caught early: :class:`EnergyWatch` follows the total energy of a
conservative simulation and warns once (:class:`EnergyDriftWarning`) when its relative
drift passes a threshold, long before the state becomes non-finite.

A step size too large for the model shows first as energy that a conservative system cannot
gain, well before any value is non-finite (e.g. a long pendulum from a crumpled start with
semi-implicit Euler at too large a step). The watch reads the energies the simulator records
anyway (no work per step): at every record, ``drift = |E - E0| / max(|E0|, T_max)`` with
``E0`` the total energy of the run's first record and ``T_max`` the largest kinetic energy
recorded so far (so the drift stays meaningful when ``E0`` is near zero).

The suggested step size assumes the energy error of an order-p integrator scales as
``dt^p``: ``dt (tol / (2 drift))^(1/p)``, at most ``dt / 2`` and at least ``dt / 100``.
"""

from __future__ import annotations

import warnings

import numpy as np

ORDERS = {"euler": 1, "semi_implicit_euler": 1, "rk2": 2, "rk4": 4, "rk45": 5}
"""Order of each integrator (energy error ~ dt^p), for the suggested step size."""


class EnergyDriftWarning(RuntimeWarning):
    """The total energy of a conservative simulation drifted more than allowed.

    More than the simulator's ``energy_drift`` threshold: the step is likely too large (or
    the model stiff).
    """


def check_threshold(energy_drift):
    """``energy_drift`` as a float > 0, or None (the watch off); ValueError otherwise."""
    if energy_drift is None:
        return None
    try:
        x = float(energy_drift)
    except (TypeError, ValueError):
        raise ValueError(f"energy_drift must be a number > 0 or None, got "
                         f"{energy_drift!r}") from None
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"energy_drift must be finite and > 0 (or None: off), got {x}")
    return x


class EnergyWatch:
    """Warns once when the relative drift of the total energy passes ``tol``.

    Parameters
    ----------
    tol : float or None
        Relative drift threshold (None: off).
    dt : float
        The simulator's step [s]; integrator : str - for the order (:data:`ORDERS`).
    tolerances : (rtol, atol) or None
        Those of a step-size control (``rk45``, SRM with ``rtol``/``atol``): the warning
        then suggests tighter tolerances instead of a step.

    Attributes
    ----------
    warned : bool
        The warning was given (it is given once per watch).
    drift : float
        The largest relative drift seen [1].
    """

    def __init__(self, tol, dt, integrator, tolerances=None):
        self.tol = check_threshold(tol)
        self.tolerances = tolerances
        self.dt = float(dt)
        self.order = ORDERS.get(integrator, 1)
        self.integrator = integrator
        self.warned = False
        self.drift = 0.0

    def suggested_dt(self, drift: float) -> float:
        """A step [s] that should keep the drift under ``tol`` (module docstring)."""
        f = (self.tol / (2.0 * drift)) ** (1.0 / self.order) if drift > 0 else 0.5
        return self.dt * min(0.5, max(0.01, f))

    def check(self, steps, t, kinetic, potential, E0, k0=0) -> None:
        """Look at new records: ``steps`` (k,) the step index of each record within the
        run, ``t`` (k,) [s], ``kinetic``, ``potential`` (k,) [J]; ``E0`` [J] the run's
        initial total energy; ``k0`` the number of records of the run before these (0 for
        the first call, whose first record is the initial state). Warns at the first
        record whose drift passes ``tol`` (once)."""
        if self.tol is None or len(t) == 0:
            return
        T = np.asarray(kinetic, dtype=np.float64)
        E = T + np.asarray(potential, dtype=np.float64)
        scale = np.maximum(np.maximum.accumulate(np.abs(T)), abs(E0))
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.abs(E - E0) / np.where(scale > 0, scale, np.inf)
        d = np.where(np.isfinite(d), d, 0.0)
        self.drift = max(self.drift, float(d.max()))
        if self.warned:
            return
        bad = np.flatnonzero(d > self.tol)
        if bad.size:
            i = int(bad[0])
            self.warned = True
            warnings.warn(
                f"total energy drifted by {d[i]:.3g} (relative) from {E0:.6g} J to "
                f"{E[i]:.6g} J at step {int(steps[i])} (t = {t[i]:.6g} s) of a conservative "
                f"simulation with {self.integrator}, {self._advice(d[i])} (threshold "
                f"energy_drift = {self.tol:g}; energy_drift=None turns this warning off)",
                EnergyDriftWarning,
                stacklevel=4)

    def _advice(self, drift):
        if self.tolerances is not None:        # step-size control: the tolerances decide
            rtol, atol = self.tolerances
            return (f"rtol = {rtol:g}, atol = {atol:g}: the tolerances are likely too loose "
                    f"for this model; try rtol = {rtol / 10:g}, atol = {atol / 10:g}")
        return (f"dt = {self.dt:g} s: the step is likely too large for this model; try dt <= "
                f"{self.suggested_dt(drift):.3g} s or a higher-order integrator")

    def state(self) -> dict:
        """JSON state for a checkpoint."""
        return {"warned": self.warned, "drift": self.drift}

    def restore(self, state: dict) -> None:
        self.warned = bool(state.get("warned", False))
        self.drift = float(state.get("drift", 0.0))
