"""Clients of the code env server: :class:`CodingEnv` (sync) and :class:`AsyncCodingEnv`.

Both speak OpenEnv's WebSocket protocol (one session per connection), so they also
drive OpenEnv's own coding env server: an action is sent with only the fields that
differ from their defaults, which for plain code is OpenEnv's ``{"code": ...}``.

Observations come back with ``screenshot``, the last capture; by default the client
asks the server to send it once, in ``screenshots`` only, and puts it back
(``deduplicate_screenshot=False`` takes the full form, as OpenEnv's clients get it).

One client object may be used from several threads (``CodingEnv``) or tasks
(``AsyncCodingEnv``, ``asyncio.gather``) at once: its calls take turns on the session,
each getting its own reply. :meth:`CodingEnv.cancel` stops a running step from
another thread or task.

>>> with CodingEnv.local() as env:                      # doctest: +SKIP
...     env.reset()
...     result = env.step(CodeAction(code="print(1 + 1)"))
...     result.observation.stdout
'2\\n'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as connect_async
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import ClientConnection as SyncConnection
from websockets.sync.client import connect as connect_sync

from viewfinder.codeenv import CodeAction, CodeObservation, CodeState, StepResult
from viewfinder.codeenv.models import observation_from_payload
from viewfinder.server.docker import DockerContainer
from viewfinder.server.errors import EnvServerError, ServerConnectionError
from viewfinder.server.local import LocalServer
from viewfinder.server.settings import ServerSettings

#: Largest message accepted (observations carry base64 screenshots).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


def ws_url(base_url: str) -> str:
    """``http(s)://host:port[/prefix]`` (or ``ws(s)://``) to the session WebSocket URL."""
    url = base_url.rstrip("/")
    for http, ws in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(http):
            url = ws + url[len(http) :]
    if not url.startswith(("ws://", "wss://")):
        url = "ws://" + url
    return url + "/ws"


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _reset_message(seed: int | None, episode_id: str | None) -> str:
    data = {
        key: value
        for key, value in (("seed", seed), ("episode_id", episode_id))
        if value is not None
    }
    return json.dumps({"type": "reset", "data": data})


def _step_message(action: CodeAction | str) -> str:
    if isinstance(action, str):
        action = CodeAction(code=action)
    return json.dumps({"type": "step", "data": action.model_dump(exclude_defaults=True)})


def _reply(raw: str | bytes, expected: str) -> dict[str, Any]:
    message = json.loads(raw)
    if message.get("type") == "error":
        raise EnvServerError(message.get("data", {}))
    if message.get("type") != expected:
        raise ServerConnectionError(f"expected a {expected!r} message, got {message.get('type')!r}")
    data: dict[str, Any] = message.get("data", {})
    return data


def _result(data: dict[str, Any]) -> StepResult[CodeObservation]:
    observation = observation_from_payload(data)
    return StepResult(
        observation=observation, reward=data.get("reward"), done=bool(data.get("done"))
    )


def _closed_error(exc: Exception, url: str) -> ServerConnectionError:
    if isinstance(exc, ConnectionClosed) and exc.rcvd is not None and exc.rcvd.reason:
        return ServerConnectionError(f"the server closed the session: {exc.rcvd.reason}")
    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        hint = " (missing or wrong token)" if status == 401 else ""
        return ServerConnectionError(
            f"the server at {url} refused the session: HTTP {status}{hint}"
        )
    return ServerConnectionError(f"lost the connection to {url}: {exc}")


