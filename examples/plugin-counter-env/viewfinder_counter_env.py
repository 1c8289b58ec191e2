"""A complete third-party environment in one file: a counter that must reach a target.

Install it next to viewfinder (``pip install ./examples/plugin-counter-env``) and
``viewfinder serve --env counter`` serves it: ``reset`` (``{"target": 3}``) starts at 0,
each ``step`` (``{"add": 1}``) adds to the count; the reward is 1.0 and the episode
done once the count is the target, and done (failed) once it is past it.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core import hookimpl
from viewfinder.core.providers import EnvSpec


class ResetData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: int = Field(default=3, ge=0, le=1000)


class StepData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    add: int = Field(ge=-10, le=10)


class Reset(BaseModel):
    type: Literal["reset"]
    data: ResetData = Field(default_factory=ResetData)


class Step(BaseModel):
    type: Literal["step"]
    data: StepData


class State(BaseModel):
    type: Literal["state"]


class Counter:
    """One session: the count and its target (built where the session runs)."""

    def __init__(self) -> None:
        self.count, self.target, self.steps = 0, 0, 0

    def reset(self, target: int) -> dict[str, Any]:
        self.count, self.target, self.steps = 0, target, 0
        return self.observation()

    def step(self, add: int) -> dict[str, Any]:
        self.count += add
        self.steps += 1
        return self.observation()

    def observation(self) -> dict[str, Any]:
        solved = self.count == self.target
        return {
            "observation": {"count": self.count, "metadata": {"target": self.target}},
            "reward": 1.0 if solved else 0.0,
            "done": solved or self.count > self.target,
        }


def make_counter(session_id: str, **resources: Any) -> Counter:
    """The session's env (``EnvSpec.factory``); a provider may hand it displays: unused."""
    return Counter()


class CounterServed:
    """What ``viewfinder serve --env counter`` serves."""

    name = "counter"
    messages = {"reset": Reset, "step": Step, "state": State}

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def spec(self) -> EnvSpec:
        return EnvSpec(f"{__name__}:make_counter")

    def answer(self, env: Any, message: BaseModel) -> str:
        if isinstance(message, Reset):
            data: Any = env.reset(message.data.target)
        elif isinstance(message, Step):
            data = env.step(message.data.add)
        else:
            return json.dumps({"type": "state", "data": {"step_count": env.steps}})
        return json.dumps({"type": "observation", "data": data})

    def schema(self) -> dict[str, Any]:
        return {
            "action": StepData.model_json_schema(),
            "observation": {"type": "object"},
            "state": {"type": "object"},
        }

    def metadata(self) -> dict[str, Any]:
        return {"name": "counter", "description": "Count up to a target."}

    def fresh_state(self) -> dict[str, Any]:
        return {"step_count": 0}


@hookimpl
def viewfinder_register_envs(register: Any) -> None:
    register("counter", CounterServed, description="count up to a target (an example)")
