"""Seconds to construct the DCA-family solvers (the assembly tree, handle frames, packed
records, leaf blocks, the first full node update and, for adaptive dynamics, the leaves'
passive tensors): ``python docs/scripts/construction.py [ROUNDS]``.

Each round runs every (model, solver) in a fresh process per commit source, in turns, and
prints the median over the rounds; a kernel-loading construction of a 50-body molecule
comes first in each process. For an A/B, set ``BASE_SRC`` to another checkout's ``src``
(its column is left out without it)."""
import json
import os
import subprocess
import sys

import numpy as np

CASES = (("pendulum", 300), ("molecule", 5_000), ("molecule", 50_000))
SOLVERS = ("DCA", "AdaptiveQuasiStatics", "AdaptiveDynamics")
CHILD = """
import json, sys, time
from articulated import models, DCA
from articulated.algorithms.adaptive import AdaptiveDynamics
from articulated.algorithms.quasistatics import AdaptiveQuasiStatics
cls = dict(DCA=DCA, AdaptiveQuasiStatics=AdaptiveQuasiStatics,
           AdaptiveDynamics=AdaptiveDynamics)[sys.argv[1]]
cls(models.molecule(50))
m = getattr(models, sys.argv[2])(int(sys.argv[3]))
t0 = time.perf_counter()
cls(m)
print(json.dumps(time.perf_counter() - t0))
"""


def seconds(src, solver, model, n):
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", CHILD, solver, model, str(n)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(rounds=3):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
    srcs = {"this checkout": os.path.abspath(here)}
    if os.environ.get("BASE_SRC"):
        srcs = {"base": os.environ["BASE_SRC"], **srcs}
    res = {}
    for _ in range(rounds):
        for model, n in CASES:
            for solver in SOLVERS:
                for name, src in srcs.items():
                    res.setdefault((model, n, solver, name), []).append(
                        seconds(src, solver, model, n))
    print("| model | solver | " + " | ".join(f"{k} [s]" for k in srcs) + " |")
    print("|---|---|" + "---:|" * len(srcs))
    for model, n in CASES:
        for solver in SOLVERS:
            t = [np.median(res[(model, n, solver, k)]) for k in srcs]
            print(f"| {model}-{n:,} | {solver} | " + " | ".join(f"{x:.3f}" for x in t) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
