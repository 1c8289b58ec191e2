"""Bad files are typed errors naming file, step and field; saves never half-write a file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from viewfinder.cache import (
    CacheFile,
    CacheFileError,
    StepCoordinateError,
    parse_cache_json,
    read_cache_file,
    save_cache_file,
)
from viewfinder.core import RegionError, ViewfinderError


def good() -> dict[str, Any]:
    return {
        "metadata": {
            "version": "0.3",
            "created_at": "2026-03-01T08:00:00Z",
            "visual_validation": {"enabled": True, "method": "phash", "region_size": 100},
        },
        "trajectory": [
            {
                "type": "tool_use",
                "id": "a",
                "name": "computer",
                "input": {"action": "left_click", "coordinate": [40, 50]},
                "visual_representation": "c3c3c3c3c3c3c3c3",
            },
            {
                "type": "tool_use",
                "id": "b",
                "name": "computer",
                "input": {"action": "type", "text": "hi"},
                "visual_representation": "0123456789abcdef",
            },
        ],
        "cache_parameters": {},
    }


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "cache.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def error_for(tmp_path: Path, data: Any) -> CacheFileError:
    path = write(tmp_path, data)
    with pytest.raises(CacheFileError) as caught:
        read_cache_file(path)
    assert caught.value.path == path
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, ViewfinderError)
    return caught.value


def test_truncated_json(tmp_path: Path) -> None:
    text = json.dumps(good(), indent=2)
    error = error_for(tmp_path, text[: len(text) // 2])
    assert "not valid JSON" in str(error) and "truncated" in str(error)


def test_invalid_json(tmp_path: Path) -> None:
    error = error_for(tmp_path, '{"metadata": {,}}')
    assert "not valid JSON" in str(error) and "line 1" in str(error)


def test_json_that_is_not_an_object(tmp_path: Path) -> None:
    assert "JSON object" in str(error_for(tmp_path, "42"))


@pytest.mark.parametrize("text", ['{"foo": 1}', "{}", '{"metadata": {}}'])
def test_an_object_that_is_not_a_cache_names_the_missing_field(tmp_path: Path, text: str) -> None:
    error = error_for(tmp_path, text)
    assert error.field == "trajectory"
    assert "missing" in str(error) and "cache build" in str(error)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"trajectory": "steps"}, "trajectory"),
        ({"trajectory": [], "metadata": 5}, "metadata"),
        (
            {"trajectory": [], "metadata": {"execution_attempts": "many"}},
            "metadata.execution_attempts",
        ),
        (
            {"trajectory": [{"type": "tool_use", "name": "computer", "id": "a", "input": 3}]},
            "trajectory[0].input",
        ),
    ],
)
def test_the_first_wrong_field_is_named(tmp_path: Path, data: dict[str, Any], field: str) -> None:
    error = error_for(tmp_path, json.dumps(data))
    assert error.field == field, str(error)
    assert field in str(error)


def test_hash_of_the_wrong_length(tmp_path: Path) -> None:
    data = good()
    data["trajectory"][1]["visual_representation"] = "0123abcd"
    error = error_for(tmp_path, data)
    assert (error.step, error.field) == (1, "trajectory[1].visual_representation")
    assert "8 hex digits" in str(error) and "16" in str(error)
    assert "step 1: trajectory[1].visual_representation" in str(error)


def test_hash_that_is_not_hex(tmp_path: Path) -> None:
    data = good()
    data["trajectory"][0]["visual_representation"] = "c3c3c3c3c3c3c3zz"
    error = error_for(tmp_path, data)
    assert (error.step, error.field) == (0, "trajectory[0].visual_representation")
    assert "not hexadecimal" in str(error)


def test_hash_that_is_not_a_string(tmp_path: Path) -> None:
    data = good()
    data["trajectory"][1]["visual_representation"] = 1234
    error = error_for(tmp_path, data)
    assert (error.step, error.field) == (1, "trajectory[1].visual_representation")


def test_unknown_method(tmp_path: Path) -> None:
    data = good()
    data["metadata"]["visual_validation"]["method"] = "xhash"
    error = error_for(tmp_path, data)
    assert error.step is None and error.field == "metadata.visual_validation.method"
    assert "xhash" in str(error) and "phash" in str(error)


def test_negative_region_size(tmp_path: Path) -> None:
    data = good()
    data["metadata"]["visual_validation"]["region_size"] = -100
    error = error_for(tmp_path, data)
    assert error.field == "metadata.visual_validation.region_size"
    assert "positive" in str(error)


def test_bad_hash_size(tmp_path: Path) -> None:
    data = good()
    data["metadata"]["visual_validation"]["hash_size"] = 1
    assert error_for(tmp_path, data).field == "metadata.visual_validation.hash_size"


def test_step_with_a_coordinate_off_screen(tmp_path: Path) -> None:
    data = good()
    data["trajectory"][0]["input"]["coordinate"] = [-5, 50]
    error = error_for(tmp_path, data)
    assert isinstance(error, StepCoordinateError) and isinstance(error, RegionError)
    assert (error.step, error.field) == (0, "trajectory[0].input.coordinate")


def test_step_that_is_not_a_tool_use_block(tmp_path: Path) -> None:
    data = good()
    data["trajectory"][1]["type"] = "text"
    assert error_for(tmp_path, data).field == "trajectory[1].type"


def test_step_missing_its_id(tmp_path: Path) -> None:
    data = good()
    del data["trajectory"][1]["id"]
    error = error_for(tmp_path, data)
    assert (error.step, error.field) == (1, "trajectory[1].id")
    assert "required" in str(error).lower()


def test_a_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(CacheFileError, match="cache build"):
        read_cache_file(tmp_path / "nope.json")


def test_save_replaces_the_file_in_one_step(tmp_path: Path) -> None:
    path = write(tmp_path, good())
    cache = read_cache_file(path)
    cache.metadata.goal = "changed"
    save_cache_file(cache, path)
    assert json.loads(path.read_text())["metadata"]["goal"] == "changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json"]


def test_an_invalid_model_is_not_written_at_all(tmp_path: Path) -> None:
    path = write(tmp_path, good())
    before = path.read_bytes()
    cache = CacheFile.model_validate(good())
    cache.trajectory[1].visual_representation = "nothex!"
    with pytest.raises(CacheFileError) as caught:
        save_cache_file(cache, path)
    assert caught.value.path == path and caught.value.step == 1
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json"]


def test_a_crash_while_writing_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, good())
    before = path.read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    cache = CacheFile.model_validate(good())
    cache.metadata.goal = "never written"
    with pytest.raises(OSError, match="No space"):
        save_cache_file(cache, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json"]


def test_saving_keeps_the_files_permissions(tmp_path: Path) -> None:
    path = write(tmp_path, good())
    path.chmod(0o640)
    save_cache_file(read_cache_file(path), path)
    assert path.stat().st_mode & 0o777 == 0o640
    fresh = save_cache_file(read_cache_file(path), tmp_path / "sub" / "new.json")
    assert fresh.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("heals", "said"),
    [
        ("nope", "metadata.heals: Input should be a valid list"),
        ([{"step_index": 0}], "metadata.heals[0].timestamp: Field required"),
        (
            [
                {
                    "timestamp": "2026-11-27T02:10:00Z",
                    "step_index": 0,
                    "method": "element",
                    "from": [1, 2, 3],
                    "to": [1, 2],
                    "shift": [0, 0],
                }
            ],
            "metadata.heals[0].from: List should have at most 2 items",
        ),
    ],
)
def test_a_bad_heal_history_names_the_entry_and_field(heals: object, said: str) -> None:
    text = json.dumps(
        {
            "metadata": {"version": "0.3", "created_at": "2026-01-01T00:00:00Z", "heals": heals},
            "trajectory": [],
        }
    )
    with pytest.raises(CacheFileError, match=re.escape(said)):
        parse_cache_json(text)
