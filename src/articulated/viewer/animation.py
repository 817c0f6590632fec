"""Animations for documents: GIF and MP4.

Animations for documents: :func:`to_gif` (Pillow) and :func:`to_mp4` (ffmpeg) draw a
trajectory with matplotlib's 3D projection and its animation writers.

Each body is drawn as its stick figure (:func:`~articulated.viewer.scene.stick_segments`:
joint origin to the children's joint origins), coloured by a per-body value of each frame
(e.g. the active joints of an adaptive run), with a legend or colour bar, axes in metres and
the time in the title. Frames are taken ``speed / fps`` simulated seconds apart (at most
``max_frames``), so the animation plays the run at ``speed`` times real time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model import Model
from .scene import body_colors, body_poses, frames, stick_segments


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


def _segments_world(segs, body, p, R):
    """(s, 2, 3) world end points of the stick segments ``segs`` of bodies ``body`` at one
    frame (``p (nb, 3)``, ``R (nb, 3, 3)``)."""
    return p[body][:, None, :] + np.einsum("sij,saj->sai", R[body], segs)


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


def animate(model: Model, traj, path, *, writer: str, q=None, color=None,
            color_label: str = "", bool_labels=("False", "True"), vmin=None, vmax=None,
            cmap: str = "viridis", fps: float = 20.0,
            speed: float = 1.0, max_frames: int = 200, size=(6.0, 5.5), dpi: int = 90,
            elev: float = 20.0, azim: float = -60.0, title: str | None = None,
            linewidth: float = 2.5, obstacles=None, bounds=None) -> Path:
    """Write an animation of a trajectory with matplotlib (``writer``: ``"pillow"`` for
    GIF, ``"ffmpeg"`` for MP4). See :func:`to_gif` for the parameters."""
    import matplotlib.pyplot as plt
    from matplotlib import animation
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    if not animation.writers.is_available(writer):
        raise ValueError(f"matplotlib animation writer {writer!r} is not available"
                         + (" (install ffmpeg, e.g. apt-get install ffmpeg)" if writer == "ffmpeg" else ""))
    fr = frames(model, traj, q)
    colors = body_colors(model, len(fr), color, label=color_label, cmap=cmap, vmin=vmin,
                         vmax=vmax)
    idx = frame_indices(fr.t, fps, speed, max_frames)
    p, R = body_poses(model, fr.q[idx])
    segs = stick_segments(model)
    body = np.concatenate([np.full(len(s), i, dtype=np.int64) for i, s in enumerate(segs)])
    seg = np.concatenate(segs) if len(body) else np.zeros((0, 2, 3))
    if not len(body):
        raise ValueError("no body has a stick segment to draw (every body is a point)")
    ends = np.stack([_segments_world(seg, body, p[f], R[f]) for f in range(len(idx))])
    pts = ends.reshape(-1, 3)
    faces = obstacle_faces(obstacles)
    if len(faces):
        pts = np.concatenate([pts] + faces)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.05 * max(float((hi - lo).max()), 1e-3)
    lo, hi = lo - pad, hi + pad
    mid, half = 0.5 * (lo[:2] + hi[:2]), 0.5 * float((hi[:2] - lo[:2]).max())
    lo[:2], hi[:2] = mid - half, mid + half   # square floor; equal scale on the three axes
    clip = bounds is not None
    if clip:
        lo, hi = (np.array(b, dtype=np.float64).reshape(3) for b in bounds)
        if not np.all(hi > lo):
            raise ValueError(f"bounds must be (lower (3,), upper (3,)) with upper > lower, "
                             f"got {bounds!r}")

    fig = plt.figure(figsize=size, dpi=dpi)
    ax = fig.add_axes((0.0, 0.0, 0.86 if colors.kind == "scalar" else 1.0, 0.9), projection="3d")
    if len(faces):
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        ax.add_collection3d(Poly3DCollection(faces, facecolors=(0.55, 0.6, 0.7, 0.35),
                                             edgecolors=(0.3, 0.3, 0.4, 0.5), linewidths=0.3),
                            axlim_clip=clip)
    lines = Line3DCollection(ends[0], colors=colors.rgb[idx[0], body] / 255.0, linewidths=linewidth)
    ax.add_collection3d(lines, axlim_clip=clip)
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
    head = title if title is not None else f"{model.nb} bodies"
    ttl = ax.set_title("")

    def draw(f):
        lines.set_segments(ends[f])
        lines.set_color(colors.rgb[idx[f], body] / 255.0)
        ttl.set_text(f"{head}\nt = {fr.t[idx[f]]:.2f} s")
        return lines, ttl

    anim = animation.FuncAnimation(fig, draw, frames=len(idx), blit=False)
    path = Path(path)
    try:
        anim.save(path, writer=writer, fps=fps, dpi=dpi)
    finally:
        plt.close(fig)
    return path


def obstacle_faces(geom, segments: int = 16) -> list:
    """Polygons (each (k, 3) world [m]) of the static boxes and cylinders of ``geom`` (a
    :class:`~articulated.geometry.CollisionModel`, or None: none), for drawing; other
    static shapes (planes, spheres, capsules, meshes) are not drawn."""
    from ..geometry import SHAPE_BOX, SHAPE_CYLINDER

    out = []
    for r in ([] if geom is None else geom._rows):
        if r["body"] >= 0:
            continue
        h, R, p = np.asarray(r["size"]), np.asarray(r["R"]), np.asarray(r["pos"])
        if r["kind"] == SHAPE_BOX:
            c = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
            for k in range(3):
                for side in (-1, 1):
                    quad = [v for v in c if np.sign(v[k]) == side]
                    quad[2], quad[3] = quad[3], quad[2]        # around the face
                    out.append(p + np.array(quad) @ R.T)
        elif r["kind"] == SHAPE_CYLINDER:
            a = np.linspace(0.0, 2 * np.pi, segments + 1)
            ring = np.stack([h[0] * np.cos(a), h[0] * np.sin(a), np.zeros_like(a)], axis=1)
            for j in range(segments):
                quad = np.array([ring[j] - (0, 0, h[1]), ring[j + 1] - (0, 0, h[1]),
                                 ring[j + 1] + (0, 0, h[1]), ring[j] + (0, 0, h[1])])
                out.append(p + quad @ R.T)
    return out


def to_gif(model: Model, traj, path, **kwargs) -> Path:
    """Write an animated GIF of a trajectory (matplotlib 3D projection, Pillow writer).

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
    linewidth : float
        Width of the stick segments [pt].
    obstacles : CollisionModel, optional
        Its static boxes and cylinders are drawn (translucent grey, :func:`obstacle_faces`)
        and kept in view.
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
