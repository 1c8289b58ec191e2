"""The desktop env served (``viewfinder serve --env desktop``): a screen with a task's
apps, its tools called with OpenEnv's MCP actions. Registered through
``viewfinder_register_envs`` like any plugin's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter

from viewfinder.core.providers import EnvSpec
from viewfinder.server import wire
from viewfinder.server.desktop_env import DesktopEnvironment, DesktopState
from viewfinder.server.mcp_wire import CallToolObservation, ToolAction, step_payload
from viewfinder.server.provided import RESULTS_PATH, own_process_ready
from viewfinder.server.served import environment_metadata

if TYPE_CHECKING:
    from viewfinder.codeenv.displays import DisplaySource
    from viewfinder.server.settings import ServerSettings

_ACTIONS: TypeAdapter[Any] = TypeAdapter(ToolAction)


def desktop_env(
    session_id: str, *, settings: ServerSettings, displays: DisplaySource | None = None
) -> DesktopEnvironment:
    """A desktop session: each reset's desktop on a display from ``displays``, or on a
    display of its own."""
    from viewfinder.codeenv.displays import FreshDisplays

    own_process_ready(displays)
    if displays is None:
        displays = FreshDisplays(settings.display_width, settings.display_height)
    return DesktopEnvironment(settings, displays, session_id)


class DesktopServed:
    """Desktop sessions, OpenEnv's tool-calling protocol (see :mod:`.mcp_wire`)."""

    name = "desktop"
    #: Its sessions start apps: ``serve --app``, ``--target``, ``--allow-any-app`` apply.
    takes_apps = True
    messages: Mapping[str, type[BaseModel]] = wire.DESKTOP_MESSAGES

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings

    def spec(self) -> EnvSpec:
        # the token is the server's alone: it does not travel to where sessions run
        portable = self.settings.with_changes(token=None, host="127.0.0.1")
        return EnvSpec(f"{__name__}:desktop_env", {"settings": portable}, RESULTS_PATH)

    def routers(self) -> list[Any]:
        from viewfinder.server.routes import desktop, mcp

        return [desktop.router, mcp.router]

    def parse_action(self, value: Any) -> Any:
        return _ACTIONS.validate_python(value)

    def answer(self, env: Any, message: BaseModel) -> str:
        if isinstance(message, wire.DesktopResetMessage):
            return json.dumps({"type": "observation", "data": env.reset(message.data)})
        if isinstance(message, wire.DesktopStepMessage):
            observation = step_payload(env.step(message.data))
            return json.dumps({"type": "observation", "data": observation})
        return json.dumps({"type": "state", "data": env.state.model_dump()})

    def schema(self) -> dict[str, Any]:
        return {
            "action": TypeAdapter(ToolAction).json_schema(),
            "observation": CallToolObservation.model_json_schema(),
            "state": DesktopState.model_json_schema(),
        }

    def metadata(self) -> dict[str, Any]:
        return environment_metadata(
            "viewfinder-desktop",
            "A virtual screen with the apps of a task; the agent sees and acts on it through "
            "tools (computer, screenshot, run_code, ...) called with OpenEnv's MCP actions.",
        )

    def fresh_state(self) -> dict[str, Any]:
        return DesktopState().model_dump()
