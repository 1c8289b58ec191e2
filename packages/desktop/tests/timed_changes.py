"""A change watch for settle's logic, without a display: changes at given times, on a
clock the test moves (each wait jumps the clock to the next change, or by its timeout)."""

from __future__ import annotations

from viewfinder.desktop.changes import Damage, ScreenChanges


class TimedChanges(ScreenChanges):
    """Changes at the times in ``frames`` (seconds), on ``clock[0]``."""

    method = "test"

    def __init__(self, clock: list[float], frames: list[float]) -> None:
        super().__init__()
        self.clock = clock
        self.frames = frames

    def mark(self) -> Damage:
        return Damage()

    def wait(self, timeout: float) -> bool:
        due = [at for at in self.frames if at > self.clock[0]]
        if due and due[0] <= self.clock[0] + timeout:
            self.clock[0] = due[0]
            return True
        self.clock[0] += max(timeout, 0.0)
        return False
