"""The live 3D viewer on viser.

The live 3D viewer on viser (a web viewer: ``pip install articulated[viewer]``):
:func:`view` serves the model's bodies at ``http://HOST:PORT`` with a time slider and a play
button for a trajectory; :class:`ViserScene` puts the bodies into any viser server and moves
them to a frame (the HTML replay of :mod:`articulated.viewer.replay` records the same scene).

Each group of bodies that share one mesh (:func:`~articulated.viewer.scene.geometry_groups`)
is one viser batched mesh whose instances are the bodies, so a frame costs one message per
group, not one per body.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..model import Model
from .scene import (MIN_RADIUS, STATIC_RGB, Colors, Frames, body_colors, body_meshes,
                    body_poses, frames, geometry_groups, quaternions, scene_bounds,
                    static_meshes)

CAMERA_DIRECTION = (1.0, -1.6, 0.7)
"""Direction from the scene centre to the initial camera (scaled by the scene radius;
world coordinates when gravity is along -z, else rotated with the up direction)."""


def _nice(x):
    """1, 2 or 5 times a power of ten, the nearest below ``x`` (grid cell sizes) [m]."""
    e = 10.0 ** np.floor(np.log10(x))
    return float(max(m * e for m in (1, 2, 5) if m * e <= x))


def _viser():
    try:
        import viser
    except ImportError:  # pragma: no cover - the message is the point
        raise ImportError("the viewer needs viser: pip install 'articulated[viewer]'") from None
    return viser


def up_direction(model: Model) -> np.ndarray:
    """(3,) unit vector opposite to gravity (+z without gravity)."""
    g = np.asarray(model.gravity, dtype=np.float64)
    n = float(np.linalg.norm(g))
    return -g / n if n > 0 else np.array([0.0, 0.0, 1.0])


def camera_pose(model: Model, p, reach: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Initial camera ``(position (3,), look_at (3,))`` [m] that frames the body origins
    ``p (k, nb, 3)`` of every frame and the shapes reaching ``reach`` [m] from them:
    :data:`CAMERA_DIRECTION` (z taken as the up direction) at 1.8 scene radii (plus
    ``reach``) from the scene centre."""
    center, radius = scene_bounds(p)
    radius += float(reach)
    up = up_direction(model)
    a = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(a, up)
    x /= np.linalg.norm(x)
    d = np.column_stack([x, np.cross(up, x), up]) @ np.asarray(CAMERA_DIRECTION)
    return center + 1.8 * radius * d / np.linalg.norm(d), center


class ViserScene:
    """The bodies of a model in a viser server, posed at any frame of a run.

    Parameters
    ----------
    server : viser.ViserServer
    model : Model
    fr : Frames
        The frames (:func:`~articulated.viewer.scene.frames`).
    colors : Colors
        Per-body colour of each frame (:func:`~articulated.viewer.scene.body_colors`).
    sections : int
        Mesh detail (:func:`~articulated.viewer.scene.body_meshes`).

    Attributes
    ----------
    p : (k, nb, 3) float32
        Body origins [m]; wxyz : (k, nb, 4) float32 - body orientations.
    groups : list of (handle, bodies)
        One batched mesh per group of bodies.
    frame : int
        The frame shown.
    """

    def __init__(self, server, model: Model, fr: Frames, colors: Colors, *, sections: int = 8):
        self.server = server
        self.colors = colors
        p, R = body_poses(model, fr.q)
        self.p = p.astype(np.float32)
        self.wxyz = quaternions(R).astype(np.float32)
        self._recolor = colors.kind != "uniform" and bool((colors.rgb != colors.rgb[:1]).any())
        scene = server.scene
        scene.set_up_direction(tuple(up_direction(model)))
        center, radius = scene_bounds(p)
        meshes = body_meshes(model, sections=sections, min_radius=MIN_RADIUS * radius)
        reach = np.array([0.0 if mh is None else np.linalg.norm(mh.vertices, axis=1).max()
                          for mh in meshes])
        position, look_at = camera_pose(model, p, float(reach.max()))
        server.initial_camera.position = tuple(position)
        server.initial_camera.look_at = tuple(look_at)
        self.groups = []
        for j, (mesh, bodies) in enumerate(geometry_groups(meshes)):
            h = scene.add_batched_meshes_simple(
                f"/bodies/{j}", np.asarray(mesh.vertices, np.float32),
                np.asarray(mesh.faces, np.uint32), batched_wxyzs=self.wxyz[0, bodies],
                batched_positions=self.p[0, bodies], batched_colors=colors.rgb[0, bodies],
                lod="off")
            self.groups.append((h, bodies))
        floors = static_meshes(model, 2.0 * radius, center, planes=True)
        if abs(up_direction(model)[2]) > 0.999:   # z up: a grid on the floor, or under the bodies
            z = (max(float(f.vertices[:, 2].max()) for f in floors) + 1e-3 * radius if floors
                 else float((p[..., 2] - reach).min()))
            scene.add_grid("/grid", width=4 * radius, height=4 * radius,
                           cell_size=_nice(radius / 5), section_size=_nice(radius),
                           position=(center[0], center[1], z))
        for j, mesh in enumerate(floors + static_meshes(model, planes=False)):
            scene.add_mesh_simple(f"/static/{j}", np.asarray(mesh.vertices, np.float32),
                                  np.asarray(mesh.faces, np.uint32), color=STATIC_RGB)
        self.frame = 0

    def show(self, k: int) -> None:
        """Pose (and colour) every body as in frame ``k``, in one atomic scene update."""
        k = int(k)
        with self.server.atomic():
            for h, bodies in self.groups:
                h.batched_positions = self.p[k, bodies]
                h.batched_wxyzs = self.wxyz[k, bodies]
                if self._recolor:
                    h.batched_colors = self.colors.rgb[k, bodies]
        self.frame = k


