"""An agent fills in a form on a virtual screen through OpenAI's computer-use tool.

    pip install openai                     # not a dependency of viewfinder
    OPENAI_API_KEY=... python examples/desktop_agent_openai.py --out run/

With ``OPENAI_API_KEY`` set, ``computer-use-preview`` drives through the Responses API:
each ``computer_call`` item (its ``action``, or an ``actions`` batch run in order) goes to
a :class:`~viewfinder.desktop.ComputerTool`, and the screen once it settled (scaled to
1024x768) goes back as a ``computer_call_output``, what was done in a message beside it.
Without a key (or with ``--scripted``) a scripted policy
answers with the same items, so the loop below runs unchanged and the form gets filled
either way. The example exits with 0 when the form's own state says it is filled.
docs/desktop.md explains the loop.
"""

from __future__ import annotations

import argparse
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from desktop_form_task import (
    APPLY,
    ITEM_03,
    NAME,
    NAME_FIELD,
    SLIDER_KNOB,
    SLIDER_MIDDLE,
    TARGET,
    TASK,
    Frames,
    form_desktop,
    report,
)

from viewfinder.desktop import ComputerTool, openai_tool_definition, to_openai_input_items

MODEL = os.environ.get("OPENAI_MODEL", "computer-use-preview")
MAX_TURNS = 40

Items = list[dict[str, Any]]


class OpenAIModel:
    """The policy: OpenAI's computer-use model through the Responses API."""

    def __init__(self, tool: ComputerTool) -> None:
        import openai  # only when a key is set: `pip install openai`

        self.client = openai.OpenAI()
        self.tools = [openai_tool_definition(tool, "linux")]
        self.previous: str | None = None

    def respond(self, items: Items) -> Items:
        response = self.client.responses.create(
            model=MODEL,
            tools=self.tools,
            input=items,
            previous_response_id=self.previous,
            truncation="auto",
        )
        self.previous = response.id
        return [item.model_dump(exclude_none=True) for item in response.output]


class Scripted:
    """A policy that answers as the model would, from a script: one computer_call a turn.

    It knows where the form's widgets are in screen pixels and sends them in the
    coordinates of the screenshots it is shown (scaled), as a model would read them.
    """

    def __init__(self, tool: ComputerTool) -> None:
        def at(point: tuple[int, int]) -> dict[str, int]:
            x, y = tool.scaling.to_model(*point)
            return {"x": x, "y": y}

        self.script: Iterator[dict[str, Any]] = iter(
            [
                {"type": "screenshot"},
                {"type": "click", "button": "left", **at(NAME_FIELD)},
                {"type": "type", "text": NAME},
                {"type": "click", "button": "left", **at(APPLY)},
                {"type": "drag", "path": [at(SLIDER_KNOB), at(SLIDER_MIDDLE)]},
                {"type": "click", "button": "left", **at(ITEM_03)},
            ]
        )
        self.ids = itertools.count(1)

    def respond(self, items: Items) -> Items:
        action = next(self.script, None)
        if action is None:
            text = {"type": "output_text", "text": "done"}
            return [{"type": "message", "role": "assistant", "content": [text]}]
        number = next(self.ids)
        return [
            {
                "type": "computer_call",
                "id": f"cu_{number:02d}",
                "call_id": f"call_{number:02d}",
                "action": action,
                "pending_safety_checks": [],
                "status": "completed",
            },
        ]


def run(policy: OpenAIModel | Scripted, tool: ComputerTool, frames: Frames) -> None:
    """The agent loop: ask the policy, perform its computer calls, hand back the screens."""
    items: Items = [{"role": "user", "content": TASK}]
    for _ in range(MAX_TURNS):
        output = policy.respond(items)
        calls = [item for item in output if item["type"] == "computer_call"]
        if not calls:  # the model answered in words: the task is over
            words = [
                part["text"]
                for item in output
                if item["type"] == "message"
                for part in item["content"]
                if part.get("type") == "output_text"
            ]
            print("agent:", " ".join(words))
            return
        items = []
        for call in calls:
            # the call's action, or its actions batch in order; never raises: a bad
            # action or a display that has gone is an error result
            result = tool(call)
            frames.save(result)
            print(f"{call.get('action', call.get('actions'))} -> {result.text}")
            # a real run shows pending safety checks to a person before acknowledging them
            items += to_openai_input_items(
                result, call["call_id"], acknowledged_safety_checks=call["pending_safety_checks"]
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="save every step's screenshot here")
    parser.add_argument("--state", type=Path, help="where the form writes its state (JSON)")
    parser.add_argument("--scripted", action="store_true", help="the scripted policy, key or not")
    args = parser.parse_args()
    frames = Frames(args.out)
    with form_desktop(args.state) as (desktop, state):
        tool = desktop.computer(target=TARGET, api="openai")
        use_model = bool(os.environ.get("OPENAI_API_KEY")) and not args.scripted
        policy = MODEL if use_model else "scripted"
        print(f"{desktop!r}: the model sees {tool.model_size}; policy: {policy}")
        run(OpenAIModel(tool) if use_model else Scripted(tool), tool, frames)
        return report(state, frames)


if __name__ == "__main__":
    raise SystemExit(main())
