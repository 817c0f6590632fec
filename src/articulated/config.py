"""All numba JIT flags of the package, in one place (stumpy's ``config.py`` habit).

Kernels import :data:`JIT` or :data:`KERNEL` (hot loops), :data:`INLINE` (the helpers
they call) and :data:`VIEWS` (the two helpers that name the views of a packed buffer) from
here, so the whole library can be switched e.g. to ``boundscheck=True`` by editing one
file. A kernel's on-disk cache entry is stamped with the source of its own module and of
every module of the package that module imports (:mod:`articulated._numba_cache`). Set the
environment variable ``NUMBA_DISABLE_JIT=1`` to run every kernel as plain Python (for
coverage and debugging).
"""

JIT = dict(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy",
           forceinline=False)
"""Flags of every ``@njit`` kernel. ``fastmath`` stays off: cross-checks are to 1e-9.
``forceinline`` is set (False) so that a kernel never inherits the flag from a caller."""

KERNEL = dict(JIT, _nrt=False)
"""Flags of the allocation-free kernels (ABA, RNEA, CRBA, kinematics): ``JIT`` with numba's
reference-counting runtime (NRT) off. Every array view a kernel makes (``A[i]``, a slice,
a helper's array argument) would otherwise cost an atomic reference-count update, several
per body in the hot loops; without NRT an allocation inside a kernel is a compile error,
which keeps the kernels allocation-free by construction."""

INLINE = dict(KERNEL, forceinline=True, cache=False, no_cpython_wrapper=True,
              no_cfunc_wrapper=True)
"""Flags of the helpers that kernels call (spatial algebra, the passes of ABA, the DCA's
node updates, ...): allocation-free like :data:`KERNEL`, each typed and compiled once per
signature and inlined into every caller by LLVM (``forceinline``: the ``alwaysinline``
attribute). No CPython or C wrapper is built and nothing is cached on their own (a
kernel's cache entry holds the machine code of the helpers it calls); :func:`inline`
applies them. Numba's ``inline="always"`` (:data:`VIEWS`) would instead copy a helper's IR
into every call site and type it again there, recursively, which costs compile time at
every caller."""


def inline(fn):
    """Decorator of a helper that kernels call, with the flags :data:`INLINE`: compiled
    code calls the compiled helper, Python calls ``fn`` itself as plain Python (numba's
    ``register_jitable``; a compiled helper without a CPython wrapper cannot be called from
    Python)."""
    from numba.extending import register_jitable

    return register_jitable(**INLINE)(fn)


VIEWS = dict(JIT, inline="always")
"""Flags of :func:`articulated.model.model_arrays` and :func:`articulated.data.data_arrays`,
which return array views into packed buffers: numba inlines their IR and types them in the
caller, so their views cost no reference counting inside a :data:`KERNEL` while Python and
reference-counted callers get views that keep their buffer alive; one compiled version
cannot do both."""

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
