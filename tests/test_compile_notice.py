"""The first-run notice (issue 21, item 10): on a cold numba cache the command line says it
is compiling, with an estimate, and how long it took; once the kernels are cached it says
nothing. The library itself never prints: a library call on a cold cache writes nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

SCRIPT = """
import io, sys
import numpy as np
from articulated.compile_notice import compile_notice
from articulated.configuration import _normalize_kernel

buf = io.StringIO()
with compile_notice(buf, expected=1) as listener:
    q = np.array([2.0, 0.0, 0.0, 0.0])
    _normalize_kernel(np.array([0], dtype=np.int64), q)
sys.stdout.write(buf.getvalue())
print("compiled", listener.compiled, "q", q.tolist())
"""


def _run(cache, code=SCRIPT):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def test_notice_on_a_cold_cache_only(tmp_path):
    first = _run(tmp_path).stdout
    # one kernel expected: the estimate's floor, 1 min; every package kernel is cold
    m = re.search(r"compiling kernels, first run only, ~1 min \(about 1 numba kernels of "
                  r"(\d+) not in the cache yet", first)
    assert m and int(m.group(1)) > 100
    assert "compiled 1 kernels in" in first and "compiled 1 q [1.0, 0.0, 0.0, 0.0]" in first
    again = _run(tmp_path).stdout            # the kernel now comes from the cache
    assert again.splitlines() == ["compiled 0 q [1.0, 0.0, 0.0, 0.0]"]


def test_a_library_call_prints_nothing(tmp_path):
    r = _run(tmp_path, "import numpy as np\nfrom articulated import models, normalize\n"
                       "m = models.humanoid()\nnormalize(m, 2.0 * m.neutral())\n")
    assert r.stdout == "" and r.stderr == ""
