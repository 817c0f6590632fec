"""The viewer (articulated.viewer): what it draws (meshes sized by mass, collision shapes,
poses, colours) against closed forms, the GIF and HTML writers, and, in headless Chromium
(Debian's ``chromium``; these tests skip only when it is absent), the HTML replay and the
live viser page: a screenshot shows the expected bodies where a pinhole projection of the
known camera puts them, and moving the slider moves them.
"""

from __future__ import annotations

import colorsys
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import articulated as art
from articulated.geometry import Box, CollisionModel, Sphere
from articulated.viewer import scene as vs
from articulated.viewer.animation import frame_indices, to_gif
from articulated.viewer.live import camera_pose, up_direction, view
from articulated.viewer.replay import to_html

DOCS = Path(__file__).resolve().parents[1] / "docs"


# ----------------------------------------------------------------------- what is drawn

def test_capsule_volume_gives_the_mass():
    # one link of the pendulum: a capsule along its 0.1 m segment holding 0.1 kg of water
    m = art.models.pendulum(3)
    meshes = vs.body_meshes(m, sections=64)
    for i in range(m.nb):
        assert meshes[i].is_watertight
        assert meshes[i].volume == pytest.approx(m.body_mass[i] / vs.DENSITY, rel=2e-3)
    seg = vs.stick_segments(m)
    np.testing.assert_allclose(seg[0][0, 1], m.jnt_Xtree_r[1])          # to the child's joint
    np.testing.assert_allclose(seg[2][0, 1], 2.0 * m.body_com[2])       # leaf: twice its COM


def _arm(spheres=True):
    """Three bodies 0.6 m apart along x, revolute joints about z; a sphere of 0.12 m on
    each body origin (the pixel tests' scene)."""
    b = art.ModelBuilder()
    b.add_body("a", None, axis=(0, 0, 1), mass=1.0)
    b.add_body("b", "a", axis=(0, 0, 1), origin_xyz=(0.6, 0, 0), mass=1.0)
    b.add_body("c", "b", axis=(0, 0, 1), origin_xyz=(0.6, 0, 0), mass=1.0)
    m = b.build()
    if spheres:
        geom = CollisionModel(m)
        for name in m.body_name:
            geom.add(name, Sphere(radius=0.12))
        m.collision = geom
    return m


ARM_Q = np.array([[0.0, 0.0, 0.0], [np.pi / 2, 0.0, 0.0]])
ARM_WORLD = (np.array([[0.0, 0, 0], [0.6, 0, 0], [1.2, 0, 0]]),
             np.array([[0.0, 0, 0], [0.0, 0.6, 0], [0.0, 1.2, 0]]))
"""Body origins of the arm at its two key frames (closed form)."""


def test_collision_shapes_are_drawn_where_placed():
    m = _arm(spheres=False)
    geom = CollisionModel(m)
    geom.add("b", Box(size=(0.2, 0.4, 0.6)), pos=(0.1, 0.0, 0.3))
    m.collision = geom
    meshes = vs.body_meshes(m)
    assert meshes[0] is None and meshes[2] is None
    np.testing.assert_allclose(meshes[1].bounds, [[0.0, -0.2, 0.0], [0.2, 0.2, 0.6]], atol=1e-12)


def test_mesh_shape_is_drawn_with_its_faces():
    from articulated.geometry import Mesh

    m = _arm(spheres=False)
    V = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    geom = CollisionModel(m)
    geom.add("c", Mesh(vertices=V, faces=F, scale=(2.0, 2.0, 2.0)), pos=(0.0, 0.0, 1.0))
    m.collision = geom
    mesh = vs.body_meshes(m)[2]
    np.testing.assert_allclose(mesh.vertices, 2.0 * V + [0.0, 0.0, 1.0])
    assert mesh.faces.tolist() == F.tolist()
    assert mesh.volume == pytest.approx(8.0 / 6.0)              # tetrahedron 2^3 / 6


