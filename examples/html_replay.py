"""Write a simulation as one self-contained HTML file that replays it in 3D.

A 30-link 3D pendulum (Redon, Galoppo & Lin 2005, Sec. 7.1, smaller) released from a
swung, slightly bent pose, simulated 2 s with RK4 and ABA; ``articulated.to_html`` writes
the trajectory with its own viewer (viser's client, no server, no network): open
``pendulum.html`` from disk in any browser, or send it to someone. The same file comes from
``articulated view trajectory.npz --html pendulum.html``. Needs viser (the ``viewer`` extra).
"""
import argparse
import tempfile
from pathlib import Path

import numpy as np

import articulated as art


def main(small=False, out=None):
    out = Path(out or tempfile.mkdtemp(prefix="html_replay-"))
    out.mkdir(parents=True, exist_ok=True)
    n, steps = (10, 200) if small else (30, 2000)              # links, steps of dt = 1 ms
    model = art.models.pendulum(n)
    q0 = model.neutral()
    q0[0] = 1.2                                                # [rad]
    q0[1:] = np.random.default_rng(0).uniform(-0.3, 0.3, n - 1)
    traj = art.Simulator(model, 1e-3, integrator="rk4", q0=q0).run(steps, record_every=10)
    html = art.to_html(model, traj, out / "pendulum.html", speed=0.5)   # half speed
    traj.save(out / "pendulum.npz")                            # for `articulated view`
    return dict(html=html, frames=len(traj.t), size=html.stat().st_size,
                energy=traj.kinetic + traj.potential)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="10 links, 0.2 s (default 30, 2 s)")
    p.add_argument("--out", help="output folder (default: a new temporary folder)")
    a = p.parse_args()
    r = main(a.small, a.out)
    print(f"wrote {r['html']} ({r['size'] / 1e6:.1f} MB, {r['frames']} frames); "
          f"open it in a browser")
