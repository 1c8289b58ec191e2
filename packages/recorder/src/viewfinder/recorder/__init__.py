"""viewfinder.recorder: record actions, each paired with the screenshot taken just before it.

>>> from viewfinder.recorder import Recorder, X11RecordInput, load_session
>>> with Recorder("session", "xvfb", backend_options={"display": ":1"},
...               input_source=X11RecordInput(":1")):          # doctest: +SKIP
...     input("recording; press Enter to stop")
>>> trajectory = load_session("session")                        # doctest: +SKIP

A session folder holds ``manifest.jsonl`` (one event per line, each naming its frozen
pre-action frame ``screenshots/N.png``), ``metadata.json`` and the live
``screenshots/current_screenshot.png``; docs/recorder.md describes the format.
"""

from viewfinder.recorder.ai_mime import from_ai_mime, to_ai_mime
from viewfinder.recorder.errors import (
    InputSourceError,
    RecorderError,
    RecorderStateError,
    RecordingFailedError,
    SessionBusyError,
    SessionExistsError,
    SessionFormatError,
    SessionWriteError,
)
from viewfinder.recorder.frames import Frame, FrameStore, UpdaterStats
from viewfinder.recorder.keys import KeyStroke, classify, parse_chord
from viewfinder.recorder.layout import SessionLayout
from viewfinder.recorder.manifest import Manifest, ManifestEntry, ManifestWriter, read_manifest
from viewfinder.recorder.metadata import RecordingRun, SessionMetadata
from viewfinder.recorder.pairing import PairingSettings
from viewfinder.recorder.recorder import Recorder
from viewfinder.recorder.run import RecordingSummary
from viewfinder.recorder.session import Session, load_session, read_session
from viewfinder.recorder.sources import (
    InputSink,
    InputSource,
    ProgrammaticInput,
    make_input_source,
)
from viewfinder.recorder.x11 import X11RecordInput

__all__ = [
    "Frame",
    "FrameStore",
    "InputSink",
    "InputSource",
    "InputSourceError",
    "KeyStroke",
    "Manifest",
    "ManifestEntry",
    "ManifestWriter",
    "PairingSettings",
    "ProgrammaticInput",
    "Recorder",
    "RecorderError",
    "RecorderStateError",
    "RecordingFailedError",
    "RecordingRun",
    "RecordingSummary",
    "Session",
    "SessionBusyError",
    "SessionExistsError",
    "SessionFormatError",
    "SessionLayout",
    "SessionMetadata",
    "SessionWriteError",
    "UpdaterStats",
    "X11RecordInput",
    "classify",
    "from_ai_mime",
    "load_session",
    "make_input_source",
    "parse_chord",
    "read_manifest",
    "read_session",
    "to_ai_mime",
]
