"""Robots of example-robot-data on a floor, against MuJoCo: ``articulated bench robots``.

For every robot of example-robot-data that has collision shapes and a floating base (the
fixed-base arms, hands and rigs of :data:`FIXED_BASE` are left out):

(a) **Plain run**, exactly as ``articulated simulate --robot NAME --floating-base --floor``
    builds it (:func:`articulated.cli.robot_scene`, :func:`articulated.cli.simulator`:
    the CLI's start with its first joint swung, the floor under the lowest bounding sphere,
    no controller, the CLI's ``dt``), for :data:`PLAIN_S` of simulated time: whether it
    ran, the largest penetration depth over the run, the time per step.
(b) **Held run**: the same with ``--hold-pose POSE`` (:func:`held_pose`: ``standing``, else
    the SRDF's first ``<group_state>``, else ``neutral``) for :data:`HELD_S`: the base
    height at rest (mean over the last :data:`REST_S` of the root body's world z, less the
    floor's), the largest depth, the time per step, whether the base stayed upright.
(c) **MuJoCo** on the same model, shapes, floor, friction, ``dt`` and start
    (:func:`articulated.interop.to_mujoco`): ``mj_step`` with MuJoCo's default solver and
    ``noslip_iterations = NOSLIP``, the held run's PD torques computed before each step
    from the same gains and reference (``qfrc_applied``, as our controller computes them
    at the start of a step); the same base height at rest, its depth at rest and its time
    per step.

Every robot's simulators run once for a few steps first (compilation left out of the
times). A time per step is the wall time of a whole run over its steps (ours: the
simulator's compiled loop, recording every step; MuJoCo's: the ``mj_step`` calls), the
fastest of :data:`REPEATS` identical runs.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from .common import MarkdownReport, at_least, bench_main, markdown_table

HELP = "example-robot-data's floating-base robots standing on a floor, against MuJoCo"

PLAIN_S = 1.0
"""Simulated time of the plain run [s]."""
HELD_S = 2.0
"""Simulated time of the held run [s]."""
REST_S = 0.2
"""The base height at rest is the mean over the last REST_S of the held run [s]."""
QUICK = dict(plain=0.2, held=0.5, rest=0.1)
"""The same three times with ``--quick`` [s]."""
NOSLIP = 10
"""MuJoCo's ``noslip_iterations`` (its post-pass that removes the slip its soft friction
allows; without it a loaded foot creeps outward and the base sinks)."""
REPEATS = 3
"""Each run is repeated this many times (the same trajectory); its time per step is the
fastest run's wall time over its steps (the machine is shared: the least disturbed run)."""
UPRIGHT_DEG = 45.0
"""A base tilted by more than this [deg] from its start at the end has fallen over."""

FIXED_BASE = {
    **{n: "arm on a fixed base" for n in (
        "kinova", "panda", "panda_collision", "so100", "so101", "talos_arm", "ur10",
        "ur10_joint_limited_robot", "ur3", "ur3_gripper", "ur3_joint_limited_robot", "ur5",
        "ur5_gripper", "ur5_joint_limited_robot", "xarm", "z1")},
    "baxter": "two arms on a fixed pedestal",
    "allegro_left_hand": "hand on a fixed base", "allegro_right_hand": "hand on a fixed base",
    "finger_edu": "finger on a fixed stand",
    "double_pendulum": "pendulum on a fixed pivot",
    "double_pendulum_continuous": "pendulum on a fixed pivot",
    "double_pendulum_simple": "pendulum on a fixed pivot",
    "asr_twodof": "two-joint rig on a fixed base",
}
"""example-robot-data's robots that are built on a fixed base: name -> what they are."""


def held_pose(srdf) -> str:
    """The ``--hold-pose`` of a robot whose SRDF is ``srdf`` (a path or None).

    ``standing`` when the SRDF names it, else its first ``<group_state>``, else
    ``neutral`` (no SRDF, or one without named states).
    """
    if srdf is None:
        return "neutral"
    import xml.etree.ElementTree as ET

    states = [gs.get("name") for gs in ET.parse(srdf).getroot().iter("group_state")]
    return "standing" if "standing" in states else (states[0] if states else "neutral")


FIRST = ("solo12", "anymal_b", "anymal_c", "talos")
"""The robots measured first when none are named."""


