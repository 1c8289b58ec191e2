"""GUI toolkits inside the worker: make what the code drew actually reach the screen.

A toolkit draws lazily: Tk redraws a canvas in an idle callback, matplotlib renders a
figure only when asked, and nothing appears until the event loop runs. Code in a
coding environment rarely runs an event loop (``mainloop()`` would never return), so
:func:`pump` does it for the code before every capture:

- **Tk**: every ``tkinter.Tk`` the code created is tracked (an import hook wraps
  ``Tk.__init__``), and ``update()`` runs on each. Tk's ``update`` processes pending
  events, syncs with the X server and repeats until nothing is left, so afterwards the
  server has drawn every request.
- **matplotlib**: figures whose content changed since they were last drawn are drawn
  again. ``plt.show()`` never blocks here: with an interactive backend (TkAgg, the
  default on a display) it shows the windows and returns; with a non-interactive one
  (Agg) it renders each open figure to an image and shows it in a Tk window of its own,
  titled ``Figure N``, so the figure is on the display like any other window.
- **pygame**: pending events are pumped so the window stays alive. pygame draws to the
  window only on ``pygame.display.flip()`` / ``update()``, as on any screen; call it
  before capturing.

Standard library only at import time; toolkits are touched only once the code imported them.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import sys
import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

_tk_roots: weakref.WeakSet[Any] = weakref.WeakSet()
#: Tk windows showing figures of non-interactive backends, by figure number.
_figure_windows: dict[int, Any] = {}
_figure_host: list[Any] = []  # the hidden Tk root those windows belong to (0 or 1 item)


class _AfterImport:
    # A meta path finder (only find_spec is needed; importlib.abc costs import time).
    """Runs a patch on a module right after it is first imported."""

    def __init__(self, patches: dict[str, Callable[[ModuleType], None]]) -> None:
        self._patches = patches
        self._busy: set[str] = set()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        patch = self._patches.get(fullname)
        if patch is None or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original(module)
            patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _patch_tkinter(tkinter: ModuleType) -> None:
    original_init = tkinter.Tk.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        _tk_roots.add(self)

    tkinter.Tk.__init__ = __init__


def _patch_pyplot(pyplot: ModuleType) -> None:
    original_show = pyplot.show

    def show(*args: Any, **kwargs: Any) -> None:
        """Show the open figures and return at once (see viewfinder.codeenv docs)."""
        from matplotlib._pylab_helpers import Gcf

        managers = Gcf.get_all_fig_managers()
        if any(_is_tk_canvas(manager.canvas) for manager in managers):
            original_show(block=False)
        for manager in managers:
            if not _is_tk_canvas(manager.canvas) and _is_agg_only(manager.canvas):
                _show_in_tk_window(int(manager.num), manager.canvas.figure)
        pump()

    show.__wrapped__ = original_show  # type: ignore[attr-defined]
    pyplot.show = show  # type: ignore[attr-defined]


def install() -> None:
    """Install the import hooks (once per worker, before any code runs)."""
    sys.meta_path.insert(
        0, _AfterImport({"tkinter": _patch_tkinter, "matplotlib.pyplot": _patch_pyplot})
    )


def _is_tk_canvas(canvas: Any) -> bool:
    return hasattr(canvas, "get_tk_widget")


def _is_agg_only(canvas: Any) -> bool:
    # The plain Agg canvas (and subclasses without a window of their own) can render to
    # a buffer but has nowhere to show it.
    manager = getattr(canvas, "manager", None)
    return hasattr(canvas, "buffer_rgba") and type(manager).__name__ == "FigureManagerBase"


def _show_in_tk_window(number: int, figure: Any) -> None:
    import tkinter

    canvas = figure.canvas
    canvas.draw()
    width, height = (int(v) for v in canvas.get_width_height(physical=True))
    from PIL import Image

    image = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    data = base64.b64encode(out.getvalue()).decode("ascii")
    if not _figure_host:
        host = tkinter.Tk()
        host.withdraw()
        _figure_host.append(host)
    existing = _figure_windows.get(number)
    if existing is not None and existing.winfo_exists():
        label = existing.children["figure"]
        photo = tkinter.PhotoImage(master=existing, data=data)
        label.configure(image=photo)
        label.image = photo
        return
    offset = 30 * len(_figure_windows)
    window = tkinter.Toplevel(_figure_host[0])
    window.title(f"Figure {number}")
    window.geometry(f"{width}x{height}+{offset}+{offset}")
    photo = tkinter.PhotoImage(master=window, data=data)
    label = tkinter.Label(window, image=photo, borderwidth=0, highlightthickness=0, name="figure")
    label.image = photo  # type: ignore[attr-defined]  # Tk drops images Python forgets
    label.pack()
    _figure_windows[number] = window


def figure_window(figure: Any) -> int | None:
    """The X window id showing a matplotlib ``figure``, or None when it is not shown."""
    canvas = figure.canvas
    if _is_tk_canvas(canvas):
        return int(canvas.get_tk_widget().winfo_id())
    manager = getattr(canvas, "manager", None)
    window = _figure_windows.get(getattr(manager, "num", -1))
    if window is not None and window.winfo_exists():
        return int(window.winfo_id())
    return None


def pump() -> None:
    """Let every toolkit the code uses draw what it has pending (see the module docstring).

    Only on the main thread: the toolkits are not thread-safe (Tk refuses calls from
    other threads), and a capture from another thread reads the screen as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        from matplotlib._pylab_helpers import Gcf

        for manager in Gcf.get_all_fig_managers():
            figure = manager.canvas.figure
            if figure.stale and _is_tk_canvas(manager.canvas):
                manager.canvas.draw()
            elif figure.stale and manager.num in _figure_windows:
                _show_in_tk_window(manager.num, figure)
    if "tkinter" in sys.modules:
        import tkinter

        for root in list(_tk_roots):
            try:
                root.update()
            except tkinter.TclError:  # destroyed since: nothing of it is on the screen
                _tk_roots.discard(root)
    pygame = sys.modules.get("pygame")
    if pygame is not None and _pygame_window_open(pygame):
        pygame.event.pump()


def _pygame_window_open(pygame: ModuleType) -> bool:
    display = getattr(pygame, "display", None)
    try:
        return bool(display and display.get_init() and display.get_surface() is not None)
    except Exception:  # a half-initialised pygame: treat as no window
        return False
