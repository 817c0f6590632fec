"""Pictures of bodies with shapes (articulated.viewer): the GIF draws each body's collision
shapes, lit, over a floor square; a model without shapes is drawn as capsules; meshes are
decimated to a face budget; the light and the floor square against closed forms.

The GIFs are of hand-built configurations (``to_gif(model, None, path, q=...)``): no
simulation, so nothing here compiles the contact loop.
"""

from __future__ import annotations

import numpy as np
import pytest

import articulated as art
from articulated.geometry import Box, CollisionModel, Plane
from articulated.viewer import scene as vs
from articulated.viewer.animation import to_gif


def _box_on_floor():
    """One box (0.3 x 0.2 x 0.1 m) on a free joint, a floor plane at z = 0; the box's
    configurations: resting on the floor, then 0.2 m higher."""
    b = art.ModelBuilder()
    b.add_body("box", None, joint="free", mass=1.0)
    m = b.build()
    geom = CollisionModel(m)
    geom.add("box", Box(size=(0.3, 0.2, 0.1)))
    geom.add_static(Plane(normal=(0.0, 0.0, 1.0), pos=(0.0, 0.0, 0.0)), names=["floor"])
    m.collision = geom
    q = np.tile(m.neutral(), (2, 1))
    q[:, 2] = (0.05, 0.25)                     # the box's centre height [m]
    return m, q


def _frames_rgb(path):
    from PIL import Image

    im = Image.open(path)
    out = []
    for k in range(im.n_frames):
        im.seek(k)
        out.append(np.asarray(im.convert("RGB")).astype(int))
    return out


def _near(img, rgb, tol=8):
    """Mask of the pixels within ``tol`` (per channel) of the colour ``rgb`` (0-255)."""
    return (np.abs(img - np.asarray(rgb)) <= tol).all(axis=2)


def _lit(normal, rgb):
    """The 0-255 colour of a face of colour ``rgb`` with ``normal``, as the GIF lights it."""
    return np.round(255.0 * vs.lambert(np.asarray(normal, float), np.array(rgb, np.uint8)))


def test_lambert_closed_form():
    l = np.asarray(vs.LIGHT_DIRECTION) / np.linalg.norm(vs.LIGHT_DIRECTION)
    rgb = np.array([200, 100, 50], np.uint8)
    np.testing.assert_allclose(vs.lambert(3.0 * l, rgb), rgb / 255.0)          # facing it
    np.testing.assert_allclose(vs.lambert(-l, rgb), vs.AMBIENT * rgb / 255.0)   # away
    side = np.cross(l, [1.0, 0.0, 0.0])                                        # grazing
    np.testing.assert_allclose(vs.lambert(side, rgb), vs.AMBIENT * rgb / 255.0, atol=1e-12)
    np.testing.assert_allclose(vs.lambert(np.zeros(3), rgb), vs.AMBIENT * rgb / 255.0)


