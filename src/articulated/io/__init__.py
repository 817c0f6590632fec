"""Loaders and writers of model files: URDF, MJCF and molecular structures.

Loaders and writers of model files (model layer): URDF (yourdfpy), molecular structures
(PDB / mmCIF by gemmi: :mod:`~articulated.io.structure`), and the formats that later
loaders add beside it. Each loader returns a :class:`articulated.model.Model`."""
