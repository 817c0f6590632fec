"""Torsion-angle models of molecules from PDB / mmCIF files (gemmi).

:func:`load_structure` reads a structure with gemmi and builds the standard
internal-coordinate model of structural biology: bond lengths and bond angles stay as in
the file, the rotatable single bonds become revolute joints, and every rigid group of
atoms between them becomes one body. The model keeps its atoms (:class:`StructureAtoms`)
so that :func:`articulated.pdb.write_pdb` (interfaces layer: it needs forward kinematics)
writes simulated configurations back as PDB files for any molecular viewer.

Units
-----
The model is in the GROMACS unit system, not SI: lengths in nm, masses in u (g/mol), time
in ps, so forces are in kJ mol^-1 nm^-1 and torques in kJ/mol. In SI an atom's mass is
1e-26 kg and a group's inertia 1e-46 kg m^2, far below the absolute tolerances of the
numerical kernels; in these units both are O(1)-O(100). Gravity is zero. PDB files store
Angstrom (1 A = 0.1 nm); the writers convert back.

Rules (what becomes what)
-------------------------
* **Atoms.** The first model of the file. In standard amino acids the element is the
  first letter of the atom name (SE: selenium), as files without an element column would
  otherwise be misread (gemmi guesses calcium for a misaligned CA). Alternate locations: the first conformer only
  (gemmi ``remove_alternative_conformations``). Hydrogens (and deuterium) are dropped
  unless ``hydrogens=True``; waters are dropped unless ``waters=True``; other HETATM
  residues (ligands, ions) are kept unless ``ligands=False``.
* **Bonds.** Two atoms of one residue are bonded when their distance is below the sum of
  their covalent radii (gemmi) plus :data:`BOND_TOLERANCE`; two consecutive amino-acid
  residues of a chain are bonded C(i)-N(i+1) (the peptide bond) by the same test; no other
  bond between residues is modelled (disulfides, links to ligands and metal coordination
  would close loops that a torsion tree cannot hold). A peptide bond longer than the test
  allows is a chain break.
* **Rotatable bonds -> revolute joints.** The torsions of :data:`TORSIONS`: backbone
  ``phi`` (N-CA; not in proline, whose N-CA bond is in its ring) and ``psi`` (CA-C) of every
  amino acid, ``omega`` (C(i)-N(i+1), the peptide bond, a partial double bond) only with
  ``omega=True``, and the side-chain ``chi1`` .. ``chi4`` of the standard amino acids
  (IUPAC-IUB 1970). A torsion becomes a joint only if both of its atoms have another
  heavy-atom neighbour (so the N-terminal ``phi``, which would turn hydrogens only, is not
  one). Terminal hydrogen rotors (methyl, hydroxyl, ammonium) are not joints.
  Non-standard amino acids other than MSE keep ``phi``/``psi`` but get no side-chain
  torsions; ligands have no torsions: each is a rigid body. Nucleic acids are not modelled
  as chains yet: no bond links two nucleotides, so each nucleotide is a rigid body of its
  own (a tree of one body).
* **Bodies.** The connected groups of atoms after removing the rotatable bonds. Masses
  from the elements (gemmi ``Element.weight``); inertia from the atoms as point masses
  plus, for each atom, a uniform solid sphere of its covalent radius (so that groups of
  one or two atoms have a positive-definite inertia).
* **Trees.** Every connected piece of the bond graph (a chain, a chain segment after a
  break, a ligand, an ion) is one tree; its root is the group of its first atom in file
  order, attached to the world by a ``"fixed"`` joint, or a ``"free"`` one with
  ``floating=True``.
* **Frames.** A body's frame has its origin on the atom that its joint turns about (the
  root's: its first atom) and axes parallel to the world's at ``q = 0``; the joint axis is
  the bond direction from the parent-side atom to the child-side atom, so ``q_j`` is the
  change of the torsion angle (IUPAC sign, the moving side last) from the file's value:
  ``q = model.neutral()`` reproduces the file.
* **Names** follow the PDB: body ``A:LYS:42:CA-group`` (chain, residue name, sequence
  number and insertion code, the group's anchor atom: the child-side atom of its joint, or
  the root atom), joint ``A:LYS:42:psi`` (the torsion of that residue), root joint
  ``A:LYS:42:root``.

Errors (``ValueError`` naming the file and the residue): no atoms, non-finite
coordinates, an atom name twice in one residue, missing backbone or side-chain atoms of a
standard amino acid (``missing_atoms="error"``, the default; ``"allow"`` builds what is
there and drops the torsions whose atoms are missing), a bond graph with a cycle across a
rotatable bond, and files gemmi cannot read.

Source: the torsion-angle (internal-coordinate) model of proteins as in Redon & Lin's
later protein work (adaptive torsion-angle quasi-statics) and torsion-space dynamics;
torsion definitions: IUPAC-IUB Commission on Biochemical Nomenclature (1970), "Abbreviations
and symbols for the description of the conformation of polypeptide chains", Biochemistry 9,
3471.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model import JOINT_TYPES, Model

__all__ = ["ANGSTROM", "StructureAtoms", "load_structure"]

ANGSTROM = 0.1
"""One Angstrom in the model's length unit (nm)."""

