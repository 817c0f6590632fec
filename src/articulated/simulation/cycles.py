"""The CPU's cycle counter, for per-step wall times inside compiled loops.

The CPU's cycle counter, for per-step wall times inside compiled step loops (numba has
no clock): :func:`_cycles` (in compiled code) and :func:`_cycle_rate` (its rate, measured
once)."""

from __future__ import annotations

import platform
import time

from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ..config import JIT


@intrinsic
def _cycles(typingctx):
    """The CPU's cycle counter (LLVM ``readcyclecounter``: the time-stamp counter on x86),
    read inside the compiled step loops."""
    def codegen(context, builder, signature, args):
        fnty = llvm_ir.FunctionType(llvm_ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@njit(**JIT)
def _read_cycles():
    return _cycles()


_RATE = None


def _cycle_rate(seconds=0.02):
    """Cycles per second of :func:`_cycles` (measured once against ``time.perf_counter``);
    None off x86 (the counter may not be readable or steady there; per-step times are then
    not recorded)."""
    global _RATE
    if _RATE is None:
        _RATE = 0.0
        if platform.machine().lower() in ("x86_64", "amd64"):
            c0, t0 = _read_cycles(), time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                pass
            c1, t1 = _read_cycles(), time.perf_counter()
            if c1 > c0:
                _RATE = (c1 - c0) / (t1 - t0)
    return _RATE or None
