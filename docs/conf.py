"""Sphinx configuration of the articulated documentation site.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (the ``docs``
extra installs what it needs). Why Sphinx: with pydata-sphinx-theme and numpydoc it is
what NumPy, SciPy and pandas use, so the site reads like the references our users know;
MyST keeps the pages in Markdown.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The package from this checkout (src layout), also when it is not installed.
sys.path.insert(0, str(HERE.parent / "src"))

import articulated  # noqa: E402

project = "articulated"
author = "the articulated developers"
copyright = "the articulated developers"
release = articulated.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
templates_path = ["_templates"]

# Pages of the site: every Markdown file in subfolders, and these three at the top level.
# The other top-level Markdown files are the old long pages that the guide, results and
# design pages replace; they stay out of the build until they are deleted.
TOP_LEVEL = {"index.md", "getting-started.md", "examples.md"}
exclude_patterns = ["_build", "_templates", "scripts", "Thumbs.db", ".DS_Store"] + sorted(
    p.name for p in HERE.glob("*.md") if p.name not in TOP_LEVEL)

# MyST: ::: fences for directives, $...$ and $$...$$ math, anchors for ## and ### headings
# (links like guide/contact.md#pitfalls).
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# API reference: autosummary writes a page per object into api/generated/ at build time,
# afresh on every build (a stub left from a renamed function would be an orphan page).
shutil.rmtree(HERE / "api" / "generated", ignore_errors=True)
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False
autodoc_typehints = "none"          # the numpydoc Parameters section carries the types
autodoc_preserve_defaults = True  # defaults as written in the source (np.float64)
autodoc_member_order = "bysource"
add_module_names = False

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()  # validation off: the docstrings are checked by review
numpydoc_xref_param_type = False

# No intersphinx: CI builds the site without network access.

html_theme = "pydata_sphinx_theme"
html_title = f"articulated {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting-started": []}
html_show_sourcelink = False


def _constant_docstring(app, what, name, obj, options, lines):
    """A constant re-exported by a package (``articulated.models.GRAVITY``) gets the
    attribute docstring written under its definition instead of its type's docstring."""
    first = ((type(obj).__doc__ or "").strip().splitlines() or [""])[0].strip()
    if what not in ("data", "attribute") or not first or not any(first in ln for ln in lines):
        return
    from sphinx.pycode import ModuleAnalyzer

    short = name.rsplit(".", 1)[-1]
    for modname, mod in sorted(sys.modules.items()):
        if not modname.startswith("articulated.") or getattr(mod, short, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except Exception:  # noqa: BLE001 - a module without source: try the next
            continue
        if ("", short) in docs:
            lines[:] = list(docs[("", short)])
            return


def setup(app):
    app.connect("autodoc-process-docstring", _constant_docstring)
