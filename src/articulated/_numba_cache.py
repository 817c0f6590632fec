"""Numba's on-disk cache, keyed on the source of the whole package.

Numba stamps a cached kernel with a hash of the one file that defines it, but a kernel's
machine code also holds every kernel and helper it calls, inlined or linked, from other
modules. An edit to ``node_update._update_nodes`` would leave the cached
``simulation.adaptive._adaptive_steps``, which contains it, in use; and since the stamp
is a content hash (numba >= 0.61), such a stale entry survives reinstalls, e.g. a user's
``pip install -U`` into a site-packages whose ``__pycache__`` still holds the previous
version's files. The locators here stamp every kernel of ``articulated`` with one hash of
all the package's ``.py`` files instead, so any edit or upgrade recompiles the package's
kernels and nothing else. They are put first in numba's locator list by :func:`install`
(called from :mod:`articulated.config`, before any kernel is defined); functions outside
the package keep numba's own locators.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle

from numba.core import caching as _caching

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def package_stamp(root: str = PACKAGE_DIR) -> str:
    """SHA-256 (hex str) of every ``.py`` file under ``root`` (relative paths and contents,
    in sorted order): the source stamp of all the package's cached kernels."""
    return _stamp(os.path.abspath(root))


@functools.lru_cache(maxsize=None)
def _stamp(root):
    digest = hashlib.sha256()
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        paths.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
    for path in sorted(paths):
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
        digest.update(b"\0")
        with open(path, "rb") as fh:
            digest.update(fh.read())
        digest.update(b"\0")
    return digest.hexdigest()


def _in_package(py_file) -> bool:
    try:
        path = os.path.abspath(py_file)
    except (TypeError, ValueError):
        return False
    return os.path.commonpath([path, PACKAGE_DIR]) == PACKAGE_DIR


def _locator(base):
    """``base`` (a numba source-file locator) restricted to this package, with the
    package-wide stamp."""

    class PackageLocator(base):
        def get_source_stamp(self):
            return package_stamp()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _in_package(py_file):
                return None
            return super().from_function(py_func, py_file)

    PackageLocator.__name__ = PackageLocator.__qualname__ = "Package" + base.__name__.lstrip("_")
    return PackageLocator


def _numba(name):
    """A class of numba's caching module under its name in numba >= 0.61 or the older
    underscored one."""
    return getattr(_caching, name, None) or getattr(_caching, "_" + name)


LOCATORS = tuple(_locator(_numba(n)) for n in
                 ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"))
"""The package's locators, in numba's order: ``NUMBA_CACHE_DIR`` when set, the package's
``__pycache__`` when writable, else the user-wide cache directory."""


def _tolerant(load_index):
    """``IndexDataCacheFile._load_index`` that reads an index it cannot unpickle as empty
    (obsolete), as numba already reads an index of another numba version. The index holds
    the pickled signatures of the cached versions; a bundle (named tuple) renamed or
    removed since the index was written makes unpickling raise (AttributeError), which
    numba would pass on to the first call of the kernel: a stale ``__pycache__`` left by an
    earlier version of the package must cost a compile, not an error."""
    @functools.wraps(load_index)
    def _load_index(self):
        try:
            return load_index(self)
        except (AttributeError, ImportError, EOFError, IndexError, TypeError, ValueError,
                pickle.UnpicklingError):
            return {}
    _load_index.tolerant = True
    return _load_index


def install() -> None:
    """Put :data:`LOCATORS` first in numba's cache-locator list and make the index loader
    tolerant of unreadable indexes (:func:`_tolerant`; numba's class, so for every cached
    function of the process: an index that cannot be read is obsolete for any of them);
    idempotent."""
    impl = _numba("CacheImpl")
    current = [c for c in impl._locator_classes if c not in LOCATORS]
    impl._locator_classes = list(LOCATORS) + current
    index = _numba("IndexDataCacheFile")
    if not getattr(index._load_index, "tolerant", False):
        index._load_index = _tolerant(index._load_index)


def is_cached(dispatcher) -> bool:
    """Whether numba's on-disk cache holds machine code of ``dispatcher`` (a numba
    ``Dispatcher`` with ``cache=True``) stamped with the current package source: False means
    its first call compiles it (seconds to minutes)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None:                 # cache=False: compiled on every first call
        return False
    try:
        return bool(cache_file._load_index())
    except Exception:  # noqa: BLE001 - an unreadable index is a cold cache
        return False


def package_kernels() -> list:
    """The numba dispatchers with on-disk caching defined at module level in the modules of
    this package imported so far (no import is made)."""
    import sys

    from numba.core.dispatcher import Dispatcher

    name = __name__.rpartition(".")[0]
    seen, out = set(), []
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == name or mod_name.startswith(name + ".")):
            continue
        for obj in list(vars(mod).values()):
            if (isinstance(obj, Dispatcher) and id(obj) not in seen
                    and getattr(obj, "_cache", None) is not None
                    and hasattr(obj._cache, "_cache_file")
                    and _in_package(getattr(obj.py_func, "__code__", None)
                                    and obj.py_func.__code__.co_filename)):
                seen.add(id(obj))
                out.append(obj)
    return out


def cold_kernels() -> list:
    """The :func:`package_kernels` that :func:`is_cached` finds not cached: what a first run
    (after an install, an upgrade or any edit of the package) compiles."""
    return [d for d in package_kernels() if not is_cached(d)]