def test_mp4_needs_ffmpeg(tmp_path):
    from matplotlib import animation

    from articulated.viewer.animation import to_mp4

    m = _arm()
    fr = vs.Frames(t=np.array([0.0, 0.5]), q=ARM_Q)
    if not animation.writers.is_available("ffmpeg"):
        with pytest.raises(ValueError, match="ffmpeg"):
            to_mp4(m, fr, tmp_path / "arm.mp4", fps=2)
    else:
        assert to_mp4(m, fr, tmp_path / "arm.mp4", fps=2, dpi=50).stat().st_size > 1000


def test_poses_and_quaternions_closed_form():
    m = _arm()
    fr = vs.frames(m, q=ARM_Q)
    p, R = vs.body_poses(m, fr.q)
    np.testing.assert_allclose(p[0], ARM_WORLD[0], atol=1e-12)
    np.testing.assert_allclose(p[1], ARM_WORLD[1], atol=1e-12)
    # a rotation by pi/2 about z: (cos pi/4, 0, 0, sin pi/4)
    w = vs.quaternions(R[1])
    np.testing.assert_allclose(np.abs(w), np.tile([np.sqrt(0.5), 0, 0, np.sqrt(0.5)], (3, 1)),
                               atol=1e-12)
    assert vs.geometry_groups(vs.body_meshes(m))[0][1].tolist() == [0, 1, 2]   # one mesh


def test_colors():
    import matplotlib

    m = _arm()
    c = vs.body_colors(m, 2, np.array([[True, False, True], [False, False, True]]))
    assert c.rgb[0, 0].tolist() == list(vs.BOOL_RGB[1]) and c.rgb[1, 0].tolist() == list(vs.BOOL_RGB[0])
    c = vs.body_colors(m, 2, np.array([2.0, 3.0, 4.0]), label="x")
    ref = (255 * np.array(matplotlib.colormaps["viridis"]([0.0, 0.5, 1.0]))[:, :3] + 0.5).astype(int)
    assert (c.rgb[1] == ref).all() and (c.vmin, c.vmax) == (2.0, 4.0)
    assert (vs.body_colors(m, 2).rgb == vs.BODY_RGB).all()
    with pytest.raises(ValueError, match=r"shape \(nb=3,\)"):
        vs.body_colors(m, 2, np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        vs.body_colors(m, 2, np.array([0.0, np.nan, 1.0]))


def test_frames_reject_bad_input():
    m = _arm()
    with pytest.raises(ValueError, match="either traj or q"):
        vs.frames(m, traj=vs.Frames(np.zeros(1), np.zeros((1, 3))), q=np.zeros(3))
    with pytest.raises(ValueError, match=r"\(k, nq=3\)"):
        vs.frames(m, q=np.zeros((2, 4)))
    with pytest.raises(ValueError, match="frame 1 is not finite"):
        vs.frames(m, q=np.array([[0.0, 0, 0], [0, np.inf, 0]]))


def test_frame_indices_play_at_the_given_speed():
    t = np.arange(101) * 0.01                       # 1 s recorded every 10 ms
    assert frame_indices(t, fps=20, speed=1.0, max_frames=100).tolist() == list(range(0, 101, 5))
    assert frame_indices(t, fps=20, speed=0.5, max_frames=100).tolist()[:3] == [0, 2, 5]
    assert len(frame_indices(t, fps=100, speed=1.0, max_frames=11)) == 11
    with pytest.raises(ValueError):
        frame_indices(t, fps=0, speed=1.0, max_frames=10)


def test_gif_frames_and_colours(tmp_path):
    from PIL import Image

    m = _arm()
    fr = vs.Frames(t=np.array([0.0, 0.5, 1.0]), q=np.array([ARM_Q[0], ARM_Q[0], ARM_Q[1]]))
    active = np.array([[False] * 3, [True] * 3, [True] * 3])
    path = to_gif(m, fr, tmp_path / "arm.gif", color=active, fps=2, dpi=50,
                  bool_labels=("rigid", "active"))
    im = Image.open(path)
    assert im.n_frames == 3

    def orange(k):
        im.seek(k)
        a = np.asarray(im.convert("RGB")).astype(int)
        return int((np.abs(a - vs.BOOL_RGB[1]).sum(axis=2) < 40).sum())

    # the legend shows one orange swatch in every frame; the sticks add more when active
    assert orange(1) > orange(0) + 20 and orange(2) > orange(0) + 20


def test_html_replay_size_300_links_400_frames(tmp_path):
    m = art.models.pendulum(300)
    t = np.arange(400) * 0.01
    q = 0.5 * np.sin(2 * np.pi * (t[:, None] * 0.7 + np.arange(300) / 60.0))
    path = to_html(m, vs.Frames(t=t, q=q), tmp_path / "run.html")
    size = path.stat().st_size
    assert 0.8e6 < size < 5e6, size
    assert "__VISER_EMBED_DATA__" in path.read_text()


# ----------------------------------------------------------------------- in a browser

def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=[
            "--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"])
        yield b
        b.close()


