"""The scripts of examples/ at their small sizes (``main(small=True)``), each checked on the
numbers it produces, not only on running: the scenes' physics (a robot that stands, a rope
that drapes, a loop that stays closed), the error of the adaptive methods against the full
ones, and the files they write."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["robot_on_floor", "rope_over_cylinder", "adaptive_pendulum", "crowd_camera_budget",
         "protein_pull", "four_bar_linkage", "dask_sweep", "html_replay"]


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_script_is_short_documented_and_uses_the_public_api(name):
    text = (EXAMPLES / f"{name}.py").read_text()
    assert len(text.splitlines()) <= 60
    assert text.startswith('"""') and "--small" in text and "def main(small=False" in text
    assert not re.search(r"articulated\.(bench|algorithms|simulation)\b|from articulated\.", text)
    assert not re.search(r"\b(session|issue) \d", text, re.I)


def _png(path):
    assert path.is_file() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_robot_on_floor(tmp_path):
    pytest.importorskip("coal", reason="mesh contact needs coal (the mesh extra)")
    try:
        r = load("robot_on_floor").main(small=True, out=tmp_path)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (the robots extra)")
    z = r["base_z"]
    assert z[0] == pytest.approx(0.30)
    assert 0.20 < z.min() and 0.21 < z[-1] < 0.25    # landed (feet 6 cm up), standing (0.226 m)
    assert 4 <= r["contacts"][-1] <= 12              # on its four feet (a foot: 1-3 contacts)
    assert r["max_depth"] < 1e-3                     # [m] (measured: 0.001 mm)
    _png(r["png"])


@pytest.mark.parametrize("n_active", [None, 12])   # full model; adaptive, 12 of 24 joints
def test_rope_over_cylinder(tmp_path, n_active):
    r = load("rope_over_cylinder").main(small=True, out=tmp_path, n_active=n_active)
    p = r["points"]                                  # joint points of the rope at the end [m]
    mid = p[len(p) // 2]
    assert abs(mid[0]) < 0.02 and 0.205 < mid[2] < 0.23  # on the cylinder (top 0.2 m; 0.218)
    assert np.all(p[:, 2] > 0.005)                   # nothing in the floor (rope radius 1 cm)
    assert p[0, 2] < 0.02 and p[-1, 2] < 0.02        # both ends lie on the floor (0.01 m)
    assert r["max_depth"] < 1e-3                     # [m] (measured: 0.06 mm; adaptive 0.03 mm)
    assert n_active is None or r["active"][1:].max() <= n_active   # after the first update
    _png(r["png"])


def test_adaptive_pendulum(tmp_path):
    r = load("adaptive_pendulum").main(small=True, out=tmp_path)
    n, err = r["n"], r["tip_error"]
    assert 0.0 < err[n // 5] < 0.1                    # [m] over 0.3 s (measured: 36 mm)
    assert err[n // 5] < err[n // 25] < 0.2           # fewer active joints, larger error (65 mm)
    assert r["ms_per_step"][n // 25] < r["ms_per_step"][n]   # and cheaper steps
    _png(r["png"])


def test_crowd_camera_budget(tmp_path):
    r = load("crowd_camera_budget").main(small=True, out=tmp_path)
    b, most, d = r["budget"], r["most_active"], r["distance"]
    assert np.all(most <= b)                          # every character within its budget
    assert b[np.argmin(d)] > b[np.argmax(d)]          # nearer characters get more joints
    assert np.all(most[r["pushed"]] > 1)              # the pushed ones move their joints
    assert b.sum() < 0.2 * 89 * len(b)                # a fraction of the crowd's joints
    _png(r["png"])


def test_protein_pull(tmp_path):
    gemmi = pytest.importorskip("gemmi", reason="structures need gemmi (the molecules extra)")
    r = load("protein_pull").main(small=True, out=tmp_path)
    full, ad = r["rmsd"]["quasistatic"], r["rmsd"]["quasistatic-adaptive"]
    assert full[-1] > 5e-4                            # [nm] moved (measured: 0.0012 nm)
    assert abs(ad[-1] - full[-1]) < 0.02 * full[-1]   # adaptive within 2 % of the full DCA
    assert r["joints"]["quasistatic-adaptive"].mean() < r["nv"] / 4   # (measured: ~80 of 754)
    st = gemmi.read_structure(str(r["pdb"]))
    assert st[0].count_atom_sites() > 1500
    _png(r["png"])


def test_four_bar_linkage(tmp_path):
    r = load("four_bar_linkage").main(small=True, out=tmp_path)
    assert r["gap"][3].max() < 1e-3                   # [m] loop held by SRM (measured 0.33 mm)
    assert r["gap"][1].max() > 1.0                    # the trial pass alone lets it open (5.8 m)
    assert r["energy_drift"][3] < 0.05                # [J] (measured: 0.0096 J)
    _png(r["png"])


def test_dask_sweep(tmp_path):
    pytest.importorskip("distributed", reason="Dask distributed (the sweep extra)")
    r = load("dask_sweep").main(small=True, out=tmp_path)
    assert r["status"] == ["ok"] * 6
    d = r["drift"]
    for amp in (0.1, 0.3):
        e, s, k = (d[f"{i}, perturb {amp} rad"] for i in ("euler", "semi_implicit_euler", "rk4"))
        assert 100 * k < s < e                        # measured: 1e-9, 3e-5, 4e-4 at 0.1 rad
    assert (r["store"] / "index.csv").is_file()
    _png(r["png"])


def test_html_replay(tmp_path):
    pytest.importorskip("viser", reason="the HTML replay needs viser (the viewer extra)")
    r = load("html_replay").main(small=True, out=tmp_path)
    text = r["html"].read_text(errors="replace")
    assert r["frames"] == 21 and r["size"] > 100_000
    assert "<html" in text.lower() and not re.search(r"<script[^>]+src=[\"']https?:", text)
    e = r["energy"]
    assert np.abs(e - e[0]).max() < 1e-6 * np.abs(e).max()   # RK4 at 1 ms: energy kept
