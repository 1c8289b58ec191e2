"""The models docs and examples name are ones the vendors' SDKs know and do not mark as
reaching their end of life: a loop copied from the docs keeps working."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from anthropic._data.deprecated_models import DEPRECATED_MODELS
from anthropic.types.model import Model
from openai.types.shared.responses_model import ResponsesModel

ROOT = Path(__file__).parents[1]
SOURCES = [*ROOT.glob("docs/*.md"), *ROOT.glob("examples/**/*.py"), ROOT / "README.md"]
CLAUDE = re.compile(r"\bclaude-(?:opus|sonnet|haiku|mythos|fable)[a-z0-9.-]*\b")
OPENAI = re.compile(r"\b(?:computer-use-preview[0-9-]*|gpt-[0-9][a-z0-9.-]*)\b")


def _literals(alias: object) -> set[str]:
    found: set[str] = set()
    for part in typing.get_args(alias):
        if typing.get_origin(part) is typing.Literal:
            found.update(typing.get_args(part))
        else:
            found |= _literals(part)
    return found


def _named(pattern: re.Pattern[str]) -> dict[str, str]:
    return {
        name: f"{path.relative_to(ROOT)}"
        for path in SOURCES
        for name in pattern.findall(path.read_text(encoding="utf-8"))
    }


def test_the_claude_models_named_are_current() -> None:
    named = _named(CLAUDE)
    assert named, "the docs name no Claude model"
    known = _literals(Model)
    for name, where in named.items():
        assert name in known, f"{where} names {name!r}, which the anthropic SDK does not know"
        assert name not in DEPRECATED_MODELS, (
            f"{where} names {name!r}, which reaches its end of life on {DEPRECATED_MODELS[name]}"
        )


def test_the_openai_models_named_are_known() -> None:
    named = _named(OPENAI)
    assert named, "the docs name no OpenAI model"
    known = _literals(ResponsesModel)
    for name, where in named.items():
        assert name in known, f"{where} names {name!r}, which the openai SDK does not know"