def candidates(names=None):
    """The robots to run and those left out: ``(run, skipped)``.

    ``names``: robot names (default: :data:`FIRST`, then every other robot of
    :func:`articulated.robots.names`); ``run`` lists those not in :data:`FIXED_BASE` whose
    URDF no earlier name has, ``skipped`` is ``[(name, reason)]`` of the others. Whether
    a robot loads and has shapes is found when it runs.
    """
    from ..robots import names as all_names, path

    if names is None:
        names = list(FIRST) + [n for n in all_names() if n not in FIRST]
    run, skipped, seen = [], [], {}
    for n in names:
        if n in FIXED_BASE:
            skipped.append((n, FIXED_BASE[n]))
        elif path(n) in seen:
            skipped.append((n, f"the URDF of {seen[path(n)]}"))
        else:
            seen[path(n)] = n
            run.append(n)
    return run, skipped


def _cli_args(name, pose=None):
    """The options of ``articulated simulate --robot name --floating-base --floor
    [--hold-pose pose]``, parsed by the CLI's own parser."""
    from ..cli import build_parser

    argv = ["simulate", "--robot", name, "--floating-base", "--floor"]
    return build_parser().parse_args(argv + (["--hold-pose", pose] if pose else []))


def robot_run(name, seconds, pose=None, repeats=REPEATS):
    """Runs of ``articulated simulate --robot name --floating-base --floor [--hold-pose
    pose]`` for ``seconds`` [s] of simulated time, every step recorded.

    Returns a dict: ``model``, ``geom``, ``q0`` (nq,), ``forces``, ``dt`` [s], ``steps``,
    ``traj`` (the :class:`~articulated.Trajectory`, the records so far when it diverged),
    ``step`` (the fastest of ``repeats`` identical runs' wall time per step [s]),
    ``error`` (None or the message of the error that stopped it).
    """
    from ..cli import robot_scene, simulator
    from ..robots import path, srdf_path
    from ..simulation.trajectory import SimulationDiverged

    args = _cli_args(name, pose)
    model, q0, geom, forces = robot_scene(path(name), srdf_path(name), args)
    steps = int(round(seconds / args.dt))
    simulator(model, q0, args, geom, forces).run(min(steps, 5))    # compile, untimed
    error, traj, walls = None, None, []
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            tr = simulator(model, q0, args, geom, forces).run(steps, progress=False)
        except SimulationDiverged as e:
            tr, error = e.trajectory, str(e).splitlines()[0]
        walls.append((time.perf_counter() - t0) / max(len(tr.t) - 1, 1))
        traj = tr if traj is None else traj
    return dict(model=model, geom=geom, q0=q0, forces=forces, dt=args.dt, steps=steps,
                traj=traj, step=min(walls), error=error)


def base_pose(model, q):
    """World position (n, 3) [m] and z axis (n, 3) of the root body's free joint.

    ``q`` (n, nq): configurations. Raises ValueError when body 0 has no free joint.
    """
    from ..model import JOINT_FREE

    if model.jnt_type[0] != JOINT_FREE:
        raise ValueError(f"body {model.body_name[0]!r}: no free joint (--floating-base)")
    q = np.atleast_2d(q)
    a = int(model.jnt_qadr[0])
    R0, r0 = model.jnt_Xtree_E[0].T, model.jnt_Xtree_r[0]
    p = r0 + q[:, a:a + 3] @ R0.T
    return p, _axis_z(q[:, a + 3:a + 7]) @ R0.T


def _tilt_deg(z0, z1):
    """Angle [deg] between two unit axes (3,)."""
    return float(np.degrees(np.arccos(np.clip(np.dot(z0, z1), -1.0, 1.0))))


def mujoco_run(model, geom, q0, pd, dt, steps, noslip=NOSLIP):
    """``mj_step`` on the MuJoCo model of ``model`` with the shapes and floor ``geom``.

    From ``q0`` (nq,) at rest, ``steps`` steps of ``dt`` [s], MuJoCo's default solver,
    ``noslip_iterations = noslip``, the :class:`~articulated.PDController` ``pd``'s torques
    ``kp (q_ref - q) - kd qd`` on its joints as ``qfrc_applied`` before each step. Returns
    a dict of per-step arrays: ``t`` [s] of ``mj_step``, base position ``p`` (n, 3) [m] and
    z axis ``z`` (n, 3), largest penetration ``depth`` [m]; and ``error`` (None, or
    MuJoCo's warning when its accelerations went bad and it reset the state: the arrays
    stop there).
    """
    import mujoco

    from ..interop import to_mujoco

    mj, conv = to_mujoco(model, geom)
    mj.opt.timestep = dt
    mj.opt.noslip_iterations = int(noslip)
    d = mujoco.MjData(mj)
    d.qpos[:] = conv.qpos(q0)
    mujoco.mj_forward(mj, d)
    ids = np.array([mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT,
                                      model.joint_name[model.joint_id(j)])
                    for j in (pd.joints if pd is not None else ())], dtype=np.int64)
    iq, iv = mj.jnt_qposadr[ids], mj.jnt_dofadr[ids]
    kp, ref = (pd.kp, pd.q_ref) if pd is not None else (0.0, 0.0)
    if pd is not None:      # kd as joint damping, which MuJoCo's Euler takes implicitly
        mj.dof_damping[iv] = pd.kd
    root = mj.jnt_qposadr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, model.joint_name[0])]
    t, p, z, depth = (np.zeros(steps), np.zeros((steps, 3)), np.zeros((steps, 3)),
                      np.zeros(steps))
    bad = int(mujoco.mjtWarning.mjWARN_BADQACC)
    error = None
    for k in range(steps):
        d.qfrc_applied[iv] = kp * (ref - d.qpos[iq])
        t0 = time.perf_counter()
        mujoco.mj_step(mj, d)
        t[k] = time.perf_counter() - t0
        if d.warning[bad].number:
            error = f"MuJoCo: bad accelerations at step {k} (state reset)"
            t, p, z, depth = t[:k], p[:k], z[:k], depth[:k]
            break
        p[k] = d.qpos[root:root + 3]
        z[k] = _axis_z(d.qpos[root + 3:root + 7])
        depth[k] = max(0.0, -float(d.contact.dist[:d.ncon].min())) if d.ncon else 0.0
    return dict(t=t, p=p, z=z, depth=depth, error=error)


