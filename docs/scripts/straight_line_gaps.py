"""How far the contact rows' straight line misses a contact's gap at the end of a step.

Scene (a) of the contact bench (``pendulum_cylinders(200, 20, seed)``), run with the rows'
straight lines (``max_arc_error=None``); at the start of every step, from its recorded
state: the contacts at ``q`` (the detector, speculative margins from ``qs = qd + h qdd``),
each contact's linear prediction ``d + h v_n`` (``v_n`` from ``art.jacobian``), and its
pair's gap at ``q (+) h qs`` (the detector there). Prints the share of steps whose worst
contact ends closer than predicted by more than 10 um, 30 um, 0.1 mm and 0.3 mm, and the
percentiles of that shortfall: what the look-ahead gaps (algorithms/lookahead.py) give the
rows instead.

    python docs/scripts/straight_line_gaps.py [SEED] [STEPS]
"""
import sys

import numpy as np

import articulated as art
from articulated.algorithms.collision import Detector
from articulated.algorithms.kinematics import _velocities_kernel, _world_poses_kernel
from articulated.bench.contact import pendulum_cylinders


def main(seed=0, steps=1500):
    h = 1e-3
    m, geom, q0 = pendulum_cylinders(200, 20, seed)
    sim = art.Simulator(m, h, contacts=geom, q0=q0, contact_options=dict(max_arc_error=None))
    tr = sim.run(steps)
    det = Detector(geom, 256)
    d = m.data()

    def detect(q, qd):
        _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
        _velocities_kernel(d.model_i, d.model_f, q, qd, d.buf)
        n = det.detect(d.oE, d.op, d.v, h)
        o = det.out
        return [(int(o.key[c]) // 16, int(o.body[c, 0]), int(o.body[c, 1]), o.point[c].copy(),
                 o.normal[c].copy(), float(o.dist[c])) for c in range(n)]

    def point_velocity(q, qd, b, x, R, p):
        return art.jacobian(m, q, b, R[b].T @ (x - p[b]))[3:] @ qd if b >= 0 else 0.0

    short = []
    for k in range(len(tr.q) - 1):
        q = tr.q[k]
        qs = tr.qd[k] + h * art.aba(m, q, tr.qd[k], np.zeros(m.nv))
        R, p = art.forward_kinematics(m, q)
        predicted = {}
        for pair, ba, bb, x, n, dist in detect(q, qs):
            vn = n @ (point_velocity(q, qs, ba, x, R, p) - point_velocity(q, qs, bb, x, R, p))
            predicted[pair] = min(predicted.get(pair, np.inf), dist + h * vn)
        end = {}
        for pair, *_, dist in detect(art.integrate(m, q, qs, h), qs):
            end[pair] = min(end.get(pair, np.inf), dist)
        worst = 0.0
        for pair, gap in predicted.items():
            if pair in end:
                worst = max(worst, gap - end[pair])
        short.append(worst)
    short = np.array(short)
    print(f"scene (a), layout {seed}, {len(short)} steps with straight-line rows:")
    for tol in (1e-5, 3e-5, 1e-4, 3e-4):
        print(f"  worst contact ends closer than predicted by > {tol * 1e3:g} mm: "
              f"{np.mean(short > tol) * 100:.1f} % of the steps")
    pct = np.percentile(short, [50, 90, 99]) * 1e3
    print(f"  shortfall [mm]: median {pct[0]:.3f}, p90 {pct[1]:.3f}, p99 {pct[2]:.3f}, "
          f"max {short.max() * 1e3:.3f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
