"""capture_screenshot() with matplotlib (TkAgg and Agg) and pygame."""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvironment

GOLD, BLUE = (255, 215, 0), (0, 0, 255)


def test_matplotlib_tkagg_figure_is_captured(
    env: CodeEnvironment, example: Callable[[str], str], png: Callable[[str], Image.Image]
) -> None:
    obs = env.step(CodeAction(code=example("matplotlib_plot.py"), timeout_s=120))

    assert obs.exit_code == 0, obs.stderr
    assert "backend tkagg" in obs.stdout  # plt.show() returned instead of blocking
    figure = png(obs.screenshot)  # type: ignore[arg-type]
    colours = {colour for _, colour in figure.getcolors(1 << 20)}  # type: ignore[union-attr]
    assert GOLD in colours  # the axes background
    assert BLUE in colours  # the plotted line


def test_matplotlib_redraws_a_changed_figure_before_capturing(
    env: CodeEnvironment, png: Callable[[str], Image.Image]
) -> None:
    code = (
        "import matplotlib.pyplot as plt\n"
        "fig = plt.figure(figsize=(2, 2), dpi=100)\n"
        "fig.patch.set_facecolor('#ff0000')\n"
        "plt.show()\n"
        "capture_screenshot(window=fig)\n"
        "fig.patch.set_facecolor('#00ff00')\n"  # no draw call: the capture must redraw
        "capture_screenshot(window=fig)\n"
    )
    obs = env.step(CodeAction(code=code, timeout_s=120))

    assert obs.exit_code == 0, obs.stderr
    before, after = (png(shot) for shot in obs.screenshots)
    assert before.getpixel((5, 5)) == (255, 0, 0)
    assert after.getpixel((5, 5)) == (0, 255, 0)


def test_agg_figures_shown_with_plt_show_appear_in_a_window(
    env: CodeEnvironment, png: Callable[[str], Image.Image]
) -> None:
    code = (
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "fig = plt.figure(figsize=(3, 2), dpi=100)\n"
        "fig.patch.set_facecolor('#00ff00')\n"
        "plt.show()\n"
        "capture_screenshot()\n"
        "capture_screenshot(window=fig)\n"
    )
    obs = env.step(CodeAction(code=code, timeout_s=120))

    assert obs.exit_code == 0, obs.stderr
    assert "non-interactive" not in obs.stderr  # no "cannot be shown" warning
    screen, window = (png(shot) for shot in obs.screenshots)
    assert screen.getpixel((10, 10)) == (0, 255, 0)  # the figure window sits at (0, 0)
    assert window.size == (300, 200)
    assert window.getpixel((150, 100)) == (0, 255, 0)


def test_pygame_window_is_captured(
    env: CodeEnvironment, example: Callable[[str], str], png: Callable[[str], Image.Image]
) -> None:
    obs = env.step(CodeAction(code=example("pygame_scene.py"), timeout_s=120))

    assert obs.exit_code == 0, obs.stderr
    window = png(obs.screenshot)  # type: ignore[arg-type]
    assert window.size == (320, 240)
    assert window.getpixel((10, 10)) == (255, 0, 255)
    assert window.getpixel((100, 100)) == (0, 255, 255)
