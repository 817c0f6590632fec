"""Self-contained HTML replay of a trajectory.

Self-contained HTML replay of a trajectory: :func:`to_html` writes one ``.html`` file that
replays the run in any browser, with no server and no network.

It is viser's own scene recording (``ViserServer.get_scene_serializer``, ``as_html``): the
scene of the live viewer (:class:`~articulated.viewer.live.ViserScene`) is recorded once
with one pose update per frame, zstd-compressed and base64-embedded into viser's
single-file client (about 0.8 MB, three.js included), whose playback bar has the play
button and the time slider. One scene code serves the live viewer and the replay (a
vendored three.js page would have been a second renderer of the same scene to keep equal).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

from ..model import Model
from .live import ViserScene, _viser
from .scene import body_colors, frames


def to_html(model: Model, traj, path, *, q=None, color=None, color_label: str = "",
            speed: float = 1.0, sections: int = 6, dark_mode: bool = False) -> Path:
    """Write a trajectory as one self-contained HTML file that replays it.

    No server, no network: open it from disk.

    Parameters
    ----------
    model : Model
        The model drawn.
    traj : Trajectory or None
        A trajectory with ``t`` (k,) [s] and ``q`` (k, nq), or None with ``q``.
    path : str or Path
        The ``.html`` file written.
    q : (k, nq) float64, optional
        Configurations instead of ``traj`` (1 s apart).
    color, color_label : optional
        A value per body and frame and its label (see :func:`articulated.viewer.view`).
    speed : float > 0
        Playback speed (simulated seconds per second of replay).
    sections : int
        Mesh detail (segments around a capsule).
    dark_mode : bool
        Dark background.

    Returns
    -------
    Path
        The file written: the viewer plus 28 bytes per body and frame before compression.

    Raises
    ------
    ImportError
        Without viser.
    ValueError
        For bad frames, colours or speed.
    """
    viser = _viser()
    fr = frames(model, traj, q)
    colors = body_colors(model, len(fr), color, label=color_label)
    if not (np.isfinite(speed) and speed > 0):
        raise ValueError(f"speed must be finite and > 0, got {speed}")
    with contextlib.redirect_stdout(io.StringIO()):   # viser's banner: no page is served
        server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
    try:
        scene = ViserScene(server, model, fr, colors, sections=sections)
        rec = server.get_scene_serializer()
        for k in range(1, len(fr)):
            rec.insert_sleep(float(fr.t[k] - fr.t[k - 1]) / speed)
            scene.show(k)
        html = rec.as_html(dark_mode=dark_mode)
    finally:
        with contextlib.redirect_stdout(io.StringIO()):
            server.stop()
    path = Path(path)
    path.write_text(html, encoding="utf-8")
    return path