BOND_TOLERANCE = 0.4
"""Added to the sum of covalent radii in the bond test [Angstrom] (as Jmol and Open Babel)."""

_SIDE = {
    "ALA": "CB", "ARG": "CB CG CD NE CZ NH1 NH2", "ASN": "CB CG OD1 ND2",
    "ASP": "CB CG OD1 OD2", "CYS": "CB SG", "GLN": "CB CG CD OE1 NE2",
    "GLU": "CB CG CD OE1 OE2", "GLY": "", "HIS": "CB CG ND1 CD2 CE1 NE2",
    "ILE": "CB CG1 CG2 CD1", "LEU": "CB CG CD1 CD2", "LYS": "CB CG CD CE NZ",
    "MET": "CB CG SD CE", "MSE": "CB CG SE CE", "PHE": "CB CG CD1 CD2 CE1 CE2 CZ",
    "PRO": "CB CG CD", "SER": "CB OG", "THR": "CB OG1 CG2",
    "TRP": "CB CG CD1 CD2 NE1 CE2 CE3 CZ2 CZ3 CH2", "TYR": "CB CG CD1 CD2 CE1 CE2 CZ OH",
    "VAL": "CB CG1 CG2",
}
_CHI = {
    "ARG": "CA-CB CB-CG CG-CD CD-NE", "ASN": "CA-CB CB-CG", "ASP": "CA-CB CB-CG",
    "CYS": "CA-CB", "GLN": "CA-CB CB-CG CG-CD", "GLU": "CA-CB CB-CG CG-CD",
    "HIS": "CA-CB CB-CG", "ILE": "CA-CB CB-CG1", "LEU": "CA-CB CB-CG",
    "LYS": "CA-CB CB-CG CG-CD CD-CE", "MET": "CA-CB CB-CG CG-SD", "MSE": "CA-CB CB-CG CG-SE",
    "PHE": "CA-CB CB-CG", "SER": "CA-CB", "THR": "CA-CB", "TRP": "CA-CB CB-CG",
    "TYR": "CA-CB CB-CG", "VAL": "CA-CB",
}
_ALIASES = {"HSD": "HIS", "HSE": "HIS", "HSP": "HIS", "HID": "HIS", "HIE": "HIS",
            "HIP": "HIS", "HIZ": "HIS", "CYX": "CYS", "CYM": "CYS", "LYN": "LYS",
            "ASH": "ASP", "GLH": "GLU"}
"""Force-field names of protonation states (CHARMM, AMBER) -> the standard residue."""
_ATOM_ALIASES = {("ILE", "CD"): "CD1", (None, "OT1"): "O", (None, "OT2"): "OXT"}
"""(residue or None for any, force-field atom name) -> PDB name (CHARMM names isoleucine's
CD1 ``CD`` and the C-terminal oxygens OT1, OT2)."""

BACKBONE = ("N", "CA", "C", "O")
"""Heavy backbone atoms every standard amino acid must have."""

TORSIONS = {res: [("phi", "N", "CA")] * (res != "PRO") + [("psi", "CA", "C")]
            + [(f"chi{k + 1}", *b.split("-")) for k, b in enumerate(_CHI.get(res, "").split())]
            for res in _SIDE}
