"""Table 1 cells of pendulum-300 (N_F = 1) against the full DCA in one process:

    python docs/scripts/table1_cells.py [ROUNDS] [N_A,...]

Each round runs the full-DCA reference and each N_A cell once (`bench.adaptive.table1_cell`:
200 steps, an update every 20); prints the medians over the rounds and the speed-up of
each round. For an A/B, run it alternately with each commit's `src` on PYTHONPATH."""
import sys, numpy as np
from articulated.bench.adaptive import table1_cell, warm_up
warm_up()
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
nas = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [1, 50]
res = {k: [] for k in ["dca"] + nas}
for r in range(rounds):
    for k in ["dca"] + nas:
        c = table1_cell(300, 200, 1, k)
        res[k].append(c["median"] if k == "dca" else c)
d = np.median(res["dca"])
print(f"DCA median {d*1e3:.4f} ms")
for na in nas:
    m = np.array([c["mean"] for c in res[na]]); h = np.array([c["hybrid"] for c in res[na]]); u = np.array([c["update"] for c in res[na]])
    print(f"N_A={na}: mean {np.median(m)*1e6:.2f} us  hybrid {np.median(h)*1e6:.2f} us  update {np.median(u)*1e6:.1f} us  speedup {d/np.median(m):.1f}x  (per-round {', '.join(f'{x:.1f}' for x in np.array(res['dca'])/m)})")
