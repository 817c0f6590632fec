"""``articulated bench stiffness``: the formulation-stiffness study of Ascher, Pai &
Cloutier (1997) run end to end (:func:`run_study`): the computations are in
:mod:`articulated.bench.stiffness_study`, the Markdown and figures in
:mod:`articulated.bench.stiffness_report`.
"""

from __future__ import annotations

import time
from pathlib import Path

from .common import at_least, bench_main
from .stiffness_report import (format_report, format_table1, format_table2, plot_example1,
                               plot_table1)
from .stiffness_study import (DEFAULT_MAX_NFEV, R_BEYOND, R_QUICK, R_TABLE1, example1_sweep,
                              method_cost, table1, table2)


def run_study(quick: bool = False, *, out_dir="docs", max_nfev: int = DEFAULT_MAX_NFEV,
              log=print) -> dict:
    """Run Example 1, Table 1 and Table 2 and write ``formulation-stiffness.md`` and its
    PNGs (``formulation-stiffness-fig1.png``, ``formulation-stiffness-table1.png``) into
    ``out_dir``.

    Parameters
    ----------
    quick : bool
        A smoke run: 73 sweep angles and Table 1 at r = 0.1 and 0.0015 only (otherwise 721
        angles and the paper's 11 ratios plus :data:`R_BEYOND`).
    out_dir : path
        Output folder (created).
    max_nfev : int
        Table 1 evaluation limit per run.
    log : callable
        Progress output.

    Returns
    -------
    dict with ``sweep``, ``table1``, ``table2``, ``cost`` (as the functions return them),
    ``report`` (path of the Markdown), ``figures`` (paths), ``seconds``.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log("Example 1 sweep ...")
    sweep = example1_sweep(73 if quick else 721)
    fig1 = plot_example1(sweep, out / "formulation-stiffness-fig1.png")
    log("Table 1 ...")
    t1 = table1(R_QUICK if quick else R_TABLE1 + R_BEYOND, max_nfev=max_nfev, log=log)
    fig_t1 = plot_table1(t1, out / "formulation-stiffness-table1.png")
    log("Table 2 ...")
    t2 = table2()
    log("cost per call ...")
    cost = method_cost(quick)
    seconds = time.perf_counter() - t0
    command = "articulated bench stiffness" + (" --quick" if quick else "") + (
        "" if out == Path("docs") else f" --out {out_dir}")
    text = format_report(sweep, t1, t2, command=command, fig1=fig1.name, fig_t1=fig_t1.name,
                         seconds=seconds, quick=quick, cost=cost)
    md = out / "formulation-stiffness.md"
    md.write_text(text)
    log(format_table1(t1))
    log("")
    log(format_table2(t2))
    log(f"wrote {md}, {fig1}, {fig_t1} ({seconds:.0f} s)")
    return dict(sweep=sweep, table1=t1, table2=t2, cost=cost, report=md,
                figures=[fig1, fig_t1], seconds=seconds)


HELP = ("formulation stiffness (Ascher, Pai & Cloutier 1997): CRBA vs ABA vs modified ABA in "
        "float32; writes docs/formulation-stiffness.md")
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench stiffness [--quick] [--out DIR]
    [--max-nfev N]`` on ``parser``."""
    parser.description = ("Formulation stiffness study (Ascher, Pai & Cloutier 1997): "
                          "Example 1 (Fig. 1), Table 1 and Table 2 with CRBA, ABA and the "
                          "modified ABA in single precision; writes formulation-stiffness.md "
                          "and PNGs.")
    p = parser
    p.add_argument("--quick", action="store_true",
                   help="smoke run: coarse sweep, Table 1 at r = 0.1 and 0.0015 only")
    p.add_argument("--out", default="docs", metavar="DIR", help="output folder (default docs)")
    p.add_argument("--max-nfev", type=at_least(1), default=DEFAULT_MAX_NFEV, metavar="N",
                   help=f"Table 1: evaluations after which a run fails (default "
                        f"{DEFAULT_MAX_NFEV})")


def run(args) -> int:
    """Run :func:`run_study` with the options of :func:`add_arguments`; returns 0."""
    run_study(args.quick, out_dir=args.out, max_nfev=args.max_nfev)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.stiffness [options]``: as ``articulated bench
    stiffness``."""
    return bench_main("stiffness", add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main())