"""Residue name -> [(torsion name, atom 1, atom 2)]: the rotatable bonds of each standard
amino acid (the bond about which the torsion turns; IUPAC-IUB 1970). ``omega`` (C of the
residue to N of the next) is added with ``load_structure(..., omega=True)``; amino acids
not listed get ``phi`` and ``psi`` only."""

REQUIRED_ATOMS = {res: BACKBONE + tuple(side.split()) for res, side in _SIDE.items()}
"""Residue name -> heavy atoms a standard amino acid must have (``missing_atoms="error"``)."""


@dataclass
class StructureAtoms:
    """The atoms of a model made by :func:`load_structure`.

    Set as ``model.structure_atoms``: what the writers need to put the atoms back in the
    world.

    Attributes
    ----------
    structure : gemmi.Structure
        The structure as modelled (one model; alternate locations, and hydrogens, waters or
        ligands as requested, removed); its atoms in gemmi's order (chain, residue, atom)
        are atoms ``0 .. natom-1``.
    body : (natom,) int64
        The body that carries each atom.
    local : (natom, 3) float64
        Each atom's position in its body's frame [nm].
    """

    structure: object
    body: np.ndarray
    local: np.ndarray

    @property
    def natom(self) -> int:
        """Number of atoms."""
        return int(self.body.shape[0])


def _resid(chain, res) -> str:
    return f"{chain.name}:{res.name}:{res.seqid.num}{res.seqid.icode.strip()}"


def _read(path, hydrogens, waters, ligands):
    import gemmi

    try:
        st = gemmi.read_structure(str(path))
    except (RuntimeError, ValueError, OSError) as e:
        raise ValueError(f"{path}: gemmi cannot read the structure: {e}") from None
    if len(st) == 0:
        raise ValueError(f"{path}: the structure has no atoms (no model)")
    for k in range(len(st) - 1, 0, -1):
        del st[k]
    st.setup_entities()
    _check_duplicates(st[0], path)
    _standard_elements(st[0])
    st.remove_alternative_conformations()
    if not hydrogens:
        st.remove_hydrogens()
    if not waters:
        st.remove_waters()
    if not ligands:
        _remove_ligands(st[0])
    st.remove_empty_chains()
    return st


def _check_duplicates(model, path):
    """ValueError naming the residue if an atom (name and alternate location) appears twice
    (gemmi's removal of alternate conformations would drop one copy silently)."""
    for chain in model:
        for res in chain:
            seen = set()
            for atom in res:
                key = (atom.name, atom.altloc)
                if key in seen:
                    raise ValueError(f"{path}: residue {_resid(chain, res)}: atom {atom.name} "
                                     f"appears twice")
                seen.add(key)


def _standard_elements(model):
    """Elements of standard amino acids from their atom names (the first letter; SE is
    selenium, D deuterium): files without the element column (CHARMM's) make gemmi guess
    from misaligned names, e.g. calcium for CA."""
    import gemmi

    el = {c: gemmi.Element(c) for c in "CNOSH"}
    el["D"] = gemmi.Element("D")
    se = gemmi.Element("Se")
    for chain in model:
        for res in chain:
            if _ALIASES.get(res.name, res.name) in _SIDE:
                for atom in res:
                    e = se if atom.name == "SE" else el.get(atom.name[:1])
                    if e is not None:
                        atom.element = e


def _remove_ligands(model):
    import gemmi

    for chain in model:
        for k in range(len(chain) - 1, -1, -1):
            if chain[k].entity_type == gemmi.EntityType.NonPolymer:
                del chain[k]


