"""Scene generators: deterministic models for tests, benchmarks and the papers' examples.

The public generators and their constants, re-exported here only; one module per kind of
scene: :mod:`.trees` (branched trees), :mod:`.chains` (serial chains), :mod:`.humanoids`
and :mod:`.loops` (closed loops), :mod:`.contact_scenes` (chains with collision shapes), with what they share in :mod:`._common`. Every generator
records its arguments as the model's ``description`` (:mod:`.description`), from which
:func:`build_model` rebuilds it.
"""

from ._common import GRAVITY
from .description import SCENES, build_model
from .chains import BICYCLE_PITCH, bicycle_chain, pendulum, prismatic_pair, two_link_arm
from .humanoids import (HUMANOID_BODIES, HUMANOID_DOF, HUMANOID_PELVIS_HEIGHT, crowd,
                        crowd_configuration, humanoid)
from .loops import (FOUR_BAR, JANSEN, four_bar, square_chain, square_net, strandbeest_leg,
                    strandbeest_points)
from .trees import TETRAHEDRAL_ANGLE, millipede, molecule, random_tree
from .contact_scenes import (THREAD_SPEED, capsule_chain, chain_points, helical_gait,
                             hanging_rope, helix_shape, matched_wavenumber, snake_bridge,
                             thread)

__all__ = [
    "GRAVITY", "BICYCLE_PITCH", "HUMANOID_BODIES", "HUMANOID_DOF", "HUMANOID_PELVIS_HEIGHT",
    "FOUR_BAR", "JANSEN", "TETRAHEDRAL_ANGLE",
    "random_tree", "millipede", "molecule",
    "pendulum", "bicycle_chain", "two_link_arm", "prismatic_pair",
    "humanoid", "crowd", "crowd_configuration",
    "square_chain", "square_net", "four_bar", "strandbeest_points", "strandbeest_leg",
    "SCENES", "build_model",
    "THREAD_SPEED", "capsule_chain", "thread", "snake_bridge", "helical_gait", "helix_shape",
    "matched_wavenumber", "chain_points", "hanging_rope",
]