class _EnvClient:
    """What both clients hold: where the server is, how to authenticate, what they started."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        connect_timeout_s: float = 30.0,
        message_timeout_s: float | None = 3600.0,
        deduplicate_screenshot: bool = True,
    ) -> None:
        self.base_url = base_url
        self.url = ws_url(base_url)
        #: Asks the server to send the last capture once (``/ws?screenshot=deduplicated``);
        #: the observation read back has ``screenshot`` all the same.
        self._connect_url = self.url + (
            "?screenshot=deduplicated" if deduplicate_screenshot else ""
        )
        self._token = token
        self._connect_timeout = connect_timeout_s
        self._message_timeout = message_timeout_s
        self._local: LocalServer | None = None
        self._container: DockerContainer | None = None


class CodingEnv(_EnvClient):
    """A session on a code env server, synchronous. Use it as a context manager.

    ``CodingEnv(base_url, token=None)`` connects to a running server; :meth:`local`
    starts one on loopback for this client; :meth:`from_docker_image` runs the server
    image with Docker. :meth:`close` stops whatever the client started.
    """

    _ws: SyncConnection | None = None

    def __init__(self, base_url: str, **options: Any) -> None:
        super().__init__(base_url, **options)
        # one request and its reply at a time: replies carry no id to match them by
        self._turn = threading.Lock()
        self._connecting = threading.Lock()

    @classmethod
    def local(cls, settings: ServerSettings | None = None, **options: Any) -> CodingEnv:
        """Start a server on 127.0.0.1 (a free port) for this client; :meth:`close` stops it."""
        server = LocalServer(settings).start()
        client = cls(server.base_url, token=server.settings.token, **options)
        client._local = server
        return client

    @classmethod
    def from_docker_image(cls, image: str, *, start_timeout: float = 120.0) -> CodingEnv:
        """Run ``image`` with Docker and connect (:class:`DockerUnavailableError` without one)."""
        container = DockerContainer(image, start_timeout=start_timeout).start()
        assert container.base_url is not None
        client = cls(container.base_url, token=container.token)
        client._container = container
        return client

    def connect(self) -> CodingEnv:
        """Open the session (done by the first call when not done before)."""
        with self._connecting:
            self._open()
        return self

    def _open(self) -> None:
        if self._ws is None:
            try:
                connection = connect_sync(
                    self._connect_url,
                    additional_headers=_headers(self._token),
                    open_timeout=self._connect_timeout,
                    max_size=MAX_MESSAGE_BYTES,
                )
                # Entered as a context manager (websockets' way to hold one open), left in close().
                self._ws = connection.__enter__()
            except (OSError, WebSocketException) as exc:
                raise _closed_error(exc, self.url) from exc

    def _call(self, message: str, expected: str) -> dict[str, Any]:
        with self._turn:
            ws = self.connect()._ws
            if ws is None:
                raise ServerConnectionError(f"the session at {self.url} was closed")
            try:
                ws.send(message)
                raw = ws.recv(timeout=self._message_timeout)
            except (OSError, TimeoutError, WebSocketException) as exc:
                raise _closed_error(exc, self.url) from exc
            return _reply(raw, expected)

    def cancel(self) -> None:
        """Stop the step running on this session (from another thread): it returns with
        exit code 130 and ``metadata["cancelled"]``. Nothing happens when none runs."""
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(OSError, WebSocketException):
                ws.send(json.dumps({"type": "cancel"}))

    def reset(
        self, seed: int | None = None, episode_id: str | None = None
    ) -> StepResult[CodeObservation]:
        """Start a new episode (fresh interpreter, empty screen)."""
        return _result(self._call(_reset_message(seed, episode_id), "observation"))

    def step(self, action: CodeAction | str) -> StepResult[CodeObservation]:
        """Run an action (or a string of code) and return its result."""
        return _result(self._call(_step_message(action), "observation"))

    def state(self) -> CodeState:
        return CodeState(**self._call(json.dumps({"type": "state"}), "state"))

    def close(self) -> None:
        """End the session, and stop the server or container this client started."""
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(OSError, WebSocketException):  # closed by the server
                ws.send(json.dumps({"type": "close"}))
            ws.__exit__(None, None, None)
        local, self._local = self._local, None
        if local is not None:
            local.stop()
        container, self._container = self._container, None
        if container is not None:
            container.stop()

    def __enter__(self) -> CodingEnv:
        return self.connect()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncCodingEnv(_EnvClient):
    """:class:`CodingEnv` for asyncio: the same methods, awaited."""

    _ws: ClientConnection | None = None

    def __init__(self, base_url: str, **options: Any) -> None:
        super().__init__(base_url, **options)
        self._turn: asyncio.Lock | None = None
        self._connecting: asyncio.Lock | None = None

    @classmethod
    async def local(cls, settings: ServerSettings | None = None, **options: Any) -> AsyncCodingEnv:
        """Start a server on 127.0.0.1 for this client; :meth:`close` stops it."""
        server = await asyncio.to_thread(LocalServer(settings).start)
        client = cls(server.base_url, token=server.settings.token, **options)
        client._local = server
        return client

    @classmethod
    async def from_docker_image(cls, image: str, *, start_timeout: float = 120.0) -> AsyncCodingEnv:
        """Run ``image`` with Docker and connect (:class:`DockerUnavailableError` without one)."""
        container = await asyncio.to_thread(
            lambda: DockerContainer(image, start_timeout=start_timeout).start()
        )
        assert container.base_url is not None
        client = cls(container.base_url, token=container.token)
        client._container = container
        return client

    async def connect(self) -> AsyncCodingEnv:
        """Open the session (done by the first call when not done before)."""
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            await self._open()
        return self

    async def _open(self) -> None:
        if self._ws is None:
            try:
                self._ws = await connect_async(
                    self._connect_url,
                    additional_headers=_headers(self._token),
                    open_timeout=self._connect_timeout,
                    max_size=MAX_MESSAGE_BYTES,
                )
            except (OSError, WebSocketException) as exc:
                raise _closed_error(exc, self.url) from exc

    async def _call(self, message: str, expected: str) -> dict[str, Any]:
        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            ws = (await self.connect())._ws
            if ws is None:
                raise ServerConnectionError(f"the session at {self.url} was closed")
            try:
                await ws.send(message)
                raw = await asyncio.wait_for(ws.recv(), self._message_timeout)
            except (OSError, TimeoutError, WebSocketException) as exc:
                raise _closed_error(exc, self.url) from exc
            return _reply(raw, expected)

    async def cancel(self) -> None:
        """Stop the step running on this session (from another task): it returns with
        exit code 130 and ``metadata["cancelled"]``. Nothing happens when none runs."""
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(OSError, WebSocketException):
                await ws.send(json.dumps({"type": "cancel"}))

    async def reset(
        self, seed: int | None = None, episode_id: str | None = None
    ) -> StepResult[CodeObservation]:
        return _result(await self._call(_reset_message(seed, episode_id), "observation"))

    async def step(self, action: CodeAction | str) -> StepResult[CodeObservation]:
        return _result(await self._call(_step_message(action), "observation"))

    async def state(self) -> CodeState:
        return CodeState(**await self._call(json.dumps({"type": "state"}), "state"))

    async def close(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(OSError, WebSocketException):  # closed by the server
                await ws.send(json.dumps({"type": "close"}))
            await ws.close()
        local, self._local = self._local, None
        if local is not None:
            await asyncio.to_thread(local.stop)
        container, self._container = self._container, None
        if container is not None:
            await asyncio.to_thread(container.stop)

    async def __aenter__(self) -> AsyncCodingEnv:
        return await self.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