def _atoms(st, path):
    """Flatten the atoms: positions [A], weights, radii [A], heavy flags, residue index per
    atom, per residue (name, resid, {PDB atom name: index}, chain index, is amino acid), and
    the atom names as in the file."""
    import gemmi

    pos, weight, radius, heavy, res_of, atom_name = [], [], [], [], [], []
    residues = []
    for ci, chain in enumerate(st[0]):
        for res in chain:
            rid = _resid(chain, res)
            names = {}
            name = _ALIASES.get(res.name, res.name)
            info = gemmi.find_tabulated_residue(res.name)
            amino = name in _SIDE or (info is not None and info.is_amino_acid())
            for atom in res:
                key = _ATOM_ALIASES.get((name, atom.name),
                                        _ATOM_ALIASES.get((None, atom.name), atom.name))
                names[key] = len(pos)
                atom_name.append(atom.name)
                p = atom.pos
                pos.append((p.x, p.y, p.z))
                el = atom.element
                weight.append(el.weight)
                radius.append(el.covalent_r)
                heavy.append(not el.is_hydrogen)
                res_of.append(len(residues))
            residues.append((name, rid, names, ci, amino))
    if not pos:
        raise ValueError(f"{path}: the structure has no atoms")
    pos = np.array(pos, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(pos).all(axis=1))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"{path}: residue {residues[res_of[k]][1]}: atom {atom_name[k]} has "
                         f"non-finite coordinates {pos[k]}")
    weight = np.array(weight)
    bad = np.flatnonzero(~(weight > 0))
    if bad.size:
        r = residues[res_of[int(bad[0])]]
        raise ValueError(f"{path}: residue {r[1]}: an atom of unknown element (no mass)")
    return (pos, weight, np.array(radius), np.array(heavy), np.array(res_of, dtype=np.int64),
            residues, atom_name)


def _bonds(pos, radius, res_of, residues):
    """(nbond, 2) int64 bonded atom pairs: covalent-radius test within a residue, and the
    peptide bond C(i)-N(i+1) between consecutive amino acids of a chain."""
    from scipy.spatial import cKDTree

    cut = 2.0 * float(radius.max()) + BOND_TOLERANCE
    pairs = cKDTree(pos).query_pairs(cut, output_type="ndarray")
    i, j = pairs[:, 0], pairs[:, 1]
    d = np.linalg.norm(pos[i] - pos[j], axis=1)
    close = d < radius[i] + radius[j] + BOND_TOLERANCE
    same = res_of[i] == res_of[j]
    keep = close & same
    links = []
    for k in range(len(residues) - 1):
        a, b = residues[k], residues[k + 1]
        if a[3] == b[3] and a[4] and b[4] and "C" in a[2] and "N" in b[2]:
            links.append((a[2]["C"], b[2]["N"]))
    links = np.array(links, dtype=np.int64).reshape(-1, 2)
    if links.size:
        d = np.linalg.norm(pos[links[:, 0]] - pos[links[:, 1]], axis=1)
        links = links[d < radius[links[:, 0]] + radius[links[:, 1]] + BOND_TOLERANCE]
    return np.concatenate([pairs[keep], links]).astype(np.int64), links


def _torsions(residues, links, omega, missing_atoms, path):
    """[(atom on the N / inner side, atom on the outer side, joint name suffix, residue
    index)] for every torsion of the table whose two atoms exist."""
    out = []
    link_of = {int(c): int(n) for c, n in links}
    for k, (name, rid, names, _, amino) in enumerate(residues):
        if not amino:
            continue
        if name in REQUIRED_ATOMS and missing_atoms == "error":
            lost = [a for a in REQUIRED_ATOMS[name] if a not in names]
            if lost:
                raise ValueError(f"{path}: residue {rid}: missing atoms {' '.join(lost)} "
                                 f"(load_structure(..., missing_atoms='allow') builds what "
                                 f"is there)")
        for tname, a, b in TORSIONS.get(name, TORSIONS["GLY"]):
            if a in names and b in names:
                out.append((names[a], names[b], tname, k))
        if omega and "C" in names and names["C"] in link_of:
            out.append((names["C"], link_of[names["C"]], "omega", k))
    return out


class _UnionFind:
    def __init__(self, labels):
        self.p = list(range(int(labels.max()) + 1))

    def find(self, x):
        p = self.p
        while p[x] != x:
            p[x] = p[p[x]]
            x = p[x]
        return x


