"""``articulated simulate`` says what it simulated (issue 21, item 9): with --urdf it prints
the root, the total mass and the joints; the plotted point is the body or frame farthest
from the root (not the last body of the depth-first order) or the one named by --body;
--help says there is no contact without --floor, and --floor puts a ground plane under the
robot's URDF collision shapes, on which a dropped box comes to rest."""

from __future__ import annotations

import re

import numpy as np
import pytest

from articulated.cli import main

# base (2 kg) -- long_joint -> long_arm (1 m along x, 1 kg) -- tool (massless, 0.1 m
# further: a frame merged into long_arm); base -- short_joint -> short_arm (0.2 m along y,
# 0.5 kg), declared last, so it is the last body in depth-first order
BRANCHED = """<?xml version="1.0"?>
<robot name="branched">
  <link name="base"><inertial><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="long_joint" type="revolute"><parent link="base"/><child link="long_arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="long_arm"><inertial><origin xyz="0.5 0 0"/><mass value="1.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.08" iyz="0" izz="0.08"/></inertial></link>
  <joint name="tool_joint" type="fixed"><origin xyz="1.1 0 0"/><parent link="long_arm"/>
    <child link="tool"/></joint>
  <link name="tool"/>
  <joint name="short_joint" type="prismatic"><origin xyz="0 0.2 0"/><parent link="base"/>
    <child link="short_arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="short_arm"><inertial><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
</robot>
"""

# one 2 kg box, 0.2 x 0.2 x 0.1 m: its bounding sphere (radius sqrt(0.1^2 + 0.1^2 + 0.05^2)
# = 0.15 m) reaches 0.1 m below its bottom face
BOX = """<?xml version="1.0"?>
<robot name="box">
  <link name="box"><inertial><mass value="2.0"/>
    <inertia ixx="0.00833" ixy="0" ixz="0" iyy="0.00833" iyz="0" izz="0.01333"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
</robot>
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_urdf_run_names_root_mass_joints_and_the_farthest_frame(tmp_path, capsys):
    urdf = _write(tmp_path, "branched.urdf", BRANCHED)
    assert main(["simulate", "--urdf", urdf, "--steps", "5", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # the base link is welded to the world (not simulated): 1 + 0.5 kg move
    assert ("root link 'base': fixed to the world; moving on it: 'long_arm' (revolute joint "
            "'long_joint'), 'short_arm' (prismatic joint 'short_joint'); total mass 1.5 kg"
            in out)
    assert ("joints (2 moving, 2 bodies, nq = 2, nv = 2): long_joint (revolute), short_joint "
            "(prismatic)" in out)
    assert "contact: none (a floating base free-falls" in out
    # the tool frame is 1.1 m from the base origin, the short arm 0.2 m (the last body)
    assert "plotted point: 'tool'" in out
    assert main(["simulate", "--urdf", urdf, "--steps", "5", "--body", "short_arm",
                 "--out", str(tmp_path)]) == 0
    assert "plotted point: 'short_arm'" in capsys.readouterr().out
    assert main(["simulate", "--urdf", urdf, "--body", "nose", "--out", str(tmp_path)]) == 1
    assert "--body 'nose': no such body or frame" in capsys.readouterr().err


def test_help_says_what_is_true_about_contact(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Contact: none unless --floor is given, so a floating-base robot free-falls" in text
    assert "--body NAME" in text


def test_floor_catches_a_dropped_box(tmp_path, capsys):
    """The box starts with its bounding sphere touching the floor, i.e. its bottom 0.1 m
    above it (z0 = 0, floor at z = -0.15 m): it falls 0.1 m (0.14 s) and rests on its bottom
    face, centre at -0.15 + 0.05 = -0.1 m, with four corner contacts."""
    urdf = _write(tmp_path, "box.urdf", BOX)
    rc = main(["simulate", "--urdf", urdf, "--floating-base", "--floor", "--steps", "600",
               "--record-every", "10", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "root link: 'box' (free joint 'root_joint'); total mass 2 kg" in out
    assert "--floor: contact impulses step with semi_implicit_euler and aba" in out
    m = re.search(r"contacts: (\d+) at the end, deepest penetration ([\d.]+) mm", out)
    assert m and int(m.group(1)) == 4 and float(m.group(2)) < 2.0
    data = np.load(tmp_path / "trajectory.npz")
    z = data["q"][:, 2]
    assert z[0] == 0.0 and z[-1] == pytest.approx(-0.1, abs=2e-3)
    assert np.abs(data["qd"][-1]).max() < 1e-2           # at rest
    # without --floor: free fall, z = -g t^2 / 2 (semi-implicit Euler: -g dt^2 k (k + 1) / 2)
    assert main(["simulate", "--urdf", urdf, "--floating-base", "--steps", "100",
                 "--integrator", "semi_implicit_euler", "--out", str(tmp_path)]) == 0
    z = np.load(tmp_path / "trajectory.npz")["q"][-1, 2]
    assert z == pytest.approx(-9.81 * 1e-6 * 100 * 101 / 2, rel=1e-9)
    assert main(["simulate", "pendulum", "--floor", "--out", str(tmp_path)]) == 1
    assert "--floor needs --urdf" in capsys.readouterr().err


# the box on a pendulum whose bob is a point mass (zero inertia, as icub's head): the
# Python API refuses it, the command line repairs it and says so
POINT_BOB = BOX.replace("</robot>", """<joint name="swing" type="revolute"><origin xyz="0 0 -0.1"/>
    <parent link="box"/><child link="bob"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="bob"><inertial><mass value="0.5"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
</robot>""")


def test_an_unphysical_inertia_is_repaired_and_named(tmp_path, capsys):
    """``simulate --urdf`` loads with ``repair="inertia"``: the point-mass bob (0.5 kg) gets
    the inertia of a ball of water of its mass, ``2/5 m r^2`` with ``r = (3 m / (4 pi
    1000))^(1/3)``, and the run prints what was changed."""
    from articulated.io.urdf import load_urdf

    urdf = _write(tmp_path, "bob.urdf", POINT_BOB)
    with pytest.raises(ValueError, match="'bob'"):
        load_urdf(urdf, floating_base=True)
    assert main(["simulate", "--urdf", urdf, "--floating-base", "--floor", "--steps", "50",
                 "--out", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    r = (3 * 0.5 / (4 * np.pi * 1000.0)) ** (1 / 3)
    assert "repaired as load_urdf(..., repair='inertia') does (1 bodies): 'bob'" in out
    assert f"[{0.4 * 0.5 * r * r:.4g} " in out
