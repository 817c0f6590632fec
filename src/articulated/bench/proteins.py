"""Adaptive quasi-statics on real proteins, behind ``articulated bench proteins``:
Redon & Lin (2005) Table 1 (RL, Sec. 6.3) on torsion-angle models of real structures
(:func:`articulated.load_structure`) instead of the random molecule, next to our full DCA.

(a) :func:`bench_load` - load time of the structure and of an assembly of ``copies``
    copies of it (chains renamed, each copy shifted by 10 nm), to measure the issue's
    target "a 3,000-residue structure in under 2 s".
(b) RL Table 1 (:func:`articulated.bench.quasistatics.bench_table1`): N_f in
    {1, 10, 100, 1000} forces, eps_max in {2^-3, .., 2^-19}, relative joint error: mean
    ms per step, joints computed, lower bound, relative displacement error, speed-up.
    Figure ``quasistatics-protein.png``: time and joints vs eps (RL Fig. 7).
(c) :func:`bench_placements` - one force at eps 2^-19, ten placements (force seeds 0-9):
    per placement the speed-up against the full DCA, the joints computed and their
    fraction of the DOF, the lower bound and the error.
(d) :func:`bench_pull` - one stronger force for 1,000 steps, so that the chain moves:
    figure ``quasistatics-protein-pull.png`` (:func:`plot_pull`: CA trace of the pulled
    chain at the start and at the end of both runs, and each CA's displacement).

Method, error measures, dt and forces as in :mod:`articulated.bench.quasistatics` (module
docstring): constant world forces of magnitude 1 (kJ mol^-1 nm^-1, the model's units) at
the centres of mass of random groups, gravity zero, every run a fresh
:class:`articulated.QuasiStaticSimulator` from the structure's own configuration.

Structures: the largest real ones of the ``mdanalysistests`` package (the ``molecules``
extra, read from disk, never downloaded): by default ``mmcif/3KPR.cif.gz`` (10 chains, 1,652
residues). ``--structure PATH`` runs any file; ``--quick`` fewer settings and steps (the
smoke test ``tests/test_bench_proteins.py`` runs it on tests/data/4E43.pdb.gz).
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from pathlib import Path

import numpy as np

from .common import at_least, bench_main, finish_report, machine_info, markdown_table
from .quasistatics import (DQ_STEP, EPS_TABLE, NF_TABLE, _log2_label, _warm_up,
                           bench_table1, displacement_errors, initial_solution, lower_bound,
                           plot_molecule, random_forces, simulate, step_dt, table1_markdown)

DEFAULT_STRUCTURE = "mmcif/3KPR.cif.gz"
"""The largest structure of ``mdanalysistests`` (path under ``MDAnalysisTests/data``)."""
PLACEMENTS = 10
"""Force placements of (c) (force seeds 0 .. 9)."""
EPS_PLACEMENTS = 2.0 ** -19
TARGET_SPEEDUP = 100.0
TARGET_LOAD_S = 2.0
TARGET_RESIDUES = 3000
"""Targets: >= 100x on the median placement at one force and 2^-19 (if the
molecule is local); a 3,000-residue structure loads in under 2 s."""


def structure_file(name=DEFAULT_STRUCTURE) -> Path:
    """Path of a structure shipped by the ``mdanalysistests`` package (``name`` relative to
    ``MDAnalysisTests/data``). Raises ValueError if the package (``pip install
    'articulated[molecules]'``) or the file is missing."""
    spec = importlib.util.find_spec("MDAnalysisTests")
    if spec is None or spec.origin is None:
        raise ValueError("the real structures come from the mdanalysistests package: "
                         "pip install 'articulated[molecules]' (or pass --structure PATH)")
    path = Path(spec.origin).parent / "data" / name
    if not path.is_file():
        raise ValueError(f"mdanalysistests has no {name} ({path})")
    return path


def residues_of(model) -> int:
    """Number of residues of a :func:`articulated.load_structure` model."""
    st = model.structure_atoms.structure
    return sum(len(chain) for chain in st[0])


def assembly_file(path, copies, folder) -> Path:
    """A PDB of ``copies`` copies of the first model of ``path``, copy k's chains renamed
    (letters, then digits) and shifted by k * 100 A along x. Returns its path."""
    import gemmi

    st = gemmi.read_structure(str(path))
    st.setup_entities()
    st.remove_waters()
    for k in range(len(st) - 1, 0, -1):
        del st[k]
    base = st[0].clone()
    names = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    out = gemmi.Structure()
    out.cell = st.cell
    model = gemmi.Model(1)
    for k in range(copies):
        shift = gemmi.Transform(gemmi.Mat33(), gemmi.Vec3(100.0 * k, 0.0, 0.0))
        for chain in base:
            c = chain.clone()
            c.name = next(names)
            for res in c:
                for atom in res:
                    atom.pos = gemmi.Position(shift.apply(atom.pos))
            model.add_chain(c)
    out.add_model(model)
    out.setup_entities()
    p = Path(folder) / f"{Path(path).name.split('.')[0]}-x{copies}.pdb"
    out.write_pdb(str(p))
    return p


def bench_load(path, copies=2, repeats=3, log=print) -> dict:
    """Load time of ``path`` and of :func:`assembly_file` with ``copies`` copies (median of
    ``repeats`` loads each, after one untimed load that imports gemmi). Returns
    dict(rows: name, residues, atoms, bodies, dof, seconds)."""
    from ..io.structure import load_structure

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = [Path(path)] + ([assembly_file(path, copies, tmp)] if copies > 1 else [])
        load_structure(files[0], missing_atoms="allow")
        for f in files:
            secs = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                m = load_structure(f, missing_atoms="allow")
                secs.append(time.perf_counter() - t0)
            rows.append(dict(name=f.name, residues=residues_of(m),
                             atoms=m.structure_atoms.natom, bodies=m.nb, dof=m.nv,
                             chains=len(m.structure_atoms.structure[0]),
                             seconds=float(np.median(secs))))
            log(f"load {f.name}: {rows[-1]['residues']} residues, {rows[-1]['atoms']} atoms, "
                f"{m.nb} bodies, {m.nv} DOF: {rows[-1]['seconds']:.2f} s")
    return dict(rows=rows)


def bench_placements(model, steps=30, *, placements=PLACEMENTS, eps=EPS_PLACEMENTS,
                     log=print) -> dict:
    """One force at ``eps`` for force seeds ``0 .. placements-1`` (:func:`random_forces`):
    per placement the full-DCA run and the adaptive run from the same start.

    Returns dict(eps, steps, rows (per seed: body, dt, dca_ms, ms, speedup, joints,
    fraction, lower, e_f, e_max), median_speedup)."""
    q0 = model.neutral()
    rows = []
    for seed in range(placements):
        forces = random_forces(model, 1, seed)
        qdd0, norms, _ = initial_solution(model, q0, forces, repeats=1)
        if not np.any(qdd0):
            log(f"placement {seed}: force on {model.body_name[forces[0][0]]} moves no joint; "
                f"skipped")
            continue
        dt = step_dt(qdd0, DQ_STEP)
        dca = simulate(model, q0, forces, dt, steps, "quasistatic")
        r = simulate(model, q0, forces, dt, steps, "quasistatic-adaptive", eps)
        e_f, e_max = displacement_errors(model, q0, dca["q"], r["q"])
        row = dict(seed=seed, body=model.body_name[forces[0][0]], dt=dt, dca_ms=dca["ms"],
                   ms=r["ms"], speedup=dca["ms"] / r["ms"], joints=r["joints"],
                   fraction=r["joints"] / model.nv, lower=lower_bound(norms, eps), e_f=e_f,
                   e_max=e_max)
        rows.append(row)
        log(f"placement {seed} ({row['body']}): {r['ms']:.2f} ms/step vs DCA "
            f"{dca['ms']:.1f} ms (x{row['speedup']:.1f}), joints {r['joints']:.0f} "
            f"(lower bound {row['lower']}), e_F {e_f:.1e}")
    return dict(eps=eps, steps=steps, rows=rows,
                median_speedup=float(np.median([r["speedup"] for r in rows])),
                median_fraction=float(np.median([r["fraction"] for r in rows])))


def bench_pull(model, steps=1000, *, seed=0, magnitude=10.0, dq=1e-2, eps=EPS_PLACEMENTS,
               log=print) -> dict:
    """A pull large enough to see: one force of ``magnitude`` kJ mol^-1 nm^-1 (placement
    ``seed``), dt such that the first full step turns the fastest joint by ``dq`` rad,
    ``steps`` steps of the full DCA and of the adaptive solver at ``eps`` from the same
    start. Returns dict(body, force, steps, dca_ms, ms, speedup, joints, e_f, e_max,
    moved_nm (largest atom displacement of the DCA run), q0, q_dca, q_adaptive)."""
    q0 = model.neutral()
    forces = random_forces(model, 1, seed, magnitude)
    qdd0 = initial_solution(model, q0, forces, repeats=1)[0]
    dt = step_dt(qdd0, dq)
    dca = simulate(model, q0, forces, dt, steps, "quasistatic")
    r = simulate(model, q0, forces, dt, steps, "quasistatic-adaptive", eps)
    e_f, e_max = displacement_errors(model, q0, dca["q"], r["q"])
    from ..pdb import atom_positions

    x0, x1 = atom_positions(model, q0), atom_positions(model, dca["q"])
    out = dict(body=model.body_name[forces[0][0]], force=forces[0], steps=steps, eps=eps,
               dca_ms=dca["ms"], ms=r["ms"], speedup=dca["ms"] / r["ms"], joints=r["joints"],
               e_f=e_f, e_max=e_max, moved_nm=float(np.linalg.norm(x1 - x0, axis=1).max()),
               q0=q0, q_dca=dca["q"], q_adaptive=r["q"])
    log(f"pull {out['body']}: {steps} steps, DCA {dca['ms']:.1f} ms/step, adaptive "
        f"{r['ms']:.2f} ms/step (x{out['speedup']:.1f}, {r['joints']:.0f} joints), largest "
        f"atom displacement {out['moved_nm']:.2f} nm, e_F {e_f:.1e}")
    return out


def plot_pull(model, pull, path):
    """The pulled chain: left, its CA trace at the start and at the end of both runs,
    projected on the start's two principal axes [nm], with the pulled group and the force
    direction; right, each CA's displacement [nm] along the chain (full DCA, adaptive, and
    their difference), log scale: which residues move, and how well the adaptive run follows."""
    from ..pdb import atom_positions
    from .common import new_figure, save_figure

    atoms = model.structure_atoms
    b = pull["force"][0]
    cras = list(atoms.structure[0].all())
    anchor = int(np.flatnonzero(atoms.body == b)[0])
    chain = cras[anchor].chain.name
    ca = np.array([k for k, c in enumerate(cras)
                   if c.chain.name == chain and c.atom.name == "CA"])
    seq = np.array([cras[k].residue.seqid.num for k in ca])
    xs = [atom_positions(model, pull[k])[ca] for k in ("q0", "q_dca", "q_adaptive")]
    c0 = xs[0].mean(axis=0)
    axes = np.linalg.svd(xs[0] - c0, full_matrices=False)[2][:2]
    fig, (ax, ax1) = new_figure((13, 5.6), 1, 2)
    labels = ("start (PDB)", f"full DCA after {pull['steps']} steps",
              f"adaptive, eps {_log2_label(pull['eps'])}")
    for x, style, label in zip(xs, (dict(color="0.6", lw=1.0), dict(color="C0", lw=1.6),
                                    dict(color="C1", lw=1.0, ls="--")), labels):
        p = (x - c0) @ axes.T
        ax.plot(p[:, 0], p[:, 1], label=label, **style)
    g = (atom_positions(model, pull["q0"])[atoms.body == b] - c0) @ axes.T
    ax.plot(g[:, 0], g[:, 1], "ro", ms=4, label=f"pulled group {pull['body']}")
    d = axes @ pull["force"][1]
    d = d / max(np.linalg.norm(d), 1e-12)
    ax.annotate("", xy=g[0] + 1.0 * d, xytext=g[0],
                arrowprops=dict(arrowstyle="->", color="r", lw=1.5))
    ax.set_aspect("equal")
    ax.set_xlabel("first principal axis of the start [nm]")
    ax.set_ylabel("second principal axis [nm]")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"chain {chain}: CA trace", fontsize=10)
    floor = 1e-9
    for x, style, label in ((xs[1] - xs[0], dict(color="C0", lw=1.6), "full DCA"),
                            (xs[2] - xs[0], dict(color="C1", lw=1.0, ls="--"), labels[2]),
                            (xs[2] - xs[1], dict(color="C3", lw=0.8),
                             "|adaptive - DCA|")):
        ax1.semilogy(seq, np.maximum(np.linalg.norm(x, axis=1), floor), label=label, **style)
    ax1.axvline(cras[anchor].residue.seqid.num, color="r", lw=0.8, ls=":",
                label="pulled residue")
    ax1.set_xlabel(f"residue number in chain {chain}")
    ax1.set_ylabel(f"CA displacement from the start [nm] (floor {floor:g})")
    ax1.legend(fontsize=8, loc="best")
    ax1.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"{Path(model.description['structure']).name}: one force of "
                 f"{np.linalg.norm(pull['force'][1]):g} kJ/mol/nm on {pull['body']}, "
                 f"{pull['steps']} quasi-static steps; adaptive x{pull['speedup']:.0f} faster, "
                 f"{pull['joints']:.0f} of {model.nv} joints per step, e_F {pull['e_f']:.0e}",
                 fontsize=10)
    return save_figure(fig, path, dpi=110)


def format_report(res) -> str:
    """Markdown tables of a :func:`bench_proteins` result."""
    m = res["machine"]
    s = res["structure"]
    lines = [f"machine: {m.get('cpu')} ({m.get('cores')} cores, {m.get('memory_gb')} GB), "
             f"Python {m.get('python')}, numpy {m.get('numpy')}, numba {m.get('numba')}, "
             f"commit {m.get('commit')}, {m.get('date')}, load at start "
             f"{m.get('load_start')}", "",
             f"structure {s['name']}: {s['chains']} chains, {s['residues']} residues, "
             f"{s['atoms']} heavy atoms -> {s['bodies']} bodies, {s['dof']} DOF "
             f"(phi, psi, chi; fixed roots)", ""]
    ld = res["load"]
    lines += ["### (a) load time (load_structure, median of 3)", "",
              markdown_table(["file", "chains", "residues", "atoms", "bodies", "DOF",
                              "load [s]"],
                             [[r["name"], f"{r['chains']}", f"{r['residues']}", f"{r['atoms']}",
                               f"{r['bodies']}", f"{r['dof']}", f"{r['seconds']:.2f}"]
                              for r in ld["rows"]]), ""]
    t1 = res["table1"]
    lines += table1_markdown(t1, f"### (b) RL Table 1 on {t1['name']} ({t1['nv']} DOF): "
                                 f"{t1['steps']} steps per setting, relative joint error")
    lines += ["dt per N_f: " + ", ".join(f"{row['nf']}: {row['dt']:.3g} ps"
                                         for row in t1["rows"]), ""]
    pl = res["placements"]
    lines += [f"### (c) one force, eps {_log2_label(pl['eps'])}, {len(pl['rows'])} "
              f"placements, {pl['steps']} steps each", "",
              markdown_table(["seed", "forced group", "DCA ms/step", "adaptive ms/step",
                              "speed-up", "joints computed", "fraction of DOF",
                              "lower bound", "e_F (e_max)"],
                             [[f"{r['seed']}", r["body"], f"{r['dca_ms']:.2f}",
                               f"{r['ms']:.3f}", f"{r['speedup']:.1f}x",
                               f"{r['joints']:.0f}", f"{100 * r['fraction']:.2f}%",
                               f"{r['lower']}", f"{r['e_f']:.0e} ({r['e_max']:.0e})"]
                              for r in pl["rows"]]), "",
              f"median speed-up {pl['median_speedup']:.1f}x, median fraction of DOF "
              f"computed {100 * pl['median_fraction']:.2f}%", ""]
    pu = res.get("pull")
    if pu:
        lines += [f"### (d) a visible pull: {pu['body']}, {pu['steps']} steps, eps "
                  f"{_log2_label(pu['eps'])}", "",
                  f"full DCA {pu['dca_ms']:.1f} ms/step, adaptive {pu['ms']:.2f} ms/step "
                  f"(x{pu['speedup']:.1f}), {pu['joints']:.0f} joints per step; largest atom "
                  f"displacement (DCA) {pu['moved_nm']:.2f} nm; e_F {pu['e_f']:.0e} (e_max "
                  f"{pu['e_max']:.0e})", ""]
    lines += _targets(res) + ["", f"peak RSS {res['peak_rss_bytes'] / 1e9:.2f} GB; total "
                                  f"{res['total_s']:.0f} s"]
    return "\n".join(lines)


def _targets(res):
    out = []
    big = [r for r in res["load"]["rows"] if r["residues"] >= TARGET_RESIDUES]
    if big:
        r = big[0]
        ok = r["seconds"] < TARGET_LOAD_S
        out.append(f"target: a {TARGET_RESIDUES:,}-residue structure loads in < "
                   f"{TARGET_LOAD_S:g} s: {r['residues']} residues in {r['seconds']:.2f} s: "
                   f"{'met' if ok else 'NOT met'}")
    pl = res["placements"]
    ok = pl["median_speedup"] >= TARGET_SPEEDUP
    out.append(f"target: >= {TARGET_SPEEDUP:g}x on the median of {len(pl['rows'])} one-force "
               f"placements at {_log2_label(pl['eps'])}: x{pl['median_speedup']:.1f}: "
               f"{'met' if ok else 'NOT met'}")
    return out


def bench_proteins(quick=False, steps=None, structure=None, out="docs", *, copies=2,
                   log=print) -> dict:
    """Run (a) load times, (b) RL Table 1, (c) ten one-force placements on ``structure``
    (default :data:`DEFAULT_STRUCTURE` from mdanalysistests); print the Markdown report.

    quick : bool - N_f in {1, 10}, eps in {2^-3, 2^-19}, 3 placements, 5 steps
    steps : int - steps per setting (default 30; quick 5)
    out : folder of the figures ``quasistatics-protein.png`` (time and joints vs eps, as
        RL Fig. 7) and ``quasistatics-protein-pull.png`` (:func:`plot_pull`)

    Returns dict(machine, structure, load, table1, placements, pull, figures,
    peak_rss_bytes, total_s, report).
    """
    from ..io.structure import load_structure

    t0 = time.perf_counter()
    machine = machine_info()
    steps = int(steps) if steps else (5 if quick else 30)
    path = Path(structure) if structure else structure_file()
    _warm_up()
    res = dict(machine=machine)
    res["load"] = bench_load(path, copies, log=log)
    model = load_structure(path, missing_atoms="allow")
    st = model.structure_atoms
    res["structure"] = dict(name=path.name, chains=len(st.structure[0]),
                            residues=residues_of(model), atoms=st.natom, bodies=model.nb,
                            dof=model.nv)
    nf = (1, 10) if quick else NF_TABLE
    eps = (EPS_TABLE[0], EPS_TABLE[-1]) if quick else EPS_TABLE
    res["table1"] = bench_table1(model, path.name, steps, nf_values=nf, eps_values=eps,
                                 log=log)
    res["placements"] = bench_placements(model, steps, placements=3 if quick else PLACEMENTS,
                                         log=log)
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    res["pull"] = bench_pull(model, 40 if quick else 1000, log=log)
    res["figures"] = [plot_molecule(res["table1"], outdir / "quasistatics-protein.png"),
                      plot_pull(model, res["pull"], outdir / "quasistatics-protein-pull.png")]
    return finish_report(res, t0, format_report, log)


HELP = ("adaptive quasi-statics on real proteins (RL Table 1 on the largest mdanalysistests "
        "structure, ten force placements, load time) vs our full DCA")
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench proteins [--quick] [--steps N]
    [--structure PATH] [--copies K]``."""
    parser.description = ("Redon & Lin (2005) Table 1 on a torsion-angle model of a real "
                          "protein (load_structure), ten one-force placements and the load "
                          "time (see docs/results/quasistatics-proteins.md).")
    p = parser
    p.add_argument("--quick", action="store_true", help="fewer settings and steps (seconds)")
    p.add_argument("--steps", type=at_least(1), default=None, metavar="N",
                   help="steps per setting (default 30; quick 5)")
    p.add_argument("--structure", default=None, metavar="PATH",
                   help=f"PDB / mmCIF file (default mdanalysistests' {DEFAULT_STRUCTURE})")
    p.add_argument("--copies", type=at_least(1), default=2, metavar="K",
                   help="copies of the structure in the load-time assembly (default 2)")
    p.add_argument("--out", default="docs", metavar="DIR",
                   help="folder for the PNG figure (default docs)")


def run(args) -> int:
    """Run :func:`bench_proteins` with the options of :func:`add_arguments`; returns 0."""
    bench_proteins(args.quick, args.steps, args.structure, args.out, copies=args.copies)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.proteins [options]``: as ``articulated bench proteins``."""
    return bench_main("proteins", add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
