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


def install() -> None:
    """Put :data:`LOCATORS` first in numba's cache-locator list (idempotent)."""
    impl = _numba("CacheImpl")
    current = [c for c in impl._locator_classes if c not in LOCATORS]
    impl._locator_classes = list(LOCATORS) + current
