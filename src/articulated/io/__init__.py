"""Loaders and writers of model files (model layer): URDF (yourdfpy), and the formats that
later loaders add beside it. Each loader returns a :class:`articulated.model.Model`."""
