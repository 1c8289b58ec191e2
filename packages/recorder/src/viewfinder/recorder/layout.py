"""Where everything of a recording lives inside its session folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SCREENSHOTS = "screenshots"
CURRENT_FRAME = "current_screenshot.png"
PRETYPING_FRAME = "pretyping_screenshot.png"
MANIFEST = "manifest.jsonl"
METADATA = "metadata.json"
LOCK = ".recorder.lock"
VIDEOS = "videos"


@dataclass(frozen=True)
class SessionLayout:
    """The paths of one session folder::

    session/
      manifest.jsonl                  one event per line
      metadata.json                   screen, backend, input source, times, platform
      screenshots/
        current_screenshot.png        the live frame, replaced every interval
        pretyping_screenshot.png      the frame before the current typing burst
        0.png 1.png ...               frozen pre-action frames, one per event
      videos/
        1.mp4 2.mp4 ...               the screen during run 1, 2, ... (``--video``)
    """

    root: Path

    @property
    def screenshots(self) -> Path:
        return self.root / SCREENSHOTS

    @property
    def current(self) -> Path:
        return self.screenshots / CURRENT_FRAME

    @property
    def pretyping(self) -> Path:
        return self.screenshots / PRETYPING_FRAME

    @property
    def videos(self) -> Path:
        return self.root / VIDEOS

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def metadata(self) -> Path:
        return self.root / METADATA

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    @staticmethod
    def frame_ref(seq: int) -> str:
        """How a manifest line names the frame of event ``seq`` (relative to the folder)."""
        return f"{SCREENSHOTS}/{seq}.png"

    def frame(self, seq: int) -> Path:
        return self.root / self.frame_ref(seq)

    def resolve(self, ref: str) -> Path:
        """The file a manifest line's ``screenshot`` reference names."""
        return self.root / ref

    def holds_recording(self) -> bool:
        return self.manifest.exists() or self.metadata.exists()
