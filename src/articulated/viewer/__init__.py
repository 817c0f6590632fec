"""Live 3D viewer, HTML replay and GIF/MP4 animations of a model and its trajectories.

See it move: the live 3D viewer (viser), the self-contained HTML replay and animations
(GIF, MP4) of a model and its trajectories. An interface-layer package.

:func:`view` - live viewer (:mod:`~articulated.viewer.live`); :func:`to_html` - one-file
replay (:mod:`~articulated.viewer.replay`); :func:`to_gif`, :func:`to_mp4` - animations
(:mod:`~articulated.viewer.animation`); what is drawn: :mod:`~articulated.viewer.scene`.
"""

from .animation import to_gif, to_mp4
from .live import Viewer, ViserScene, view
from .replay import to_html

__all__ = ["Viewer", "ViserScene", "to_gif", "to_html", "to_mp4", "view"]