def load_structure(path, *, hydrogens: bool = False, omega: bool = False,
                   floating: bool = False, waters: bool = False, ligands: bool = True,
                   missing_atoms: str = "error") -> Model:
    """Torsion-angle model of a molecular structure (PDB or mmCIF, optionally gzipped).

    The rules (atoms, bonds, joints, bodies, trees, frames, names, units) are those of the
    module docstring of :mod:`articulated.io.structure`; in short, bodies are the rigid
    groups of atoms between rotatable bonds, joints the backbone ``phi``/``psi`` (and
    ``omega``) and side-chain ``chi`` torsions, one tree per chain segment and per ligand.

    Parameters
    ----------
    path : str or Path
        A file gemmi reads (``.pdb``, ``.cif``, ``.ent``, ``.gz`` of these).
    hydrogens : bool
        Keep hydrogen (and deuterium) atoms; they ride on their heavy atom's group (no
        hydrogen rotors).
    omega : bool
        The peptide bond C(i)-N(i+1) is a joint too (``A:ALA:5:omega``).
    floating : bool
        Every tree's root is attached to the world by a ``"free"`` joint (default
        ``"fixed"``: only torsions move).
    waters : bool
        Keep waters (each a rigid body); ligands : bool - keep ligands and ions.
    missing_atoms : {"error", "allow"}
        A standard amino acid missing a heavy atom of :data:`REQUIRED_ATOMS`: ValueError, or
        build what is there.

    Returns
    -------
    Model
        Units nm, u, ps (module docstring), gravity zero, ``q = neutral()`` reproduces the
        file. ``model.structure_atoms`` is a :class:`StructureAtoms` (atom -> body and local
        position; the writers use it); ``model.description`` is ``{"structure": path,
        "sha256": hex of the file, "kwargs": {...}}``.

    Raises
    ------
    ValueError
        Naming the file and the residue: unreadable file, no atoms, non-finite coordinates,
        duplicate atom names, missing atoms, a cycle across a rotatable bond.

    Notes
    -----
    Complexity: O(natom log natom) (the bond search).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components, depth_first_order

    if missing_atoms not in ("error", "allow"):
        raise ValueError(f"missing_atoms must be 'error' or 'allow', got {missing_atoms!r}")
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    st = _read(path, hydrogens, waters, ligands)
    pos, weight, radius, heavy, res_of, residues, atom_name = _atoms(st, path)
    n = pos.shape[0]
    bonds, links = _bonds(pos, radius, res_of, residues)
    tors = _torsions(residues, links, omega, missing_atoms, path)

    # heavy-atom degree: a torsion whose atoms have no other heavy neighbour turns nothing
    hb = bonds[heavy[bonds[:, 0]] & heavy[bonds[:, 1]]]
    hdeg = np.bincount(hb.ravel(), minlength=n)
    tors = [t for t in tors if hdeg[t[0]] > 1 and hdeg[t[1]] > 1]
    rot = {(min(a, b), max(a, b)) for a, b, _, _ in tors}
    rigid = np.array([(a, b) not in rot for a, b in np.sort(bonds, axis=1).tolist()],
                     dtype=bool).reshape(-1)
    rb = bonds[rigid] if bonds.size else bonds
    G = coo_matrix((np.ones(len(rb)), (rb[:, 0], rb[:, 1])), shape=(n, n))
    ngroup, group = connected_components(G, directed=False)   # labels by lowest atom

    # the rotatable bonds must join distinct groups without closing a loop
    uf = _UnionFind(group)
    for a, b, tname, k in tors:
        ga, gb = uf.find(int(group[a])), uf.find(int(group[b]))
        if ga == gb:
            raise ValueError(f"{path}: residue {residues[k][1]}: the bond graph has a cycle "
                             f"across the rotatable bond of {tname} (a ring or an extra bond "
                             f"closes a loop around it)")
        uf.p[max(ga, gb)] = min(ga, gb)
    tree_root = np.array([uf.find(g) for g in range(ngroup)], dtype=np.int64)

    # spanning forest: a virtual node V = ngroup tied to every tree's root group
    roots = np.flatnonzero(tree_root == np.arange(ngroup))
    ta = np.array([group[t[0]] for t in tors], dtype=np.int64)
    tb = np.array([group[t[1]] for t in tors], dtype=np.int64)
    ea = np.concatenate([ta, np.full(len(roots), ngroup)])
    eb = np.concatenate([tb, roots])
    A = coo_matrix((np.ones(len(ea)), (ea, eb)), shape=(ngroup + 1, ngroup + 1)).tocsr()
    order, pred = depth_first_order(A, ngroup, directed=False, return_predecessors=True)
    order = order[1:]
    body_of_group = np.empty(ngroup, dtype=np.int64)
    body_of_group[order] = np.arange(ngroup)
    nb = ngroup
    parent = np.where(pred[order] == ngroup, -1, body_of_group[np.minimum(pred[order], ngroup - 1)])

    # each non-root group's joint: the torsion between it and its parent group
    edge = {}
    for k, (a, b, tname, r) in enumerate(tors):
        edge[(int(group[a]), int(group[b]))] = (a, b, k)
        edge[(int(group[b]), int(group[a]))] = (b, a, k)
    first_atom = np.full(ngroup, n, dtype=np.int64)
    np.minimum.at(first_atom, group, np.arange(n))
    anchor = np.empty(nb, dtype=np.int64)         # joint's child-side atom / root atom
    pivot = np.empty(nb, dtype=np.int64)          # joint's parent-side atom (-1 at roots)
    torsion = np.full(nb, -1, dtype=np.int64)
    for i, g in enumerate(order.tolist()):
        if parent[i] < 0:
            anchor[i], pivot[i] = first_atom[g], -1
        else:
            a, b, k = edge[(int(pred[g]), g)]      # a in the parent group, b in g
            anchor[i], pivot[i], torsion[i] = b, a, k

    # names
    body_name, joint_name, seen = [], [], set()
    for i in range(nb):
        rid = residues[res_of[anchor[i]]][1]
        body_name.append(f"{rid}:{atom_name[anchor[i]]}-group")
        if torsion[i] >= 0:
            t = tors[torsion[i]]
            joint_name.append(f"{residues[t[3]][1]}:{t[2]}")
        else:
            jn = f"{rid}:root"
            joint_name.append(jn if jn not in seen else f"{rid}:{atom_name[anchor[i]]}-root")
            seen.add(joint_name[-1])
    if len(set(body_name)) != nb:
        dup = next(b for b in body_name if body_name.count(b) > 1)
        raise ValueError(f"{path}: residue {dup.rsplit(':', 1)[0]} appears twice (same chain, "
                         f"name and number)")

    # bodies: origin on the anchor atom, axes parallel to the world's; nm, u
    x = pos * ANGSTROM
    body = body_of_group[group]
    origin = x[anchor]
    local = x - origin[body]
    mass = np.bincount(body, weights=weight, minlength=nb)
    com = np.stack([np.bincount(body, weights=weight * local[:, k], minlength=nb)
                    for k in range(3)], axis=1) / mass[:, None]
    d = local - com[body]
    rs = radius * ANGSTROM
    sphere = 0.4 * weight * rs * rs
    dd = np.einsum("ni,ni->n", d, d)
    I_com = np.zeros((nb, 3, 3))
    for r_ in range(3):
        for c_ in range(r_, 3):
            w = -weight * d[:, r_] * d[:, c_]
            if r_ == c_:
                w = w + weight * dd + sphere
            I_com[:, r_, c_] = np.bincount(body, weights=w, minlength=nb)
            I_com[:, c_, r_] = I_com[:, r_, c_]

    jtype = np.full(nb, JOINT_TYPES["revolute"], dtype=np.int64)
    jtype[parent < 0] = JOINT_TYPES["free" if floating else "fixed"]
    axis = np.zeros((nb, 3))
    axis[:, 2] = 1.0
    moving = pivot >= 0
    u = x[anchor[moving]] - x[pivot[moving]]
    axis[moving] = u / np.linalg.norm(u, axis=1)[:, None]
    Xr = origin - np.where(parent[:, None] >= 0, origin[np.maximum(parent, 0)], 0.0)
    model = Model(body_name=body_name, joint_name=joint_name, body_parent=parent,
                  jnt_type=jtype, jnt_axis=axis,
                  jnt_Xtree_E=np.broadcast_to(np.eye(3), (nb, 3, 3)), jnt_Xtree_r=Xr,
                  body_mass=mass, body_com=com, body_I_com=I_com, gravity=np.zeros(3))
    model.structure_atoms = StructureAtoms(st, body, local)
    model.description = {
        "structure": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "kwargs": dict(hydrogens=hydrogens, omega=omega, floating=floating, waters=waters,
                       ligands=ligands, missing_atoms=missing_atoms)}
    return model
