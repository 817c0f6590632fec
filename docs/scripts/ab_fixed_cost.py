"""A step's fixed cost, A/B: per round the median full-DCA step of RGL Table 1's
pendulum-300 (one tip force), the mean step of adaptive N_A = 1 (five runs) and N_A = 50
(three runs) and their ratios, and the step of a one-body ABA simulator (``run(100000)``).

    python docs/scripts/ab_fixed_cost.py ROUNDS

Run it with each source tree (``PYTHONPATH=<worktree>/src``), each with a warm cache.
Results: docs/results/simulator.md, "A step's fixed cost"."""
import time, sys, numpy as np
from articulated import models, Simulator
from articulated.bench.adaptive import table1_cell
from articulated.bench.adaptive_runs import initial_state, spread_forces
def loop1():
    m1 = models.pendulum(1); q1 = initial_state(m1)
    sim = Simulator(m1, 1e-3, method="aba", integrator="semi_implicit_euler", q0=q1, forces=list(spread_forces(m1, 1)))
    sim.run(10); t0 = time.perf_counter(); sim.run(100000, record_every=100000)
    return (time.perf_counter() - t0) / 100000 * 1e6
table1_cell(300, 20, 1, 1); table1_cell(300, 20, 1, 50); loop1()
out = []
for r in range(int(sys.argv[1])):
    d = table1_cell(300, 200, 1, "dca")["median"] * 1e6
    a1 = np.mean([table1_cell(300, 200, 1, 1)["mean"] for _ in range(5)]) * 1e6
    a50 = np.mean([table1_cell(300, 200, 1, 50)["mean"] for _ in range(3)]) * 1e6
    l = loop1()
    out.append((d, a1, a50, l, d / a1, d / a50))
    print("dca %.1f us  NA1 %.3f us (%.0fx)  NA50 %.2f us (%.1fx)  1-body aba loop %.3f us" % (d, a1, d / a1, a50, d / a50, l), flush=True)
o = np.array(out); print("medians: NA1 x%.0f  NA50 x%.1f  loop %.3f us" % (np.median(o[:, 4]), np.median(o[:, 5]), np.median(o[:, 3])))
