"""Torsion-angle models of real proteins (io/structure.py, issue 23) and the PDB writers
(pdb.py). References are independent of the code under test: gemmi reads the file again
(positions, element weights, dihedral angles), ABA with qd = 0 gives the exact
quasi-statics.

Data: tests/data/4E43.pdb.gz, HIV-1 protease dimer with a peptide and acetate / glycerol /
DMSO / BME ligands, alternate locations (PDB 4E43; wwPDB data, CC0 1.0), copied from the
``mdanalysistests`` 2.11.0 package (MDAnalysisTests/data/4E43.pdb, LGPL-2.1+ package) and
gzipped; see tests/data/README.md.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

gemmi = pytest.importorskip("gemmi")

import articulated as art
from articulated.algorithms.quasistatics import AdaptiveQuasiStatics

DATA = Path(__file__).parent / "data"
PDB = DATA / "4E43.pdb.gz"


@pytest.fixture(scope="module")
def model():
    return art.load_structure(PDB)


def _reference():
    """The file read by gemmi alone with the loader's documented filters: first conformer,
    no hydrogens, no waters. (chain, seqnum, icode, atom name) -> position [A]."""
    st = gemmi.read_structure(str(PDB))
    st.setup_entities()
    st.remove_alternative_conformations()
    st.remove_hydrogens()
    st.remove_waters()
    return st


def _key(chain, res, atom):
    return (chain.name, res.seqid.num, res.seqid.icode, res.name, atom.name)


def _modelled(model, x_nm):
    """The model's atoms with their world positions [A], keyed like :func:`_key`."""
    st = model.structure_atoms.structure
    out = {}
    for (chain, res, atom), p in zip(((c.chain, c.residue, c.atom) for c in st[0].all()),
                                     x_nm / art.io.structure.ANGSTROM):
        out[_key(chain, res, atom)] = p
    return out


def test_names_and_counts(model):
    """PDB-style names; one tree per chain segment and per ligand; DOF = torsions."""
    assert model.body_name[0] == "A:PRO:1:N-group"
    assert "A:LYS:14:psi" in model.joint_name and "A:LYS:14:chi4" in model.joint_name
    assert "A:LYS:14:CA-group" in model.body_name and "A:LYS:14:CE-group" in model.body_name
    assert not any(j.endswith(":omega") for j in model.joint_name)
    assert "A:PRO:9:phi" not in model.joint_name            # the N-CA bond is in proline's ring
    st = _reference()
    roots = [model.body_name[i] for i in np.flatnonzero(model.body_parent < 0)]
    # 3 polymer chains + every ligand residue (acetate, glycerols, DMSOs, BME)
    nlig = sum(1 for ch in st[0] for r in ch if r.entity_type == gemmi.EntityType.NonPolymer)
    assert len(roots) == 3 + nlig
    assert roots[:2] == ["A:PRO:1:N-group", "A:DMS:101:S-group"]
    assert model.nv == int((model.jnt_type == 1).sum()) == model.nb - len(roots)
    assert np.all(model.jnt_type[model.body_parent < 0] == 0)      # fixed roots


def test_reproduces_coordinates_at_q0(model):
    """q = neutral puts every atom where the file has it, to 1e-6 A; the model has exactly
    the file's atoms after the documented filters."""
    ref = {_key(ch, r, a): np.array(a.pos.tolist()) for ch in _reference()[0] for r in ch
           for a in r}
    got = _modelled(model, art.atom_positions(model, model.neutral()))
    assert got.keys() == ref.keys() and len(ref) == model.structure_atoms.natom
    err = max(np.abs(got[k] - ref[k]).max() for k in ref)
    assert err <= 1e-6


def test_masses_from_element_weights(model):
    """Total mass = sum of the atoms' element weights (gemmi); the bodies' centres of mass
    at q = 0 give the molecule's mass-weighted centre."""
    atoms = [a for ch in _reference()[0] for r in ch for a in r]
    w = np.array([a.element.weight for a in atoms])
    x = np.array([a.pos.tolist() for a in atoms]) * 0.1
    assert model.body_mass.sum() == pytest.approx(w.sum(), rel=1e-12)
    R, p = art.forward_kinematics(model, model.neutral())
    c = (model.body_mass[:, None] * (p + np.einsum("bij,bj->bi", R, model.body_com))).sum(0)
    np.testing.assert_allclose(c / model.body_mass.sum(), w @ x / w.sum(), atol=1e-12)


