"""All numba JIT flags of the package, in one place (stumpy's ``config.py`` habit).

Kernels import :data:`JIT` (hot loops) and :data:`INLINE` (small spatial helpers) from
here, so the whole library can be switched e.g. to ``boundscheck=True`` by editing one file.
Set the environment variable ``NUMBA_DISABLE_JIT=1`` to run every kernel as plain Python
(for coverage and debugging).
"""

JIT = dict(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy")
"""Flags of every ``@njit`` kernel. ``fastmath`` stays off: cross-checks are to 1e-9."""

INLINE = dict(inline="always", cache=True, fastmath=False, boundscheck=False, nogil=True,
              error_model="numpy")
"""Flags of the small spatial-algebra helpers inlined into kernels."""
