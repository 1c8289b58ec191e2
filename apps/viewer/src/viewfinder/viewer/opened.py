"""A response that serves a file already open, not a path opened again.

Starlette's ``FileResponse`` opens its path when it sends; a path checked earlier may
by then lead somewhere else. ``/proc/self/fd/N`` names the open file itself (the
kernel's link to that file, whatever its path is now), so the file sent is the one
opened under PATH; range requests work as for any file. The fd is closed when the
response ends, sent or not.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from starlette.responses import FileResponse
from starlette.types import Receive, Scope, Send


class OpenedFileResponse(FileResponse):
    """The open file ``fd`` (closed once sent) as the response."""

    def __init__(
        self, fd: int, *, media_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self._fd = fd
        super().__init__(
            f"/proc/self/fd/{fd}", media_type=media_type, headers=headers, stat_result=os.fstat(fd)
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            os.close(self._fd)
