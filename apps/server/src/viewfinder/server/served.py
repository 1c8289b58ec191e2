"""What a server serves: the code env or the desktop env, behind the same routes.

The routes, the session registry and the WebSocket loop do not know which one runs;
they ask the server's :class:`ServedEnv` (``app.state.served``) what a session runs
(:meth:`ServedEnv.spec`, which the session provider builds), to parse its WebSocket
messages and to answer them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from viewfinder.server import wire

if TYPE_CHECKING:
    from viewfinder.core.providers import EnvSpec
    from viewfinder.server.settings import ServerSettings


class ServedEnv(Protocol):
    """The environment a server serves (``viewfinder serve --env``)."""

    #: ``"code"`` or ``"desktop"``.
    name: str
    #: The WebSocket messages a session takes, by ``type``.
    messages: Mapping[str, type[BaseModel]]

    def spec(self) -> EnvSpec:
        """What each session runs, for the session provider to build where it runs."""
        ...

    def answer(self, env: Any, message: BaseModel) -> str:
        """The reply to a ``reset``, ``step`` or ``state`` message as JSON text (blocking:
        run it on the session thread pool)."""
        ...

    def schema(self) -> dict[str, Any]:
        """JSON schemas of the action, the observation and the state (``GET /schema``)."""
        ...

    def metadata(self) -> dict[str, Any]:
        """Name and description (``GET /metadata``, OpenEnv's ``EnvironmentMetadata``)."""
        ...

    def fresh_state(self) -> dict[str, Any]:
        """The state of an environment before its first reset (``GET /state``)."""
        ...


def version_of(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def environment_metadata(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "readme_content": None,
        "version": version_of(name),
        "author": None,
        "documentation_url": None,
    }


class CodeServed:
    """Code env sessions: Python on a display, OpenEnv's coding env protocol."""

    name = "code"
    messages: Mapping[str, type[BaseModel]] = wire.MESSAGES

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings

    def spec(self) -> EnvSpec:
        from viewfinder.server.provided import env_spec

        return env_spec(self.settings)

    def answer(self, env: Any, message: BaseModel, *, deduplicated: bool = False) -> str:
        """As :meth:`ServedEnv.answer`; ``deduplicated``: the last capture is sent once
        (``screenshot`` left out when it is the last of ``screenshots``), for a client
        that asked for it (``/ws?screenshot=deduplicated``)."""
        from viewfinder.codeenv.models import observation_json

        def as_message(payload: dict[str, Any]) -> dict[str, Any]:
            return {"type": "observation", "data": payload}

        if isinstance(message, wire.ResetMessage):
            data = message.data
            observation = env.reset(data.seed, data.episode_id)
            return observation_json(observation, as_message, deduplicated=deduplicated)
        if isinstance(message, wire.StepMessage):
            observation = env.step(message.data)
            return observation_json(observation, as_message, deduplicated=deduplicated)
        return json.dumps({"type": "state", "data": env.state.model_dump()})

    def schema(self) -> dict[str, Any]:
        from viewfinder.codeenv import CodeAction, CodeObservation, CodeState

        return {
            "action": CodeAction.model_json_schema(),
            "observation": CodeObservation.model_json_schema(),
            "state": CodeState.model_json_schema(),
        }

    def metadata(self) -> dict[str, Any]:
        return environment_metadata(
            "viewfinder-codeenv",
            "Runs Python on a virtual display; the code calls capture_screenshot() to "
            "capture its own windows while they are alive.",
        )

    def fresh_state(self) -> dict[str, Any]:
        from viewfinder.codeenv import CodeState

        return CodeState().model_dump()


def served_env(settings: ServerSettings) -> ServedEnv:
    """The environment ``settings.env`` names."""
    if settings.env == "desktop":
        from viewfinder.server.desktop_env import DesktopServed

        return DesktopServed(settings)
    return CodeServed(settings)
