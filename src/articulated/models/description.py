"""Rebuild a model from its :attr:`~articulated.Model.description`.

How a model is rebuilt from its :attr:`~articulated.Model.description`: the decorator
:func:`scene` that every public scene generator of :mod:`articulated.models` wears (it sets
``{"scene": name, "kwargs": {...}}`` on the model it returns, every argument with its
default filled in), and :func:`build_model`, which turns a description back into a model
(scenes, and the loaders' ``{"urdf" | "mjcf" | "structure": path, "sha256": hex, "kwargs":
{...}}``). A saved :class:`~articulated.simulation.trajectory.Trajectory` carries the
description, so the file alone reopens the model (``Trajectory.load(path).build_model()``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
from pathlib import Path

import numpy as np

SCENES: dict = {}
"""name -> scene generator, every function decorated with :func:`scene`."""

LOADERS = ("urdf", "mjcf", "structure")
"""Description keys of the file loaders: ``{"urdf": path, ...}`` is rebuilt by
``articulated.io.urdf.load_urdf(path, **kwargs)``, and likewise for the others."""


def jsonable(x):
    """``x`` with NumPy scalars and arrays turned into Python numbers and lists (recursively
    through dicts, lists and tuples), for descriptions and the JSON entries of trajectory
    and checkpoint files. Raises TypeError for anything JSON cannot hold (a callable, a
    random generator)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f"{type(x).__name__} {x!r} has no JSON form")


def scene(fn):
    """Decorator of a scene generator: the model it returns (alone or first of a tuple)
    gets ``description = {"scene": fn.__name__, "kwargs": {every argument}}``, or None when
    an argument has no JSON form (e.g. a ``numpy.random.Generator`` seed). Registers the
    generator in :data:`SCENES`."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def generator(*args, **kwargs):
        out = fn(*args, **kwargs)
        model = out[0] if isinstance(out, tuple) else out
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        kw = dict(bound.arguments)
        kw.pop("return_configuration", None)      # what is returned, not the model
        try:
            model.description = {"scene": fn.__name__, "kwargs": jsonable(kw)}
        except TypeError:
            model.description = None
        return out

    SCENES[fn.__name__] = generator
    return generator


def file_sha256(path) -> str:
    """SHA-256 (hex) of a file's bytes, as loaders put it in their descriptions."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_model(description: dict):
    """The model that ``description`` (:attr:`articulated.Model.description`) describes.

    Parameters
    ----------
    description : dict
        ``{"scene": name, "kwargs": {...}}`` (a generator of :data:`SCENES`), or ``{"urdf" |
        "mjcf" | "structure": path, "sha256": hex, "kwargs": {...}}`` (the loader
        ``articulated.io.<kind>.load_<kind>``); optionally ``"edits"``, the
        :data:`EDITS` made after it (``Model.with_limits``, ``Model.with_armature``).

    Returns
    -------
    Model
        With the same description.

    Raises
    ------
    ValueError
        Not a description, an unknown scene, a loader that this installation does not have,
        a file that is missing or whose SHA-256 differs from the recorded one (the file
        changed since the model was built).
    """
    if not isinstance(description, dict):
        raise ValueError(f"a model description is a dict, got {description!r}")
    kwargs = dict(description.get("kwargs") or {})
    if "scene" in description:
        name = description["scene"]
        if name not in SCENES:
            raise ValueError(f"unknown scene {name!r} in the model description; scenes: "
                             f"{sorted(SCENES)}")
        return _edited(SCENES[name](**kwargs), description)
    kind = next((k for k in LOADERS if k in description), None)
    if kind is None:
        raise ValueError(f"a model description needs 'scene' or one of {LOADERS}, got keys "
                         f"{sorted(description)}")
    path = Path(description[kind])
    if not path.is_file():
        raise ValueError(f"the {kind} file {str(path)!r} of the model description does not "
                         f"exist (moved? rebuild the model from its new path)")
    sha = description.get("sha256")
    if sha is not None and file_sha256(path) != sha:
        raise ValueError(f"the {kind} file {str(path)!r} changed since the model was built "
                         f"(sha256 {file_sha256(path)[:12]}... != recorded {sha[:12]}...)")
    try:
        module = importlib.import_module(f"articulated.io.{kind}")
        loader = getattr(module, f"load_{kind}")
    except (ImportError, AttributeError):
        raise ValueError(f"this installation has no {kind} loader "
                         f"(articulated.io.{kind}.load_{kind})") from None
    return _edited(loader(path, **kwargs), description)


EDITS = ("with_limits", "with_armature")
"""The :class:`~articulated.Model` methods a description may record after its source
(``"edits": [[name, {arguments}], ...]``), repeated in order by :func:`build_model`."""


def _edited(model, description):
    for edit in description.get("edits", ()):
        name, arguments = edit
        if name not in EDITS:
            raise ValueError(f"unknown edit {name!r} in the model description; edits: {EDITS}")
        model = getattr(model, name)(**arguments)
    return model
