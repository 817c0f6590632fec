"""Pull one atom of a protein with error-bounded adaptive quasi-statics; write it as PDB.

HIV-1 protease (PDB 4E43) as a torsion-angle model (phi, psi, chi; nm, u, ps); 10 kJ/mol/nm
pull chain A's C-terminal O outwards. Adaptive quasi-statics (Redon & Lin 2005, eq. 8-9,
Sec. 4.3) computes only the joints the error bound ``eps_max`` needs, beside the full DCA.
"""
import argparse
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import articulated as art

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "4E43.pdb.gz"


def main(small=False, out=None, path=DATA, atom="A:99:O", eps_max=2.0 ** -19):
    out = Path(out or tempfile.mkdtemp(prefix="protein_pull-"))
    out.mkdir(parents=True, exist_ok=True)
    model = art.load_structure(path, missing_atoms="allow")   # heavy atoms only (default)
    atoms, q0 = model.structure_atoms, model.neutral()
    x0 = art.atom_positions(model, q0)                         # (natom, 3) [nm]
    k = [f"{c.chain.name}:{c.residue.seqid.num}:{c.atom.name}"   # the pulled atom's index
         for c in atoms.structure[0].all()].index(atom)
    d = (x0[k] - x0.mean(axis=0)) / np.linalg.norm(x0[k] - x0.mean(axis=0))   # outwards
    force = art.PointForce(int(atoms.body[k]), 10.0 * d, point=atoms.local[k])  # kJ/mol/nm
    probe = art.Simulator(model, 1.0, method="quasistatic", q0=q0, forces=[force])
    probe.step()                                               # a step moves q by dt^2 qdd
    dt = float(np.sqrt(0.01 / np.abs(probe.q - q0).max()))     # first step: 0.01 rad at most
    steps, rmsd, joints = (20 if small else 100), {}, {}
    for method in ("quasistatic", "quasistatic-adaptive"):
        sim = art.Simulator(model, dt, method=method, eps_max=eps_max, q0=q0, forces=[force])
        traj = sim.run(steps, record_every=1)
        x = np.array([art.atom_positions(model, q) for q in traj.q]) - x0
        rmsd[method], joints[method] = np.sqrt((x ** 2).sum(axis=2).mean(axis=1)), traj.joints
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.3), layout="constrained")
    for method, label in (("quasistatic", "full DCA"), ("quasistatic-adaptive", "adaptive")):
        ax[0].plot(rmsd[method] * 10, label=label)             # nm -> Angstrom
        ax[1].plot(joints[method], label=label)
    ax[0].set(xlabel="step", ylabel="RMSD from start [A]", title="4E43 pulled by one atom")
    ax[1].set(xlabel="step", ylabel="joints computed", yscale="log", title=f"of {model.nv}")
    ax[0].legend()
    fig.savefig(out / "protein_pull.png", dpi=110)
    return dict(rmsd=rmsd, joints=joints, nv=model.nv, png=out / "protein_pull.png",
                pdb=art.write_pdb(model, sim.q, out / "protein-final.pdb"))   # the adaptive run


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="20 steps (default 100)")
    p.add_argument("--pdb", default=DATA, help="structure file (default: 4E43 of tests/data)")
    p.add_argument("--atom", default="A:99:O", help="CHAIN:RESIDUE:ATOM pulled (default A:99:O)")
    p.add_argument("--out", help="output folder (default: a new temporary folder)")
    a = p.parse_args()
    r = main(a.small, a.out, a.pdb, a.atom)
    print(f"RMSD {r['rmsd']['quasistatic-adaptive'][-1] * 10:.3f} A from the start, {r['pdb']}")
