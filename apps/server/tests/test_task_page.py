"""The ``element`` predicate on a Chromium page (the starter suite's page-signup task):
the page's elements are read over AT-SPI after every step, by role, name, value and
states, with partial credit per part; the page's own log shows what was clicked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from viewfinder.server.tasks.model import Suite, Task, load_tasks
from viewfinder.server.tasks.runner import load_agent, run_suite

from .test_tasks_suite import SUITE, clicks_in

ENTRY = {"role": "entry", "name": "Name", "value": "Ada", "states": ["editable", "focusable"]}
HEADING = {"role": "heading", "name": "Welcome, Ada"}


def page_task(**changes: Any) -> Task:
    [task] = [task for task in load_tasks(SUITE).tasks if task.id == "page-signup"]
    return task.model_copy(update=changes)


def test_element_parts_scored_after_every_step() -> None:
    check = {"all": [{"element": ENTRY}, {"element": HEADING}]}
    task = Task.model_validate(
        {**page_task().model_dump(mode="json", by_alias=True), "check": check, "partial": True}
    )
    scripted = load_agent("scripted")
    rewards: list[float] = []
    reasons: list[str] = []

    def agent(observation: dict[str, Any]) -> Any:
        rewards.append(observation["last"]["reward"])
        reasons.append(observation["last"]["observation"]["metadata"]["reason"])
        return scripted(observation)

    logs: list[list[str]] = []
    [result] = run_suite(
        Suite(name="page", tasks=[task]), agent,
        on_result=lambda r: logs.append(clicks_in(r.workdir or "")),
    )  # fmt: skip
    # reset, wait, click the field, type: the entry holds Ada; then Sign up shows the heading
    assert rewards == [0.0, 0.0, 0.0, 0.5]
    assert reasons[0].startswith("0 of 2 met; no element {'role': 'entry'")
    assert (result.reward, result.success, result.steps) == (1.0, True, 4)
    assert logs == [["name", "submit"]]  # the page's log: only the field and Sign up


def test_states_and_values_must_all_match(tmp_path: Path) -> None:
    # the same steps, checked for a value the page never has, and a state it lacks
    wrong_value = {"element": {**ENTRY, "value": "Bob"}}
    wrong_state = {"element": {**HEADING, "states": ["checked"]}}
    task = Task.model_validate(
        {
            **page_task().model_dump(mode="json", by_alias=True),
            "check": {"any": [wrong_value, wrong_state]},
        }
    )
    logs: list[list[str]] = []
    [result] = run_suite(
        Suite(name="page", tasks=[task]), load_agent("scripted"),
        on_result=lambda r: logs.append(clicks_in(r.workdir or "")),
    )  # fmt: skip
    assert (result.reward, result.success, result.steps) == (0.0, False, 4)
    assert result.reason.startswith("none met; no element {'role': 'entry', 'name': 'Name'")
    assert logs == [["name", "submit"]]
