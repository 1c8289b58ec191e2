"""Test kit: an X display that viewfinder did not start.

Tests and benchmarks that must show behaviour on "any display" (a plain ``Xvfb :N`` in a
container, a user's own X server) use :class:`HandStartedXvfb`: Xvfb started directly,
with none of the options :class:`~viewfinder.xvfb.Display` adds.
"""

from __future__ import annotations

import os
import select
import subprocess

from viewfinder.xvfb import server, sockets
from viewfinder.xvfb.server import xvfb_binary


class HandStartedXvfb:
    """``Xvfb -displayfd`` started directly, as a user would; stop() ends it.

    ``tcp=True`` makes it listen on TCP and names it ``127.0.0.1:N``: a client reaches it
    over the network stack, where shared memory is refused. ``extra`` are further Xvfb
    arguments (``"-extension", "MIT-SHM"`` turns shared memory off).
    """

    def __init__(self, width: int = 640, height: int = 480, *extra: str, tcp: bool = False) -> None:
        read_fd, write_fd = os.pipe()
        listen = ["-listen", "tcp", "-ac"] if tcp else ["-nolisten", "tcp"]
        screen = ["-screen", "0", f"{width}x{height}x24"]
        self.process = subprocess.Popen(
            [xvfb_binary(), "-displayfd", str(write_fd), *screen, *listen, *extra],
            pass_fds=(write_fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write_fd)
        try:
            number = b""
            while not number.endswith(b"\n"):
                ready, _, _ = select.select([read_fd], [], [], 30)
                chunk = os.read(read_fd, 16) if ready else b""
                if not chunk:
                    self.process.kill()
                    self.process.wait()
                    raise RuntimeError("Xvfb did not report its display number")
                number += chunk
        finally:
            os.close(read_fd)
        self.number = int(number)
        self.name = f"127.0.0.1:{self.number}" if tcp else f":{self.number}"

    def env(self) -> dict[str, str]:
        """This process's environment with DISPLAY set to this display."""
        return {**os.environ, "DISPLAY": self.name}

    def stop(self) -> None:
        """End the Xvfb (idempotent)."""
        server.stop_server(self.process.pid, self.number, child=self.process)

    def __enter__(self) -> HandStartedXvfb:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def socket_left(number: int) -> bool:
    """Whether a socket file of display ``number`` is left with no X server listening as
    it. After a display stops, a file there is left over, unless an X server (another
    test's, on another worker) has taken the number since: then it is that one's."""
    return sockets.socket_path(number).exists() and not sockets.display_listening(number)
