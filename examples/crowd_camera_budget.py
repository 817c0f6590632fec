"""A crowd of humanoids with a joint budget per character set by the distance to a camera.

Redon, Galoppo & Lin 2005, Fig. 1 (200 humanoids, 17,800 bodies): adaptive dynamics gives
each character its own active-joint budget N_A (``max_active`` per tree), here ``40 / d``
joints for a character d metres from the camera (its size on screen), clipped to [1, 88].
A few characters are pushed (400 N on the torso); each one's active region stays within its
budget. Plots budget and most active joints per character against the distance.
"""
import argparse
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import articulated as art


def main(small=False, out=None):
    out = Path(out or tempfile.mkdtemp(prefix="crowd_camera_budget-"))
    out.mkdir(parents=True, exist_ok=True)
    k, steps = (9, 60) if small else (25, 200)                 # characters, steps of 1 ms
    model, q0 = art.models.crowd(k, spacing=1.0, return_configuration=True)
    roots = np.flatnonzero(model.body_parent < 0)              # one pelvis per character
    tree = np.zeros(model.nb, dtype=int)                       # character of every body
    tree[roots] = np.arange(k)
    for b in np.flatnonzero(model.body_parent >= 0):           # parents come first
        tree[b] = tree[model.body_parent[b]]
    pelvis = q0[model.jnt_qadr[roots][:, None] + np.arange(3)]  # free joints: position first
    camera = np.array([pelvis[:, 0].mean(), pelvis[:, 1].min() - 3.0, 1.6])   # [m]
    dist = np.linalg.norm(pelvis - camera, axis=1)
    budget = np.clip(np.round(40.0 / dist), 1, 88).astype(int)
    pushes = [art.PointForce(int(roots[c] + 2), (0.0, 400.0, 0.0)) for c in range(0, k, 3)]
    sim = art.Simulator(model, 1e-3, method="adaptive", max_active=budget, update_every=20,
                        q0=q0, forces=pushes)
    most = np.zeros(k, dtype=int)                              # most active joints seen
    for _ in range(steps // 20):                               # one region update per chunk
        sim.run(20)
        most = np.maximum(most, np.bincount(tree[sim.active], minlength=k))
    fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    ax.plot(dist, budget, "o", label="budget N_A")
    ax.plot(dist, most, "x", label="most active joints")
    ax.set(xlabel="distance to the camera [m]", ylabel="joints",
           title=f"{k} humanoids ({model.nv} DOF), budget 40 / d")
    ax.legend()
    fig.savefig(out / "crowd_camera_budget.png", dpi=110)
    return dict(distance=dist, budget=budget, most_active=most, pushed=list(range(0, k, 3)),
                png=out / "crowd_camera_budget.png")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="9 characters, 60 steps (default 25, 200)")
    p.add_argument("--out", help="output folder (default: a new temporary folder)")
    a = p.parse_args()
    r = main(a.small, a.out)
    print(f"budgets {r['budget'].min()}..{r['budget'].max()}, most active per character "
          f"{r['most_active'].tolist()}; wrote {r['png']}")
