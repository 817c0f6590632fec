"""All numba JIT flags of the package, in one place (stumpy's ``config.py`` habit).

Kernels import :data:`JIT` or :data:`KERNEL` (hot loops) and :data:`INLINE` or
:data:`INLINE_IR` (the helpers inlined into them) from here, so the whole library can be
switched e.g. to ``boundscheck=True`` by editing one file. Numba's on-disk cache of every
kernel is keyed on the source of the whole package (:mod:`articulated._numba_cache`): an
edit to any of its modules, this one included, or an upgrade recompiles all the kernels on
their next use. Set the environment variable ``NUMBA_DISABLE_JIT=1`` to run every kernel
as plain Python (for coverage and debugging).
"""

JIT = dict(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy",
           forceinline=False)
"""Flags of every ``@njit`` kernel. ``fastmath`` stays off: cross-checks are to 1e-9.
``forceinline`` is set (False) so that a kernel never inherits the flag from a caller."""

KERNEL = dict(JIT, _nrt=False)
"""Flags of the allocation-free kernels (ABA, RNEA, CRBA, kinematics): ``JIT`` with numba's
reference-counting runtime (NRT) off. Every array view a kernel makes (``A[i]``, a slice,
an inlined helper's array argument) would otherwise cost an atomic reference-count update,
several per body in the hot loops; without NRT an allocation inside a kernel is a compile
error, which keeps the kernels allocation-free by construction."""

INLINE = dict(KERNEL, forceinline=True)
"""Flags of the helpers of the DCA, quasi-statics, hybrid-body and loop kernels:
allocation-free like :data:`KERNEL`, each compiled once and inlined into every caller by
LLVM (``forceinline``: the ``alwaysinline`` attribute). Numba's own ``inline="always"``
(:data:`INLINE_IR`) copies a helper's numba IR into every call site and types it again
there, recursively: with these helpers a cold test run spent 3 times longer compiling
(docs/benchmarks.md, "Compile time")."""

INLINE_IR = dict(JIT, inline="always")
"""Flags of the helpers that numba inlines as IR and types in each caller: the small
spatial-algebra helpers (:mod:`articulated.spatial`) and those of ABA, CRBA and kinematics,
where this gave ABA about 6% more speed than :data:`INLINE` at little compile cost, and the
two helpers that return array views into packed buffers
(:func:`articulated.model.model_arrays`, :func:`articulated.data.data_arrays`): typed in
the caller, their views cost no reference counting inside a :data:`KERNEL`, while Python
callers get views that keep their buffer alive (NRT on); one compiled version cannot do
both."""

import warnings as _warnings

from . import _numba_cache, _unliteral

_numba_cache.install()        # before any kernel is defined
_unliteral.install()          # one compiled version per argument type, not per constant

from numba.core.errors import NumbaIRAssumptionWarning as _NumbaIRAssumptionWarning

# Numba's SSA pass prints a "pedantic check" warning (NumbaIRAssumptionWarning, "variable ...
# is not in scope") while compiling kernels that inline the branchy ``sincos`` helper of
# spatial.py into loops; it is an internal consistency note of numba 0.68, not a problem
# with the compiled code (every kernel is cross-checked to 1e-9). Keep it out of users'
# terminals on the first (compiling) run.
_warnings.filterwarnings("ignore", category=_NumbaIRAssumptionWarning)
