"""Write simulated configurations of a molecule to PDB files.

Simulated configurations of a molecule back to PDB files (gemmi): one configuration,
or a sequence of them as a multi-model PDB that molecular viewers play as a trajectory.

The model must come from :func:`articulated.load_structure`, which keeps its atoms
(``model.structure_atoms``, :class:`articulated.io.structure.StructureAtoms`: each atom's
body and position in the body frame). Interfaces layer: the atoms' world positions need
:func:`articulated.forward_kinematics`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .algorithms.kinematics import forward_kinematics
from .io.structure import ANGSTROM, StructureAtoms
from .model import Model


def _structure_atoms(model) -> StructureAtoms:
    sa = getattr(model, "structure_atoms", None)
    if not isinstance(sa, StructureAtoms):
        raise ValueError("the model has no atoms: write_pdb needs a model made by "
                         "articulated.load_structure")
    return sa


def atom_positions(model: Model, q) -> np.ndarray:
    """World positions of every atom of a :func:`articulated.load_structure` model at ``q``.

    Parameters
    ----------
    model : Model
        Made by :func:`articulated.load_structure`.
    q : (nq,) float64
        Configuration.

    Returns
    -------
    (natom, 3) float64
        World positions [nm], atoms in the order of ``model.structure_atoms.structure``
        (gemmi's chain, residue, atom order).

    Raises
    ------
    ValueError
        For a model without atoms or a bad ``q`` (forward kinematics).
    """
    sa = _structure_atoms(model)
    R, p = forward_kinematics(model, q)
    return np.einsum("nij,nj->ni", R[sa.body], sa.local) + p[sa.body]


def write_pdb(model: Model, q, path) -> Path:
    """Write configurations of a :func:`articulated.load_structure` model as a PDB file (gemmi).

    Parameters
    ----------
    model : Model
        Made by :func:`articulated.load_structure` (carries ``structure_atoms``).
    q : (nq,) float64
        One configuration: a single-model PDB; or (K, nq) float64, or an object with such a
        ``q`` attribute (a :class:`articulated.Trajectory`): a multi-model PDB, ``MODEL 1 ..
        K`` (a trajectory for molecular viewers).
    path : str or Path
        The file to write.

    Returns
    -------
    Path
        The path written. The atoms keep the file's names, residues, chains, occupancies
        and B factors; coordinates in Angstrom.

    Raises
    ------
    ValueError
        For a model without atoms or a ``q`` of the wrong shape or with non-finite
        entries.
    """
    import gemmi

    sa = _structure_atoms(model)
    qs = np.asarray(getattr(q, "q", q), dtype=np.float64)
    if qs.ndim == 1:
        qs = qs[None]
    if qs.ndim != 2 or qs.shape[1] != model.nq or qs.shape[0] == 0:
        raise ValueError(f"q must have shape ({model.nq},) or (K, {model.nq}), got "
                         f"{np.shape(getattr(q, 'q', q))}")
    out = sa.structure.clone()
    template = out[0].clone()
    del out[0]
    for k, qk in enumerate(qs):
        xyz = atom_positions(model, qk) / ANGSTROM
        m = template.clone()
        m.num = k + 1
        for atom, (a, b, c) in zip((cra.atom for cra in m.all()), xyz.tolist()):
            atom.pos = gemmi.Position(a, b, c)
        out.add_model(m)
    path = Path(path)
    out.write_pdb(str(path))
    return path
