"""Argument tuples by reference (articulated._byref): what a kernel reads through a pointer
is what its caller packed, booleans, scalars, nested tuples and array views included, and
writes through the arrays reach the caller's arrays."""

import numpy as np
from numba import njit

from articulated._byref import byref, byref_each, deref
from articulated.config import KERNEL


@njit(**KERNEL)
def _accumulate(x, ref):
    a, b, c, flag, (d, k) = deref(ref)
    for i in range(x.shape[0]):
        x[i] += a[i] * b[i, 1] + (c if flag else -c) + d[k]
    b[0, 0] += 1.0                      # a write through the pointer's array


@njit(**KERNEL)
def _through_pointers(x, tt, reps):
    p = byref_each(tt)
    for _ in range(reps):
        _accumulate(x, p[0])
        _accumulate(x, p[1])
    _accumulate(x, byref(tt[1]))


def test_byref_round_trip_booleans_nested_tuples_and_writes():
    a1, b1, d1 = np.arange(4.0), np.arange(8.0).reshape(4, 2), np.array([0.5, 7.0])
    a2, b2, d2 = np.ones(4), np.full((4, 2), 3.0), np.array([-2.0, 0.25, 9.0])
    t1 = (a1, b1, 2.0, True, (d1, 1))
    t2 = (a2, b2[:, ::-1], 1.5, False, (d2, 2))     # a strided view
    x = np.zeros(4)
    _through_pointers(x, (t1, t2), 3)

    ref = np.zeros(4)
    b1r, b2r = b1.copy(), b2[:, ::-1].copy()
    for t, (a, b, c, flag, (d, k)) in enumerate([(a1, b1r, 2.0, True, (d1, 1)),
                                                 (a2, b2r, 1.5, False, (d2, 2))] * 3
                                                + [(a2, b2r, 1.5, False, (d2, 2))]):
        ref += a * b[:, 1] + (c if flag else -c) + d[k]
        b[0, 0] += 1.0
    np.testing.assert_array_equal(x, ref)
    assert b1[0, 0] == 3.0                     # 0 + 3 writes
    assert b2[0, 1] == 3.0 + 4.0               # the view's [0, 0]: 4 writes
    np.testing.assert_array_equal(b2[:, 0], 3.0)


# Named bundles (articulated.algorithms.bundles): fields read by name through a pointer, and a
# named tuple of pointers from byref_each keeps the field names.
from collections import namedtuple

_Pair = namedtuple("_Pair", ("first", "second"))
_Vec = namedtuple("_Vec", ("a", "scale", "flag"))


@njit(**KERNEL)
def _scaled(x, ref):
    v = deref(ref)
    for i in range(x.shape[0]):
        x[i] += v.scale * v.a[i] if v.flag else -v.a[i]
    v.a[0] += 1.0                       # a write through the bundle's array


@njit(**KERNEL)
def _named_pointers(x, pair):
    p = byref_each(pair)
    _scaled(x, p.first)
    _scaled(x, p.second)
    _scaled(x, byref(pair.second))


def test_named_bundles_by_reference_read_fields_by_name_and_write_through():
    a1, a2 = np.arange(3.0), np.full(3, 2.0)
    x = np.zeros(3)
    _named_pointers(x, _Pair(_Vec(a1, 10.0, True), _Vec(a2, 0.5, False)))
    # first: +10 a1 (a1[0] = 0 read before the write); second twice: -a2, then -a2 with
    # a2[0] incremented once in between
    np.testing.assert_array_equal(x, [0.0 - 2.0 - 3.0, 10.0 - 4.0, 20.0 - 4.0])
    assert a1[0] == 1.0 and a2[0] == 4.0
