"""The ``articulated`` command line: ``demo``, ``simulate``, ``view``, ``sweep``, ``bench``.

Run ``articulated --help`` or ``articulated COMMAND --help`` for the options.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

SCENES = ("pendulum", "bicycle_chain", "millipede", "molecule", "humanoid", "crowd",
          "two_link_arm", "random_tree")


def _build_scene(name: str, n: int | None, seed: int):
    """Model and initial configuration of a built-in scene (n: its size parameter)."""
    from . import models

    if name == "pendulum":
        m = models.pendulum(n or 300)
    elif name == "bicycle_chain":
        m = models.bicycle_chain(n or 30, gravity=(0.0, -9.81, 0.0))
    elif name == "millipede":
        m = models.millipede() if n is None else models.millipede(legs=max(1, n // 13),
                                                                   spine=max(1, 3 * (n // 13)))
    elif name == "molecule":
        m = models.molecule(n or 50_000, seed=seed)
    elif name == "humanoid":
        m = models.humanoid()
    elif name == "crowd":
        m, q0 = models.crowd(n or 200, return_configuration=True)
        return m, q0
    elif name == "two_link_arm":
        m = models.two_link_arm()
    elif name == "random_tree":
        m = models.random_tree(n or 50, seed)
    else:  # argparse restricts the choices
        raise ValueError(f"unknown scene {name!r}; expected one of {SCENES}")
    return m, _initial_configuration(m, seed)


def _initial_configuration(model, seed: int):
    """A deterministic non-equilibrium start: the first joint swung by 1.2 rad, every
    other 1-dof joint perturbed by a few degrees."""
    from .model import JOINT_PRISMATIC, JOINT_REVOLUTE

    q = model.neutral()
    rng = np.random.default_rng(seed)
    one_dof = np.flatnonzero(np.isin(model.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC)))
    if one_dof.size:
        q[model.jnt_qadr[one_dof]] = rng.uniform(-0.05, 0.05, one_dof.size)
        if model.jnt_type[one_dof[0]] == JOINT_REVOLUTE:
            q[model.jnt_qadr[one_dof[0]]] = 1.2
    return q


def _tracked_point(model, q, name=None):
    """The point whose path the simulate/demo plot draws: ``(name, body, p)`` with ``p``
    (3,) [m] in the body's coordinates. ``name``: a body, or a frame of ``model.frames``
    (URDF links merged into a body: a tool or sensor frame); None: of the body origins and
    frames, the one farthest from the root's origin (the first body's, or that of the URDF
    root link welded to the world) at configuration ``q``.
    ValueError naming an unknown body or frame."""
    from .algorithms.kinematics import forward_kinematics

    frames = getattr(model, "frames", None) or {}
    if name is not None:
        if name in frames and frames[name][0] >= 0:
            return name, int(frames[name][0]), np.asarray(frames[name][2], dtype=float)
        if name not in model.body_name:
            raise ValueError(f"--body {name!r}: no such body or frame; bodies: "
                             f"{model.body_name[:8]}{' ...' if model.nb > 8 else ''}")
        return name, model.body_id(name), np.zeros(3)
    R, p = forward_kinematics(model, q)
    welded = _world_frames(model)     # a fixed base: the root link's origin, in the world
    root = np.asarray(frames[welded[0]][2], dtype=float) if welded else p[0]
    cands = [(n, b, np.zeros(3)) for b, n in enumerate(model.body_name)]
    cands += [(n, int(b), np.asarray(pf, dtype=float)) for n, (b, _, pf) in frames.items()
              if n not in model.body_name and b >= 0]
    dist = [np.linalg.norm(p[b] + R[b] @ pf - root) for _, b, pf in cands]
    return cands[int(np.argmax(dist))]


def _save_outputs(model, traj, out: Path, title: str, tip=None):
    """Write the trajectory (.npz) and a PNG of the energies, the energy error and the
    path of the ``tip`` point (``(name, body, point)`` of :func:`_tracked_point`; default:
    the farthest from the root) with the body origins at six instants (on the vertical
    plane of largest motion)."""
    import matplotlib

    from .algorithms.kinematics import forward_kinematics, point_position
    from .bench.common import new_figure, save_figure

    out.mkdir(parents=True, exist_ok=True)
    npz = out / "trajectory.npz"
    traj.save(npz)
    tip_name, tip, tip_p = tip or _tracked_point(model, traj.q[0])
    path = np.array([point_position(model, q, tip, tip_p) for q in traj.q])
    snaps = np.unique(np.linspace(0, len(traj) - 1, 6).astype(int))
    shapes = [forward_kinematics(model, traj.q[k])[1] for k in snaps]
    fig, (ax0, ax1, ax2) = new_figure((15, 4.6), 1, 3)
    ax0.plot(traj.t, traj.kinetic, label="kinetic T")
    ax0.plot(traj.t, traj.potential, label="potential V")
    ax0.plot(traj.t, traj.total, "k", lw=2, label="total E = T + V")
    ax0.set_xlabel("t [s]")
    ax0.set_ylabel("energy [J]")
    ax0.set_title("energy")
    ax0.legend(loc="best")
    err = traj.total - traj.total[0]
    ax1.plot(traj.t, err, "k", label="E(t) - E(0)")
    ax1.axhline(0.0, color="0.6", lw=0.8)
    ax1.set_xlabel("t [s]")
    ax1.set_ylabel("energy error [J]")
    scale = max(abs(traj.total[0]), 1e-300)
    ax1.set_title(f"energy error (max |E - E(0)| = {np.abs(err).max():.2e} J, "
                  f"{np.abs(err).max() / scale:.1e} of |E(0)|)", fontsize=10, pad=14)
    ax1.legend(loc="best")
    ax1.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
    # the horizontal axis of largest spread of the body origins, against the vertical
    allp = np.concatenate(shapes + [path])
    h = int(np.argmax(np.ptp(allp[:, :2], axis=0)))
    hname = "xy"[h]
    cmap = matplotlib.colormaps["plasma"]
    for j, (k, p) in enumerate(zip(snaps, shapes)):
        ax2.plot(p[:, h], p[:, 2], "-", lw=1.2, color=cmap(0.85 * j / max(len(snaps) - 1, 1)),
                 label=f"bodies, t = {traj.t[k]:.2f} s")
    ax2.plot(path[:, h], path[:, 2], ":", color="0.35", lw=1.2,
             label=f"path of {tip_name!r}")
    ax2.plot(path[0, h], path[0, 2], "o", color="0.35", ms=5, label=f"{tip_name!r} at t = 0")
    ax2.set_aspect("equal", adjustable="datalim")
    ax2.set_xlabel(f"{hname} [m]")
    ax2.set_ylabel("z [m]")
    ax2.set_title(f"body origins at six instants and the tip path ({hname}-z plane)",
                  fontsize=10)
    ax2.legend(loc="best", fontsize=7)
    fig.suptitle(title)
    return npz, save_figure(fig, out / "trajectory.png", dpi=110)


def _print(console, *args):
    if console is not None:
        # "[articulated demo]" is text, not rich markup; lines are not re-wrapped to the
        # console width (tables and numbers stay on one line each)
        console.print(*args, markup=False, soft_wrap=True)
    else:
        print(*args)


def _console():
    try:
        from rich.console import Console

        return Console()
    except ImportError:  # rich is a dependency; plain print as a fallback
        return None


def _save_animations(model, traj, out: Path, title: str, console):
    """Write the GIF (matplotlib) and the one-file HTML replay (viser, when installed) of a
    trajectory next to its .npz (:mod:`articulated.viewer`)."""
    from .viewer.animation import to_gif

    gif = to_gif(model, traj, out / "trajectory.gif", title=title, max_frames=80, dpi=80)
    _print(console, f"wrote {gif} (animation)")
    try:
        from .viewer.replay import to_html

        html = to_html(model, traj, out / "trajectory.html")
        _print(console, f"wrote {html} (3D replay: open it in a browser)")
    except ImportError as e:
        _print(console, f"no HTML replay: {e}")


def _simulate(model, q0, args, title, console, animate=False, contacts=None, tip=None,
              forces=()):
    sim = simulator(model, q0, args, contacts, forces)
    record_every = args.record_every or max(1, args.steps // 400)
    checkpoint = getattr(args, "checkpoint", None)
    traj = sim.run(args.steps, record_every=record_every, checkpoint=checkpoint,
                   checkpoint_every=getattr(args, "checkpoint_every", None) if checkpoint
                   else None)
    steps_per_s = args.steps / traj.wall_time if traj.wall_time > 0 else float("inf")
    _print(console, f"simulated {args.steps} steps of {args.dt:g} s ({args.steps * args.dt:g} s) "
                    f"with {args.integrator}/{args.method} in {traj.wall_time:.2f} s: "
                    f"{steps_per_s:,.0f} steps/s, {traj.nfev} dynamics evaluations")
    drift = traj.total.max() - traj.total.min()
    _print(console, f"energy: start {traj.total[0]:.6g} J, drift {drift:.3e} J "
                    f"({drift / max(1e-300, abs(traj.total[0])):.2e} relative)")
    if contacts is not None:
        c = traj.contacts
        _print(console, f"contacts: {int(c['n'][-1])} at the end, deepest penetration "
                        f"{c['max_depth'].max() * 1e3:.2f} mm over the run")
    npz, png = _save_outputs(model, traj, Path(args.out), title, tip)
    _print(console, f"wrote {npz} and {png}")
    if getattr(args, "gif", None):
        from .viewer.animation import to_gif

        _print(console, f"wrote {to_gif(model, traj, args.gif, title=title)} (animation)")
    if getattr(args, "html", None):
        from .viewer.replay import to_html

        _print(console, f"wrote {to_html(model, traj, args.html)} (3D replay)")
    if animate:
        _save_animations(model, traj, Path(args.out), title, console)
    return traj


def simulator(model, q0, args, contacts=None, forces=()):
    """The :class:`~articulated.Simulator` of ``articulated simulate``.

    ``model`` from ``q0`` (nq,) with ``args.dt`` [s], ``args.integrator``, ``args.method``,
    the contacts (a :class:`~articulated.geometry.CollisionModel` or None) and the applied
    ``forces``; with contacts no energy-drift watch (contact dissipates energy).
    """
    from .simulation import Simulator

    return Simulator(model, args.dt, integrator=args.integrator, method=args.method, q0=q0,
                     contacts=contacts, forces=forces,
                     **({} if contacts is None else {"energy_drift": None}))


def _precompile(console, subsystems):
    """On a cold cache, compile the kernels of ``subsystems`` in one process per CPU before
    anything is timed (:func:`articulated.precompile.precompile`); else nothing."""
    from .precompile import cold_kernels, precompile

    cold = len(cold_kernels())
    if not cold:
        return
    _print(console, f"[articulated demo] first run: compiling {cold} kernels "
                    f"({', '.join(subsystems)}) in parallel processes, cached for later runs:")
    report = lambda name, seconds, kernels: _print(
        console, f"  {name:<17}{seconds:7.1f} s  {kernels:4d} kernels")
    _, seconds = precompile(subsystems, progress=report)
    _print(console, f"  compiled in {seconds:.1f} s")


def cmd_demo(args) -> int:
    """Simulate the 300-link pendulum, compare against the installed peers, write outputs;
    then adaptive dynamics on the pendulum and a crowd, adaptive quasi-statics on a molecule,
    adaptive contact on a dropped chain (each part skipped when its size option is 0)."""
    from . import models
    from .bench.fd import peer_timings

    console = _console()
    t0 = time.perf_counter()
    _precompile(console, [name for name, used in (
        ("adaptive-contact", args.chain), ("contact", args.chain),
        ("adaptive", args.ad_steps or args.crowd),
        ("quasistatics", args.molecule or args.protein != "none"), ("simulation", True))
        if used])
    model = models.pendulum(args.n)
    q0 = _initial_configuration(model, 0)
    _print(console, f"[articulated demo] files go to {Path(args.out).resolve()} (--out DIR)")
    _print(console, f"[articulated demo] {args.n}-link 3D pendulum "
                    f"(Redon, Galoppo & Lin 2005, sec. 7.1): {model}")
    rows = peer_timings(model, q0, repeats=args.repeats)
    _print(console, "forward dynamics, one call (median of repeats [ms], this machine, same run):")
    ours = rows[0][1]
    for name, seconds, note in rows:
        if seconds is None:
            _print(console, f"  {name:<28} n/a ({note})")
        else:
            _print(console, f"  {name:<28} {seconds * 1e3:9.4f} ms  {seconds / model.nv * 1e9:7.1f} ns/DOF"
                            f"  x{seconds / ours:5.2f} our time")
    _simulate(model, q0, args, f"articulated demo: {args.n}-link pendulum, "
                                f"{args.integrator}, dt = {args.dt:g} s", console, animate=True)
    if args.ad_steps or args.crowd:
        from .bench.adaptive_runs import warm_up

        warm_up()         # compile (or load) every adaptive kernel before any timing
    if args.ad_steps:
        _demo_adaptive_pendulum(console, args.n, args.ad_steps)
    if args.crowd:
        _demo_adaptive_crowd(console, args.crowd, args.crowd_steps)
    if args.molecule:
        _demo_quasistatics(console, args.molecule, args.qs_steps)
    if args.chain:
        _demo_contact(console, args.chain, args.contact_steps)
    if args.protein != "none":
        _demo_protein(console, args.protein, args.protein_steps, Path(args.out))
    _print(console, f"total {time.perf_counter() - t0:.1f} s")
    return 0


AD_HEADER = (f"  {'':<22}{'ms/step':>9}{'hybrid':>9}{'update':>9}{'vs DCA':>8}"
             f"{'active/budget':>15}")
"""Column heads of the adaptive-dynamics tables of the demo: amortized mean ms per step,
median ms of the hybrid steps and of the active-region updates (every time the demo prints
is in ms), DCA time / this time, most
active joints over the timed steps / joint budget."""


def _ad_row(label, mean, dca, active, budget, hybrid=None, update=None):
    """One row of an adaptive-dynamics table (times in s; see :data:`AD_HEADER`)."""
    ms = lambda x: f"{'-':>9}" if x is None else f"{x * 1e3:9.4f}"
    return (f"  {label:<22}{ms(mean)}{ms(hybrid)}{ms(update)}{f'x{dca / mean:.2f}':>8}"
            f"{f'{active}/{budget}':>15}")


def _demo_adaptive_pendulum(console, n, steps, na_values=(1, 50)):
    """Adaptive dynamics (Redon, Galoppo & Lin 2005, Sec. 7.2, Table 1 with N_F = 1) on
    ``pendulum(n)`` against the full DCA: same start (:func:`articulated.bench.adaptive_runs.initial_state`),
    one 0.05 N force on the last link, semi-implicit Euler with dt = 1 ms, active-region
    update every 20 steps with ``max_active = max_update = N_A``; ``steps + 1`` steps each,
    the first (JIT cache load; for the adaptive runs the update from the fully articulated
    body) left out. Prints the amortized mean time per step (mean over all timed steps,
    region updates included), the medians of the hybrid steps and of the region updates,
    the DCA's mean time over it, and the most active joints of any timed step next to
    N_A."""
    from . import models
    from .bench.adaptive_runs import (UPDATE_EVERY, adaptive_simulator, initial_state,
                                      reference_run, split_times, spread_forces)

    model = models.pendulum(n)
    q0 = initial_state(model)
    _print(console, f"[articulated demo] adaptive dynamics (Redon, Galoppo & Lin 2005) on the "
                    f"{n}-link pendulum: one force on the tip link, region update every "
                    f"{UPDATE_EVERY} steps (N_U = N_A), {steps} steps after a warm-up step; "
                    f"ms/step: mean of all steps, updates included; hybrid, update: median ms "
                    f"of those steps; vs DCA: the DCA's ms/step over this one (> 1: faster):")
    _, _, wd = reference_run(model, q0, np.zeros(model.nv), spread_forces(model, 1), steps + 1,
                             "dca")
    dca = float(wd[1:].mean())
    _print(console, AD_HEADER)
    _print(console, _ad_row("full DCA", dca, dca, model.nb, model.nb))
    for na in sorted({min(int(v), n) for v in na_values}):
        sim = adaptive_simulator(model, q0, na, spread_forces(model, 1), update_every=UPDATE_EVERY)
        tr = sim.run(steps + 1)
        c = split_times(tr.wall[1:], UPDATE_EVERY, first_step=1)
        _print(console, _ad_row(f"adaptive N_A={na}", c["mean"], dca, int(tr.active[2:].max()),
                                na, c["hybrid"], c["update"]))


def _demo_adaptive_crowd(console, k, steps, n_push=10, fraction=0.1):
    """Adaptive dynamics on ``crowd(k)`` (RGL Fig. 1, smaller): free-falling humanoids,
    ``n_push`` of them pushed (:func:`articulated.bench.crowd.crowd_forces`), one joint budget per
    character decreasing with its distance to the benchmark's camera point
    (:func:`articulated.bench.crowd.camera_point`, :func:`~articulated.bench.crowd.distance_budgets`:
    ``fraction`` of the joints in all), ``max_update`` a tenth of the total budget
    (:func:`~articulated.bench.crowd.crowd_update`), region update every 20 steps; against the full DCA, ``steps + 1`` steps each, the first left out.
    Prints the table of :func:`_demo_adaptive_pendulum` and, for the nearest and the
    farthest character, the most active joints of any active region of the run next to the
    budget (and whether every character kept within its budget)."""
    from . import models
    from .bench.adaptive_runs import UPDATE_EVERY, adaptive_simulator, reference_run, split_times
    from .bench.crowd import (camera_point, crowd_forces, crowd_update, distance_budgets,
                              tree_of_bodies)

    model, q0 = models.crowd(k, return_configuration=True)
    roots = np.flatnonzero(model.body_parent < 0)
    camera = camera_point(model, q0)
    tree = tree_of_bodies(model)
    pos = q0[model.jnt_qadr[roots][:, None] + np.arange(3)]     # free joints: position first
    dist = np.linalg.norm(pos - camera, axis=1)
    budgets = distance_budgets(dist, round(fraction * model.nb),
                               np.bincount(tree, minlength=roots.size))
    total = int(budgets.sum())
    forces = lambda: crowd_forces(model, k, n_push)
    _print(console, f"[articulated demo] adaptive dynamics on a crowd of {k} humanoids (RGL "
                    f"2005, Fig. 1): {model.nb:,} bodies, {model.nv:,} DOF, "
                    f"{len(forces())} pushed, {steps} steps after a warm-up step; joint "
                    f"budget per character by distance to a camera at ({camera[0]:.1f}, "
                    f"{camera[1]:.1f}, {camera[2]:.1f}) m: {budgets.max()} (nearest) to "
                    f"{budgets.min()} (farthest), {total} in all "
                    f"({100.0 * total / model.nb:.1f}% of the joints):")
    _, _, wd = reference_run(model, q0, np.zeros(model.nv), forces(), steps + 1, "dca")
    dca = float(wd[1:].mean())
    sim = adaptive_simulator(model, q0, budgets, forces(), n_update=crowd_update(budgets),
                    update_every=UPDATE_EVERY)
    per = np.zeros(roots.size, dtype=np.int64)   # most active joints of each character
    wall, active = [], []
    while sum(w.size for w in wall) < steps + 1:   # one region update per chunk, at its start
        tr = sim.run(min(UPDATE_EVERY, steps + 1 - sum(w.size for w in wall)))
        wall.append(tr.wall)
        active.append(tr.active[1:])
        per = np.maximum(per, np.bincount(tree[sim.active], minlength=roots.size))
    wall, active = np.concatenate(wall), np.concatenate(active)
    c = split_times(wall[1:], UPDATE_EVERY, first_step=1)
    _print(console, AD_HEADER)
    _print(console, _ad_row("full DCA", dca, dca, model.nb, model.nb))
    _print(console, _ad_row("adaptive, by camera", c["mean"], dca, int(active[1:].max()),
                            total, c["hybrid"], c["update"]))
    near, far = int(np.argmin(dist)), int(np.argmax(dist))
    ok = "all within" if np.all(per <= budgets) else "NOT all within"
    _print(console, f"  per character, max active/budget: nearest {per[near]}/{budgets[near]}, "
                    f"farthest {per[far]}/{budgets[far]} ({ok})")


def _demo_quasistatics(console, n, steps, eps_max=2.0 ** -19):
    """Adaptive quasi-statics against the full DCA on the molecule (Redon & Lin 2005,
    Sec. 6.3): same start, same force, same steps; time per step, joints computed and the
    relative displacement error of RL Sec. 6.4, ``max_i |d_i(eps) - d_i| / max_i |d_i|``
    with ``d_i`` the displacement of body i's centre of mass over the run (``d_i`` by the
    DCA)."""
    from . import models
    from .algorithms.kinematics import forward_kinematics
    from .simulation import PointForce, Simulator

    mol = models.molecule(n, gravity=(0.0, 0.0, 0.0))
    q0 = mol.random_configuration(np.random.default_rng(0))
    force = PointForce(int(np.random.default_rng(1).integers(n)), (0.0, 0.0, 1.0))
    _print(console, f"[articulated demo] error-bounded adaptive quasi-statics (Redon & Lin "
                    f"2005) on a {n:,}-atom molecule, one force, eps_max = 2^-19 "
                    f"(relative joint error), {steps} steps:")
    runs = {}
    for method in ("quasistatic", "quasistatic-adaptive"):
        sim = Simulator(mol, 1e-3, method=method, eps_max=eps_max, q0=q0, forces=[force])
        sim.step()                                   # first call: JIT cache load, set-up
        runs[method] = (sim, sim.run(steps))
    (full, tf), (ad, ta) = runs["quasistatic"], runs["quasistatic-adaptive"]
    def com(q):
        R, p = forward_kinematics(mol, q)
        return p + np.einsum("bij,bj->bi", R, mol.body_com)

    c0, cf, ca = com(q0), com(full.q), com(ad.q)
    disp = (np.linalg.norm(ca - cf, axis=1).max()
            / max(np.linalg.norm(cf - c0, axis=1).max(), 1e-300))
    t_full, t_ad = np.median(tf.wall), np.median(ta.wall)
    _print(console, f"  full DCA               {t_full * 1e3:9.2f} ms/step  {mol.nb:,} joints")
    _print(console, f"  adaptive (eps 2^-19)   {t_ad * 1e3:9.2f} ms/step  "
                    f"{ta.joints.mean():,.0f} joints (mean), x{t_full / t_ad:.1f} faster, "
                    f"relative displacement error {disp:.1e}")


def _demo_protein(console, structure, steps, out, eps_max=2.0 ** -19):
    """Pull one atom of a real protein (torsion-angle model, :func:`articulated.load_structure`)
    with adaptive quasi-statics (Redon & Lin 2005) next to the full DCA: same start, force
    and steps; time per step, joints computed, speed-up, and the final configuration written
    as a PDB (``out/protein-final.pdb``). ``structure``: a PDB / mmCIF path, or ``"auto"``:
    3KPR from the ``mdanalysistests`` package (the ``molecules`` extra; skipped without it)."""
    from .bench.proteins import structure_file
    from .bench.quasistatics import initial_solution, step_dt
    from .io.structure import load_structure
    from .pdb import write_pdb
    from .simulation import PointForce, Simulator

    try:
        path = structure_file() if structure == "auto" else Path(structure)
        model = load_structure(path, missing_atoms="allow")
    except (ValueError, ImportError) as e:
        _print(console, f"[articulated demo] real protein skipped: {e}")
        return
    atoms = model.structure_atoms
    q0 = model.neutral()
    rng = np.random.default_rng(3)
    moving = np.flatnonzero(model.jnt_type[atoms.body] != 0)   # atoms on a moving group
    k = int(moving[rng.integers(moving.size)])
    cra = list(atoms.structure[0].all())[k]
    body = int(atoms.body[k])
    d = rng.normal(size=3)
    force = PointForce(body, 10.0 * d / np.linalg.norm(d), point=atoms.local[k])
    qdd0 = initial_solution(model, q0, [(body, force.force, atoms.local[k])], repeats=1)[0]
    dt = step_dt(qdd0, 1e-2)
    _print(console, f"[articulated demo] adaptive quasi-statics on a real protein: {path.name}, "
                    f"{len(atoms.structure[0])} chains, {model.nv:,} torsions (phi, psi, chi); "
                    f"pulling atom {cra.chain.name}:{cra.residue.name}:{cra.residue.seqid.num}:"
                    f"{cra.atom.name} with 10 kJ/mol/nm, eps_max = 2^-19, {steps} steps:")
    runs = {}
    for method in ("quasistatic", "quasistatic-adaptive"):
        sim = Simulator(model, dt, method=method, eps_max=eps_max, q0=q0, forces=[force])
        sim.step()                                   # first call: JIT cache load, set-up
        runs[method] = (sim, sim.run(steps))
    (full, tf), (ad, ta) = runs["quasistatic"], runs["quasistatic-adaptive"]
    t_full, t_ad = np.median(tf.wall), np.median(ta.wall)
    out.mkdir(parents=True, exist_ok=True)
    pdb = write_pdb(model, ad.q, out / "protein-final.pdb")
    _print(console, f"  full DCA               {t_full * 1e3:9.2f} ms/step  {model.nv:,} joints")
    _print(console, f"  adaptive (eps 2^-19)   {t_ad * 1e3:9.2f} ms/step  "
                    f"{ta.joints.mean():,.0f} joints (mean), x{t_full / t_ad:.1f} faster; "
                    f"largest torsion change {np.abs(ad.q - q0).max():.2f} rad (DCA "
                    f"{np.abs(full.q - q0).max():.2f}); final structure: {pdb}")


def cmd_simulate(args) -> int:
    console = _console()
    geom = None
    forces = ()
    urdf, srdf = args.urdf, args.srdf
    if args.robot:
        from .robots import path, srdf_path

        if urdf:
            raise ValueError("give --robot NAME or --urdf PATH, not both")
        urdf = path(args.robot)
        srdf = srdf or srdf_path(args.robot)
    if not urdf:
        for flag in ("floor", "self_collision", "hold_pose", "srdf"):
            if getattr(args, flag):
                raise ValueError(f"--{flag.replace('_', '-')} needs --urdf or --robot (the "
                                 f"built-in scenes have no collision shapes)")
    if args.self_collision and not args.floor:
        raise ValueError("--self-collision needs --floor (contact is off without it)")
    if urdf:
        asked = (args.integrator, args.method)
        model, q0, geom, forces = robot_scene(urdf, srdf, args)
        if (args.integrator, args.method) != asked:
            _print(console, f"--floor: contact impulses step with semi_implicit_euler "
                            f"and aba (not {asked[0]}/{asked[1]})")
        title = f"{Path(urdf).name}: {args.integrator}, dt = {args.dt:g} s"
    elif args.scene:
        model, q0 = _build_scene(args.scene, args.n, args.seed)
        title = f"{args.scene}: {args.integrator}, dt = {args.dt:g} s"
    else:
        print("articulated simulate: give a SCENE, --urdf PATH or --robot NAME", file=sys.stderr)
        return 2
    tip = _tracked_point(model, q0, args.body)
    _print(console, f"{model}")
    if urdf:
        for line in _describe_robot(model, geom, args.self_collision):
            _print(console, line)
        if forces:
            _print(console, f"holding the pose {args.hold_pose!r} with a PD controller on "
                            f"{len(forces[0].joints)} joints (kp up to "
                            f"{forces[0].kp.max():.3g} N m/rad, kd up to "
                            f"{forces[0].kd.max():.3g} N m s/rad)")
    _print(console, f"plotted point: {tip[0]!r} (--body NAME picks another body or frame)")
    _simulate(model, q0, args, title, console, contacts=geom, tip=tip, forces=forces)
    return 0


def robot_scene(urdf, srdf, args):
    """The robot of ``articulated simulate --urdf``: ``(model, q0, geom, forces)``.

    Parameters
    ----------
    urdf, srdf : path-like; srdf may be None
        The robot's URDF and SRDF files.
    args : argparse.Namespace
        The options of ``simulate``: ``floating_base``, ``floor``, ``self_collision``,
        ``hold_pose`` (None or a pose of :func:`_pose`), ``seed``.

    The URDF is loaded with ``repair="inertia"`` (:func:`~articulated.io.urdf.load_urdf`):
    a massless moving link or an inertia no body can have gets the smallest physical one
    (what MuJoCo's ``boundmass``, ``boundinertia`` and ``balanceinertia`` do), named by
    :func:`_describe_robot`, so that a robot from the wild runs; the Python API refuses
    them unless asked.

    Returns the model (collision shapes loaded with ``floor``), the start configuration q0
    (nq,) (the pose held, else :func:`_initial_configuration`), the
    :class:`~articulated.geometry.CollisionModel` with its floor
    (:func:`~articulated.robots.floor_contacts`; None without ``floor``) and the applied
    forces (the :func:`~articulated.robots.hold_pose` controller, or none). With ``floor``
    it sets ``args.integrator`` and ``args.method`` to ``semi_implicit_euler`` and ``aba``
    (contact impulses step with them).
    """
    from .io.urdf import load_urdf
    from .robots import floor_contacts, hold_pose

    with warnings.catch_warnings():     # _describe_robot names the repairs
        warnings.filterwarnings("ignore", message=r".*repair='inertia' changed")
        model = load_urdf(urdf, floating_base=args.floating_base, collision=args.floor,
                          repair="inertia")
    q0 = _initial_configuration(model, args.seed)
    forces = ()
    if args.hold_pose is not None:
        q0 = _pose(model, args.hold_pose, srdf)
        forces = (hold_pose(model, q0, dt=args.dt),)
    geom = None
    if args.floor:
        geom = floor_contacts(model, q0, self_collision=args.self_collision, srdf=srdf)
        args.integrator, args.method = "semi_implicit_euler", "aba"
    return model, q0, geom, forces


def _pose(model, text, srdf):
    """The configuration of ``--hold-pose``: ``neutral`` (every joint at 0, a floating base
    at the origin), the name of an SRDF ``<group_state>``, or comma-separated values [rad,
    m] of the revolute and prismatic joints in joint order."""
    from .model import JOINT_PRISMATIC, JOINT_REVOLUTE
    from .robots import named_pose

    q = model.neutral()
    if text == "neutral":
        return q
    one_dof = np.flatnonzero(np.isin(model.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC)))
    try:
        vals = [float(x) for x in text.split(",")]
    except ValueError:
        if srdf is None:
            raise ValueError(f"--hold-pose {text!r}: a named pose needs an SRDF (--srdf PATH, "
                             f"or --robot NAME of example-robot-data)") from None
        return named_pose(model, srdf, text, q)
    if len(vals) != len(one_dof):
        raise ValueError(f"--hold-pose: {len(vals)} values for {len(one_dof)} revolute and "
                         f"prismatic joints")
    q[model.jnt_qadr[one_dof]] = vals
    return q


def _describe_robot(model, geom=None, self_collision=False):
    """Lines naming what ``articulated simulate --urdf`` simulates: the root link and how the
    robot is attached to the world, the total mass, the moving joints with their types, the
    contact model."""
    from .model import JOINT_TYPE_NAMES

    kind = lambda j: JOINT_TYPE_NAMES[model.jnt_type[j]]
    welded = _world_frames(model)
    roots = [b for b in range(model.nb) if model.body_parent[b] < 0]
    on_world = ", ".join(f"{model.body_name[b]!r} ({kind(b)} joint {model.joint_name[b]!r})"
                         for b in roots)
    if welded:
        yield (f"root link {welded[0]!r}: fixed to the world; moving on it: {on_world}; total "
               f"mass {model.total_mass:.4g} kg (links welded to the world not counted)")
    else:
        yield f"root link: {on_world}; total mass {model.total_mass:.4g} kg"
    repairs = getattr(model, "urdf_repairs", None) or {}
    if repairs:
        shown = "; ".join(f"{n!r}: {c}" for n, c in list(repairs.items())[:3])
        yield (f"inertias the URDF gives but no body can have, repaired as load_urdf(..., "
               f"repair='inertia') does ({len(repairs)} bodies): {shown}"
               + ("; ..." if len(repairs) > 3 else ""))
    moving = [j for j in range(model.nb) if model.jnt_nv[j] > 0]
    yield (f"joints ({len(moving)} moving, {model.nb} bodies, nq = {model.nq}, nv = "
           f"{model.nv}): " + ", ".join(f"{model.joint_name[j]} ({kind(j)})" for j in moving))
    yield ("contact: none (a floating base free-falls; --floor adds a ground plane)"
           if geom is None else
           f"contact: {geom!r}, a ground plane below the robot, self-collision "
           + ("on" if self_collision else "off (--self-collision turns it on)"))


def _world_frames(model):
    """Names of the URDF links welded to the world (``model.frames`` entries on body -1),
    the root link first."""
    return [n for n, (b, _, _) in (getattr(model, "frames", None) or {}).items() if b < 0]


def _parse_value(text: str):
    """A command-line parameter value: an int, a float, JSON (true, null, [1, 2]), or the
    string itself."""
    import json

    for conv in (int, float, json.loads):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _parse_assignments(items, multi):
    """``["name=v1,v2", ...]`` -> ``{name: [v1, v2]}`` (``multi``) or ``{name: v}``;
    ValueError naming a malformed item."""
    out = {}
    for item in items or ():
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise ValueError(f"expected NAME=VALUE{',VALUE...' if multi else ''}, got {item!r}")
        out[name] = ([_parse_value(v) for v in values.split(",")] if multi
                     else _parse_value(values))
    return out


def cmd_sweep(args) -> int:
    """``articulated sweep SCENE --param name=v1,v2 ...``: one run per point of the grid
    (the Cartesian product of the --param lists) on Dask; the store's index is printed."""
    from .sweep import SceneSimulation, dask_client, sweep

    grid = _parse_assignments(args.param, multi=True)
    fixed = _parse_assignments(args.set, multi=False)
    fixed.setdefault("dt", args.dt)
    if not grid:
        raise ValueError("give at least one --param NAME=V1,V2,...")
    make = SceneSimulation(args.scene, **fixed)
    with dask_client(args.scheduler, workers=args.workers) as client:
        res = sweep(make, grid, steps=args.steps, record_every=args.record_every,
                    client=client, store=args.out, progress=sys.stdout.isatty())
    from .bench.common import markdown_table

    names = list(grid)
    print(markdown_table(["run", "status", "wall s", "steps"] + names,
                         [[r["run"], r["status"], f"{r['wall_s']:.2f}", r["steps"]]
                          + [r["params"][n] for n in names] for r in res.rows]))
    c = res.counts()
    print(f"{len(res.rows)} runs ({len(res.ran)} run now): {c['ok']} ok, {c['diverged']} "
          f"diverged, {c['error']} failed; store {res.store}/index.csv")
    return 0 if c["error"] == 0 else 1


def _bench_modules():
    """name -> module of every benchmark (:data:`articulated.bench.BENCHMARKS`)."""
    import importlib

    from .bench import BENCHMARKS

    return {name: importlib.import_module(f".bench.{name.replace('-', '_')}", __package__)
            for name in BENCHMARKS}


BENCHES = {name: (module.run, module.HELP) for name, module in _bench_modules().items()}
"""Benchmarks of ``articulated bench NAME [options]``: name -> (runner(args) -> exit code,
one-line help). Each benchmark module declares its options (``add_arguments(parser)``),
which become the options of its subcommand."""


def _view_model(args, traj):
    """The model of ``articulated view``: ``--scene``/``--urdf`` when given, else rebuilt
    from the trajectory file's description (``traj.build_model()``)."""
    if args.scene or args.urdf:
        if args.urdf:
            from .io.urdf import load_urdf

            model = load_urdf(args.urdf, floating_base=args.floating_base)
        else:
            model = _build_scene(args.scene, args.n, 0)[0]
    else:
        build = getattr(traj, "build_model", None)
        try:
            if build is None:
                raise ValueError("it has no model description")
            model = build()
            if model is None:
                raise ValueError("it has no model description")
        except (ValueError, KeyError, TypeError, AttributeError, FileNotFoundError) as e:
            raise ValueError(f"{args.path}: cannot rebuild the model from the file ({e}); "
                             f"name it with --scene NAME [--n N] or --urdf PATH") from None
    if traj.q.ndim != 2 or traj.q.shape[1] != model.nq:
        raise ValueError(f"{args.path}: configurations of size {traj.q.shape[-1]} do not fit "
                         f"the model ({model.nq} coordinates): wrong --scene/--n/--urdf?")
    return model


def cmd_view(args) -> int:
    """Show a saved trajectory: live viewer (viser), or write its HTML replay / GIF."""
    from .simulation.trajectory import Trajectory

    if not Path(args.path).is_file():
        raise FileNotFoundError(f"no such trajectory file: {args.path}")
    traj = Trajectory.load(args.path)
    model = _view_model(args, traj)
    if args.html:
        from .viewer.replay import to_html

        print(f"wrote {to_html(model, traj, args.html)}")
    if args.gif:
        from .viewer.animation import to_gif

        print(f"wrote {to_gif(model, traj, args.gif)}")
    if not (args.html or args.gif):
        from .viewer.live import view

        view(model, traj, host=args.host, port=args.port, block=True)
    return 0


def cmd_compile(args) -> int:
    """Warm the numba cache (:func:`articulated.precompile.precompile`) or profile the
    compile of each subsystem (:func:`articulated.precompile.profile`)."""
    from tabulate import tabulate

    from .precompile import precompile, profile

    console = _console()
    if args.profile:
        result = profile(args.subsystems)
        rows = [(n, f"{r['seconds']:.1f}", f"{r['compile']:.1f}", f"{r['cache_mb']:.1f}",
                 r["versions"], len(r["kernels"])) for n, r in result.items()]
        _print(console, tabulate(rows, headers=("subsystem", "cold s", "compile s", "cache MB",
                                                "versions", "functions")))
        for n, r in result.items():
            top = sorted(r["kernels"].items(), key=lambda kv: -kv[1][0])[:args.top]
            _print(console, f"\n{n}: the {len(top)} longest compiles (own time, callees left out)")
            _print(console, tabulate([(k, f"{s:.2f}", v) for k, (s, v) in top],
                                     headers=("function", "own s", "versions")))
        return 0
    report = lambda name, seconds, kernels: _print(
        console, f"  {name:<17}{seconds:7.1f} s  {kernels:4d} kernels compiled")
    _print(console, "[articulated compile] warming numba's cache "
                    f"({', '.join(args.subsystems) or 'all subsystems'}):")
    kernels, seconds = precompile(args.subsystems, jobs=args.jobs, progress=report)
    _print(console, f"compiled {kernels} kernels in {seconds:.1f} s")
    return 0


def cmd_bench(args) -> int:
    return int(args.bench_run(args) or 0)


def _add_sim_options(p, steps, dt, out, files="trajectory.npz and trajectory.png"):
    p.add_argument("--steps", type=int, default=steps, help=f"number of time steps (default {steps})")
    p.add_argument("--dt", type=float, default=dt, help=f"time step [s] (default {dt:g})")
    p.add_argument("--integrator", default="rk4",
                   choices=("euler", "semi_implicit_euler", "rk4", "rk45"),
                   help="time integrator (default rk4; rk45 is adaptive, scipy)")
    p.add_argument("--method", default="aba", choices=("aba", "aba_modified", "crba", "dca"),
                   help="forward-dynamics algorithm (default aba; dca: Featherstone's "
                        "divide-and-conquer algorithm on a balanced assembly tree)")
    p.add_argument("--record-every", type=int, default=None,
                   help="record every k-th step (default: about 400 records)")
    p.add_argument("--out", default=out, metavar="DIR",
                   help=f"output folder for {files} (default {out}, created)")


def _demo_contact(console, n, steps, na=60):
    """Adaptive contact (Gayle, Lin & Manocha 2006) on the capsule chain of ``articulated
    bench contact`` (:func:`articulated.bench.contact.capsule_chain`: free base, ``n``
    capsules, mu 0.5, self-collision on) dropped flat from 0.3 m onto a plane: adaptive
    dynamics with ``N_A = na`` active joints, ``steps`` steps of 1 ms; next to MuJoCo's
    ``mj_step`` on the same model (:func:`articulated.interop.to_mujoco`) when MuJoCo is
    installed. Prints the median time of a whole step in flight (first tenth of the run)
    and at rest (last quarter), the contacts at rest, the largest depth and the height the
    chain comes to rest at."""
    from .bench.contact import H, capsule_chain, run_mujoco, warm_up
    from .simulation import Simulator

    m, geom, q0 = capsule_chain(n)
    na = min(na, n - 1)
    _print(console, f"[articulated demo] adaptive contact (Gayle, Lin & Manocha 2006): a chain "
                    f"of {n} capsules ({m.nv} DOF, self-collision on) dropped flat from 0.3 m "
                    f"onto a plane, N_A = {na}, {steps} steps of {H * 1e3:g} ms; ms per whole "
                    f"step, median:")
    warm_up()  # compile (or load) the contact kernels before any timing
    tr = Simulator(m, H, method="adaptive", max_active=na, update_every=10, contacts=geom,
                   q0=q0).run(steps)
    fly, rest = slice(0, max(1, steps // 10)), slice(int(0.75 * steps), steps)
    c = tr.contacts
    ours = (np.median(tr.wall[fly]), np.median(tr.wall[rest]))
    head = f"  {'':<24}{'in flight':>10}{'at rest':>10}{'contacts':>10}{'max depth':>12}{'rest z':>9}"
    _print(console, head)
    _print(console, f"  {f'articulated N_A={na}':<24}{ours[0] * 1e3:10.3f}{ours[1] * 1e3:10.3f}"
                    f"{int(c['n'][-1]):10d}{c['max_depth'].max() * 1e3:9.3f} mm"
                    f"{tr.q[-1, 2]:9.4f}")
    try:
        import mujoco  # noqa: F401 (the test extra)
    except ImportError:
        _print(console, "  MuJoCo                  n/a (pip install mujoco)")
        return
    mj = run_mujoco(m, geom, q0, steps)
    theirs = (np.median(mj["t"][fly]), np.median(mj["t"][rest]))
    _print(console, f"  {'MuJoCo mj_step':<24}{theirs[0] * 1e3:10.3f}{theirs[1] * 1e3:10.3f}"
                    f"{mj['ncon']:10d}{mj['depth'].max() * 1e3:9.3f} mm{mj['z'][-1]:9.4f}")
    _print(console, f"  MuJoCo's time / ours: x{theirs[0] / ours[0]:.2f} in flight, "
                    f"x{theirs[1] / ours[1]:.2f} at rest")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="articulated",
        description="Simulate large articulated bodies with linear-time dynamics "
                    "(ABA, CRBA, RNEA) and compare against Pinocchio and MuJoCo.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"articulated {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("demo", help="simulate the 300-link pendulum, print speed against the "
                                    "installed peers, write trajectory.npz, .png, .gif and .html, "
                                    "run adaptive dynamics and adaptive quasi-statics",
                       description="The main job: simulate the 300-link pendulum of Redon, "
                                   "Galoppo & Lin (2005), time one forward-dynamics call against "
                                   "Pinocchio and MuJoCo when installed, and write the "
                                   "trajectory (.npz), a plot of energy and tip path (.png), an "
                                   "animation (.gif) and a one-file 3D replay (.html); "
                                   "then run adaptive dynamics (Redon, Galoppo & Lin 2005) on "
                                   "the pendulum and on a humanoid crowd, error-bounded "
                                   "adaptive quasi-statics (Redon & Lin 2005) on a molecule, "
                                   "each next to the full DCA, and adaptive contact (Gayle, "
                                   "Lin & Manocha 2006) on a chain dropped onto a plane, next "
                                   "to MuJoCo.")
    p.add_argument("--n", type=int, default=300, help="number of links (default 300)")
    p.add_argument("--repeats", type=int, default=200, help="timing repeats (default 200)")
    p.add_argument("--molecule", type=int, default=50_000,
                   help="atoms of the molecule for the adaptive quasi-statics part "
                        "(default 50000; 0 skips it)")
    p.add_argument("--qs-steps", type=int, default=10,
                   help="quasi-static steps per method (default 10)")
    p.add_argument("--ad-steps", type=int, default=200,
                   help="adaptive-dynamics steps on the pendulum per run, N_A = 1, 50 and "
                        "the full DCA (default 200; 0 skips it)")
    p.add_argument("--crowd", type=int, default=20,
                   help="characters of the humanoid crowd for the adaptive-dynamics part "
                        "(default 20; 0 skips it)")
    p.add_argument("--crowd-steps", type=int, default=50,
                   help="adaptive-dynamics steps on the crowd per run (default 50)")
    p.add_argument("--chain", type=int, default=300,
                   help="capsules of the chain dropped onto a plane for the adaptive-contact "
                        "part (default 300; 0 skips it)")
    p.add_argument("--contact-steps", type=int, default=1000,
                   help="steps of 1 ms of the chain drop, ours and MuJoCo's (default 1000)")
    p.add_argument("--protein", default="auto", metavar="PATH",
                   help="PDB / mmCIF file of the real-protein part (adaptive quasi-statics, "
                        "final PDB written); default 'auto': 3KPR of the mdanalysistests "
                        "package when installed; 'none' skips it")
    p.add_argument("--protein-steps", type=int, default=50,
                   help="quasi-static steps on the protein per method (default 50)")
    _add_sim_options(p, steps=4000, dt=1e-3, out="articulated-demo",
                     files="trajectory.npz, .png, .gif, .html and protein-final.pdb")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("simulate", help="simulate a built-in scene or a URDF robot",
                       description="Simulate a built-in scene or a URDF robot under gravity "
                                   "and write trajectory.npz/.png. With --urdf or --robot it "
                                   "prints the root, the total mass and the joints. Contact: "
                                   "none unless --floor is given, so a floating-base robot "
                                   "free-falls; --floor adds a ground plane under the robot's "
                                   "URDF <collision> shapes (impulses with friction, "
                                   "semi-implicit Euler and ABA), self-collision off unless "
                                   "--self-collision. E.g. 'articulated simulate --robot "
                                   "solo12 --floating-base --floor --hold-pose standing'.")
    p.add_argument("scene", nargs="?", choices=SCENES, help="built-in scene")
    p.add_argument("--urdf", metavar="PATH", help="simulate this URDF file instead of a scene")
    p.add_argument("--robot", metavar="NAME",
                   help="simulate example-robot-data's robot NAME (solo12, anymal_c, talos, "
                        "...; needs the robots extra); its SRDF is read when it has one")
    p.add_argument("--floating-base", action="store_true",
                   help="with --urdf/--robot: give the root link a free joint")
    p.add_argument("--floor", action="store_true",
                   help="with --urdf/--robot: a ground plane (normal +z, mu 0.5) at the lowest "
                        "point of the robot's collision shapes (bounding spheres) at the "
                        "start, touched by the URDF's <collision> shapes. Without it there "
                        "is no contact")
    p.add_argument("--self-collision", action="store_true",
                   help="with --floor: the robot's shapes also touch each other, except a "
                        "body and its parent, the SRDF's <disable_collisions> pairs and the "
                        "pairs that overlap at the start")
    p.add_argument("--srdf", metavar="PATH", default=None,
                   help="SRDF of the robot: <disable_collisions> (with --self-collision) and "
                        "the named poses of --hold-pose (--robot finds its own)")
    p.add_argument("--hold-pose", metavar="POSE", default=None,
                   help="start at POSE and hold it with a PD controller on every revolute and "
                        "prismatic joint (gains scaled to the robot's mass and size): an SRDF "
                        "group_state name (e.g. 'standing'), 'neutral', or comma-separated "
                        "joint values [rad, m]")
    p.add_argument("--body", metavar="NAME", default=None,
                   help="body or frame (URDF link) whose path is plotted (default: the one "
                        "farthest from the root at the start)")
    p.add_argument("--n", type=int, default=None,
                   help="scene size: links (pendulum, bicycle_chain), atoms (molecule), "
                        "characters (crowd), bodies (random_tree, millipede)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--checkpoint", metavar="PATH", default=None,
                   help="write a checkpoint .npz there (start, every --checkpoint-every "
                        "steps, end, Ctrl-C); finish an interrupted run with "
                        "articulated.Simulator.resume(PATH)")
    p.add_argument("--checkpoint-every", type=int, default=None,
                   help="steps between checkpoints (default: start, end and Ctrl-C only)")
    p.add_argument("--gif", metavar="FILE", default=None,
                   help="also write an animated GIF of the run (the bodies' collision shapes, "
                        "lit, and the floor)")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="also write a one-file HTML replay of the run (needs viser)")
    _add_sim_options(p, steps=1000, dt=1e-3, out="articulated-out")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("view", help="show a saved trajectory (.npz) in a 3D viewer, or write "
                                    "its HTML replay or GIF",
                       description="Show a trajectory saved by simulate/demo/Trajectory.save in "
                                   "the live 3D viewer (viser; open the printed address in a "
                                   "browser; Ctrl-C stops), or with --html/--gif write a "
                                   "one-file HTML replay or an animated GIF instead. The model "
                                   "is rebuilt from the file's description when it has one; "
                                   "otherwise name it with --scene/--urdf.")
    p.add_argument("path", help="trajectory file (.npz)")
    p.add_argument("--scene", choices=SCENES, help="the built-in scene the trajectory is of")
    p.add_argument("--n", type=int, default=None, help="with --scene: its size (as simulate)")
    p.add_argument("--urdf", metavar="PATH", help="the URDF robot the trajectory is of")
    p.add_argument("--floating-base", action="store_true", help="with --urdf: free root joint")
    p.add_argument("--html", metavar="FILE", help="write a one-file HTML replay, do not serve")
    p.add_argument("--gif", metavar="FILE", help="write an animated GIF, do not serve")
    p.add_argument("--host", default="127.0.0.1", help="live viewer address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="live viewer port (default 8080)")
    p.set_defaults(func=cmd_view)

    p = sub.add_parser("sweep", help="one simulation per grid point, on Dask (local or a "
                                     "cluster)",
                       description="Run a built-in scene once per point of a parameter grid "
                                   "(the Cartesian product of the --param lists) on Dask "
                                   "distributed: a LocalCluster of this machine's cores, or "
                                   "the cluster of --scheduler. Results go to OUT/index.csv "
                                   "and one OUT/run-<id>.npz per run; a re-run with the same "
                                   "OUT skips the complete runs. Parameters the scene takes "
                                   "(n, seed, ...) build the model, the others (dt, method, "
                                   "integrator, max_active, perturb, start_seed, ...) the "
                                   "Simulator. See docs/guide/sweeps.md.")
    p.add_argument("scene", choices=SCENES, help="built-in scene")
    p.add_argument("--param", action="append", metavar="NAME=V1,V2,...",
                   help="a swept parameter and its values (repeatable)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a parameter fixed for every run (repeatable)")
    p.add_argument("--steps", type=int, default=1000, help="steps per run (default 1000)")
    p.add_argument("--record-every", type=int, default=10, help="recording interval "
                                                                  "(default 10)")
    p.add_argument("--dt", type=float, default=1e-3, help="time step [s] (default 1e-3)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="a Dask scheduler, e.g. tcp://host:8786 (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=None,
                   help="LocalCluster worker processes (default: one per core)")
    p.add_argument("--out", default="articulated-sweep", metavar="DIR",
                   help="result store (default articulated-sweep)")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("compile", help="compile the kernels ahead of use, in parallel processes; "
                                       "--profile: per-kernel compile times",
                       description="Warm numba's on-disk cache: run a small workload of each "
                                   "subsystem (default all) in up to --jobs processes. With "
                                   "--profile, compile each subsystem from an empty cache in a "
                                   "fresh process and print its compile time, cache size and "
                                   "versions, and the kernels that take longest.")
    from .precompile import SUBSYSTEMS

    p.add_argument("subsystems", nargs="*", metavar="SUBSYSTEM",
                   help=f"any of {', '.join(SUBSYSTEMS)} (default all)")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: the CPUs available)")
    p.add_argument("--profile", action="store_true",
                   help="profile the compile of each subsystem on an empty cache")
    p.add_argument("--top", type=int, default=10,
                   help="kernels listed per subsystem with --profile (default 10)")
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("bench", help="benchmarks that print tables of ratios against the peers",
                       description="Run a benchmark; results go to stdout (record them in "
                                   "docs/results/). 'articulated bench NAME --help' lists "
                                   "the options of each.")
    benches = p.add_subparsers(dest="name", metavar="NAME", required=True)
    for name, module in _bench_modules().items():
        q = benches.add_parser(name, help=module.HELP)
        module.add_arguments(q)
        q.set_defaults(func=cmd_bench, bench_run=module.run)
    return parser


FIRST_RUN_KERNELS = {"simulate": 51, "demo": 207}
"""Kernels a command compiles on a cold numba cache (counted with default options; see
:mod:`articulated.compile_notice`): the length of the first run's progress bar and its
time estimate."""


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    for name in ("steps", "repeats", "n", "record_every", "workers"):
        v = getattr(args, name, None)
        if v is not None and v < 1:
            parser.error(f"--{name} must be >= 1, got {v}")
    for name, least in (("ad_steps", 0), ("crowd", 0), ("molecule", 0), ("qs_steps", 1),
                        ("crowd_steps", 1)):
        v = getattr(args, name, None)
        if v is not None and v < least:
            parser.error(f"--{name.replace('_', '-')} must be >= {least}, got {v}")
    if getattr(args, "dt", 1.0) <= 0:
        parser.error(f"--dt must be > 0, got {args.dt}")
    from .compile_notice import compile_notice

    try:
        # one line and a bar while numba compiles (first run)
        with compile_notice(expected=FIRST_RUN_KERNELS.get(args.command)):
            return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as e:
        print(f"articulated {args.command}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