def _axis_z(quat):
    """The third column (..., 3) of the rotations of unit quaternions (..., 4) (w, x, y, z):
    the rotated z axis."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=np.float64), -1, 0)
    return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], -1)


def measure(name, times=None, mujoco=True):
    """Runs (a), (b) and (c) of the module docstring on robot ``name``; returns a dict.

    ``times``: ``dict(plain=, held=, rest=)`` [s] (default :data:`PLAIN_S`,
    :data:`HELD_S`, :data:`REST_S`). Keys: ``nv``, ``shapes`` (on the robot), ``pose``
    (None: no joint to hold, the held run is a plain one from the neutral pose);
    ``plain``, ``held``, ``mujoco``: dicts of ``error`` (None or a message), ``step``
    (time per step [s], :data:`REPEATS`), ``depth`` (largest [m]); ``held`` and
    ``mujoco`` also ``z_rest`` (base height above the floor at rest [m]), ``depth_rest``
    (largest depth over the rest window [m]) and ``tilt`` (the base's tilt at the end
    from its start [deg]). ``mujoco`` is None without MuJoCo or with ``mujoco=False``.
    Raises ValueError when the robot does not load or has no collision shapes.
    """
    from ..model import JOINT_PRISMATIC, JOINT_REVOLUTE
    from ..robots import srdf_path

    times = {**dict(plain=PLAIN_S, held=HELD_S, rest=REST_S), **(times or {})}
    plain = robot_run(name, times["plain"])
    jointed = np.isin(plain["model"].jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC)).any()
    pose = held_pose(srdf_path(name)) if jointed else None      # nothing to hold
    held = robot_run(name, times["held"], pose)
    model = held["model"]
    A = held["geom"].arrays()
    res = dict(nv=int(model.nv), shapes=int((A["body"] >= 0).sum()), pose=pose)
    c = plain["traj"].contacts
    res["plain"] = dict(error=plain["error"], step=plain["step"],
                        depth=float(c["max_depth"].max()) if len(c) else 0.0)
    rest = max(1, int(round(times["rest"] / held["dt"])))
    floor = float(A["pos"][A["body"] < 0][0, 2])      # the plane of floor_contacts
    z0 = base_pose(model, held["q0"])[1][0]
    p, z = base_pose(model, held["traj"].q[1:])
    c = held["traj"].contacts
    res["held"] = dict(error=held["error"], step=held["step"],
                       depth=float(c["max_depth"].max()) if len(c) else 0.0,
                       depth_rest=float(c["max_depth"][-rest:].max()) if len(c) else 0.0,
                       z_rest=float(p[-rest:, 2].mean()) - floor, tilt=_tilt_deg(z0, z[-1]))
    res["mujoco"] = None
    if mujoco:
        try:
            import mujoco as _  # noqa: F401 (the test extra)
        except ImportError:
            return res
        pd = held["forces"][0] if held["forces"] else None
        mujoco_run(model, held["geom"], held["q0"], pd, held["dt"], 5)     # untimed
        runs = [mujoco_run(model, held["geom"], held["q0"], pd, held["dt"], held["steps"])
                for _ in range(REPEATS)]
        mj = runs[0]
        ok = len(mj["t"]) > 0
        res["mujoco"] = dict(
            error=mj["error"], step=min(r["t"].mean() for r in runs) if ok else float("nan"),
            depth=float(mj["depth"].max()) if ok else float("nan"),
            depth_rest=float(mj["depth"][-rest:].max()) if ok else float("nan"),
            z_rest=float(mj["p"][-rest:, 2].mean()) - floor if ok else float("nan"),
            tilt=_tilt_deg(z0, mj["z"][-1]) if ok else float("nan"))
    return res


def _outcome(r):
    """``ok``, ``fell`` (tilted past :data:`UPRIGHT_DEG`) or the error of a run dict."""
    if r is None:
        return "-"
    if r["error"]:
        return "error: " + r["error"][:60]
    return "fell" if r.get("tilt", 0.0) > UPRIGHT_DEG else "upright"


def table_row(name, res):
    """The Markdown table row of :func:`measure`'s result ``res`` for robot ``name``."""
    ms = lambda r, k: "-" if r is None else f"{r[k] * 1e3:.3f}"
    mm = lambda r, k: "-" if r is None else f"{r[k] * 1e3:.2f}"
    m = lambda r, k: "-" if r is None else f"{r[k]:.4f}"
    pl, he, mj = res["plain"], res["held"], res["mujoco"]
    diff = "-" if mj is None else f"{(he['z_rest'] - mj['z_rest']) * 1e3:+.1f}"
    return [name, str(res["nv"]), str(res["shapes"]),
            "ok" if pl["error"] is None else "error: " + pl["error"][:60],
            ms(pl, "step"), mm(pl, "depth"), res["pose"] or "-", _outcome(he), ms(he, "step"),
            mm(he, "depth"), m(he, "z_rest"), _outcome(mj), ms(mj, "step"),
            mm(mj, "depth_rest"), m(mj, "z_rest"), diff]


