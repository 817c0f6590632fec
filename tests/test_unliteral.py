"""Calls from jitted code to the package's kernels are typed without literal types
(articulated._unliteral): one compiled version per argument type, whatever constants the
callers pass; functions outside the package keep numba's literal dispatch."""

import numpy as np
from numba import njit, types

from articulated.algorithms.heap import _heapsort


@njit
def _outside(a, n):
    return a[:n].sum()


@njit
def _sort_with_constants(a, b, c):
    _heapsort(a, 5)                    # a constant count
    n = 0                              # a counter typed Literal[int](0) at first
    for k in range(b.shape[0]):
        if b[k] >= 0:
            n += 1
    _heapsort(b, n)
    _heapsort(c, 0)                    # sorts nothing
    return _outside(a, 2)


def _literal_args(dispatcher):
    return [t for sig in dispatcher.signatures for t in sig if isinstance(t, types.Literal)]


def test_kernel_called_with_constants_is_compiled_for_int64_only():
    a = np.array([4, 1, 3, 0, 2, 9, 8])
    b = np.array([3, 2, 1])
    c = np.array([2, 1])
    assert _sort_with_constants(a, b, c) == 1
    assert a.tolist() == [0, 1, 2, 3, 4, 9, 8]         # the first 5 sorted, the rest kept
    assert b.tolist() == [1, 2, 3]
    assert c.tolist() == [2, 1]
    assert _heapsort.signatures, "the kernel was typed from the caller"
    assert _literal_args(_heapsort) == []
    assert all(sig[1] == types.int64 for sig in _heapsort.signatures)
    # a function outside the package is still specialized on the constant, as numba does
    assert types.literal(2) in _literal_args(_outside)
