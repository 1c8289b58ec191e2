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

import lazy_loader

# Names are imported on first use: `viewfinder --help` and the plugin manager import this
# package without paying for what its modules import (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
