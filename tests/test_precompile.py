"""Compiling ahead of use: ``articulated compile`` warms numba's cache in worker processes and
profiles the compile; an edit of a module that no kernel is built from recompiles nothing,
an edit of a kernel's module recompiles it (numba's real cache, in fresh processes)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import articulated
from articulated import precompile

SRC = Path(__file__).resolve().parents[1] / "src"


def _python(code, cache, path=SRC, timeout=600):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                       text=True, env=env, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return r.stdout


CLI = "import sys; from articulated.cli import main; sys.exit(main({argv!r}))"


def test_compile_warms_the_cache_then_finds_it_warm(tmp_path):
    first = _python(CLI.format(argv=["compile", "--jobs", "2", "loops", "dynamics"]), tmp_path)
    rows = dict(re.findall(r"^  (\w+) +[\d.]+ s +(\d+) kernels compiled$", first, re.M))
    assert set(rows) == {"loops", "dynamics"}, first
    assert int(rows["loops"]) >= 3 and int(rows["dynamics"]) >= 3
    assert re.search(r"^compiled \d+ kernels in [\d.]+ s$", first, re.M)
    again = _python(CLI.format(argv=["compile", "--jobs", "1", "loops", "dynamics"]), tmp_path)
    assert re.findall(r"(\d+) kernels compiled", again) == ["0", "0"], again


def test_profile_reports_each_kernels_own_compile_time(tmp_path):
    out = _python(CLI.format(argv=["compile", "--profile", "--top", "3", "loops"]), tmp_path)
    row = re.search(r"^loops +([\d.]+) +([\d.]+) +([\d.]+) +(\d+) +(\d+)$", out, re.M)
    assert row, out
    cold, compile_s, mb, versions, functions = (float(x) for x in row.groups())
    assert 0 < compile_s <= cold and mb > 0.1 and versions >= functions >= 5
    top = re.findall(r"^(articulated\.[\w.]+) +([\d.]+) +(\d+)$", out, re.M)
    assert len(top) == 3
    assert [float(s) for _, s, _ in top] == sorted((float(s) for _, s, _ in top), reverse=True)


def test_unknown_subsystem_and_bad_jobs_are_errors():
    with pytest.raises(ValueError, match="unknown subsystem 'nope'; choose from "
                                         "adaptive-contact, contact, adaptive"):
        precompile.precompile(["nope"])
    with pytest.raises(ValueError, match="jobs must be >= 1, got 0"):
        precompile.precompile(["loops"], jobs=0)


WARM = """
import numpy as np
from numba.core import event

import articulated
from articulated.configuration import _normalize_kernel

names = []


class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data["dispatcher"]
        if hasattr(getattr(d, "_cache", None), "_cache_file"):    # a cached kernel
            names.append(d.py_func.__qualname__)


with event.install_listener("numba:compile", Listener()):
    _normalize_kernel(np.array([0], dtype=np.int64), np.array([2.0, 0.0, 0.0, 0.0]))
    m = articulated.models.pendulum(2)
    articulated.forward_kinematics(m, m.neutral())
print(" ".join(sorted(set(names) - {"data_arrays", "model_arrays"})))
"""


def test_edits_recompile_exactly_the_kernels_built_from_the_edited_module(tmp_path):
    """A copy of the package in ``tmp_path``: after its kernels are cached, docstring edits
    of ``bench/contact.py`` and ``cli.py`` (no kernel module imports them) leave every
    kernel cached; an edit of ``spatial.py``, which the kinematics kernels are built from,
    recompiles those and leaves ``configuration.py``'s kernel cached."""
    root = tmp_path / "src"
    shutil.copytree(Path(articulated.__file__).parent, root / "articulated",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"

    def compiled():
        return _python(WARM, cache, root).split()

    kinematics = ["_world_poses_kernel", "poses_checked_kernel"]
    assert compiled() == ["_normalize_kernel"] + kinematics
    for name in ("bench/contact.py", "cli.py"):
        f = root / "articulated" / name
        f.write_text(f.read_text().replace('"""', '"""Edited. ', 1))
    assert compiled() == []
    f = root / "articulated" / "spatial.py"
    f.write_text(f.read_text() + "\n# edited\n")
    assert compiled() == kinematics