def _page(browser, blocked):
    page = browser.new_page(viewport={"width": 900, "height": 640})

    def route(r):           # no network: only the file itself and the local server
        u = r.request.url
        if u.startswith(("file:", "data:", "blob:", "http://127.0.0.1", "ws://127.0.0.1")):
            return r.continue_()
        blocked.append(u)
        return r.abort()

    page.route("**/*", route)
    return page


def _project(points, position, look_at, up, fov_deg, W, H):
    """Pixel coordinates of world points through a pinhole camera (vertical field of view
    ``fov_deg``; three.js's PerspectiveCamera model)."""
    f = look_at - position
    f /= np.linalg.norm(f)
    right = np.cross(f, up)
    right /= np.linalg.norm(right)
    u = np.cross(right, f)
    d = points - position
    z = d @ f
    s = 1.0 / np.tan(np.radians(fov_deg) / 2)
    x = s * (d @ right) / z / (W / H)
    y = s * (d @ u) / z
    return np.stack([(x + 1) / 2 * W, (1 - y) / 2 * H], axis=1)


def _hsv(img):
    a = img[..., :3].reshape(-1, 3) / 255.0
    return np.array([colorsys.rgb_to_hsv(*px) for px in a]).reshape(img.shape[:2] + (3,))


def _screenshot(page, canvas):
    from PIL import Image
    import io

    png = page.screenshot(clip=canvas)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _check_bodies(img, pts, rgb):
    """Each body shows as one blob of its colour (hue within 0.06 of it, saturated; no other
    blob of that colour of more than 300 pixels: the view gizmo is smaller) centred on its
    projected centre (within half the blob's radius: the lighting may bleach a part)."""
    from scipy import ndimage

    hsv = _hsv(img)
    for (x, y), c in zip(pts, rgb):
        h0 = colorsys.rgb_to_hsv(*(np.asarray(c) / 255.0))[0]
        near = (np.abs(((hsv[..., 0] - h0) + 0.5) % 1.0 - 0.5) < 0.06) & (hsv[..., 1] > 0.15)
        blobs, n = ndimage.label(near)
        sizes = ndimage.sum_labels(near, blobs, range(1, n + 1))
        assert int((sizes > 300).sum()) == 1, f"{int((sizes > 300).sum())} blobs of colour {tuple(c)}"
        k = 1 + int(np.argmax(sizes))
        cy, cx = ndimage.center_of_mass(blobs == k)
        r = np.sqrt(sizes[k - 1] / np.pi)
        assert np.hypot(cx - x, cy - y) < 0.5 * r, \
            f"the body of colour {tuple(c)} is at ({cx:.0f}, {cy:.0f}), not ({x:.0f}, {y:.0f})"


def _shows_bodies(page, canvas, pts, rgb, timeout=20.0):
    """The canvas screenshot once it shows the bodies (software WebGL is slow: retried
    until ``timeout`` [s]); the last check's AssertionError otherwise."""
    import time

    end = time.monotonic() + timeout
    while True:
        img = _screenshot(page, canvas)
        try:
            _check_bodies(img, pts, rgb)
            return img
        except AssertionError:
            if time.monotonic() > end:
                from PIL import Image

                Image.fromarray(img).save(Path(__file__).parent / "viewer-failed.png")
                raise
            page.wait_for_timeout(500)


