"""What a single ``Simulator.step()`` costs against a step of ``run``: per case, ``step()``
300 times and ``run(300, record_every=300)``, medians of 5 rounds, microseconds per step
(pendulum-10 and pendulum-300 with RK4, a 20-link capsule chain resting on the floor,
pendulum-300 with adaptive dynamics at N_A = 1).

    python docs/scripts/step_overhead.py
"""
import time

import numpy as np

import articulated as art
from articulated.bench.adaptive_runs import initial_state


def per(f, n):
    """Mean wall time of ``n`` calls of ``f`` [us]."""
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t0) / n * 1e6


CASES = [("pendulum-10, rk4", lambda: art.models.pendulum(10), {}),
         ("pendulum-300, rk4", lambda: art.models.pendulum(300), {}),
         ("capsule chain-20 on the floor", None, {}),
         ("pendulum-300, adaptive N_A = 1", lambda: art.models.pendulum(300),
          dict(method="adaptive", max_active=1))]


def main():
    print("case | step() [us] | run(300) per step [us]")
    for name, make, kw in CASES:
        if make is None:
            c, q0 = art.models.capsule_chain(20, return_configuration=True)
            sim = art.Simulator(c, 1e-3, contacts=c.collision, q0=q0)
            sim.run(600)                                    # lying on the floor
        else:
            m = make()
            q0 = initial_state(m) if m.nb == 300 else None
            sim = art.Simulator(m, 1e-3, q0=q0, **kw)
            sim.run(5)
        sim.step()
        s = np.median([per(sim.step, 300) for _ in range(5)])
        r = np.median([per(lambda: sim.run(300, record_every=300), 1) / 300 for _ in range(5)])
        print(f"{name} | {s:.1f} | {r:.1f}", flush=True)


if __name__ == "__main__":
    main()
