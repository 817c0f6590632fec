"""Simulation layer: configuration-space helpers, integrators, applied forces, the Simulator.

Re-exports only (see the modules for the implementations).
"""

from .forces import (FramesKinematics, Force, JointDamping, JointTorque, PDController,
                     PointForce, Spring, StateKinematics)
from .integrators import (INTEGRATORS, euler_step, integrate, normalize, qdot, rk4_step,
                          semi_implicit_euler_step)
from .adaptive import AdaptiveSimulator, AdaptiveTrajectory
from .quasistatic import QuasiStaticSimulator, QuasiStaticTrajectory
from .simulator import SimulationDiverged, Simulator, Trajectory

__all__ = [
    "Force", "FramesKinematics", "INTEGRATORS", "JointDamping", "JointTorque", "PDController", "PointForce",
    "AdaptiveSimulator", "AdaptiveTrajectory", "QuasiStaticSimulator", "QuasiStaticTrajectory",
    "SimulationDiverged", "Simulator", "Spring", "StateKinematics", "Trajectory",
    "euler_step", "integrate", "normalize", "qdot", "rk4_step", "semi_implicit_euler_step",
]
