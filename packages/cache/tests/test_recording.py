"""Building cache files from message histories, Trajectories, session folders and files."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.cache import (
    HashSettingsError,
    RecordingSettings,
    SourceError,
    StepCoordinateError,
    build_cache,
    build_from_messages,
    build_from_trajectory,
    image_hash,
    parameterize,
    parse_cache_json,
    region_around,
)
from viewfinder.cache.thumbnails import decode_thumbnail
from viewfinder.core import Event, EventKind, Point, Region, Screenshot, ScreenSize, Trajectory
from viewfinder.core.element import ElementAnchor
from viewfinder.recorder.metadata import SessionMetadata

Form = Callable[..., Image.Image]
History = Callable[..., list[dict[str, Any]]]


def click(x: int, y: int, action: str = "left_click") -> dict[str, Any]:
    return {"action": action, "coordinate": [x, y]}


def region_hash(frame: Image.Image, x: int, y: int, method: str = "phash") -> str:
    return image_hash(frame, method, 8, region_around(Point(x=x, y=y), 100, 640, 480))


def test_each_step_is_hashed_in_the_latest_frame_before_it(form: Form, history: History) -> None:
    before, typed = form(), form(text="Ada")
    messages = history(
        before,
        [
            (click(100, 55), before),
            ({"action": "type", "text": "Ada"}, typed),
            (click(100, 120), typed),
        ],
    )
    cache = build_from_messages(messages)
    hashes = [block.visual_representation for block in cache.trajectory]
    assert hashes[0] == region_hash(before, 100, 55)
    # text entry: the field focused by the click before it, in the frame before typing
    assert hashes[1] == region_hash(before, 100, 55)
    assert cache.trajectory[1].visual_point == [100, 55]
    assert hashes[2] == region_hash(typed, 100, 120)  # the frame returned by the type step


def test_only_clicks_and_text_entry_get_a_hash(form: Form, history: History) -> None:
    frame = form()
    inputs = [
        click(100, 55),
        {"action": "mouse_move", "coordinate": [10, 10]},
        {"action": "type", "text": "x"},
        {"action": "key", "text": "Return"},
        {
            "action": "scroll",
            "coordinate": [300, 300],
            "scroll_direction": "down",
            "scroll_amount": 2,
        },
        {"action": "screenshot"},
        click(90, 120, "double_click"),
        click(90, 120, "right_click"),
        {"action": "left_click_drag", "start_coordinate": [60, 120], "coordinate": [400, 400]},
        {"action": "wait", "duration": 1},
    ]
    cache = build_from_messages(history(frame, [(tool_input, frame) for tool_input in inputs]))
    actions = [block.action for block in cache.trajectory]
    assert "screenshot" not in actions and len(actions) == len(inputs) - 1
    hashed = {block.action for block in cache.trajectory if block.visual_representation}
    assert hashed == {"left_click", "type", "double_click", "right_click", "left_click_drag"}
    for block in cache.trajectory:
        if block.action in ("mouse_move", "key", "scroll", "wait"):
            assert block.visual_representation is None
    drag = cache.trajectory[actions.index("left_click_drag")]
    assert drag.visual_representation == region_hash(frame, 60, 120)  # where it presses


def test_the_hashed_actions_are_configurable(form: Form, history: History) -> None:
    frame = form()
    messages = history(
        frame, [(click(100, 55), frame), ({"action": "mouse_move", "coordinate": [10, 10]}, frame)]
    )
    cache = build_from_messages(
        messages, RecordingSettings(hashed_actions=frozenset({"mouse_move"}))
    )
    assert [block.visual_representation is not None for block in cache.trajectory] == [False, True]


def test_settings_are_written_once_in_the_metadata(form: Form, history: History) -> None:
    frame = form()
    settings = RecordingSettings(method="ahash", region_size=64, hash_size=16, threshold=20)
    cache = build_from_messages(history(frame, [(click(100, 55), frame)]), settings, goal="Fill it")
    data = json.loads(cache.to_json())
    assert data["metadata"]["visual_validation"] == {
        "enabled": True,
        "method": "ahash",
        "region_size": 64,
        "hash_size": 16,
        "threshold": 20,
    }
    assert data["metadata"]["goal"] == "Fill it"
    block = data["trajectory"][0]
    assert set(block) == {
        "type",
        "id",
        "name",
        "input",
        "visual_representation",
        "visual_colour",
        "visual_thumbnail",
    }
    assert len(block["visual_representation"]) == 64
    assert block["visual_representation"] == image_hash(
        frame, "ahash", 16, region_around(Point(x=100, y=55), 64, 640, 480)
    )


def test_token_usage_is_added_up(form: Form, history: History) -> None:
    frame = form()
    messages = history(
        frame,
        [(click(1, 1), frame), (click(2, 2), frame)],
        usage={"input_tokens": 1000, "output_tokens": 50},
    )
    usage = build_from_messages(messages).metadata.token_usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (2000, 100)


def test_a_step_before_any_screenshot_has_no_hash(history: History, form: Form) -> None:
    cache = build_from_messages(history(None, [(click(100, 55), form())]))
    assert cache.trajectory[0].visual_representation is None


def test_a_coordinate_off_the_frame_names_the_step_and_field(form: Form, history: History) -> None:
    frame = form()
    with pytest.raises(StepCoordinateError) as caught:
        build_from_messages(history(frame, [(click(10, 10), frame), (click(700, 10), frame)]))
    assert (caught.value.step, caught.value.field) == (1, "trajectory[1].input.coordinate")
    assert "640x480" in str(caught.value)


def test_thumbnails_store_the_region_as_it_is_unless_left_out(
    form: Form, history: History, layout: dict[str, Region]
) -> None:
    frame = form()
    submit = layout["submit"]
    messages = history(frame, [(click(submit.center.x, submit.center.y), frame)])
    default = build_from_messages(messages)
    stored = decode_thumbnail(default.trajectory[0].visual_thumbnail or "")
    # the region's own pixels, what template matching searches for
    region = submit.center.x - 50, submit.center.y - 50, submit.center.x + 50, submit.center.y + 50
    assert stored.size == (100, 100)
    assert stored.tobytes() == frame.crop(region).convert("RGB").tobytes()
    assert len(default.trajectory[0].visual_thumbnail or "") < 4000  # a small PNG
    plain = build_from_messages(messages, RecordingSettings(thumbnails=False))
    assert plain.trajectory[0].visual_thumbnail is None
    assert "visual_thumbnail" not in plain.to_json()
    small = build_from_messages(messages, RecordingSettings(thumbnail_size=64))
    thumbnail = decode_thumbnail(small.trajectory[0].visual_thumbnail or "")
    assert thumbnail.size == (64, 64)
    assert thumbnail.getpixel((32, 26)) == (30, 90, 200)  # the button's blue, mid-region
    with pytest.raises(HashSettingsError, match="thumbnail size 2"):
        RecordingSettings(thumbnail_size=2)


def test_a_trajectory_becomes_computer_use_blocks() -> None:
    first = Image.new("RGB", (320, 240), (255, 255, 255))
    first.paste((255, 0, 0), (0, 0, 160, 240))
    trajectory = Trajectory()
    trajectory.metadata.goal = "Click red, then type"
    trajectory.append(
        Event(kind=EventKind.SCREENSHOT), frame=Screenshot.from_image(first, source="test")
    )
    trajectory.append(Event(kind=EventKind.CLICK, position=Point(x=80, y=120)))
    trajectory.append(Event(kind=EventKind.TYPE, text="hello"))
    cache = build_from_trajectory(trajectory)
    assert cache.metadata.goal == "Click red, then type"
    assert [block.input for block in cache.trajectory] == [
        {"action": "left_click", "coordinate": [80, 120]},
        {"action": "type", "text": "hello"},
    ]
    assert all(block.name == "computer" for block in cache.trajectory)
    assert cache.trajectory[0].visual_representation == image_hash(
        first, "phash", 8, region_around(Point(x=80, y=120), 100, 320, 240)
    )
    # the type step is checked in the field the click before it focused
    assert cache.trajectory[1].visual_representation == cache.trajectory[0].visual_representation


def test_build_cache_reads_message_histories_and_trajectories(
    tmp_path: Path, form: Form, history: History
) -> None:
    frame = form()
    messages = history(frame, [(click(100, 55), frame)])
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(messages))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"model": "m", "messages": messages}))
    assert build_cache(listed).trajectory == build_cache(wrapped).trajectory
    trajectory = Trajectory()
    trajectory.append(
        Event(kind=EventKind.CLICK, position=Point(x=100, y=55)),
        frame=Screenshot.from_image(frame, source="test"),
    )
    saved = tmp_path / "trajectory.json"
    saved.write_text(trajectory.model_dump_json())
    assert build_cache(saved).trajectory[0].visual_representation == region_hash(frame, 100, 55)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "not a readable JSON"),
        ('{"metadata": {}, "trajectory": []}', "already a cache file"),
        ('{"steps": [{"event": {"kind": "teleport"}}]}', "not a valid viewfinder Trajectory"),
        ('{"hello": 1}', "neither a message history"),
        ('[{"role": "user"}]', "message 0 is not a message"),
    ],
)
def test_unusable_sources_are_typed_errors(tmp_path: Path, content: str, match: str) -> None:
    source = tmp_path / "source.json"
    source.write_text(content)
    with pytest.raises(SourceError, match=match) as caught:
        build_cache(source)
    assert str(source) in str(caught.value)


def test_a_bad_step_in_a_source_file_names_that_file(
    tmp_path: Path, form: Form, history: History
) -> None:
    frame = form()
    source = tmp_path / "source.json"
    source.write_text(json.dumps(history(frame, [(click(900, 10), frame)])))
    with pytest.raises(StepCoordinateError) as caught:
        build_cache(source)
    assert caught.value.path == source and caught.value.step == 0


def test_a_folder_without_a_manifest_is_not_a_session(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"manifest\.jsonl"):
        build_cache(tmp_path)


def test_parameterize_turns_recorded_text_into_placeholders(form: Form, history: History) -> None:
    frame = form()
    cache = build_from_messages(
        history(frame, [({"action": "type", "text": "Ada Lovelace"}, frame)]),
        goal="Greet Ada Lovelace",
    )
    hashed = cache.trajectory[0].visual_representation
    named = parameterize(cache, {"user": "Ada Lovelace"}, {"user": "who to greet"})
    assert named.trajectory[0].input == {"action": "type", "text": "{{user}}"}
    assert named.metadata.goal == "Greet {{user}}"
    assert named.cache_parameters == {"user": "who to greet"}
    assert named.trajectory[0].visual_representation == hashed
    assert cache.trajectory[0].input["text"] == "Ada Lovelace"  # the original is untouched


SAVE = ElementAnchor(
    role="push button",
    name="Save",
    path=(("application", "form"), ("frame", "Form"), ("filler", "")),
    box=Region(x=40, y=140, width=120, height=40),
    ref="e7",
)


def test_the_element_under_each_pointer_action_becomes_the_blocks_visual_element(
    tmp_path: Path, form: Form
) -> None:
    frame = Screenshot.from_image(form(), source="test")
    trajectory = Trajectory()
    trajectory.append(
        Event(kind=EventKind.CLICK, position=Point(x=100, y=160), element=SAVE), frame=frame
    )
    trajectory.append(Event(kind=EventKind.KEY, keys=["Return"]))
    cache = build_from_trajectory(trajectory)
    assert cache.trajectory[0].visual_element == SAVE
    assert cache.trajectory[1].visual_element is None
    # it survives the file, and never reaches a model
    again = parse_cache_json(cache.to_json())
    assert again.trajectory[0].visual_element == SAVE
    assert "visual_element" not in json.dumps(again.api_trajectory())

    # a recorder session's manifest lines carry it the same way
    folder = tmp_path / "session"
    (folder / "screenshots").mkdir(parents=True)
    form().save(folder / "screenshots" / "0.png")
    SessionMetadata(
        screen=ScreenSize(width=640, height=480),
        backend="xvfb",
        input_source="x11",
        interval_s=0.5,
        started_at=datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
        status="stopped",
    ).save(folder / "metadata.json")
    event = Event(
        kind=EventKind.CLICK,
        position=Point(x=100, y=160),
        screenshot="screenshots/0.png",
        element=SAVE,
    )
    (folder / "manifest.jsonl").write_text(json.dumps(event.to_manifest(0)) + "\n")
    session = build_cache(folder)
    assert session.trajectory[0].visual_element == SAVE
    assert session.trajectory[0].visual_representation == cache.trajectory[0].visual_representation