HEADERS = ["robot", "DOF", "shapes", "plain run", "ms/step", "max depth [mm]", "held pose",
           "held", "ms/step", "max depth [mm]", "base height at rest [m]", "MuJoCo",
           "MuJoCo ms/step", "MuJoCo depth at rest [mm]", "MuJoCo base height at rest [m]",
           "ours - MuJoCo [mm]"]
"""Columns of the table: the plain run, the held run, MuJoCo's held run."""


def add_arguments(parser):
    """Declare the options of ``articulated bench robots [--quick] [--robots NAME ...]
    [--out DIR]``."""
    parser.description = ("example-robot-data's floating-base robots with collision shapes "
                          "on a floor, as 'articulated simulate --robot NAME --floating-base "
                          "--floor [--hold-pose POSE]' runs them, against MuJoCo")
    parser.add_argument("--quick", action="store_true",
                        help=f"solo12 only (unless --robots), {QUICK['plain']:g} s plain and "
                             f"{QUICK['held']:g} s held (smoke test)")
    parser.add_argument("--robots", nargs="+", metavar="NAME", default=None,
                        help="these robots (default: every floating-base robot of "
                             "example-robot-data)")
    parser.add_argument("--no-mujoco", action="store_true", help="leave MuJoCo out")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="also write the Markdown to DIR/robots-results.md "
                             "(-quick.md with --quick)")


def main(argv=None) -> int:
    """``python -m articulated.bench.robots [--quick] [--robots NAME ...] [--out DIR]``."""
    return bench_main("robots", add_arguments, run, argv)


def run(args) -> int:
    """Measure the robots (:func:`measure`), print the table as it grows, write it with
    ``--out``; returns 0."""
    from ..robots import path

    warnings.filterwarnings("ignore", module="numba")
    quick = args.quick
    names = args.robots or (["solo12"] if quick else None)
    times = QUICK if quick else None
    todo, fixed = candidates(names)
    report = MarkdownReport("Robots on a floor", args.out or ".", "robots", quick,
                            f" (robots: {' '.join(names) if names else 'all'})") \
        if args.out else None
    emit = report.emit if report else print
    rows, failed = [], []
    for name in todo:
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = measure(name, times, mujoco=not args.no_mujoco)
        except ValueError as e:
            urdf = path(name)
            failed.append((name, str(e).splitlines()[0].replace(str(urdf), urdf.name)[:200]))
            print(f"{name}: left out: {failed[-1][1]}", flush=True)
            continue
        rows.append(table_row(name, res))
        print(f"{name}: {time.perf_counter() - t0:.0f} s: " + " | ".join(rows[-1]), flush=True)
    emit(markdown_table(HEADERS, rows))
    emit("")
    for name, why in failed:
        emit(f"- {name}: left out, {why}")
    for name, why in fixed:
        emit(f"- {name}: left out, {why}")
    if report:
        path = report.write("robots-results" + ("-quick" if quick else "") + ".md")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
