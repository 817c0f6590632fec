"""The priority queue of the partial back-substitution (RL Sec. 4.3).

The priority queue of the partial back-substitution (RL Sec. 4.3) and an in-place
heapsort (post-order lists of the lazy updates, RL Sec. 5.2): binary max-heaps over
preallocated arrays, no allocation.
"""

from __future__ import annotations

from numba import njit

from ..config import inline, KERNEL


@inline
def _heap_push(hk, hn, n, key, node):
    j = n
    hk[j] = key
    hn[j] = node
    while j > 0:
        p = (j - 1) // 2
        if hk[p] >= hk[j]:
            break
        hk[p], hk[j] = hk[j], hk[p]
        hn[p], hn[j] = hn[j], hn[p]
        j = p
    return n + 1


@inline
def _heap_pop(hk, hn, n):
    """Remove the top (largest key) of a heap of size n; returns the new size."""
    n -= 1
    hk[0] = hk[n]
    hn[0] = hn[n]
    j = 0
    while True:
        l = 2 * j + 1
        if l >= n:
            break
        m = l
        if l + 1 < n and hk[l + 1] > hk[l]:
            m = l + 1
        if hk[j] >= hk[m]:
            break
        hk[m], hk[j] = hk[j], hk[m]
        hn[m], hn[j] = hn[j], hn[m]
        j = m
    return n


@njit(**KERNEL)
def _heapsort(a, n):
    """Sort ``a[:n]`` increasingly in place (heapsort: O(n log n), no allocation)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        t = a[0]
        a[0] = a[end]
        a[end] = t
        _sift(a, 0, end)


@njit(**KERNEL)
def _sift(a, i, n):
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and a[c + 1] > a[c]:
            c += 1
        if a[i] >= a[c]:
            return
        t = a[i]
        a[i] = a[c]
        a[c] = t
        i = c
