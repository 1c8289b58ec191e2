"""Checks that hold for the whole test suite, whichever folders run."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from viewfinder.core.testing import processes_marked, wait_until

#: Every process the test run starts inherits this variable, however it is started.
RUN_MARKER = "VIEWFINDER_TEST_RUN"
WATCHED = ("Xvfb", "chromium", "chrome", "chrome_crashpad_handler")


@pytest.fixture(scope="session", autouse=True)
def no_display_or_browser_outlives_the_tests() -> Iterator[None]:
    """After the suite, no Xvfb or Chromium started by it may still run."""
    marker = uuid.uuid4().hex
    os.environ[RUN_MARKER] = marker
    try:
        yield
    finally:
        # Browsers and displays stopped by the last tests may take a moment to exit.
        try:
            wait_until(
                lambda: not processes_marked(RUN_MARKER, marker, WATCHED),
                "the displays and browsers started by the tests to exit",
                timeout=20,
            )
        finally:
            os.environ.pop(RUN_MARKER, None)
