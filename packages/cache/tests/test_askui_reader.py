"""askui's own reader (``CacheManager.read_cache_file``, askui's pydantic models) reads
the cache files viewfinder writes: elements, thumbnails and heal history included.

askui runs in a venv of its own (``make setup`` makes ``.venv-askui``), so its
dependencies never meet the workspace's; the test hands it a file and reads back what
askui's models made of it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.cache import build_from_trajectory, read_cache_file, save_cache_file
from viewfinder.cache.models import HealRecord
from viewfinder.core import Event, EventKind, Point, Region, Screenshot, Trajectory
from viewfinder.core.element import ElementAnchor

ROOT = Path(__file__).resolve().parents[3]
ASKUI_PYTHON = ROOT / ".venv-askui" / "bin" / "python"
READER = """
import json, sys
from pathlib import Path
from askui.utils.caching.cache_manager import CacheManager
cache = CacheManager.read_cache_file(Path(sys.argv[1]))
print(json.dumps(cache.model_dump(mode="json")))
"""


def askui_reads(path: Path) -> dict[str, Any]:
    assert ASKUI_PYTHON.exists(), f"askui's venv is missing: run `make setup` ({ASKUI_PYTHON})"
    done = subprocess.run(
        [str(ASKUI_PYTHON), "-c", READER, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def test_askui_reads_a_built_file_with_elements_thumbnails_and_heals(tmp_path: Path) -> None:
    frame = Image.new("RGB", (400, 300), (255, 255, 255))
    frame.paste((0, 0, 255), (60, 120, 160, 160))  # the Save button
    save = ElementAnchor(
        role="push button",
        name="Save",
        path=(("application", "form"), ("frame", "Form")),
        box=Region(x=60, y=120, width=100, height=40),
        ref="e5",
    )
    trajectory = Trajectory()
    trajectory.append(
        Event(kind=EventKind.CLICK, position=Point(x=110, y=140), element=save),
        frame=Screenshot.from_image(frame, source="test"),
    )
    trajectory.append(Event(kind=EventKind.TYPE, text="hello"))
    trajectory.append(Event(kind=EventKind.KEY, keys=["Return"]))
    cache = build_from_trajectory(trajectory)
    cache.metadata.heals.append(
        HealRecord.model_validate(
            {
                "timestamp": "2026-11-27T02:10:00Z",
                "step_index": 0,
                "method": "element",
                "from": [110, 140],
                "to": [230, 140],
                "shift": [120, 0],
                "element": "push button 'Save'",
            }
        )
    )
    path = save_cache_file(cache, tmp_path / "ours.json")
    ours = json.loads(path.read_text())
    assert ours["trajectory"][0]["visual_element"]["name"] == "Save"
    assert ours["trajectory"][0]["visual_thumbnail"]

    theirs = askui_reads(path)

    assert theirs["metadata"]["version"] == "0.3"
    assert theirs["metadata"]["is_valid"] is True
    visual = theirs["metadata"]["visual_validation"]
    assert (visual["enabled"], visual["method"], visual["region_size"]) == (True, "phash", 100)
    assert [
        (block["id"], block["name"], block["input"], block.get("visual_representation"))
        for block in theirs["trajectory"]
    ] == [
        (block.id, block.name, block.input, block.visual_representation)
        for block in cache.trajectory
    ]
    # askui's models keep what they know; viewfinder's own fields stay in our reading
    assert "visual_element" not in json.dumps(theirs)
    again = read_cache_file(path)
    assert again.trajectory[0].visual_element == save
    assert again.metadata.heals[0].to == [230, 140]
