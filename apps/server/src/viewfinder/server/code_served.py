"""The code env served (``viewfinder serve --env code``): Python on a display, OpenEnv's
coding env protocol. Registered through ``viewfinder_register_envs`` like any plugin's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from viewfinder.core.providers import EnvSpec
from viewfinder.server import wire
from viewfinder.server.provided import RESULTS_PATH, own_process_ready
from viewfinder.server.served import environment_metadata

if TYPE_CHECKING:
    from viewfinder.codeenv import CodeEnvConfig
    from viewfinder.codeenv.displays import DisplaySource
    from viewfinder.server.settings import ServerSettings
    from viewfinder.server.tasks.code_episode import ScoredCodeEnvironment


def code_env(
    session_id: str,
    *,
    config: CodeEnvConfig,
    displays: DisplaySource | None = None,
    trusted: bool = False,
) -> ScoredCodeEnvironment:
    """A code env session: on ``displays`` (the local provider's pool), or on a display
    of its own started at its first reset; its resets may take a code task
    (``trusted``: the task may name Python checkers)."""
    from viewfinder.codeenv import CodeEnvironment
    from viewfinder.server.tasks.code_episode import ScoredCodeEnvironment

    own_process_ready(displays)
    env = CodeEnvironment(config, displays=displays, session_id=session_id)
    return ScoredCodeEnvironment(env, trusted=trusted)


class CodeServed:
    """Code env sessions: Python on a display, OpenEnv's coding env protocol."""

    name = "code"
    #: :meth:`answer` sends the last capture once when asked (``/ws?screenshot=deduplicated``).
    deduplicates = True
    messages: Mapping[str, type[BaseModel]] = wire.MESSAGES

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings

    def spec(self) -> EnvSpec:
        options = {"config": self.settings.codeenv, "trusted": self.settings.allow_any_app}
        return EnvSpec(f"{__name__}:code_env", options, RESULTS_PATH)

    def routers(self) -> list[Any]:
        from viewfinder.server.routes import env

        return [env.router]

    def parse_action(self, value: Any) -> Any:
        from viewfinder.codeenv import CodeAction

        if isinstance(value, CodeAction):
            return value
        if isinstance(value, str):
            return CodeAction(code=value)
        if isinstance(value, Mapping):
            return CodeAction(**value)
        raise TypeError(f"a code env action is code, a CodeAction or a dict, not {value!r}")

    def answer(self, env: Any, message: BaseModel, *, deduplicated: bool = False) -> str:
        """As :meth:`ServedEnv.answer`; ``deduplicated``: the last capture is sent once
        (``screenshot`` left out when it is the last of ``screenshots``), for a client
        that asked for it (``/ws?screenshot=deduplicated``)."""
        from viewfinder.codeenv.models import observation_json

        def as_message(payload: dict[str, Any]) -> dict[str, Any]:
            return {"type": "observation", "data": payload}

        if isinstance(message, wire.ResetMessage):
            data = message.data
            observation = env.reset(data.seed, data.episode_id, task=data.task)
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
