"""An agent fills in a form on a virtual screen through Claude's computer-use tool.

    pip install anthropic                  # not a dependency of viewfinder
    ANTHROPIC_API_KEY=... python examples/desktop_agent_anthropic.py --out run/

With ``ANTHROPIC_API_KEY`` set, Claude drives: each of its ``tool_use`` blocks goes to a
:class:`~viewfinder.desktop.ComputerTool`, whose result (what was done, and the screen
once it settled, scaled to 1024x768) goes back as a ``tool_result``. Without a key (or
with ``--scripted``) a scripted policy answers in the same shape, so the loop below runs
unchanged and the form gets filled either way. With ``--toolset`` (or
``ANTHROPIC_COMPUTER_TOOL=computer_toolset_20260801``) it declares Anthropic's computer
toolset instead, and each action is a member tool of its own
(:class:`~viewfinder.desktop.ComputerToolset`). The example exits with 0 when the form's
own state says it is filled. docs/desktop.md explains the loop.
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

from viewfinder.desktop import (
    ANTHROPIC_BETAS,
    ComputerTool,
    ComputerToolset,
    anthropic_tool_definition,
    to_anthropic_tool_result,
    to_toolset_tool_result,
)

MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-5-5")
#: computer_20251124 (with zoom) goes with Claude Opus 4.5; other models use 20250124;
#: computer_toolset_20260801 declares the family of member tools (``--toolset``).
TOOL_VERSION = os.environ.get("ANTHROPIC_COMPUTER_TOOL", "computer_20250124")
TOOLSET = "computer_toolset_20260801"
MAX_TURNS = 40

Content = list[dict[str, Any]]


class Claude:
    """The policy: Claude through the Messages API (beta computer use)."""

    def __init__(self, tool: ComputerTool, toolset: ComputerToolset | None) -> None:
        import anthropic  # only when a key is set: `pip install anthropic`

        self.client = anthropic.Anthropic()
        self.toolset = toolset
        if toolset is None:
            self.tools = [anthropic_tool_definition(tool, TOOL_VERSION)]  # type: ignore[arg-type]
        else:
            self.tools = [toolset.definition()]

    def respond(self, messages: list[dict[str, Any]]) -> Content:
        if self.toolset is not None:  # the toolset needs no beta header
            response = self.client.messages.create(
                model=MODEL, max_tokens=2048, tools=self.tools, messages=messages
            )
            return [block.model_dump(exclude_none=True) for block in response.content]
        response = self.client.beta.messages.create(
            model=MODEL,
            max_tokens=2048,
            tools=self.tools,
            messages=messages,
            betas=[ANTHROPIC_BETAS[TOOL_VERSION]],
        )
        return [block.model_dump(exclude_none=True) for block in response.content]


class Scripted:
    """A policy that answers as Claude would, from a script: one action per turn.

    It knows where the form's widgets are in screen pixels and sends them in the
    coordinates of the screenshots it is shown (scaled), as a model would read them.
    """

    def __init__(self, tool: ComputerTool, toolset: bool = False) -> None:
        self.toolset = toolset

        def at(point: tuple[int, int]) -> list[int]:
            return list(tool.scaling.to_model(*point))

        self.script: Iterator[dict[str, Any]] = iter(
            [
                {"action": "screenshot"},
                {"action": "left_click", "coordinate": at(NAME_FIELD)},
                {"action": "type", "text": NAME},
                {"action": "left_click", "coordinate": at(APPLY)},
                {
                    "action": "left_click_drag",
                    "start_coordinate": at(SLIDER_KNOB),
                    "coordinate": at(SLIDER_MIDDLE),
                },
                {"action": "left_click", "coordinate": at(ITEM_03)},
            ]
        )
        self.ids = itertools.count(1)

    def respond(self, messages: list[dict[str, Any]]) -> Content:
        action = next(self.script, None)
        if action is None:
            return [{"type": "text", "text": "done"}]
        if self.toolset:  # each member is a tool of its own, named by the action
            name = action.pop("action")
            return [
                {"type": "text", "text": f"Next: {name}."},
                {
                    "type": "tool_use",
                    "id": f"toolu_{next(self.ids):02d}",
                    "name": name,
                    "input": action,
                    "toolset_name": "computer",
                },
            ]
        return [
            {"type": "text", "text": f"Next: {action['action']}."},
            {
                "type": "tool_use",
                "id": f"toolu_{next(self.ids):02d}",
                "name": "computer",
                "input": action,
            },
        ]


def run(
    policy: Claude | Scripted,
    tool: ComputerTool,
    frames: Frames,
    toolset: ComputerToolset | None = None,
) -> None:
    """The agent loop: ask the policy, perform its tool calls, hand back the results."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for _ in range(MAX_TURNS):
        content = policy.respond(messages)
        messages.append({"role": "assistant", "content": content})
        calls = [block for block in content if block["type"] == "tool_use"]
        if not calls:  # the model answered in words: the task is over
            print("agent:", " ".join(b["text"] for b in content if b["type"] == "text"))
            return
        results = []
        for call in calls:
            if toolset is not None and call.get("toolset_name") == "computer":
                result = toolset(call["name"], call["input"])  # a member, by its name
                block = to_toolset_tool_result(result, call["id"], call["name"], call["input"])
            else:
                result = tool(call["input"])  # never raises: a bad action is an error result
                block = to_anthropic_tool_result(result, call["id"])
            frames.save(result)
            member = f"{call['name']} " if "toolset_name" in call else ""
            print(f"{member}{call['input']} -> {result.text}")
            results.append(block)
        messages.append({"role": "user", "content": results})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="save every step's screenshot here")
    parser.add_argument("--state", type=Path, help="where the form writes its state (JSON)")
    parser.add_argument("--scripted", action="store_true", help="the scripted policy, key or not")
    parser.add_argument(
        "--toolset",
        action="store_true",
        default=TOOL_VERSION == TOOLSET,
        help=f"Anthropic's {TOOLSET} (each action a member tool of its own)",
    )
    args = parser.parse_args()
    frames = Frames(args.out)
    with form_desktop(args.state) as (desktop, state):
        tool = desktop.computer(target=TARGET)
        toolset = ComputerToolset(tool) if args.toolset else None
        use_claude = bool(os.environ.get("ANTHROPIC_API_KEY")) and not args.scripted
        policy = f"Claude {MODEL}" if use_claude else "scripted"
        print(f"{desktop!r}: the model sees {tool.model_size}; policy: {policy}")
        agent = Claude(tool, toolset) if use_claude else Scripted(tool, toolset is not None)
        run(agent, tool, frames, toolset)
        return report(state, frames)


if __name__ == "__main__":
    raise SystemExit(main())
