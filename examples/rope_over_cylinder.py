"""A rope dropped over a cylinder: contact and friction on a long chain.

A free chain of capsules (5 cm links, radius 1 cm, 10 g, friction 0.5) falls from 5 cm
above a horizontal cylinder (radius 10 cm) lying on the floor. Impulse contact with Coulomb
friction (Gayle, Lin & Manocha 2006, Sec. IV) on the full model, or with ``--n-active N``
on adaptive dynamics' hybrid body of N active joints (Redon, Galoppo & Lin 2005, eq. 6;
GLM Sec. V). Plots the rope's profile (x-z) every 0.1 s.
"""
import argparse
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import articulated as art

RADIUS, LINK = 0.10, 0.05       # cylinder radius, link length [m]


def main(small=False, out=None, n_active=None):
    out = Path(out or tempfile.mkdtemp(prefix="rope_over_cylinder-"))
    out.mkdir(parents=True, exist_ok=True)
    n = 24 if small else 40                                    # links: 1.2 m or 2 m of rope
    model, q0 = art.models.capsule_chain(n, link_length=LINK, radius=0.01, mass=0.01,
                                         height=2 * RADIUS + 0.05, return_configuration=True)
    q0[0] = -n * LINK / 2                                      # rope centred over the cylinder
    geom = model.collision                                     # the capsules and the floor
    geom.add_static(art.Cylinder(radius=RADIUS, length=0.6, pos=(0, 0, RADIUS),
                                 R=np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])), mu=0.5)
    steps = 600                                                # of dt = 1 ms
    adaptive = dict(method="adaptive", max_active=n_active, update_every=10) if n_active else {}
    traj = art.Simulator(model, 1e-3, contacts=geom, q0=q0, **adaptive).run(steps, 100)
    fig, ax = plt.subplots(figsize=(7, 2.8), layout="constrained")
    ax.add_patch(plt.Circle((0, RADIUS), RADIUS, color="0.8", label="cylinder"))
    for t, q in zip(traj.t, traj.q):
        p = art.models.chain_points(model, q)
        ax.plot(p[:, 0], p[:, 2], label=f"t = {t:.2f} s")
    ax.axhline(0, color="k", lw=0.8)
    ax.set(xlabel="x [m]", ylabel="z [m]", aspect="equal", ylim=(-0.02, 0.42),
           title=f"rope of {n} links over a cylinder, N_A = {n_active or 'all'}")
    ax.legend(fontsize=7, ncols=4, loc="upper left")
    fig.savefig(out / "rope.png", dpi=110)
    return dict(points=art.models.chain_points(model, traj.q[-1]), active=traj.active,
                max_depth=float(traj.contacts["max_depth"].max()), png=out / "rope.png")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="24 links (default 40)")
    p.add_argument("--out", help="output folder (default: a new temporary folder)")
    p.add_argument("--n-active", type=int, help="adaptive dynamics with this joint budget N_A")
    a = p.parse_args()
    r = main(a.small, a.out, a.n_active)
    print(f"middle of the rope at z = {r['points'][len(r['points']) // 2, 2]:.3f} m, ends at "
          f"z = {r['points'][[0, -1], 2].round(3)} m, deepest contact "
          f"{r['max_depth'] * 1e3:.2f} mm; wrote {r['png']}")
