"""What the benchmarks share: machine information, memory, timing, Markdown tables, figures
and the command-line plumbing of ``articulated bench NAME``.

Every benchmark module of :mod:`articulated.bench` records the machine with its numbers
(:func:`machine_info`, :func:`peak_rss_bytes`; STYLE.md, Benchmarks), times warm calls with
:func:`time_call` (``timeit``), writes its Markdown tables with :func:`markdown_table`
(``tabulate``) and its figures with :func:`new_figure` / :func:`save_figure` (matplotlib's
object-oriented :class:`~matplotlib.figure.Figure`, no pyplot state), and declares its
command-line options with ``add_arguments(parser)`` and runs them with ``run(args)``
(:func:`bench_main` runs one module on its own).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np


# ============================================================================ machine

def machine_info() -> dict:
    """CPU, core count, memory, Python and library versions, git commit of this checkout."""
    info = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = meminfo("MemTotal")
    if mem:
        info["memory_gb"] = round(mem / 2 ** 30, 1)
    from .. import __version__
    import numba

    info["articulated"] = __version__
    info["numpy"] = np.__version__
    info["numba"] = numba.__version__
    for mod, key in (("pinocchio", "pin"), ("mujoco", "mujoco")):
        try:
            info[key] = __import__(mod).__version__
        except Exception:  # not installed (or broken): reported, not fatal
            info[key] = "not installed"
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True, timeout=10, cwd=Path(__file__).resolve().parent)
        info["commit"] = r.stdout.strip() if r.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        info["commit"] = "unknown"
    info["date"] = time.strftime("%Y-%m-%d %H:%M:%S")
    info["load_start"] = loadavg()
    return info


def loadavg():
    """1-minute load average (other processes on the machine make timings noisy), or None."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _kib_entry(path, key):
    """The ``key:`` line of a /proc file whose values are in kB, in bytes, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def meminfo(key):
    """A /proc/meminfo entry in bytes (e.g. ``"MemTotal"``), or None."""
    return _kib_entry("/proc/meminfo", key)


def proc_status(key):
    """A /proc/self/status entry of this process in bytes (e.g. ``"VmRSS"``), or None."""
    return _kib_entry("/proc/self/status", key)


def rss_bytes():
    """Current resident set size of this process [bytes], or None off Linux."""
    return proc_status("VmRSS")


def peak_rss_bytes():
    """Peak resident set size of this process [bytes] (``resource.getrusage``), or None."""
    try:
        import resource

        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r * (1 if sys.platform == "darwin" else 1024)
    except (ImportError, OSError):
        return None


@contextlib.contextmanager
def address_space_cap(extra_bytes):
    """Let the process map at most ``extra_bytes`` more address space inside the block
    (``RLIMIT_AS``), so that a runaway allocation raises MemoryError instead of invoking the
    OOM killer. A no-op where ``resource`` or /proc is missing."""
    try:
        import resource
    except ImportError:
        yield
        return
    vm = proc_status("VmSize")
    if vm is None:
        yield
        return
    old = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm + int(extra_bytes)
    if old[1] != resource.RLIM_INFINITY:
        cap = min(cap, old[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)


# ============================================================================ timing

def time_call(fn, repeats=7, target_s=0.02):
    """Median wall time [s] of one warm call of ``fn()``: ``repeats`` samples
    (``timeit.Timer.repeat``, garbage collection off), each a batch of calls lasting about
    ``target_s``. Call ``fn`` once before to leave compilation out."""
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    batch = max(1, min(100_000, int(target_s / max(one, 1e-9))))
    samples = timeit.Timer(fn).repeat(repeat=repeats, number=batch)
    return float(np.median(samples)) / batch


def time_calls(fn, repeats):
    """Median wall time [s] of ``repeats`` single warm calls of ``fn()`` (``timeit``, one
    call per sample, garbage collection off), after one untimed call."""
    fn()
    return float(np.median(timeit.Timer(fn).repeat(repeat=max(1, int(repeats)), number=1)))


def finish_report(res, t0, format_report, log=print) -> dict:
    """Close a benchmark run of the paper reproductions: record ``peak_rss_bytes`` and
    ``total_s`` (since ``t0``, ``time.perf_counter``) in ``res``, format ``res["report"]``
    with ``format_report(res)``, log it and the figures ``res["figures"]``; returns ``res``."""
    res["peak_rss_bytes"] = peak_rss_bytes()
    res["total_s"] = time.perf_counter() - t0
    res["report"] = format_report(res)
    log(res["report"])
    if res["figures"]:
        log("wrote " + ", ".join(str(p) for p in res["figures"]))
    return res


# ============================================================================ tables, figures

def markdown_table(headers, rows) -> str:
    """A Markdown (pipe) table of string cells, one line per row, cells as given (not
    padded to the column width; ``tabulate``)."""
    from tabulate import tabulate

    return tabulate([list(r) for r in rows], headers=list(headers), tablefmt="pipe",
                    disable_numparse=True, stralign=None, numalign=None)


def new_figure(figsize, nrows=1, ncols=1, **subplots_kw):
    """A matplotlib :class:`~matplotlib.figure.Figure` of ``figsize`` inches (no pyplot
    state: nothing to close) and its axes, as ``Figure.subplots(nrows, ncols,
    **subplots_kw)`` returns them; ``nrows=0``: no axes (``None``), for a grid of one's
    own."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, (fig.subplots(nrows, ncols, **subplots_kw) if nrows else None)


def save_figure(fig, path, dpi=100) -> Path:
    """Lay out ``fig`` (``tight_layout``), write it to ``path`` (PNG; its folder is created)
    and return the path."""
    path = Path(path)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


# ============================================================================ command line

def robots_dir():
    """Return the folder of example-robot-data's ``robots``, or None.

    :func:`articulated.robots.data_dir`.
    """
    from ..robots import data_dir

    return data_dir()


def at_least(least, kind=int):
    """An argparse ``type`` accepting numbers >= ``least`` (else a usage error naming the
    bound)."""
    def parse(text):
        v = kind(text)
        if v < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, got {v}")
        return v

    parse.__name__ = kind.__name__
    return parse


class MarkdownReport:
    """The Markdown a benchmark prints as it goes and writes at the end: a title line with
    ``(quick)``/``(full)``, the machine and the command, then what :meth:`emit` adds.

    ``out``: the output folder (created); ``name``: the benchmark (``articulated bench
    NAME``); ``suffix``: text after the command on the machine line."""

    def __init__(self, title, out, name, quick, suffix=""):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.lines = [f"# {title} ({'quick' if quick else 'full'})", "",
                      f"Machine: {platform.processor() or platform.machine()}, Python "
                      f"{platform.python_version()}; `articulated bench {name}"
                      f"{' --quick' if quick else ''}`{suffix}.", ""]

    def emit(self, s=""):
        """Print ``s`` and keep it for the file."""
        print(s, flush=True)
        self.lines.append(s)

    def write(self, filename) -> Path:
        """Write the Markdown to ``out/filename``; returns the path."""
        path = self.out / filename
        path.write_text("\n".join(self.lines) + "\n")
        return path


def bench_main(name, add_arguments, run, argv=None) -> int:
    """Run one benchmark module on its own: parse ``argv`` with the options its
    ``add_arguments(parser)`` declares (the parser of ``articulated bench NAME``) and return
    ``run(args)``'s exit status."""
    p = argparse.ArgumentParser(prog=f"articulated bench {name}")
    add_arguments(p)
    return int(run(p.parse_args(argv)) or 0)