@pytest.mark.parametrize("k", [5, 30, 97])
def test_psi_moves_exactly_the_downstream_atoms(model, k):
    """Turning joint ``psi`` of residue k of chain A by delta changes gemmi's psi of that
    residue by delta, no other phi / psi, and moves exactly O of residue k and every atom
    of the later residues of the chain (the chain is rooted at its N-terminus; C lies on the
    CA-C axis and stays)."""
    st = model.structure_atoms.structure
    chain = st[0]["A"]
    res = chain[k]
    delta = 0.7
    q = model.neutral()
    q[model.jnt_qadr[model.joint_id(f"A:{res.name}:{res.seqid.num}:psi")]] = delta
    x0 = _modelled(model, art.atom_positions(model, model.neutral()))
    x1 = _modelled(model, art.atom_positions(model, q))
    moved = {key for key in x0 if np.abs(x1[key] - x0[key]).max() > 1e-9}
    poly = [r for r in chain if r.entity_type == gemmi.EntityType.Polymer]
    expect = {_key(chain, r, a) for r in poly[k + 1:] for a in r}
    expect |= {_key(chain, res, a) for a in res if a.name in ("O", "OXT")}
    assert moved == expect

    def dihedrals(x):
        s = st.clone()
        for cra in s[0].all():
            cra.atom.pos = gemmi.Position(*x[_key(cra.chain, cra.residue, cra.atom)])
        ch = s[0]["A"]
        pol = [r for r in ch if r.entity_type == gemmi.EntityType.Polymer]
        return np.array([gemmi.calculate_phi_psi(pol[i - 1] if i else None, pol[i],
                                                 pol[i + 1] if i + 1 < len(pol) else None)
                         for i in range(len(pol))])

    d = dihedrals(x1) - dihedrals(x0)
    d = np.where(np.isnan(d), 0.0, (d + np.pi) % (2 * np.pi) - np.pi)
    assert d[k, 1] == pytest.approx(delta, abs=1e-9)
    d[k, 1] = 0.0
    assert np.abs(d).max() <= 1e-9


def test_torsion_signs_match_gemmi():
    """phi, chi1 and (with omega=True) omega: joint angle = change of gemmi's dihedral."""
    m = art.load_structure(PDB, omega=True, floating=True)
    st = m.structure_atoms.structure
    ch = st[0]["B"]
    r0, r1, r2 = ch[40], ch[41], ch[42]
    rid = f"B:{r1.name}:{r1.seqid.num}"
    atoms = {a.name: a for a in r1}
    chi1 = ("N", "CA", "CB", next(n for n in ("CG", "CG1", "OG", "OG1", "SG") if n in atoms))

    def measure(q):
        s = st.clone()
        for cra, p in zip(s[0].all(), art.atom_positions(m, q) * 10.0):
            cra.atom.pos = gemmi.Position(*p)
        c = s[0]["B"]
        a, b, d = c[40], c[41], c[42]
        named = {x.name: x.pos for x in b}
        return np.array([gemmi.calculate_phi_psi(a, b, d)[0], gemmi.calculate_omega(b, d),
                         gemmi.calculate_dihedral(*(named[n] for n in chi1))])

    q0 = m.neutral()
    base = measure(q0)
    for col, name in enumerate(("phi", "omega", "chi1")):
        q = q0.copy()
        q[m.jnt_qadr[m.joint_id(f"{rid}:{name}")]] = -0.4
        d = measure(q) - base
        d = (d + np.pi) % (2 * np.pi) - np.pi
        expect = np.zeros(3)
        expect[col] = -0.4
        np.testing.assert_allclose(d, expect, atol=1e-9)
    assert m.jnt_type[0] == 4 and m.nq == m.nv + (m.body_parent < 0).sum()


