"""Region, Screenshot, Event and Trajectory: validation and exact JSON round trips."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from PIL import Image
from pydantic import ValidationError

from viewfinder.core import (
    Event,
    EventFormatError,
    EventKind,
    Point,
    Region,
    RegionError,
    Screenshot,
    ScreenshotDecodeError,
    Trajectory,
    TrajectoryMetadata,
    VisualValidation,
)


def make_shot(
    fmt: str = "png", color: str = "blue", size: tuple[int, int] = (40, 30)
) -> Screenshot:
    image = Image.new("RGB", size, color)
    image.paste((255, 0, 0), (10, 5, 20, 15))
    return Screenshot.from_image(image, source="test", format=fmt)


class TestRegion:
    def test_parse_both_spellings(self) -> None:
        assert Region.parse("10,20,300,200") == Region(x=10, y=20, width=300, height=200)
        assert Region.parse("300x200+10+20") == Region(x=10, y=20, width=300, height=200)

    @pytest.mark.parametrize("text", ["", "1,2,3", "a,b,c,d", "10x10"])
    def test_parse_rejects_garbage_with_the_expected_form(self, text: str) -> None:
        with pytest.raises(RegionError, match="X,Y,WIDTH,HEIGHT"):
            Region.parse(text)

    def test_non_positive_size_and_negative_origin_are_rejected(self) -> None:
        with pytest.raises(ValidationError):
            Region(x=0, y=0, width=0, height=5)
        with pytest.raises(ValidationError):
            Region(x=-1, y=0, width=5, height=5)

    def test_check_within_names_the_screen(self) -> None:
        Region(x=0, y=0, width=100, height=100).check_within(100, 100)
        with pytest.raises(RegionError, match="100x100 screen"):
            Region(x=50, y=0, width=51, height=10).check_within(100, 100)

    @pytest.mark.parametrize(
        ("point", "expected"),
        [
            (Point(x=50, y=50), Region(x=40, y=40, width=20, height=20)),  # centre
            (Point(x=2, y=3), Region(x=0, y=0, width=12, height=13)),  # top-left edge
            (Point(x=99, y=99), Region(x=89, y=89, width=11, height=11)),  # bottom-right edge
        ],
    )
    def test_around_clips_at_edges(self, point: Point, expected: Region) -> None:
        assert Region.around(point, 20, 100, 100) == expected

    def test_around_rejects_points_off_screen_and_bad_sizes(self) -> None:
        with pytest.raises(RegionError, match="outside"):
            Region.around(Point(x=100, y=5), 20, 100, 100)
        with pytest.raises(RegionError, match="positive"):
            Region.around(Point(x=5, y=5), 0, 100, 100)


class TestScreenshot:
    @pytest.mark.parametrize("fmt", ["png", "jpeg", "webp"])
    def test_json_round_trip_is_exact(self, fmt: str) -> None:
        shot = make_shot(fmt)
        text = shot.model_dump_json()
        assert json.loads(text)["data"] == base64.b64encode(shot.data).decode()
        again = Screenshot.model_validate_json(text)
        assert again == shot
        assert again.model_dump_json() == text
        assert again.mime_type == f"image/{fmt}"

    def test_pixels_survive(self) -> None:
        shot = make_shot()
        assert shot.pixel(15, 10) == (255, 0, 0)
        assert shot.pixel(2, 2) == (0, 0, 255)

    def test_crop_keeps_absolute_region(self) -> None:
        crop = make_shot().crop(Region(x=10, y=5, width=10, height=10))
        assert (crop.width, crop.height) == (10, 10)
        assert crop.pixel(0, 0) == (255, 0, 0)
        assert crop.region == Region(x=10, y=5, width=10, height=10)
        inner = crop.crop(Region(x=1, y=1, width=2, height=2))
        assert inner.region == Region(x=11, y=6, width=2, height=2)

    def test_crop_outside_frame_is_a_region_error(self) -> None:
        with pytest.raises(RegionError):
            make_shot().crop(Region(x=30, y=0, width=20, height=5))

    def test_save_is_atomic_and_fills_in_names(self, tmp_path) -> None:  # type: ignore[no-untyped-def]
        shot = make_shot()
        path = shot.save(tmp_path / "frame")
        assert path.name == "frame.png"
        assert Screenshot.from_file(path).data == shot.data
        in_dir = shot.save(tmp_path)
        assert in_dir.parent == tmp_path and in_dir.suffix == ".png"
        assert not list(tmp_path.glob(".*tmp*"))

    def test_captured_at_is_utc(self) -> None:
        local = datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2)))
        shot = make_shot().model_copy(update={"captured_at": local})
        checked = Screenshot.model_validate(shot.model_dump())
        assert checked.captured_at.tzinfo == UTC and checked.captured_at.hour == 10

    def test_naive_timestamp_is_rejected(self) -> None:
        data = make_shot().model_dump(mode="json")
        data["captured_at"] = "2026-01-01T12:00:00"
        with pytest.raises(ValidationError, match="time zone"):
            Screenshot.model_validate(data)

    @pytest.mark.parametrize(
        ("mutate", "message"),
        [
            (lambda d: d.update(data="not base64!!"), "not valid base64"),
            (lambda d: d.update(data=base64.b64encode(b"hello").decode()), "not a PNG"),
            (lambda d: d.update(format="jpeg"), "format says 'jpeg'"),
            (lambda d: d.update(width=0), "greater than 0"),
            (lambda d: d.update(extra=1), "Extra inputs"),
            (lambda d: d.pop("data"), "data"),
        ],
    )
    def test_malformed_json_gives_a_typed_error_with_the_reason(self, mutate, message) -> None:  # type: ignore[no-untyped-def]
        data = make_shot().model_dump(mode="json")
        mutate(data)
        with pytest.raises(ScreenshotDecodeError, match=message):
            Screenshot.from_json(json.dumps(data))

    def test_not_json_at_all(self) -> None:
        with pytest.raises(ScreenshotDecodeError, match="invalid Screenshot JSON"):
            Screenshot.from_json("{truncated")

    def test_from_bytes_rejects_non_images(self) -> None:
        with pytest.raises(ScreenshotDecodeError):
            Screenshot.from_bytes(b"GIF89a....", source="x")


CU_CASES = [
    {"action": "left_click", "coordinate": [10, 20]},
    {"action": "left_click", "coordinate": [10, 20], "text": "shift+ctrl"},
    {"action": "double_click", "coordinate": [1, 2]},
    {"action": "triple_click", "coordinate": [1, 2]},
    {"action": "right_click", "coordinate": [3, 4]},
    {"action": "middle_click", "coordinate": [3, 4]},
    {"action": "mouse_move", "coordinate": [5, 6]},
    {"action": "left_click_drag", "start_coordinate": [1, 1], "coordinate": [9, 9]},
    {"action": "left_mouse_down"},
    {"action": "left_mouse_up"},
    {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "down", "scroll_amount": 3},
    {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "left", "scroll_amount": 2},
    {"action": "key", "text": "ctrl+s"},
    {"action": "key", "text": "Return"},
    {"action": "hold_key", "text": "shift", "duration": 1.5},
    {"action": "type", "text": "hello world"},
    {"action": "wait", "duration": 2.0},
    {"action": "screenshot"},
]


class TestEvent:
    @pytest.mark.parametrize("tool_input", CU_CASES, ids=lambda c: c["action"])
    def test_computer_use_round_trip(self, tool_input: dict) -> None:  # type: ignore[type-arg]
        event = Event.from_computer_use(tool_input)
        assert event.to_computer_use() == tool_input

    def test_click_maps_to_kind_and_button(self) -> None:
        event = Event.from_computer_use({"action": "right_click", "coordinate": [3, 4]})
        assert event.kind is EventKind.RIGHT_CLICK
        assert event.button == "right"
        assert event.position == Point(x=3, y=4)

    def test_scroll_deltas(self) -> None:
        event = Event.from_computer_use(
            {"action": "scroll", "coordinate": [0, 0], "scroll_direction": "up", "scroll_amount": 4}
        )
        assert (event.scroll_dx, event.scroll_dy) == (0, -4)

    @pytest.mark.parametrize(
        ("tool_input", "message"),
        [
            ({"action": "fly"}, "unknown computer-use action 'fly'"),
            ({"action": "left_click"}, "coordinate must be"),
            ({"action": "left_click", "coordinate": [1]}, "coordinate must be"),
            (
                {"action": "scroll", "coordinate": [1, 1], "scroll_direction": "in"},
                "scroll_direction",
            ),
            ({"action": "key", "text": ""}, "key text"),
            ({"action": "type", "text": ""}, "non-empty text"),
            ({"coordinate": [1, 1]}, "must be an object with an 'action'"),
        ],
    )
    def test_bad_computer_use_input(self, tool_input: dict, message: str) -> None:  # type: ignore[type-arg]
        with pytest.raises(EventFormatError, match=message):
            Event.from_computer_use(tool_input)

    def test_diagonal_scroll_cannot_become_one_computer_use_action(self) -> None:
        event = Event(kind=EventKind.SCROLL, position=Point(x=1, y=1), scroll_dx=1, scroll_dy=1)
        with pytest.raises(EventFormatError, match="split"):
            event.to_computer_use()

    def test_kind_requirements(self) -> None:
        with pytest.raises(ValidationError, match="needs a position"):
            Event(kind=EventKind.CLICK)
        with pytest.raises(ValidationError, match="needs keys"):
            Event(kind=EventKind.KEY)

    def test_manifest_round_trip(self) -> None:
        event = Event(
            kind=EventKind.TYPE,
            text="abc",
            screenshot="screenshots/3.png",
            timestamp=datetime(2026, 5, 1, 9, 30, 1, 250000, tzinfo=UTC),
        )
        line = event.to_manifest(3)
        assert (
            line["seq"] == 3
            and line["kind"] == "type"
            and line["screenshot"] == "screenshots/3.png"
        )
        assert "position" not in line  # defaults are left out
        text = json.dumps(line)
        assert Event.from_manifest(json.loads(text)) == event

    def test_manifest_lines_may_carry_more_than_an_event(self) -> None:
        line = {"seq": 4, "kind": "key", "keys": ["Return"], "frame_captured_at": "later"}
        assert Event.from_manifest(line).keys == ["Return"]

    def test_bad_manifest_line(self) -> None:
        with pytest.raises(EventFormatError, match="invalid manifest line"):
            Event.from_manifest({"seq": 1, "kind": "teleport"})


class TestTrajectory:
    def test_round_trip_with_frames(self) -> None:
        trajectory = Trajectory(
            metadata=TrajectoryMetadata(
                goal="open the file menu",
                source="recorder",
                visual_validation=VisualValidation(enabled=True, method="ahash", region_size=64),
                custom_field="kept",
            )
        )
        trajectory.append(
            Event.from_computer_use({"action": "left_click", "coordinate": [5, 5]}),
            frame=make_shot(),
            visual_hash="ffd8000000000000",
        )
        trajectory.append(Event(kind=EventKind.TYPE, text="x"))
        text = trajectory.model_dump_json()
        again = Trajectory.model_validate_json(text)
        assert again == trajectory
        assert again.model_dump_json() == text
        assert again.metadata.model_extra == {"custom_field": "kept"}
        assert again.to_computer_use()[0] == {"action": "left_click", "coordinate": [5, 5]}
        assert len(again) == 2
