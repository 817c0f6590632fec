"""What the adaptive-dynamics benchmarks share (:mod:`articulated.bench.adaptive`,
:mod:`articulated.bench.spring`, :mod:`articulated.bench.crowd`, ``articulated demo``): the
pendulum start, point forces spread over a chain, the reference full-DCA / ABA stepping,
the adaptive simulator of every run, the split of its step times into hybrid steps and
region updates, and the warm-up that compiles every kernel before any timing (Redon,
Galoppo & Lin 2005, Sec. 7).
"""

from __future__ import annotations

import time

import numpy as np

UPDATE_EVERY = 20
DT = 1e-3
FORCE_N = 0.05
"""Magnitude [N] of each Table 1 point force (world +y)."""


# ------------------------------------------------------------------------- helpers

def initial_state(model, seed=0):
    """The pendulum start of Fig. 5 / Table 1: joint 0 swung by 1.2 rad, every other joint
    perturbed uniformly in [-0.05, 0.05] rad (seeded), at rest."""
    rng = np.random.default_rng(seed)
    q = model.neutral()
    q[1:] = rng.uniform(-0.05, 0.05, model.nq - 1)
    q[0] = 1.2
    return q


def spread_forces(model, nf, magnitude=FORCE_N):
    """``nf`` world-frame point forces (``magnitude`` along +y) at the origins of ``nf``
    distinct links spread evenly from the tip towards the top (nf = 1: the last link)."""
    from .. import PointForce

    n = model.nb
    bodies = np.unique(np.round(np.linspace(n - 1, 0, min(nf, n))).astype(int))
    return [PointForce(int(b), (0.0, magnitude, 0.0)) for b in bodies[::-1]]


def split_times(wall, update_every=UPDATE_EVERY, first_step=0):
    """Median hybrid-step and region-update times [s] and the mean over the steps of a
    ``wall`` array from :meth:`AdaptiveSimulator.run` (region updates at step indices that
    are multiples of ``update_every``). The very first step of a run (``first_step == 0``:
    the conversion from the fully articulated start, which builds the tensors of every
    passive node once, O(n)) is set-up, like the solver's construction: it is left out of
    the update median and of the mean when other steps exist, and returned as ``first``."""
    k = first_step + np.arange(wall.size)
    upd = k % update_every == 0
    steady = k > 0 if wall.size > 1 else np.ones(wall.size, dtype=bool)
    u = wall[upd & steady] if np.any(upd & steady) else wall[upd]
    return dict(hybrid=float(np.median(wall[~upd])) if np.any(~upd) else float("nan"),
                update=float(np.median(u)) if u.size else float("nan"),
                mean=float(wall[steady].mean()), updates=int(upd.sum()),
                first=float(wall[0]) if first_step == 0 else float("nan"))


def reference_run(model, q0, qd0, forces, steps, method="dca", dt=DT, dca=None):
    """Semi-implicit Euler with the full DCA (or ABA): ``qd += h qdd``, ``q =
    integrate(q, qd, h)``, forces applied from :class:`StateKinematics`. Returns (q, qd,
    wall (steps,) [s])."""
    from .. import DCA, aba, integrate
    from ..simulation.forces import StateKinematics

    for f in forces:
        if hasattr(f, "bind"):
            f.bind(model)
    if method == "dca":
        dca = dca or DCA(model)
        fd = dca.forward_dynamics
    else:
        def fd(q, qd, tau, f_ext):
            return aba(model, q, qd, tau, f_ext)
    q, qd = q0.copy(), qd0.copy()
    tau = np.zeros(model.nv)
    f_ext = np.zeros((model.nb, 6))
    wall = np.zeros(steps)
    for s in range(steps):
        t0 = time.perf_counter()
        tau[:] = 0.0
        f_ext[:] = 0.0
        if forces:
            kin = StateKinematics(model, q, qd)
            for f in forces:
                f.apply(model, s * dt, q, qd, tau, f_ext, kin)
        qdd = fd(q, qd, tau, f_ext)
        qd = qd + dt * qdd
        q = integrate(model, q, qd, dt)
        wall[s] = time.perf_counter() - t0
    return q, qd, wall


def adaptive_simulator(model, q0, n_active, forces=(), n_update="same", dt=DT, qd0=None,
              update_every=UPDATE_EVERY, **kw):
    """The adaptive simulator of every benchmark run: ``Simulator(model, dt,
    method="adaptive")`` with ``max_active = n_active`` (an int, or per-tree budgets),
    ``max_update = n_active`` (``n_update="same"``, RGL Sec. 7.2) or ``n_update``, an
    active-region update every ``update_every`` steps, start ``(q0, qd0)``, ``forces`` and
    any further :class:`~articulated.Simulator` options ``kw``."""
    from .. import Simulator

    mu = n_active if n_update == "same" else n_update
    return Simulator(model, dt, method="adaptive", max_active=n_active, max_update=mu,
                     update_every=update_every, q0=q0, qd0=qd0, forces=list(forces), **kw)


def warm_up():
    """Compile / load every numba kernel the timings use (small pendulum, one force)."""
    from .. import DCA, aba, models

    m = models.pendulum(12)
    q0 = initial_state(m)
    for na in (12, 3):
        adaptive_simulator(m, q0, na, spread_forces(m, 2)).run(2 * UPDATE_EVERY + 1)
    sim = adaptive_simulator(m, q0, 2)
    sim.impulse_columns = 0                  # the momentum-projection path too
    sim.run(UPDATE_EVERY + 1)
    reference_run(m, q0, np.zeros(m.nv), spread_forces(m, 2), 3, "dca", dca=DCA(m))
    reference_run(m, q0, np.zeros(m.nv), spread_forces(m, 2), 3, "aba")
    aba(m, q0, np.zeros(m.nv), np.zeros(m.nv))


def chain_points(model, q):
    """(nb + 1, 3) joint positions of a pendulum and its tip [m]."""
    from .. import forward_kinematics, point_position

    p = forward_kinematics(model, q)[1]
    L = float(-model.jnt_Xtree_r[1, 2]) if model.nb > 1 else 0.1
    tip = point_position(model, q, model.nb - 1, (0.0, 0.0, -abs(L)))
    return np.vstack([p, tip[None]])