@pytest.mark.parametrize("floating", [False, True])
def test_quasistatics_eps0_equals_aba(floating):
    """Adaptive quasi-statics on the protein with eps_max = 0 computes the exact
    quasi-statics: ABA with qd = 0, to 1e-9 (forces on a few groups, random torques)."""
    m = art.load_structure(PDB, floating=floating)
    rng = np.random.default_rng(1)
    q = m.neutral()
    moving = m.jnt_type == 1
    q[m.jnt_qadr[moving]] = rng.uniform(-0.3, 0.3, moving.sum())
    f = np.zeros((m.nb, 6))
    f[rng.choice(m.nb, 7, replace=False)] = 50.0 * rng.normal(size=(7, 6))
    tau = rng.normal(size=m.nv)
    s = AdaptiveQuasiStatics(m)
    s.set_state(q, tau, f)
    res = s.solve(0.0, "absolute_linkage")
    ref = art.aba(m, q, np.zeros(m.nv), tau, f)
    assert np.abs(res.qdd - ref).max() <= 1e-9 * np.abs(ref).max()


def test_write_pdb_single_and_multi_model(model, tmp_path):
    """The written PDB reads back (gemmi) with the model's atom positions to the PDB's
    1e-3 A; a (K, nq) array or an object with ``.q`` gives K models."""
    rng = np.random.default_rng(2)
    qs = np.tile(model.neutral(), (3, 1))
    qs[1:, :] += rng.uniform(-0.2, 0.2, (2, model.nq))
    out = art.write_pdb(model, qs[1], tmp_path / "one.pdb")
    st = gemmi.read_structure(str(out))
    assert len(st) == 1
    x = np.array([c.atom.pos.tolist() for c in st[0].all()])
    np.testing.assert_allclose(x, art.atom_positions(model, qs[1]) * 10.0, atol=6e-4)
    names = [(c.chain.name, c.residue.name, c.atom.name) for c in st[0].all()]
    assert names == [(c.chain.name, c.residue.name, c.atom.name)
                     for c in model.structure_atoms.structure[0].all()]

    class Traj:
        q = qs

    st = gemmi.read_structure(str(art.write_pdb(model, Traj(), tmp_path / "traj.pdb")))
    assert len(st) == 3
    for k in range(3):
        x = np.array([c.atom.pos.tolist() for c in st[k].all()])
        np.testing.assert_allclose(x, art.atom_positions(model, qs[k]) * 10.0, atol=6e-4)
    with pytest.raises(ValueError, match=r"shape"):
        art.write_pdb(model, qs[:, :-1], tmp_path / "bad.pdb")
    with pytest.raises(ValueError, match="load_structure"):
        art.write_pdb(art.models.pendulum(3), np.zeros(3), tmp_path / "bad.pdb")


def test_description(model):
    d = model.description
    assert d["structure"] == str(PDB)
    assert d["sha256"] == hashlib.sha256(PDB.read_bytes()).hexdigest()
    again = art.load_structure(d["structure"], **d["kwargs"])
    assert again.body_name == model.body_name
    np.testing.assert_array_equal(again.jnt_axis, model.jnt_axis)


# ------------------------------------------------------------------------- bad files

def _lines():
    return gzip.decompress(PDB.read_bytes()).decode().splitlines()


def _atom_line(lines, chain, seq, name):
    for i, l in enumerate(lines):
        if l.startswith("ATOM") and l[21] == chain and int(l[22:26]) == seq and l[12:16].strip() == name:
            return i
    raise KeyError(name)


