"""What is under the viewer's PATH: which kind each artifact is, and reading them.

PATH is one artifact (a session folder, a run folder, a cache or Trajectory JSON
file) or a folder holding several, found up to a few folders deep (the list page).
An artifact is named by its path relative to PATH (``"."``: PATH itself); every name
a page sends is resolved by :class:`~viewfinder.viewer.confine.Confined`, so nothing
outside PATH is reachable. Read artifacts are kept (a few, least recently used first
out) until one of their files changes, so a page's frame requests do not read the
manifest again each time.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.viewer.artifacts.cachefiles import load_cache
from viewfinder.viewer.artifacts.model import (
    ArtifactKind,
    ArtifactView,
    FrameSource,
    LoadedArtifact,
)
from viewfinder.viewer.artifacts.runs import (
    is_browser_shots,
    is_exec_run,
    load_browser_shots,
    load_exec_run,
)
from viewfinder.viewer.artifacts.sessions import is_session, load_session
from viewfinder.viewer.artifacts.trajectories import load_trajectory
from viewfinder.viewer.confine import Confined
from viewfinder.viewer.errors import RefusedPathError, UnknownArtifactError

log = logging.getLogger(__name__)

#: How deep the list page looks for artifacts, and how many it lists at most.
MAX_DEPTH = 3
MAX_LISTED = 500
_CACHE_KEY = re.compile(rb'"trajectory"\s*:')
_TRAJECTORY_KEY = re.compile(rb'"steps"\s*:')
_SNIFF_BYTES = 256 * 1024


def kind_of(path: Path) -> ArtifactKind | None:
    """The kind of artifact ``path`` is; None for a plain folder (or anything else)."""
    if path.is_dir():
        if is_session(path):
            return "recording"
        if is_exec_run(path):
            return "exec-run"
        if is_browser_shots(path):
            return "browser-shots"
        return None
    if path.suffix.lower() == ".json" and path.is_file():
        return sniff_json(path)
    return None


def sniff_json(path: Path) -> ArtifactKind:
    """``cache`` or ``trajectory`` from a JSON file's first bytes; ``unknown`` otherwise."""
    try:
        # not through a symlink, and a FIFO swapped in is not waited on
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(os.path.realpath(path), flags)
    except OSError:
        return "unknown"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "unknown"
        head = os.read(fd, _SNIFF_BYTES)
    except OSError:
        return "unknown"
    finally:
        os.close(fd)
    if head.lstrip().startswith(b"[") or _CACHE_KEY.search(head):
        return "cache"
    if _TRAJECTORY_KEY.search(head):
        return "trajectory"
    return "unknown"


