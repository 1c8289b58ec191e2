"""Whether an app has handled the input sent before a ping (``XInput.ask_handled``)."""

from __future__ import annotations

from collections.abc import Callable

from viewfinder.xvfb.app_pings import AppPings


class HandledCheck:
    """Whether an app has handled the input sent before a ping (:meth:`XInput.ask_handled`).

    :meth:`answered` looks without waiting; :meth:`wait` waits up to ``timeout`` seconds
    for the answer. An app that lets a wait of at least :data:`SILENT_AFTER_S` go by
    unanswered is asked no more by that XInput (it may not answer pings at all).
    """

    #: An unanswered wait this long marks the app as one that does not answer.
    SILENT_AFTER_S = 1.0

    def __init__(self, pings: AppPings, number: int, unanswered: Callable[[], None]) -> None:
        self._pings = pings
        self._number = number
        self._unanswered = unanswered
        self._done = False

    def answered(self) -> bool:
        """True when the app has answered (it handled the input before the ping)."""
        return self.wait(0.0)

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the answer; True once it came."""
        if not self._done:
            self._done = self._pings.wait(self._number, max(0.0, timeout), keep=True)
            if not self._done and timeout >= self.SILENT_AFTER_S:
                self._unanswered()
        return self._done