class Viewer:
    """A live viser viewer of a model (returned by :func:`view`).

    Attributes
    ----------
    server : viser.ViserServer; scene : ViserScene; frames : Frames
    url : str
        Address of the page.
    slider, play, speed : viser GUI handles (None for a single frame)
        The frame index, the play toggle and the playback speed (simulated seconds per
        second).
    """

    def __init__(self, model: Model, traj=None, q=None, *, color=None, color_label: str = "",
                 host: str = "127.0.0.1", port: int = 8080, sections: int = 8,
                 speed: float = 1.0):
        viser = _viser()
        self.frames = frames(model, traj, q)
        colors = body_colors(model, len(self.frames), color, label=color_label)
        if not (np.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be finite and > 0, got {speed}")
        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.scene = ViserScene(self.server, model, self.frames, colors, sections=sections)
        self.slider = self.play = self.speed = None
        self._stop = threading.Event()
        k = len(self.frames)
        gui = self.server.gui
        self._time = gui.add_text("t [s]", initial_value=f"{self.frames.t[0]:.4g}", disabled=True)
        if k > 1:
            self.slider = gui.add_slider("frame", min=0, max=k - 1, step=1, initial_value=0)
            self.play = gui.add_checkbox("play", initial_value=False)
            self.speed = gui.add_number("speed", initial_value=float(speed), min=1e-3, step=0.1)
            self.slider.on_update(lambda _: self._show(self.slider.value))
            threading.Thread(target=self._player, daemon=True).start()

    @property
    def url(self) -> str:
        """The address of the viewer's web page."""
        host = self.server.get_host()
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.server.get_port()}"

    def _show(self, k):
        self.scene.show(k)
        self._time.value = f"{self.frames.t[k]:.4g}"

    def _player(self, fps: float = 30.0):
        """Advance the slider in simulated time while ``play`` is on (wraps around)."""
        t = self.frames.t
        clock = time.perf_counter()
        while not self._stop.wait(1.0 / fps):
            now = time.perf_counter()
            dt, clock = now - clock, now
            if not self.play.value:
                continue
            target = t[self.slider.value] + dt * float(self.speed.value)
            k = int(np.searchsorted(t, target))
            self.slider.value = 0 if k >= len(t) else k   # fires on_update -> _show

    def wait(self) -> None:
        """Block until Ctrl-C, then close."""
        try:
            while not self._stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.close()

    def close(self) -> None:
        """Stop the player and the server."""
        self._stop.set()
        self.server.stop()


def view(model: Model, traj=None, q=None, *, color=None, color_label: str = "",
         host: str = "127.0.0.1", port: int = 8080, block: bool = False, **kwargs) -> Viewer:
    """Show a model, a configuration or a trajectory in a live 3D viewer (viser).

    Open the printed address (``viewer.url``) in a browser: the bodies are drawn from their
    collision shapes, or as capsules between the joint origins sized by mass
    (:func:`~articulated.viewer.scene.body_meshes`); for a trajectory a slider picks the
    frame and ``play`` runs it in simulated time times ``speed``.

    Parameters
    ----------
    model : Model
    traj : trajectory with ``t`` (k,) [s] and ``q`` (k, nq), optional
    q : (nq,) or (k, nq) float64, optional
        Configuration(s) instead of ``traj`` (default the neutral configuration).
    color : (nb,) or (k, nb) bool or float array, optional
        A value per body (and frame): booleans orange/grey (e.g. active joints of an
        adaptive run), numbers by colormap (:func:`~articulated.viewer.scene.body_colors`).
    color_label : str
        What ``color`` is.
    host, port : where to serve (port 0: any free port)
    block : bool
        Serve until Ctrl-C, then return the closed viewer.
    sections : int
        Mesh detail; speed : float - playback speed (default 1: real time).

    Returns
    -------
    Viewer
        ``viewer.url``, ``viewer.scene.show(k)``, ``viewer.close()``.

    Raises
    ------
    ImportError, ValueError
        ImportError without viser, ValueError for bad frames or colours.
    """
    v = Viewer(model, traj, q, color=color, color_label=color_label, host=host, port=port,
               **kwargs)
    print(f"articulated viewer: {v.url}")
    if block:
        v.wait()
    return v