class Catalog:
    """The artifacts under ``root``; ``screen`` gives the image cache files are checked on."""

    def __init__(
        self,
        root: Path,
        screen: Callable[[], tuple[Image.Image, str]] | None = None,
        keep: int = 8,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.folder = self.root if self.root.is_dir() else self.root.parent
        self.confined = Confined(self.folder)
        self._screen = screen
        self._keep = keep
        self._loaded: OrderedDict[str, LoadedArtifact] = OrderedDict()
        self._lock = threading.Lock()

    # -- names --------------------------------------------------------------------------

    def path_of(self, artifact_id: str) -> Path:
        """The artifact named ``artifact_id``; :class:`RefusedPathError` outside the root."""
        if not self.root.is_dir():
            if artifact_id not in (".", ""):
                raise RefusedPathError(
                    f"refused {artifact_id!r}: the viewer shows only {self.root.name}"
                )
            return Path(os.path.realpath(self.root))
        if artifact_id in (".", ""):
            return Path(os.path.realpath(self.root))
        return self.confined.resolve(artifact_id)

    def top(self) -> dict[str, Any]:
        """What PATH is: ``{"kind": ..., "id": "."}`` or the list of what it holds."""
        if not self.root.exists():
            return {"kind": "missing", "message": f"{self.root} does not exist"}
        kind = kind_of(self.root)
        if kind is not None:
            return {"kind": kind, "id": "."}
        if self.root.is_dir():
            return {"kind": "list", "items": self.listing()}
        return {"kind": "unknown", "id": "."}

    def listing(self) -> list[dict[str, Any]]:
        """Artifacts under the root folder, found up to :data:`MAX_DEPTH` folders down."""
        found: list[dict[str, Any]] = []
        self._walk(self.root, 0, found)
        return found

    def _walk(self, folder: Path, depth: int, found: list[dict[str, Any]]) -> None:
        try:
            entries = sorted(folder.iterdir(), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            if len(found) >= MAX_LISTED or entry.name.startswith("."):
                continue
            if not self.confined.contains(entry):
                continue  # a symlink out of the root is not followed, even to list it
            kind = kind_of(entry)
            if kind is not None and kind != "unknown":
                relative = self.confined.relative(entry)
                found.append({"id": relative, "kind": kind, "title": relative})
            elif entry.is_dir() and depth + 1 < MAX_DEPTH:
                self._walk(entry, depth + 1, found)

    # -- reading --------------------------------------------------------------------------

    def load(self, artifact_id: str) -> LoadedArtifact:
        """The artifact ``artifact_id`` read (or kept from a read whose files are unchanged).

        Never raises for what is in the files: problems are in the view. Raises
        :class:`RefusedPathError` for a name outside the root.
        """
        path = self.path_of(artifact_id)
        name = "." if artifact_id in ("", ".") else self.confined.relative(path)
        with self._lock:
            kept = self._loaded.get(name)
        if kept is not None and kept.fresh() and kept.view.kind != "cache":
            with self._lock:
                self._loaded.move_to_end(name)
            return kept
        loaded = finish(self._read(path, name))
        with self._lock:
            self._loaded[name] = loaded
            self._loaded.move_to_end(name)
            while len(self._loaded) > self._keep:
                self._loaded.popitem(last=False)
        return loaded

    def kept(self, artifact_id: str) -> LoadedArtifact:
        """The artifact as last read (read now if it was not)."""
        path = self.path_of(artifact_id)
        name = "." if artifact_id in ("", ".") else self.confined.relative(path)
        with self._lock:
            kept = self._loaded.get(name)
        return kept if kept is not None and kept.fresh() else self.load(artifact_id)

    def _read(self, path: Path, name: str) -> LoadedArtifact:
        if not path.exists():
            raise UnknownArtifactError(f"{name} does not exist")
        kind = kind_of(path)
        try:
            # every file read walks down from PATH (a file given as PATH: from its folder)
            root = self.confined.root if self.root.is_dir() else None
            if kind == "recording":
                return load_session(path, name, root)
            if kind == "exec-run":
                return load_exec_run(path, name, root)
            if kind == "browser-shots":
                return load_browser_shots(path, name)
            if kind == "trajectory":
                return load_trajectory(path, name, root)
            if kind == "cache":
                return self._cache(path, name)
        except Exception as exc:  # the page shows what went wrong; the server keeps serving
            log.exception("reading %s failed", path)
            view = ArtifactView(id=name, kind="unknown", title=path.name, path=str(path))
            view.problem(f"could not be read: {type(exc).__name__}: {exc}")
            return LoadedArtifact(view)
        view = ArtifactView(id=name, kind="unknown", title=path.name, path=str(path))
        view.problem(
            f"{path} is none of what the viewer shows: a recorder session or desktop run "
            "(a folder with manifest.jsonl), a cache file or a Trajectory JSON (.json), an "
            "`exec --out` folder (stdout.txt, stderr.txt, capture-NNN.png) or a browser "
            "--shots folder, or a folder holding some of them"
        )
        return LoadedArtifact(view)

    def _cache(self, path: Path, name: str) -> LoadedArtifact:
        screen, label, trouble = None, None, None
        if self._screen is not None:
            try:
                screen, label = self._screen()
            except Exception as exc:  # no screen to check on is said, not fatal
                trouble = f"the hashes are not checked: {exc}"
        root = self.confined.root if self.root.is_dir() else None
        loaded = load_cache(path, name, screen, label, root)
        if trouble is not None:
            loaded.view.problem(trouble, "warning")
        return loaded


def finish(loaded: LoadedArtifact) -> LoadedArtifact:
    """What every kind of artifact gets once read: its step count, each frame's file
    type, and its version in its frame and video URLs (a frame rewritten under the same
    name, by a rerun into the folder, gets a new URL, so no browser shows the old one
    from its cache)."""
    view = loaded.view
    view.step_count = len(view.steps)
    for step in view.steps:
        if step.frame is not None:
            step.frame_type = file_type(loaded.frames.get((step.index, "frame")))
    if not loaded.stamps:
        return loaded
    mark = f"&v={loaded.version}"
    for step in view.steps:
        step.frame = step.frame and step.frame + mark
        step.thumb = step.thumb and step.thumb + mark
        step.after = step.after and step.after + mark
    for video in view.videos:
        video.url += mark
    return loaded


_MAGIC = ((b"\x89PNG", "png"), (b"\xff\xd8", "jpg"), (b"RIFF", "webp"))


def file_type(source: FrameSource | None) -> str | None:
    """``png``, ``jpg`` or ``webp`` for a frame's file (by its name) or bytes (by their
    first bytes); None when unknown."""
    if isinstance(source, Path):
        suffix = source.suffix.lower().lstrip(".")
        return {"jpeg": "jpg"}.get(suffix, suffix) or None
    if isinstance(source, bytes):
        return next((kind for magic, kind in _MAGIC if source.startswith(magic)), None)
    return None