def test_floor_square_lies_on_the_plane_under_the_centre():
    m, _ = _box_on_floor()
    m.collision.add_static(Plane(normal=(0.0, 0.6, 0.8), pos=(0.0, 0.0, 1.0)))
    floor, tilted = vs.static_meshes(m, 0.5, center=(2.0, 3.0, 7.0), planes=True)
    np.testing.assert_allclose(floor.vertices[:, 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(floor.vertices.mean(axis=0), (2.0, 3.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(np.ptp(floor.vertices, axis=0), (1.0, 1.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(floor.face_normals, [[0.0, 0.0, 1.0]] * 2, atol=1e-12)
    n = np.array([0.0, 0.6, 0.8])
    np.testing.assert_allclose((tilted.vertices - (0.0, 0.0, 1.0)) @ n, 0.0, atol=1e-12)
    np.testing.assert_allclose(tilted.face_normals, [n, n], atol=1e-12)
    c = tilted.vertices.mean(axis=0)                   # the centre's projection on the plane
    np.testing.assert_allclose(c - (2.0, 3.0, 7.0), ((c - (2.0, 3.0, 7.0)) @ n) * n, atol=1e-12)
    assert vs.static_meshes(m, planes=False) == []


def test_decimate_keeps_the_shape_within_the_budget():
    import trimesh

    ball = trimesh.creation.icosphere(subdivisions=4, radius=0.1)      # 5120 faces
    small = vs.decimate(ball, 600)
    assert 300 < len(small.faces) <= 600
    assert small.volume == pytest.approx(ball.volume, rel=0.1)
    np.testing.assert_allclose(small.bounds, ball.bounds, atol=0.02)
    assert vs.decimate(ball, 6000) is ball                             # within: unchanged
    # a budget no grid meets without collapsing the mesh: the coarsest grid that draws
    capsule = trimesh.creation.capsule(height=0.1, radius=0.25, count=[6, 6])
    assert len(vs.decimate(capsule, 13).faces) > 0


def test_gif_of_a_box_on_a_floor(tmp_path):
    m, q = _box_on_floor()
    path = to_gif(m, None, tmp_path / "box.gif", q=q, fps=1, dpi=60, max_faces=100)
    shades = [_lit(n, vs.BODY_RGB) for n in np.vstack([np.eye(3), -np.eye(3)])]
    floor_rgb = _lit((0.0, 0.0, 1.0), vs.STATIC_RGB)        # the floor, lit from above
    for k, img in enumerate(_frames_rgb(path)):
        counts = [int(_near(img, c, tol=4).sum()) for c in shades]
        # the box's faces in view, each in its own shade of the body colour
        assert sum(n > 300 for n in counts) >= 2 + k, counts
        body = np.any([_near(img, c, tol=4) for c in shades], axis=0)
        floor = _near(img, floor_rgb)
        rows, cols = np.nonzero(body)
        under = floor[rows.max() + 1:, cols.min():cols.max() + 1].sum()
        assert under > (300, 5000)[k], (k, under)        # resting on it / lifted above it
        assert np.nonzero(floor)[0].mean() > rows.mean() + 20     # lower in the picture


def test_gif_bounds_clip_the_shapes(tmp_path):
    m, q = _box_on_floor()
    shades = [_lit(n, vs.BODY_RGB) for n in np.vstack([np.eye(3), -np.eye(3)])]
    path = to_gif(m, None, tmp_path / "box.gif", q=q, fps=1, dpi=60,
                  bounds=((-0.5, -0.5, 0.12), (0.5, 0.5, 0.5)))
    resting, lifted = _frames_rgb(path)      # the box below the box shown, then inside it
    assert sum(int(_near(resting, c, tol=4).sum()) for c in shades) == 0
    assert sum(int(_near(lifted, c, tol=4).sum()) for c in shades) > 1000


def test_gif_of_a_model_without_shapes(tmp_path):
    """Bodies without collision shapes: capsules along the joint origins, lit."""
    b = art.ModelBuilder()
    b.add_body("a", None, axis=(0, 0, 1), mass=1.0)
    b.add_body("b", "a", axis=(0, 1, 0), origin_xyz=(0.6, 0, 0), mass=1.0)
    m = b.build()
    assert getattr(m, "collision", None) is None
    path = to_gif(m, None, tmp_path / "arm.gif", q=np.array([[0.0, 0.0], [0.5, 0.3]]),
                  fps=1, dpi=60)
    img = _frames_rgb(path)[1]
    ref = np.asarray(vs.BODY_RGB, float)
    # pixels of the body colour scaled by the light (ambient .. full): along its ray
    x = img @ ref / (ref @ ref)
    on_ray = (np.abs(img - x[..., None] * ref).max(axis=2) < 6) & (x > vs.AMBIENT - 0.02)
    assert on_ray.sum() > 200, on_ray.sum()
    assert np.unique(np.round(x[on_ray], 2)).size >= 3        # shaded, not flat


def test_gif_refuses_a_zero_face_budget(tmp_path):
    m, q = _box_on_floor()
    with pytest.raises(ValueError, match="max_faces"):
        to_gif(m, None, tmp_path / "x.gif", q=q, max_faces=0)


def test_cli_simulate_writes_the_gif(tmp_path):
    from PIL import Image

    from articulated.cli import main

    gif = tmp_path / "p.gif"
    assert main(["simulate", "pendulum", "--n", "3", "--steps", "100", "--record-every", "10",
                 "--out", str(tmp_path), "--gif", str(gif)]) == 0
    assert Image.open(gif).n_frames == 3              # 0.1 s at 20 frames/s
