"""articulated: fast simulation of large articulated bodies.

The public surface, re-exported here only (see the modules for the implementations).
"""

from .algorithms.aba import aba, aba_modified, articulated_pivots
from .algorithms.crba import crba, crba_forward_dynamics
from .algorithms.dca_solver import DCA, dca, quasi_statics
from .algorithms.engine import QuasiStaticResult
from .algorithms.quasistatics import AdaptiveQuasiStatics
from .algorithms.adaptive import AdaptiveDynamics
from .assembly import AssemblyTree, build_assembly
from .algorithms.forward_dynamics import forward_dynamics
from .algorithms.contact import collision_matrix
from .algorithms.kinematics import (body_force, body_velocities, energy, forward_kinematics,
                                    jacobian, point_position)
from .algorithms.rnea import bias_forces, gravity_torques, rnea
from .configuration import integrate, normalize, qdot
from .builder import ModelBuilder
from .data import Data
from .geometry import Box, Capsule, CollisionModel, Cylinder, Mesh, Plane, Sphere
from .model import Model
from .simulation import (Actuators, AdaptiveSimulator, DynamicsSimulator, Force, JointDamping,
                         JointTorque, PDController, PiecewiseLinear, PointForce, QuasiStaticSimulator,
                         SimulationDiverged, Simulator, Spring, Trajectory)
from .simulation.srm import KKTSolver, SRMSolver
from .simulation import CheckpointError, EnergyDriftWarning, RunInterrupted
from .io.urdf import load_urdf
from .io.mjcf import load_mjcf
from .io.structure import load_structure
from .pdb import atom_positions, write_pdb
from .sweep import SceneSimulation, sweep
from . import models, robots
from .viewer import to_gif, to_html, to_mp4, view

__version__ = "0.1.0"

__all__ = [
    "Data", "Model", "ModelBuilder", "models", "robots", "load_urdf", "load_mjcf",
    "load_structure", "write_pdb", "atom_positions",
    "Box", "Capsule", "CollisionModel", "Cylinder", "Mesh", "Plane", "Sphere", "collision_matrix",
    "AssemblyTree", "DCA", "build_assembly", "dca", "quasi_statics",
    "AdaptiveQuasiStatics", "QuasiStaticResult", "QuasiStaticSimulator",
    "AdaptiveDynamics", "AdaptiveSimulator", "DynamicsSimulator", "KKTSolver", "SRMSolver",
    "Actuators", "Force", "JointDamping", "JointTorque", "PDController", "PiecewiseLinear",
    "PointForce",
    "SimulationDiverged",
    "Simulator", "Spring", "Trajectory", "integrate", "normalize", "qdot",
    "aba", "aba_modified", "articulated_pivots", "bias_forces", "body_force", "body_velocities", "crba",
    "crba_forward_dynamics", "energy", "forward_dynamics", "forward_kinematics",
    "gravity_torques", "jacobian", "point_position", "rnea",
    "SceneSimulation", "sweep",
    "CheckpointError", "EnergyDriftWarning", "RunInterrupted",
    "to_gif", "to_html", "to_mp4", "view",
]