ARM_COLOR = np.array([0.0, 0.5, 1.0])
"""Scalar per body of the arm (viridis: purple, teal, yellow)."""


def _arm_views(m, W, H):
    """Projected body centres at the arm's first and last frame, and their colours."""
    fr = vs.frames(m, q=ARM_Q)
    p, _ = vs.body_poses(m, fr.q)
    position, look_at = camera_pose(m, p, 0.12)            # the spheres' radius
    rgb = vs.body_colors(m, 2, ARM_COLOR).rgb[0]
    return [_project(ARM_WORLD[k], position, look_at, up_direction(m), 75.0, W, H)
            for k in (0, 1)], rgb


def _click_slider(page, fraction):
    """Click the (first) slider's track at ``fraction`` of its length."""
    box = page.locator(".mantine-Slider-root").first.bounding_box()
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + 0.5 * box["height"])


def _close_notifications(page):
    page.evaluate("() => document.querySelectorAll('.mantine-Notification-root "
                  "button').forEach(b => b.click())")


def test_html_replay_in_chromium(browser, tmp_path):
    m = _arm()
    # the last pose is held from t = 0.75 s to 1 s: the replay's slider clicked at 90%
    # shows it (a click at 100% restarts viser's playback from 0)
    q = np.array([ARM_Q[0], ARM_Q[0] + (ARM_Q[1] - ARM_Q[0]) / 3,
                  ARM_Q[0] + 2 * (ARM_Q[1] - ARM_Q[0]) / 3, ARM_Q[1], ARM_Q[1]])
    fr = vs.Frames(t=np.linspace(0.0, 1.0, 5), q=q)
    path = to_html(m, fr, tmp_path / "arm.html", color=ARM_COLOR)
    blocked, logs = [], []
    page = _page(browser, blocked)
    page.on("console", lambda msg: logs.append(msg.text))
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelector('[role=slider]') !== null", timeout=30_000)
    canvas = page.evaluate("() => { const r = document.querySelector('canvas')"
                           ".getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, "
                           "height: r.height}; }")
    W, H = canvas["width"], canvas["height"]
    (first, last), rgb = _arm_views(m, W, H)
    # pause (the play button left of the time box), then move the slider: start, 90%
    page.evaluate(f"() => document.elementFromPoint(20, {H + 20}).closest('button').click()")
    slider = page.locator("[role=slider]")
    _click_slider(page, 0.0)
    img0 = _shows_bodies(page, canvas, first, rgb)
    assert float(slider.get_attribute("aria-valuenow")) == 0.0
    _click_slider(page, 0.9)
    img1 = _shows_bodies(page, canvas, last, rgb)
    assert float(slider.get_attribute("aria-valuenow")) == pytest.approx(0.9, abs=0.02)
    assert np.abs(img1.astype(int) - img0).sum(axis=2).astype(bool).mean() > 0.002
    assert blocked == [] and any("Embedded data loaded" in s for s in logs)
    page.close()


def test_docs_screenshot_of_the_pendulum_replay(browser, tmp_path):
    """The screenshot in docs/guide/viewer.md: a 300-link pendulum replay at t = 1 s (slider at
    its middle), copied to docs/viewer-replay.png when ``ARTICULATED_UPDATE_DOCS=1``."""
    m = art.models.pendulum(300)
    t = np.linspace(0.0, 2.0, 41)
    q = np.zeros((41, 300))                 # swinging about x, bending in the same plane
    q[:, 0] = 0.9 * np.cos(np.pi * t)
    q[:, 2::2] = 0.006 * np.sin(np.pi * t)[:, None]
    path = to_html(m, vs.Frames(t=t, q=q), tmp_path / "p.html",
                   color=np.tile(np.linspace(0.0, 1.0, 300), (41, 1)), color_label="link")
    page = _page(browser, [])
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelector('[role=slider]') !== null", timeout=30_000)
    page.wait_for_timeout(1000)
    _close_notifications(page)                 # the software-WebGL notice, for the picture
    page.evaluate("() => document.elementFromPoint(20, 620).closest('button').click()")
    page.wait_for_timeout(300)
    _click_slider(page, 0.5)
    page.wait_for_function("() => document.querySelector('input').value === '1.0'",
                           timeout=10_000)       # the time box: 1.0 s
    page.wait_for_timeout(1000)
    out = tmp_path / "shot.png"
    page.screenshot(path=out)
    img = np.asarray(__import__("PIL.Image").Image.open(out).convert("RGB"))
    assert (_hsv(img)[..., 1] > 0.3).sum() > 500          # the coloured links
    if os.environ.get("ARTICULATED_UPDATE_DOCS") == "1":      # refresh the docs' picture
        shutil.copy(out, DOCS / "viewer-replay.png")
    page.close()


