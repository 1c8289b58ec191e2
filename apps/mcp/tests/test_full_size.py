"""The full-size images a result links: kept for the server's user alone, the newest
only, read back by the URI the link names and by nothing else; and the schemas the
server lists, inlined (in-process: logic around files and dicts)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from PIL import Image
from pydantic import BaseModel

from viewfinder.core import Screenshot
from viewfinder.mcp.full_size import FULL_SIZE_PREFIX, FullSizeImages
from viewfinder.mcp.schemas import RecursiveSchemaError, inline_refs


def _shot(colour: tuple[int, int, int]) -> Screenshot:
    return Screenshot.from_image(Image.new("RGB", (40, 30), colour), source="test")


def test_kept_images_are_private_read_back_by_their_uri_and_only_the_newest_stay(
    tmp_path: Path,
) -> None:
    images = FullSizeImages(tmp_path / "kept", kept=2)
    uris = [images(_shot((n * 60, 0, 0)))[0] for n in range(3)]
    assert uris == [f"{FULL_SIZE_PREFIX}{n}.png" for n in range(3)]
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "kept" / "2.png").stat().st_mode) == 0o600
    assert images.read(uris[0]) is None  # the oldest was removed
    data, mime_type = images.read(uris[2]) or (b"", "")
    assert mime_type == "image/png"
    assert Screenshot.from_bytes(data, source="test").to_pil().getpixel((5, 5)) == (120, 0, 0)
    images.clear()
    assert not (tmp_path / "kept").exists()


@pytest.mark.parametrize(
    "uri",
    [
        f"{FULL_SIZE_PREFIX}../../etc/passwd",
        f"{FULL_SIZE_PREFIX}0.png/../0.png",
        f"{FULL_SIZE_PREFIX}secret.txt",
        "viewfinder://session/elsewhere/0.png",
    ],
)
def test_a_uri_that_names_no_kept_image_reads_nothing(tmp_path: Path, uri: str) -> None:
    images = FullSizeImages(tmp_path / "kept")
    images(_shot((0, 0, 255)))
    (tmp_path / "kept" / "secret.txt").write_text("no")
    assert images.read(uri) is None


def test_a_symlink_in_place_of_a_kept_image_is_not_followed(tmp_path: Path) -> None:
    images = FullSizeImages(tmp_path / "kept")
    uri, _ = images(_shot((0, 0, 255)))
    target = tmp_path / "elsewhere"
    target.write_text("not an image of this session")
    (tmp_path / "kept" / "0.png").unlink()
    (tmp_path / "kept" / "0.png").symlink_to(target)
    assert images.read(uri) is None


class _Inner(BaseModel):
    x: int


class _Outer(BaseModel):
    inner: _Inner | None = None
    many: list[_Inner] = []


class _Loop(BaseModel):
    child: _Loop | None = None


def test_schemas_are_inlined_and_a_recursive_one_is_refused() -> None:
    schema = inline_refs(_Outer.model_json_schema())
    assert "$defs" not in schema and "$ref" not in str(schema)
    assert schema["properties"]["inner"]["anyOf"][0]["properties"]["x"]["type"] == "integer"
    assert schema["properties"]["many"]["items"]["properties"]["x"]["type"] == "integer"
    with pytest.raises(RecursiveSchemaError, match="refers to itself"):
        inline_refs(_Loop.model_json_schema())
