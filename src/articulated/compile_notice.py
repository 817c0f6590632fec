"""The command line's first-run notice while numba compiles.

The command line's first-run notice: one line and a progress bar while numba compiles
the package's kernels.

A first run (after an install, an upgrade or an edit of a module that kernels are built
from: :mod:`articulated._numba_cache`) compiles every kernel it calls. :func:`compile_notice`
listens to numba's ``"numba:compile"`` event, which numba triggers only on a cache miss, for
the package's cached kernels: at the first one it writes ``compiling kernels, first run
only, ~N min`` (N from the kernels not yet cached,
:func:`articulated._numba_cache.cold_kernels`, times :data:`SECONDS_PER_KERNEL`) to stderr,
shows a progress bar (rich) while kernels compile, and at the end one line with the number
of kernels compiled and the time it took. A run whose kernels all come from the cache
writes nothing. ``articulated compile`` (:mod:`articulated.precompile`) compiles them ahead
of use, in parallel processes. This is an interface: the library itself never prints (its
modules use ``logging``).
"""

from __future__ import annotations

import contextlib
import sys
import time

from numba.core import event

SECONDS_PER_KERNEL = 5.0
"""Mean wall time [s] numba takes per cached kernel of this package on a first run, its
helpers included; the notice's estimate is this times the kernels the command will
compile."""


def _is_package_kernel(dispatcher) -> bool:
    from ._numba_cache import _in_package

    code = getattr(getattr(dispatcher, "py_func", None), "__code__", None)
    return (code is not None and hasattr(getattr(dispatcher, "_cache", None), "_cache_file")
            and _in_package(code.co_filename))


class CompileListener(event.Listener):
    """The ``numba.core.event.Listener`` of :func:`compile_notice`: counts the package's
    kernels compiled; ``compiled`` (int), ``seconds`` (float) so far."""

    def __init__(self, stream=None, expected=None):
        self.stream = stream if stream is not None else sys.stderr
        self.expected = expected
        self.compiled = 0
        self.seconds = 0.0
        self._depth = 0
        self._t0 = None
        self._total = None
        self._bar = None

    def on_start(self, event):
        disp = (event.data or {}).get("dispatcher")
        if disp is None or not _is_package_kernel(disp):
            return
        if self._total is None:
            self._announce()
        if self._depth == 0:
            self._t0 = time.perf_counter()
            self._show()
        self._depth += 1
        if self._bar is not None:
            self._bar.update(self._task, description=f"compiling {disp.py_func.__name__}")

    def on_end(self, event):
        disp = (event.data or {}).get("dispatcher")
        if disp is None or not _is_package_kernel(disp) or self._depth == 0:
            return
        self._depth -= 1
        self.compiled += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.compiled,
                             total=max(self._total, self.compiled))
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0
            self._hide()

    def _announce(self):
        from ._numba_cache import cold_kernels

        cold = len(cold_kernels())
        self._total = max(1, min(cold, self.expected or cold))
        minutes = max(1, round(self._total * SECONDS_PER_KERNEL / 60.0))
        print(f"compiling kernels, first run only, ~{minutes} min (about {self._total} "
              f"numba kernels of {cold} not in the cache yet; later runs load them in "
              f"seconds)", file=self.stream, flush=True)

    def _show(self):
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
            from rich.progress import TimeElapsedColumn
        except ImportError:  # rich is a dependency; the notice line alone as a fallback
            return
        console = Console(file=self.stream)
        if not console.is_terminal:        # a log or a pipe: the two lines only
            return
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(), TimeElapsedColumn(),
                             console=console, transient=True)
        self._task = self._bar.add_task("compiling", total=max(self._total, self.compiled),
                                        completed=self.compiled)
        self._bar.start()

    def _hide(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def close(self):
        """Stop the bar; after any compilation, write the summary line."""
        self._hide()
        if self.compiled:
            print(f"compiled {self.compiled} kernels in {self.seconds:.0f} s (kept in numba's "
                  f"cache)", file=self.stream, flush=True)


@contextlib.contextmanager
def compile_notice(stream=None, expected=None):
    """Inside the block, announce and show the compilation of the package's kernels (see
    the module docstring) on ``stream`` (default ``sys.stderr``); ``expected``: how many
    kernels the block compiles on a cold cache, when known (the estimate and the bar's
    length; default: every kernel not cached). Yields the :class:`CompileListener`."""
    listener = CompileListener(stream, expected)
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)
        listener.close()
