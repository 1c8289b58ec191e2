"""The file models read and write askui's cache format 0.3 and read 0.2, 0.1 and 0.0."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from viewfinder.cache import (
    CacheFile,
    HealRecord,
    parse_cache_json,
    read_cache_file,
    save_cache_file,
)
from viewfinder.core import Region
from viewfinder.core.element import ElementAnchor

# A 0.3 file as askui's CacheManager writes it (json.dump(model_dump(mode="json"), indent=2)),
# plus fields from elsewhere that a reader must keep.
ASKUI_03: dict[str, Any] = {
    "metadata": {
        "version": "0.3",
        "created_at": "2026-02-25T10:30:00Z",
        "goal": "Log in as {{user_name}}",
        "last_executed_at": "2026-02-26T15:45:00Z",
        "token_usage": {
            "input_tokens": 15234,
            "output_tokens": 812,
            "cache_creation_input_tokens": None,
            "cache_read_input_tokens": 1200,
        },
        "execution_attempts": 3,
        "failures": [
            {
                "timestamp": "2026-02-26T14:20:00Z",
                "step_index": 1,
                "error_message": "Element not found",
                "failure_count_at_step": 1,
                "screenshot_id": "shot-17",
            }
        ],
        "is_valid": True,
        "invalidation_reason": None,
        "visual_validation": {"enabled": True, "method": "phash", "region_size": 100},
        "recorded_by": "some-other-tool",
    },
    "trajectory": [
        {
            "type": "tool_use",
            "id": "toolu_01AbCdEfGhIjKlMnOpQrStUv",
            "name": "computer",
            "input": {"action": "left_click", "coordinate": [450, 300]},
            "cache_control": None,
            "visual_representation": "a8f3c9e14b7d2056",
            "extra_content": None,
        },
        {
            "type": "tool_use",
            "id": "toolu_02XyZaBcDeFgHiJkLmNoPqRs",
            "name": "computer",
            "input": {"action": "type", "text": "{{user_name}}"},
            "cache_control": {"type": "ephemeral"},
            "visual_representation": "0f0f0f0f0f0f0f0f",
            "extra_content": {"google": {"thought_signature": "abc"}},
        },
        {
            "type": "tool_use",
            "id": "toolu_03",
            "name": "print_debug_info",
            "input": {},
            "cache_control": None,
            "visual_representation": None,
            "extra_content": None,
        },
    ],
    "cache_parameters": {"user_name": "Name of the user to log in"},
}


def test_a_03_file_round_trips_with_unknown_fields_kept(tmp_path: Path) -> None:
    source = tmp_path / "askui.json"
    source.write_text(json.dumps(ASKUI_03, indent=2))
    cache = read_cache_file(source)
    assert cache.read_version == "0.3"
    assert cache.visual.method == "phash" and cache.visual.region_size == 100
    assert cache.visual.hash_size == 8  # askui's implicit size
    assert cache.metadata.token_usage is not None
    assert cache.metadata.token_usage.input_tokens == 15234
    assert cache.trajectory[1].visual_representation == "0f0f0f0f0f0f0f0f"
    written = tmp_path / "again.json"
    save_cache_file(cache, written)
    again = json.loads(written.read_text())
    assert again["metadata"]["recorded_by"] == "some-other-tool"
    assert again["metadata"]["failures"][0]["screenshot_id"] == "shot-17"
    assert again["trajectory"][1]["extra_content"] == {"google": {"thought_signature": "abc"}}
    assert again["trajectory"][1]["cache_control"] == {"type": "ephemeral"}
    # Everything askui wrote comes back unchanged; viewfinder adds only hash_size.
    expected = json.loads(json.dumps(ASKUI_03))
    expected["metadata"]["visual_validation"]["hash_size"] = 8
    assert again == expected


def test_written_files_are_format_03_with_settings_once_in_the_metadata(tmp_path: Path) -> None:
    cache = CacheFile.model_validate(ASKUI_03)
    path = save_cache_file(cache, tmp_path / "out.json")
    data = json.loads(path.read_text())
    assert list(data) == ["metadata", "trajectory", "cache_parameters"]
    assert data["metadata"]["version"] == "0.3"
    assert set(data["metadata"]["visual_validation"]) == {
        "enabled",
        "method",
        "region_size",
        "hash_size",
    }
    assert all("method" not in block for block in data["trajectory"])
    assert [block["visual_representation"] for block in data["trajectory"]] == [
        "a8f3c9e14b7d2056",
        "0f0f0f0f0f0f0f0f",
        None,
    ]


def test_the_api_form_has_no_cache_only_fields() -> None:
    cache = CacheFile.model_validate(ASKUI_03)
    cache.trajectory[0].visual_thumbnail = "iVBORw0KGgo="
    api = cache.api_trajectory()
    text = json.dumps(api)
    for field in ("visual_representation", "visual_thumbnail", "extra_content"):
        assert field not in text
    assert api[0] == {
        "type": "tool_use",
        "id": "toolu_01AbCdEfGhIjKlMnOpQrStUv",
        "name": "computer",
        "input": {"action": "left_click", "coordinate": [450, 300]},
    }
    assert api[1]["cache_control"] == {"type": "ephemeral"}
    # the cache form keeps them
    assert cache.trajectory[0].model_dump()["visual_representation"] == "a8f3c9e14b7d2056"
    assert "visual_thumbnail" in cache.trajectory[0].model_dump()


def test_a_02_file_with_flat_visual_settings_is_read() -> None:
    old = {
        "metadata": {
            "version": "0.2",
            "created_at": "2025-12-30T09:00:00+00:00",
            "goal": None,
            "execution_attempts": 0,
            "failures": [],
            "is_valid": True,
            "invalidation_reason": None,
            "visual_verification_method": "ahash",
            "visual_validation_region_size": 80,
            "visual_validation_threshold": 12,
        },
        "trajectory": [
            {
                "type": "tool_use",
                "id": "t1",
                "name": "computer",
                "input": {"action": "left_click", "coordinate": [10, 10]},
                "visual_representation": "ffff0000ffff0000",
            }
        ],
        "cache_parameters": {},
    }
    cache = parse_cache_json(json.dumps(old))
    assert cache.read_version == "0.2"
    assert cache.metadata.version == "0.3"
    visual = cache.visual
    assert (visual.enabled, visual.method, visual.region_size, visual.threshold) == (
        True,
        "ahash",
        80,
        12,
    )
    data = json.loads(cache.to_json())
    assert "visual_verification_method" not in data["metadata"]
    assert data["metadata"]["visual_validation"]["threshold"] == 12


def test_a_02_file_with_method_none_has_validation_off() -> None:
    old = {
        "metadata": {
            "version": "0.2",
            "created_at": "2025-12-30T09:00:00Z",
            "visual_verification_method": "none",
        },
        "trajectory": [],
    }
    cache = parse_cache_json(json.dumps(old))
    assert cache.metadata.visual_validation is not None
    assert not cache.visual.active


def test_a_01_file_without_visual_fields_is_read() -> None:
    old = {
        "metadata": {"version": "0.1", "created_at": "2025-12-11T10:30:00Z", "goal": "Greet"},
        "trajectory": [
            {
                "type": "tool_use",
                "id": "a",
                "name": "computer",
                "input": {"action": "type", "text": "Hello {{user_name}}!"},
            }
        ],
        "placeholders": {"user_name": "Name of the user to greet"},
    }
    cache = parse_cache_json(json.dumps(old))
    assert cache.read_version == "0.1"
    assert cache.cache_parameters == {"user_name": "Name of the user to greet"}
    assert cache.metadata.visual_validation is None and not cache.visual.active
    assert cache.trajectory[0].visual_representation is None


def test_a_bare_list_of_blocks_is_read_as_version_00() -> None:
    blocks = [
        {
            "type": "tool_use",
            "id": "a",
            "name": "computer",
            "input": {"action": "mouse_move", "coordinate": [150, 200]},
        },
        {"type": "tool_use", "id": "b", "name": "computer", "input": {"action": "left_click"}},
    ]
    cache = parse_cache_json(json.dumps(blocks))
    assert cache.read_version == "0.0"
    assert [block.action for block in cache.trajectory] == ["mouse_move", "left_click"]
    assert json.loads(cache.to_json())["metadata"]["version"] == "0.3"


def test_naive_timestamps_are_taken_as_utc() -> None:
    cache = parse_cache_json(
        json.dumps({"metadata": {"created_at": "2026-01-01T12:00:00"}, "trajectory": []})
    )
    assert cache.metadata.created_at.isoformat() == "2026-01-01T12:00:00+00:00"


class _AskuiFailure(BaseModel):
    timestamp: datetime
    step_index: int
    error_message: str
    failure_count_at_step: int


class _AskuiVisualValidation(BaseModel):
    enabled: bool
    method: str
    region_size: int


class _AskuiMetadata(BaseModel):
    version: str
    created_at: datetime
    goal: str | None = None
    last_executed_at: datetime | None = None
    execution_attempts: int = 0
    failures: list[_AskuiFailure] = []
    is_valid: bool = True
    invalidation_reason: str | None = None
    visual_validation: _AskuiVisualValidation | None = None


class _AskuiBlock(BaseModel):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    cache_control: dict[str, Any] | None = None
    visual_representation: str | None = None


class _AskuiCacheFile(BaseModel):
    """A reader of the fields format 0.3 defines, declared as askui declares its models
    (pydantic with its default of ignoring unknown fields): what such a reader makes
    of a file of ours. (askui itself is not a dependency: it pulls in its model
    clients.)"""

    metadata: _AskuiMetadata
    trajectory: list[_AskuiBlock]
    cache_parameters: dict[str, str] = {}


def test_an_askui_reader_reads_our_elements_thumbnails_and_heals_as_a_plain_03_file(
    tmp_path: Path,
) -> None:
    cache = CacheFile.model_validate(ASKUI_03)
    cache.trajectory[0].visual_element = ElementAnchor(
        role="push button",
        name="Save",
        path=(("application", "form"), ("frame", "Form")),
        box=Region(x=400, y=280, width=100, height=40),
    )
    cache.trajectory[0].visual_thumbnail = "iVBORw0KGgo="
    cache.metadata.heals.append(
        HealRecord.model_validate(
            {
                "timestamp": "2026-11-27T02:10:00Z",
                "step_index": 0,
                "method": "element",
                "from": [450, 300],
                "to": [570, 300],
                "shift": [120, 0],
                "element": "push button 'Save'",
            }
        )
    )
    path = save_cache_file(cache, tmp_path / "ours.json")
    data = json.loads(path.read_text())
    assert data["trajectory"][0]["visual_element"]["name"] == "Save"
    assert data["metadata"]["heals"][0]["from"] == [450, 300]
    theirs = _AskuiCacheFile.model_validate(data)
    assert theirs.metadata.version == "0.3"
    assert theirs.metadata.visual_validation is not None
    assert [block.visual_representation for block in theirs.trajectory] == [
        "a8f3c9e14b7d2056",
        "0f0f0f0f0f0f0f0f",
        None,
    ]
    assert theirs.trajectory[0].input == {"action": "left_click", "coordinate": [450, 300]}
    # and ours reads its own fields back
    again = read_cache_file(path)
    assert again.trajectory[0].visual_element == cache.trajectory[0].visual_element
    assert again.metadata.heals[0].to == [570, 300]
