"""A worker's stdout or stderr, split into steps and bounded.

The worker writes a marker after each step; everything before it belongs to that step.
Output past the limit is not kept: the text keeps its first part and its last part,
with a line between them saying how much was left out, so memory stays bounded however
much the code prints (100 MB of output costs the parent ``limit`` bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The share of the limit given to the start of the output; the rest keeps its end.
_HEAD_SHARE = 0.75


@dataclass
class StreamText:
    """One step's output of one stream."""

    text: str
    total_bytes: int
    truncated: bool


@dataclass
class OutputStream:
    """Collects one pipe's bytes for the current step, up to ``limit`` bytes kept."""

    name: str
    limit: int
    _head: bytearray = field(default_factory=bytearray)
    _tail: bytearray = field(default_factory=bytearray)
    _total: int = 0
    _carry: bytes = b""
    _marker: bytes = b""
    marker_seen: bool = False
    closed: bool = False

    def begin(self, marker: bytes) -> None:
        """Start collecting a step whose output ends at ``marker``.

        Bytes that arrived after the previous marker (from processes the code left
        running) count as this step's output.
        """
        leftover = self._carry
        self._head, self._tail, self._total = bytearray(), bytearray(), 0
        self._carry, self._marker, self.marker_seen = b"", marker, False
        if leftover:
            self.feed(leftover)

    def feed(self, data: bytes) -> None:
        """Add bytes read from the pipe."""
        if self.marker_seen:
            self._carry += data[: self.limit - len(self._carry)]
            return
        if self._marker:
            # The marker may straddle two reads: look in what is held back plus the new bytes.
            window = (
                bytes(self._tail[-len(self._marker) :])
                if self._tail
                else bytes(self._head[-len(self._marker) :])
            )
            joined = window + data
            at = joined.find(self._marker)
            if at >= 0:
                before = at - len(window)
                if before < 0:
                    self._drop_last(-before)
                    before = 0
                self._keep(data[:before])
                self.marker_seen = True
                rest = joined[at + len(self._marker) :]
                self._carry = rest[: self.limit]
                return
        self._keep(data)

    def _drop_last(self, count: int) -> None:
        target = self._tail if self._tail else self._head
        del target[len(target) - count :]
        self._total -= count

    def _keep(self, data: bytes) -> None:
        self._total += len(data)
        head_room = int(self.limit * _HEAD_SHARE) - len(self._head)
        if head_room > 0:
            self._head += data[:head_room]
            data = data[head_room:]
        if data:
            self._tail += data
            tail_limit = self.limit - int(self.limit * _HEAD_SHARE)
            if len(self._tail) > tail_limit:
                del self._tail[: len(self._tail) - tail_limit]

    def result(self) -> StreamText:
        """The step's text, truncated with a marker line when it was over the limit."""
        kept = len(self._head) + len(self._tail)
        if kept >= self._total:
            text = (bytes(self._head) + bytes(self._tail)).decode("utf-8", "replace")
            return StreamText(text=text, total_bytes=self._total, truncated=False)
        left_out = self._total - kept
        head = bytes(self._head).decode("utf-8", "replace")
        tail = bytes(self._tail).decode("utf-8", "replace")
        note = (
            f"\n[... {left_out} bytes of {self.name} left out: the step wrote "
            f"{self._total} bytes, the limit is {self.limit} ...]\n"
        )
        return StreamText(text=head + note + tail, total_bytes=self._total, truncated=True)
