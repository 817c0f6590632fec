"""Draw docs/peers-fd.png and docs/peers-robots.png from the tables of docs/results/peers.md.

The numbers are read from the page (the output of ``articulated bench fd`` and
``articulated bench simulator``); nothing is measured here.
Run: ``python docs/scripts/peers_plots.py`` from the repository root.
"""
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DOCS = Path(__file__).resolve().parents[1]
PAGE = (DOCS / "results" / "peers.md").read_text()


def table_after(title):
    """Rows (lists of cells) of the first Markdown table after the line holding title."""
    lines = PAGE[PAGE.index(title):].splitlines()[1:]
    rows, started = [], False
    for line in lines:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= set("-: "):
                rows.append(cells)
        elif started:
            break
    return rows[0], rows[1:]


def number(cell):
    cell = cell.replace(",", "")
    return float(cell) if re.fullmatch(r"[0-9.]+", cell) else None


head, rows = table_after("**Time per DOF [ns/DOF]")
cols = ["aba", "pin.aba", "mj_forward", "rnea", "pin.rnea", "mj_inverse"]
scenes = [r[0] for r in rows if number(r[head.index("pin.aba")]) or number(r[head.index("mj_forward")])]
fig, ax = plt.subplots(figsize=(8, 3.6), dpi=100)
width = 0.13
for k, name in enumerate(cols):
    vals = [number(r[head.index(name)]) or 0 for r in rows if r[0] in scenes]
    ax.bar([i + (k - 2.5) * width for i in range(len(scenes))], vals, width, label=name)
ax.set_xticks(range(len(scenes)), scenes)
ax.set_yscale("log")
ax.set_ylabel("ns per DOF (log)")
ax.set_title("One warm call, same run (articulated bench fd, commit 2ec1c2c)")
ax.legend(ncol=3, fontsize=8)
fig.tight_layout()
fig.savefig(DOCS / "peers-fd.png")

head, rows = table_after("122 models; speed-up over Pinocchio")
nv = [number(r[1]) for r in rows]
ratio = [number(r[head.index("speed-up")]) for r in rows]
fig, ax = plt.subplots(figsize=(6, 3.4), dpi=100)
ax.scatter(nv, ratio, s=12)
ax.axhline(1.0, color="grey", lw=0.8)
ax.set_xscale("log")
ax.set_xlabel("nv (log)")
ax.set_ylabel("pin.aba time / our aba() time")
ax.set_title("122 example-robot-data models (bench simulator, fef3f88)", fontsize=9)
fig.tight_layout()
fig.savefig(DOCS / "peers-robots.png")
