"""Animations for documents: GIF and MP4.

Animations for documents: :func:`to_gif` (Pillow) and :func:`to_mp4` (ffmpeg) draw a
trajectory in matplotlib's 3D axes.

Each body is drawn as the triangles of :func:`~articulated.viewer.scene.body_meshes` (its
collision shapes, or capsules between joint origins for a model without any), placed at
the recorded poses, coloured by a per-body value of each frame (e.g. the active joints of
an adaptive run) and lit by :func:`~articulated.viewer.scene.lambert`; the static obstacles
of ``model.collision`` (:func:`~articulated.viewer.scene.static_meshes`) are drawn in grey,
a plane as a floor square under the bodies. A legend or colour bar, axes in metres and the
time in the title go with it. Frames are taken ``speed / fps`` simulated seconds apart (at
most ``max_frames``), so the animation plays the run at ``speed`` times real time.

The axes, the floor and the legend are drawn once by matplotlib; the triangles of each
frame are painted over them farthest first (painter's algorithm, Pillow), which keeps a
frame of a few thousand triangles at a few tens of milliseconds. Meshes with more than
``max_faces`` triangles in all are decimated (:func:`~articulated.viewer.scene.decimate`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model import Model
from .scene import (MIN_RADIUS, STATIC_RGB, body_colors, body_meshes, body_poses, decimate,
                    frames, lambert, scene_bounds, static_meshes)


def frame_indices(t, fps: float, speed: float, max_frames: int) -> np.ndarray:
    """Indices of the recorded times ``t (k,)`` [s] shown by an animation at ``fps`` frames
    per second playing ``speed`` simulated seconds per second: the last recorded time at or
    before ``t[0] + j speed / fps``, thinned evenly to at most ``max_frames``.

    Raises ValueError for fps, speed or max_frames not > 0."""
    if not (fps > 0 and speed > 0 and max_frames >= 1):
        raise ValueError(f"fps, speed and max_frames must be > 0, got {fps}, {speed}, {max_frames}")
    t = np.asarray(t, dtype=np.float64)
    want = t[0] + np.arange(0.0, t[-1] - t[0] + 1e-12, speed / fps) if len(t) > 1 else t[:1]
    idx = np.unique(np.clip(np.searchsorted(t, want + 1e-12, side="right") - 1, 0, len(t) - 1))
    if len(idx) > max_frames:
        idx = idx[np.unique(np.linspace(0, len(idx) - 1, max_frames).round().astype(int))]
    return idx


def _legend(ax, fig, colors, bool_labels):
    import matplotlib
    from matplotlib.lines import Line2D

    if colors.kind == "bool":
        from .scene import BOOL_RGB

        handles = [Line2D([], [], color=np.array(c) / 255, lw=3, label=lab)
                   for c, lab in zip(BOOL_RGB, bool_labels)]
        ax.legend(handles=handles, title=colors.label or None, loc="upper left", fontsize=9)
    elif colors.kind == "scalar":
        sm = matplotlib.cm.ScalarMappable(
            norm=matplotlib.colors.Normalize(colors.vmin, colors.vmax), cmap=colors.cmap)
        fig.colorbar(sm, cax=fig.add_axes((0.9, 0.2, 0.022, 0.55)), label=colors.label,
                     extend="max" if colors.clipped else "neither")


def _triangles(meshes):
    """The meshes ``(mesh or None per body)`` as one triangle soup: ``(V (n, 3) body
    coordinates, vertex body (n,), faces (m, 3) into V, face body (m,))``."""
    V, vb, F, fb, n = [], [], [], [], 0
    for i, m in enumerate(meshes):
        if m is None:
            continue
        V.append(np.asarray(m.vertices, dtype=np.float64))
        vb.append(np.full(len(m.vertices), i, dtype=np.int64))
        F.append(np.asarray(m.faces, dtype=np.int64) + n)
        fb.append(np.full(len(m.faces), i, dtype=np.int64))
        n += len(m.vertices)
    return np.concatenate(V), np.concatenate(vb), np.concatenate(F), np.concatenate(fb)


def _normals(tris):
    """(..., 3) normals (length: twice the area) of triangles ``tris (..., 3, 3)``."""
    return np.cross(tris[..., 1, :] - tris[..., 0, :], tris[..., 2, :] - tris[..., 0, :])


def _static_faces(model, extent, center, planes):
    """Triangles ``(m, 3, 3)`` [m] and lit colours ``(m, 3)`` of the static obstacles
    (:func:`~articulated.viewer.scene.static_meshes`)."""
    meshes = static_meshes(model, extent, center, planes=planes)
    tris = (np.concatenate([np.asarray(m.triangles) for m in meshes]) if meshes
            else np.zeros((0, 3, 3)))
    return tris, lambert(_normals(tris), np.array(STATIC_RGB, np.uint8))


def _body_meshes(model, p, max_faces):
    """Body meshes for an animation: :func:`~articulated.viewer.scene.body_meshes`
    (capsules of at least :data:`~articulated.viewer.scene.MIN_RADIUS` scene radii), each
    decimated to its share (by face count) of ``max_faces``."""
    meshes = body_meshes(model, sections=6, min_radius=MIN_RADIUS * scene_bounds(p)[1])
    total = sum(len(m.faces) for m in meshes if m is not None)
    if total <= max_faces:
        return meshes
    return [None if m is None else decimate(m, max(12, int(max_faces * len(m.faces) / total)))
            for m in meshes]


def animate(model: Model, traj, path, *, writer: str, q=None, color=None,
            color_label: str = "", bool_labels=("False", "True"), vmin=None, vmax=None,
            cmap: str = "viridis", fps: float = 20.0,
            speed: float = 1.0, max_frames: int = 200, size=(6.0, 5.5), dpi: int = 90,
            elev: float = 20.0, azim: float = -60.0, title: str | None = None,
            max_faces: int = 4000, bounds=None) -> Path:
    """Write an animation of a trajectory with matplotlib (``writer``: ``"pillow"`` for
    GIF, ``"ffmpeg"`` for MP4). See :func:`to_gif` for the parameters."""
    from matplotlib import animation
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    if not animation.writers.is_available(writer):
        raise ValueError(f"matplotlib animation writer {writer!r} is not available"
                         + (" (install ffmpeg, e.g. apt-get install ffmpeg)" if writer == "ffmpeg" else ""))
    if int(max_faces) < 1:
        raise ValueError(f"max_faces must be >= 1, got {max_faces}")
    fr = frames(model, traj, q)
    colors = body_colors(model, len(fr), color, label=color_label, cmap=cmap, vmin=vmin,
                         vmax=vmax)
    idx = frame_indices(fr.t, fps, speed, max_frames)
    p, R = body_poses(model, fr.q[idx])
    V, vbody, F, fbody = _triangles(_body_meshes(model, p, max_faces))

    def verts(f):                              # (n, 3) world vertices at frame f
        return np.einsum("vij,vj->vi", R[f][vbody], V) + p[f][vbody]

    obst, obst_rgb = _static_faces(model, 1.0, None, planes=False)
    pts = np.concatenate([verts(f) for f in range(len(idx))] + [obst.reshape(-1, 3)])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.05 * max(float((hi - lo).max()), 1e-3)
    lo, hi = lo - pad, hi + pad
    mid, half = 0.5 * (lo[:2] + hi[:2]), 0.5 * float((hi[:2] - lo[:2]).max())
    lo[:2], hi[:2] = mid - half, mid + half   # square floor; equal scale on the three axes
    floor, floor_rgb = _static_faces(model, half, np.array([mid[0], mid[1], lo[2]]),
                                     planes=True)
    if len(floor):                            # the floor's height is in view
        lo[2], hi[2] = min(lo[2], floor[..., 2].min() - pad), max(hi[2], floor[..., 2].max())
    clip = bounds is not None
    if clip:
        lo, hi = (np.array(b, dtype=np.float64).reshape(3) for b in bounds)
        if not np.all(hi > lo):
            raise ValueError(f"bounds must be (lower (3,), upper (3,)) with upper > lower, "
                             f"got {bounds!r}")

    fig = Figure(figsize=size, dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 0.86 if colors.kind == "scalar" else 1.0, 0.9), projection="3d")
    if len(floor):
        ax.add_collection3d(Poly3DCollection(floor, facecolors=floor_rgb, edgecolors="none",
                                             antialiased=False),
                            axlim_clip=clip)
    from matplotlib.ticker import MaxNLocator

    span = hi - lo
    for k, name in enumerate("xyz"):
        getattr(ax, f"set_{name}lim")(lo[k], hi[k])
        getattr(ax, f"set_{name}label")(f"{name} [m]")
        # true proportions: a flat axis (a chain lying on a floor) gets fewer ticks, not a
        # pile of labels on top of each other
        getattr(ax, f"{name}axis").set_major_locator(
            MaxNLocator(nbins=max(1, int(round(6 * span[k] / span.max())))))
    ax.set_box_aspect(span, zoom=0.95)
    ax.view_init(elev=elev, azim=azim)
    _legend(ax, fig, colors, bool_labels)
    head = title if title is not None else f"{model.nb} bod{'y' if model.nb == 1 else 'ies'}"
    ttl = ax.set_title("")

    def draw(f):
        t = verts(f)[F]
        ttl.set_text(f"{head}\nt = {fr.t[idx[f]]:.2f} s")
        return (np.concatenate([t, obst]),
                np.concatenate([lambert(_normals(t), colors.rgb[idx[f], fbody]), obst_rgb]))

    path = Path(path)
    (_write_gif if writer == "pillow" else _write_mp4)(
        _render(canvas, ax, ttl, draw, len(idx), (lo, hi) if clip else None), path, fps)
    return path


def _render(canvas, ax, ttl, draw, n, clip=None):
    """The ``n`` frames ``(H, W, 3) uint8`` of an animation.

    The figure (axes, floor, legend) is drawn once by matplotlib; each frame
    ``draw(f) -> (triangles (m, 3, 3) world [m], colours (m, 3) in [0, 1])`` sets the
    title ``ttl``, and the triangles are projected by the 3D axes and painted over a copy of
    the figure farthest first (painter's algorithm, Pillow), without those with a corner
    outside ``clip`` ((3,), (3,) world box [m], optional).
    """
    from mpl_toolkits.mplot3d import proj3d
    from PIL import Image, ImageDraw

    ttl.set_visible(False)
    canvas.draw()
    background = canvas.copy_from_bbox(canvas.figure.bbox)
    ttl.set_visible(True)
    H = canvas.figure.bbox.height
    for f in range(n):
        canvas.restore_region(background)
        tris, rgb = draw(f)
        ax.draw_artist(ttl)
        if clip is not None:
            inside = ((tris >= clip[0]) & (tris <= clip[1])).all(axis=(1, 2))
            tris, rgb = tris[inside], rgb[inside]
        x, y, z = proj3d.proj_transform(*tris.reshape(-1, 3).T, ax.M)
        xy = ax.transData.transform(np.column_stack([x, y]))
        xy[:, 1] = H - xy[:, 1]                                # rows from the top
        order = np.argsort(-z.reshape(-1, 3).mean(axis=1), kind="stable")
        im = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
        paint = ImageDraw.Draw(im).polygon
        fill = (255.0 * rgb[order] + 0.5).astype(np.uint8).tolist()
        for corners, c in zip(xy.reshape(-1, 6)[order].tolist(), fill):
            paint(corners, fill=tuple(c))
        yield im


def _write_gif(frames_rgb, path, fps):
    """Write frames (RGB Pillow images) as a looping GIF (Pillow; a 256-colour octree palette per frame)."""
    from PIL import Image

    images = (im.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
              for im in frames_rgb)
    next(images).save(path, save_all=True, append_images=images,
                      duration=round(1000.0 / fps), loop=0)


def _write_mp4(frames_rgb, path, fps):
    """Write frames (RGB Pillow images) as an H.264 MP4 through ffmpeg (matplotlib's ``ffmpeg_path``)."""
    import shutil
    import subprocess
    from itertools import chain

    import matplotlib

    first = next(frames_rgb)
    W, H = first.size
    cmd = [shutil.which(matplotlib.rcParams["animation.ffmpeg_path"]), "-y", "-loglevel",
           "error", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{W}x{H}", "-framerate",
           f"{fps:g}", "-i", "-", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-vcodec", "h264",
           "-pix_fmt", "yuv420p", str(path)]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        for a in chain([first], frames_rgb):
            proc.stdin.write(a.tobytes())
        proc.stdin.close()
        err = proc.stderr.read().decode(errors="replace")
    if proc.returncode:
        raise RuntimeError(f"ffmpeg failed ({proc.returncode}): {err.strip()}")


def to_gif(model: Model, traj, path, **kwargs) -> Path:
    """Write an animated GIF of a trajectory: the bodies' shapes, lit, over the obstacles.

    The bodies are drawn from their collision shapes (capsules between the joint origins
    for a model without any), decimated to ``max_faces`` triangles in all, lit by a fixed
    light (:func:`~articulated.viewer.scene.lambert`); the static obstacles of
    ``model.collision`` are drawn in grey, a plane as a floor square under the bodies.

    Parameters
    ----------
    model : Model
    traj : trajectory with ``t`` (k,) [s] and ``q`` (k, nq), or None with ``q``
    path : str or Path
        The file written.
    q : (k, nq) float64, optional
        Configurations instead of ``traj`` (1 s apart).
    color : (nb,) or (k, nb) bool or float array, optional
        A value per body (and recorded frame): booleans orange/grey with a legend
        (``bool_labels``: the False and True entries), numbers by colormap ``cmap`` over
        ``[vmin, vmax]`` (default the values' range; larger values clipped) with a colour
        bar labelled ``color_label``.
    fps : float
        Frames per second of the animation.
    speed : float
        Simulated seconds per second of animation (1: real time).
    max_frames : int
        At most this many frames (thinned evenly).
    size : (w, h) inches; dpi : int; elev, azim : float
        View angles [deg].
    title : str
        First title line (default: the number of bodies); the time is the second.
    max_faces : int >= 1
        Triangles of the bodies in all (default 4000): more are decimated by vertex
        clustering, each body's mesh to its share (e.g. solo12's 50,000 to 4000), which
        keeps a frame at a few tens of milliseconds; small features may close up.
    bounds : ((3,), (3,)) float, optional
        The world box shown [m] (lower, upper corners; what lies outside is clipped);
        default: everything, with a square floor.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ValueError
        For bad frames, colours or settings, or a missing writer.
    """
    return animate(model, traj, path, writer="pillow", **kwargs)


def to_mp4(model: Model, traj, path, **kwargs) -> Path:
    """Write an MP4 video of a trajectory.

    Uses matplotlib's ffmpeg writer. Parameters as :func:`to_gif`.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ValueError
        When ffmpeg is not installed, and as :func:`to_gif`.
    """
    return animate(model, traj, path, writer="ffmpeg", **kwargs)
