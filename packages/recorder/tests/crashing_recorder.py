"""Records programmatic actions on an X display as fast as it can, until killed.

Usage: crashing_recorder.py SESSION_DIR DISPLAY
"""

from __future__ import annotations

import itertools
import sys

from viewfinder.recorder import PairingSettings, Recorder


def main() -> None:
    folder, display = sys.argv[1], sys.argv[2]
    recorder = Recorder(
        folder,
        "xvfb",
        backend_options={"display": display},
        interval=0.01,
        resume=True,
        settings=PairingSettings(typing_pause=0.01),
    )
    recorder.start()
    print("recording", flush=True)
    for n in itertools.count():
        recorder.click(n % 800, n % 600)
        recorder.type(f"word {n}")
        recorder.key("ctrl+s")
        recorder.scroll(10, 10, dy=1)


if __name__ == "__main__":
    main()
