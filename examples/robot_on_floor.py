"""A URDF robot standing on a floor with friction: example-robot-data's solo12.

The quadruped is loaded with its own ``<collision>`` meshes (convex hulls) and a free base,
dropped 6 cm onto a plane (Coulomb friction mu = 0.8) and held in its standing pose by a PD
controller on its 12 joints. Contact: impulses with friction (Mirtich; Gayle, Lin & Manocha
2006, Sec. IV). Plots base height and contacts. Needs the ``robots`` and ``mesh`` extras.
"""
import argparse
import importlib.metadata
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import articulated as art

POSE = {"FL_HAA": 0.0, "FL_HFE": 0.8, "FL_KFE": -1.6, "FR_HAA": 0.0, "FR_HFE": 0.8,
        "FR_KFE": -1.6, "HL_HAA": 0.0, "HL_HFE": -0.8, "HL_KFE": 1.6, "HR_HAA": 0.0,
        "HR_HFE": -0.8, "HR_KFE": 1.6}        # solo.srdf's "straight_standing" [rad]


def solo12_urdf():
    files = importlib.metadata.distribution("example-robot-data").files
    return next(Path(f.locate()) for f in files if str(f).endswith("robots/solo12.urdf"))


def main(small=False, out=None):
    out = Path(out or tempfile.mkdtemp(prefix="robot_on_floor-"))
    out.mkdir(parents=True, exist_ok=True)
    model = art.load_urdf(solo12_urdf(), floating_base=True, collision=True, mu=0.8)
    geom = model.collision
    geom.set_filter(group=1, mask=2)          # the robot's hulls touch the floor, not each other
    geom.add_static(art.Plane(normal=(0, 0, 1)), mu=0.8, group=2, mask=1)
    q0 = model.neutral()
    q0[2] = 0.30                              # base height [m]: feet 6 cm above the floor
    q0[model.jnt_qadr[[model.joint_id(n) for n in POSE]]] = list(POSE.values())
    pd = art.PDController(kp=6.0, kd=0.1, q_ref=list(POSE.values()), joints=list(POSE))
    steps = 400 if small else 2000            # of dt = 1 ms
    traj = art.Simulator(model, 1e-3, contacts=geom, q0=q0, forces=[pd]).run(steps)
    z, n = traj.q[:, 2], traj.contacts["n"]
    fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    ax.plot(traj.t, z * 100, label="base height [cm]")
    ax.plot(traj.t[1:], n, label="contacts", drawstyle="steps")
    ax.set(xlabel="time [s]", title="solo12 dropped 6 cm onto a floor (mu 0.8), PD standing")
    ax.legend()
    fig.savefig(out / "robot_on_floor.png", dpi=110)
    return dict(base_z=z, contacts=n, max_depth=float(traj.contacts["max_depth"].max()),
                png=out / "robot_on_floor.png")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="a short run (0.4 s)")
    p.add_argument("--out", help="output folder (default: a new temporary folder)")
    a = p.parse_args()
    r = main(a.small, a.out)
    print(f"base height {r['base_z'][-1]:.4f} m, {r['contacts'][-1]} contacts, "
          f"deepest {r['max_depth'] * 1e3:.3f} mm; wrote {r['png']}")