def test_live_viewer_in_chromium(browser):
    m = _arm()
    fr = vs.Frames(t=np.linspace(0.0, 1.0, 5), q=np.linspace(ARM_Q[0], ARM_Q[1], 5))
    v = view(m, fr, port=0, color=ARM_COLOR)
    try:
        blocked = []
        page = _page(browser, blocked)
        page.goto(v.url)
        page.wait_for_function("() => document.querySelector('[role=slider]') !== null",
                               timeout=30_000)
        page.wait_for_timeout(2000)
        canvas = page.evaluate("() => { const r = document.querySelector('canvas')"
                               ".getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, "
                               "height: r.height}; }")
        (first, last), rgb = _arm_views(m, canvas["width"], canvas["height"])
        img0 = _shows_bodies(page, canvas, first, rgb)
        _click_slider(page, 0.97)          # the GUI slider: frames 0..4, step 1
        img1 = _shows_bodies(page, canvas, last, rgb)
        assert v.slider.value == 4 and v.scene.frame == 4
        assert np.abs(img1.astype(int) - img0).sum(axis=2).astype(bool).mean() > 0.002
        # play: frames 0.25 s apart at speed 1; from the last frame it wraps to the first
        v.play.value = True
        for _ in range(100):                                     # at most 10 s
            if v.slider.value != 4:
                break
            page.wait_for_timeout(100)
        v.play.value = False
        page.wait_for_timeout(300)
        assert 0 <= v.slider.value < 4 and v.scene.frame == v.slider.value
        assert blocked == []
        page.close()
    finally:
        v.close()


# ----------------------------------------------------------------------- command line

def test_cli_view_writes_replay_and_gif(tmp_path, capsys):
    from PIL import Image

    from articulated.cli import main

    assert main(["simulate", "pendulum", "--n", "10", "--steps", "100", "--record-every", "5",
                 "--out", str(tmp_path)]) == 0
    npz, html, gif = tmp_path / "trajectory.npz", tmp_path / "r.html", tmp_path / "r.gif"
    assert main(["view", str(npz), "--scene", "pendulum", "--n", "10", "--html", str(html),
                 "--gif", str(gif)]) == 0
    assert html.stat().st_size > 0.8e6 and "__VISER_EMBED_DATA__" in html.read_text()
    # 21 records 5 ms apart, 0.1 s at 20 frames/s: frames at t = 0, 0.05, 0.1 s
    assert Image.open(gif).n_frames == 3
    # a configuration size that does not fit the named model
    assert main(["view", str(npz), "--scene", "pendulum", "--n", "11", "--html", str(html)]) == 1
    assert "do not fit the model (11 coordinates)" in capsys.readouterr().err


def test_cli_view_without_a_model_description_says_what_to_do(tmp_path, capsys):
    from articulated.cli import main

    m = _arm()                                   # built by hand: nothing to rebuild it from
    art.Trajectory(t=np.zeros(2), q=ARM_Q, qd=np.zeros((2, 3)), kinetic=np.zeros(2),
                   potential=np.zeros(2)).save(tmp_path / "arm.npz")
    assert m.description is None
    assert main(["view", str(tmp_path / "arm.npz"), "--html", str(tmp_path / "a.html")]) == 1
    err = capsys.readouterr().err
    assert "cannot rebuild the model" in err and "--scene" in err
