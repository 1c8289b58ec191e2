"""ShotPreview: the last screenshot, drawn with half blocks, and where it was saved."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from viewfinder.core import Screenshot
from viewfinder.tui.preview import HalfBlockImage


class ShotPreview(Static):
    """Hidden until :meth:`show` gets a screenshot; then its preview and its path."""

    DEFAULT_CSS = """
    ShotPreview {
        display: none;
        height: auto;
        border: round $secondary;
        border-title-color: $text;
    }
    ShotPreview.-shown {
        display: block;
    }
    """

    def __init__(self, *, max_width: int = 40, max_height: int = 10, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_width = max_width
        self.max_height = max_height
        self.image: HalfBlockImage | None = None
        self.path: Path | None = None
        self.border_title = "shot"

    def show(self, screenshot: Screenshot, path: Path) -> None:
        """Show ``screenshot`` (saved at ``path``)."""
        width = max(4, min(self.max_width, (self.size.width or self.max_width) - 2))
        self.image = HalfBlockImage(screenshot.to_pil(), width, self.max_height)
        self.path = path
        caption = Text(f"{screenshot.width}x{screenshot.height} from {screenshot.source}\n{path}")
        caption.stylize("dim")
        self.update(Group(self.image, caption))
        self.add_class("-shown")
