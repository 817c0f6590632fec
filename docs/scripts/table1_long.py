"""Table 1's N_A = 1 cell (pendulum-300, one tip force, an update every 20 steps): what the
start of a run adds to its 200-step mean.

    python docs/scripts/table1_long.py

First the median wall time of each step of seven fresh 200-step runs (the updates, the
steps after the first update, the last step with the run's record); then three rounds of
the full DCA beside the N_A = 1 cell over 200 and over 2,000 steps."""
import numpy as np
from articulated import models
from articulated.bench.adaptive import table1_cell, warm_up
from articulated.bench.adaptive_runs import adaptive_simulator, initial_state, spread_forces

warm_up()
m = models.pendulum(300)
q0 = initial_state(m)
W = np.array([adaptive_simulator(m, q0, 1, spread_forces(m, 1)).run(200, record_every=200).wall
              for _ in range(7)]) * 1e6
med = np.median(W, axis=0)
print("median step [us]: updates (steps 0, 20, ..)", np.round(med[::20], 1))
print("  steps 1-19", np.round(med[1:20], 2))
print("  steps 181-199", np.round(med[181:200], 2))
for r in range(3):
    d = table1_cell(300, 200, 1, "dca")["median"]
    a200 = table1_cell(300, 200, 1, 1)["mean"]
    a2000 = table1_cell(300, 2000, 1, 1)["mean"]
    print(f"DCA {d * 1e3:.4f} ms; N_A = 1 mean over 200 steps {a200 * 1e6:.3f} us "
          f"({d / a200:.0f}x), over 2,000 steps {a2000 * 1e6:.3f} us ({d / a2000:.0f}x)")