def _write(tmp_path, lines, name="bad.pdb"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_truncated_file_names_the_residue(tmp_path):
    lines = _lines()
    i = _atom_line(lines, "A", 14, "CG")          # LYS 14: cut after CG
    p = _write(tmp_path, lines[:i + 1])
    with pytest.raises(ValueError, match=r"residue A:LYS:14: missing atoms CD CE NZ"):
        art.load_structure(p)
    m = art.load_structure(p, missing_atoms="allow")
    assert "A:LYS:14:chi1" in m.joint_name and "A:LYS:14:chi2" not in m.joint_name
    with pytest.raises(ValueError, match=r"LYS A  14"):       # cut inside a line
        art.load_structure(_write(tmp_path, lines[:i] + [lines[i][:40]], "cut.pdb"))


def test_bad_files(tmp_path):
    lines = _lines()
    header = [l for l in lines if not l.startswith(("ATOM", "HETATM", "ANISOU", "TER"))]
    with pytest.raises(ValueError, match="no atoms"):
        art.load_structure(_write(tmp_path, header, "empty.pdb"))
    with pytest.raises(ValueError, match="no such file"):
        art.load_structure(tmp_path / "missing.pdb")
    with pytest.raises(ValueError, match="missing_atoms"):
        art.load_structure(PDB, missing_atoms="guess")
    # NaN coordinates
    bad = list(lines)
    i = _atom_line(bad, "B", 20, "CA")
    bad[i] = bad[i][:30] + "     nan" + bad[i][38:]
    with pytest.raises(ValueError, match=r"residue B:LYS:20: atom CA has non-finite"):
        art.load_structure(_write(tmp_path, bad, "nan.pdb"))
    # the same atom name twice in a residue
    bad = list(lines)
    i = _atom_line(bad, "A", 14, "CB")
    bad.insert(i + 1, bad[i])
    with pytest.raises(ValueError, match=r"residue A:LYS:14: atom CB appears twice"):
        art.load_structure(_write(tmp_path, bad, "dup.pdb"))


def test_cycle_across_a_rotatable_bond(tmp_path):
    """LYS 14's NZ moved to 1.4 A from its CA (a bond by the covalent-radius test) closes a
    ring across chi1..chi4: an error naming the residue."""
    lines = _lines()
    i = _atom_line(lines, "A", 14, "CA")
    j = _atom_line(lines, "A", 14, "NZ")
    ca = np.array([float(lines[i][30 + 8 * k:38 + 8 * k]) for k in range(3)])
    nz = ca + np.array([1.4, 0.0, 0.0])
    lines[j] = lines[j][:30] + "".join(f"{v:8.3f}" for v in nz) + lines[j][54:]
    with pytest.raises(ValueError, match=r"residue A:LYS:14: the bond graph has a cycle"):
        art.load_structure(_write(tmp_path, lines, "ring.pdb"))


def test_charmm_file_without_elements_with_hydrogens():
    """adk_open residues 1-5 (CHARMM: no element column, isoleucine's CD1 named CD,
    hydrogens HT1 ..): elements come from the atom names (gemmi alone guesses calcium for
    CA), hydrogens ride on their heavy atom's group (same joints), q = 0 reproduces every
    atom, the masses are the element weights of the names' first letters."""
    path = DATA / "adk_open_1-5.pdb"
    raw = gemmi.read_structure(str(path))
    assert raw[0][0][0]["CA"][0].element.name == "Ca"        # why the rule exists
    lines = [l for l in path.read_text().splitlines() if l.startswith("ATOM")]
    names = [l[12:16].strip() for l in lines]
    w = np.array([gemmi.Element(n[0]).weight for n in names])
    heavy = np.array([n[0] != "H" for n in names])
    h = art.load_structure(path, hydrogens=True)
    m = art.load_structure(path)
    assert h.structure_atoms.natom == len(lines) and m.structure_atoms.natom == heavy.sum()
    assert h.body_mass.sum() == pytest.approx(w.sum(), rel=1e-12)
    assert m.body_mass.sum() == pytest.approx(w[heavy].sum(), rel=1e-12)
    assert h.joint_name == m.joint_name and ":ILE:3:chi2" in m.joint_name
    ref = np.array([[float(l[30 + 8 * k:38 + 8 * k]) for k in range(3)] for l in lines])
    assert np.abs(art.atom_positions(h, h.neutral()) * 10.0 - ref).max() <= 1e-6


def test_mmcif_and_options(model, tmp_path):
    """The same structure as mmCIF (written by gemmi) gives the same model; ``ligands=False``
    leaves the three polymer chains; ``waters=True`` adds one rigid body per water."""
    st = gemmi.read_structure(str(PDB))
    st.setup_entities()
    cif = tmp_path / "4E43.cif"
    st.make_mmcif_document().write_file(str(cif))
    c = art.load_structure(cif)
    assert c.body_name == model.body_name and c.joint_name == model.joint_name
    np.testing.assert_allclose(c.jnt_Xtree_r, model.jnt_Xtree_r, atol=1e-12)
    np.testing.assert_allclose(c.body_mass, model.body_mass, rtol=1e-12)
    nolig = art.load_structure(PDB, ligands=False)
    assert [nolig.body_name[i] for i in np.flatnonzero(nolig.body_parent < 0)] == [
        "A:PRO:1:N-group", "B:PRO:1:N-group", "C:ASN:2:N-group"]
    assert nolig.nv == model.nv
    wet = art.load_structure(PDB, waters=True)
    nwat = sum(1 for ch in st[0] for r in ch if r.is_water())
    assert wet.nb == model.nb + nwat and wet.nv == model.nv
    assert sum(n.split(":")[1] == "HOH" for n in wet.body_name) == nwat
