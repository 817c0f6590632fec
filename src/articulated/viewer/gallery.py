"""The animations of the documentation.

The animations of the documentation (``docs/viewer-pendulum.gif``,
``docs/viewer-crowd.gif``): ``python -m articulated.viewer.gallery [OUT_DIR]`` (default
``docs``; a few minutes on a first run, most of it numba compiling the adaptive kernels).

* the demo's pendulum: ``models.pendulum(300)`` from the start of RGL Fig. 5 (first joint
  at 1.2 rad, the others a few degrees; ``bench.adaptive_runs.initial_state``), RK4 with dt = 1 ms, 4 s, each link coloured by its
  joint speed (the top 1% of the values, near the whipping tip, clipped);
* the demo's adaptive crowd: ``models.crowd(20)`` free-falling, 10 characters pushed, a
  joint budget per character by its distance to a camera (10% of the joints in all, as
  ``articulated demo``), 1 s; a joint is orange while it is active, grey while rigid.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .animation import to_gif


def pendulum_gif(out: Path, n: int = 300, steps: int = 4000) -> Path:
    """Return the demo's pendulum run, coloured by joint speed ``|qd|`` [rad/s]."""
    from .. import Simulator, models
    from ..bench.adaptive_runs import initial_state

    model = models.pendulum(n)
    sim = Simulator(model, 1e-3, integrator="rk4", method="aba", q0=initial_state(model))
    traj = sim.run(steps, record_every=10)
    speed = np.abs(traj.qd)
    return to_gif(model, traj, out / "viewer-pendulum.gif", color=speed,
                  vmax=float(np.percentile(speed, 99)), color_label="joint speed |qd| [rad/s]",
                  title=f"{n}-link pendulum (RK4, ABA)", fps=20, speed=1.0, elev=12, azim=-20)


def crowd_gif(out: Path, k: int = 20, steps: int = 1000, n_push: int = 10,
              fraction: float = 0.1) -> Path:
    """The demo's adaptive crowd; the active joints of each recorded step (one record per
    active-region update, every ``UPDATE_EVERY`` steps) in orange."""
    from .. import models
    from ..bench.adaptive_runs import UPDATE_EVERY, adaptive_simulator
    from ..bench.crowd import (camera_point, crowd_forces, crowd_update, distance_budgets,
                               tree_of_bodies)
    from .scene import Frames

    model, q0 = models.crowd(k, return_configuration=True)
    roots = np.flatnonzero(model.body_parent < 0)
    pos = q0[model.jnt_qadr[roots][:, None] + np.arange(3)]
    dist = np.linalg.norm(pos - camera_point(model, q0), axis=1)
    budgets = distance_budgets(dist, round(fraction * model.nb),
                               np.bincount(tree_of_bodies(model), minlength=roots.size))
    sim = adaptive_simulator(model, q0, budgets, crowd_forces(model, k, n_push),
                             n_update=crowd_update(budgets), update_every=UPDATE_EVERY)
    t, q, active = [0.0], [q0.copy()], [sim.active.copy()]
    for _ in range(steps // UPDATE_EVERY):
        tr = sim.run(UPDATE_EVERY)
        t.append(float(tr.t[-1]))
        q.append(tr.q[-1].copy())
        active.append(sim.active.copy())
    fr = Frames(t=np.array(t), q=np.array(q))
    return to_gif(model, fr, out / "viewer-crowd.gif", color=np.array(active),
                  color_label="adaptive dynamics", bool_labels=("rigid joint", "active joint"),
                  title=f"crowd of {k} humanoids, {int(budgets.sum())} of {model.nb} joints active",
                  fps=20, speed=0.5, elev=25, azim=-50)


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "docs")
    out.mkdir(parents=True, exist_ok=True)
    for make in (pendulum_gif, crowd_gif):
        print(f"wrote {make(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
