"""output_folder: made when it can be, a one-line OutputPathError when it cannot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from viewfinder.core import OutputPathError, output_folder


def test_makes_the_folder_and_its_parents(tmp_path: Path) -> None:
    folder = output_folder(tmp_path / "a" / "b")
    assert folder.is_dir() and folder == tmp_path / "a" / "b"
    assert output_folder(folder) == folder  # already there: fine


@pytest.mark.parametrize("bad", ["/proc/viewfinder-nope/out", "/dev/null/out"])
def test_a_folder_that_cannot_be_made_is_named(bad: str) -> None:
    with pytest.raises(OutputPathError, match=f"cannot write {bad}") as caught:
        output_folder(bad)
    assert isinstance(caught.value, OSError)
    assert not os.path.exists(bad)


def test_a_file_in_the_way_is_named(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("mine")
    with pytest.raises(OutputPathError, match="taken"):
        output_folder(tmp_path / "taken")
    assert (tmp_path / "taken").read_text() == "mine"
