"""Microseconds per node of the adaptive engine's node update, with and without the
total-acceleration coefficients (RL eq. 9): ``python docs/scripts/ab_node_update.py``.

Rows: a full sweep of ``DCAEngine.update_nodes`` over every node (leaves included) of
pendulum-300 and of PDB 3KPR (``mdanalysistests``), the minimum of 300 / 40 sweeps; and on
3KPR the nodes a quasi-static step updates (the computed joints' nodes, RL Sec. 5.2) after
ten steps of ``AdaptiveQuasiStatics`` with one force (seed 2, eps 2^-19), minimum of 200.
For an A/B, run it alternately with each commit's ``src`` first on ``PYTHONPATH``."""
import json
import time
import warnings

import numpy as np

import articulated as art
from articulated.algorithms.engine import DCAEngine
from articulated.algorithms.node_update import update_nodes
from articulated.algorithms.quasistatics import AdaptiveQuasiStatics
from articulated.bench.proteins import structure_file
from articulated.bench.quasistatics import _f_ext, random_forces
from articulated.io.structure import load_structure

warnings.filterwarnings("ignore")


def per_node(solver, nodes, reps):
    out = {}
    for metric in (True, False):
        args = solver._node_args(metric)
        update_nodes(nodes, len(nodes), args)
        best = np.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            update_nodes(nodes, len(nodes), args)
            best = min(best, time.perf_counter() - t0)
        out["metric" if metric else "no metric"] = round(best / len(nodes) * 1e6, 3)
    return out


res = {}
protein = load_structure(structure_file(), missing_atoms="allow")
for name, m, reps in (("pendulum-300", art.models.pendulum(300), 300), ("3KPR", protein, 40)):
    e = DCAEngine(m)
    e.set_state(m.neutral())
    res[f"{name} all nodes"] = per_node(e, e._all, reps)
q = protein.neutral()
s = AdaptiveQuasiStatics(protein)
s.set_state(q, None, _f_ext(protein, q, random_forces(protein, 1, 2)))
for _ in range(10):
    r = s.solve(2.0 ** -19, "relative_joint")
    q2 = s.q.copy()
    h2 = 1e-3 / max(np.abs(r.qdd).max(), 1e-12)
    q2[protein.jnt_qadr[r.joints]] += h2 * r.qdd[protein.jnt_vadr[r.joints]]
    s.update(q2, joints=r.joints)
nodes = np.sort(s.tree.node_of_joint[r.joints]).astype(np.int64)
res[f"3KPR step's nodes ({nodes.size})"] = per_node(s, nodes, 200)
print(json.dumps(res, indent=1))
