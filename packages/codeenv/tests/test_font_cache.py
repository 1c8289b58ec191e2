"""The font list build never outlives the process that started it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

from viewfinder.core.testing import wait_until


def _running_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


def test_a_process_that_ends_first_takes_the_build_with_it(tmp_path: Path) -> None:
    marker = f"viewfinder-font-build-{uuid.uuid4().hex}"
    program = textwrap.dedent(
        f"""
        import time
        from viewfinder.codeenv import font_cache
        font_cache._BUILD_SCRIPT = "import time  # {marker}\\ntime.sleep(60)"
        font_cache.shared_font_cache()
        time.sleep(0.5)  # the build has started
        print("started", flush=True)
        """
    )
    parent = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert parent.stdout.strip() == "started", parent.stderr
    wait_until(lambda: not _running_with(marker), "the build to end with its parent", timeout=10)
    assert list(tmp_path.iterdir()) == []  # its folder went with it


def test_the_build_starts_in_a_process_whose_fork_handlers_would_hang_a_child() -> None:
    """A Ray actor links gRPC, whose fork handlers may block a plain fork's child on a
    lock another thread holds. The build is started without running anything between
    fork and exec, so it starts there too (here, a handler that would wait forever)."""
    program = textwrap.dedent(
        """
        import os, threading
        from viewfinder.codeenv import font_cache
        held = threading.Lock()
        held.acquire()  # held for good, as by a thread busy at the moment of the fork
        os.register_at_fork(after_in_child=held.acquire)
        print("built" if font_cache.shared_font_cache().wait(timeout=120) else "no list")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=150
    )
    assert result.stdout.strip() == "built", result.stderr
