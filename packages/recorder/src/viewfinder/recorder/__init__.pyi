"""Names of viewfinder.recorder, imported on first use (see __init__.py)."""

from .ai_mime import from_ai_mime, to_ai_mime
from .errors import (
    InputSourceError,
    RecorderError,
    RecorderStateError,
    RecordingFailedError,
    SessionBusyError,
    SessionExistsError,
    SessionFormatError,
    SessionWriteError,
)
from .frames import Frame, FrameStore, UpdaterStats
from .keys import KeyStroke, classify, parse_chord
from .layout import SessionLayout
from .manifest import Manifest, ManifestEntry, ManifestWriter, read_manifest
from .metadata import RecordingRun, SessionMetadata
from .pairing import PairingSettings
from .recorder import Recorder
from .run import RecordingSummary
from .session import Session, load_session, read_session
from .sources import InputSink, InputSource, ProgrammaticInput, make_input_source
from .x11 import X11RecordInput

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
