"""Simulation layer: integrators, applied forces, simulators and what they record.

Simulation layer: integrators, applied forces, the simulators, the factory that picks one
(:func:`Simulator`), and what they record.

Re-exports only (see the modules for the implementations).
"""

from .forces import (Actuators, FramesKinematics, Force, JointDamping, JointTorque, PDController,
                     PiecewiseLinear, PointForce, Spring, StateKinematics)
from .integrators import INTEGRATORS, euler_step, rk4_step, semi_implicit_euler_step
from .trajectory import SimulationDiverged, Trajectory
from .watch import EnergyDriftWarning
from .checkpoint import CheckpointError, RunInterrupted
from .simulator import DynamicsSimulator
from .adaptive import AdaptiveSimulator
from .quasistatic import QuasiStaticSimulator
from .factory import Simulator, resume

__all__ = [
    "Actuators", "Force", "FramesKinematics", "INTEGRATORS", "JointDamping", "JointTorque",
    "PDController",
    "PiecewiseLinear", "PointForce", "AdaptiveSimulator", "DynamicsSimulator",
    "QuasiStaticSimulator",
    "SimulationDiverged", "Simulator", "Spring", "StateKinematics",
    "CheckpointError", "EnergyDriftWarning", "RunInterrupted", "resume",
    "Trajectory", "euler_step", "rk4_step", "semi_implicit_euler_step",
]
