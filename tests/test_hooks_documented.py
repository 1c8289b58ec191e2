"""Every hook is documented in docs/hooks.md and exercised by a test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from viewfinder.core import get_plugin_manager, hookspecs

ROOT = Path(__file__).resolve().parents[1]
HOOKS = sorted(
    name
    for name in dir(hookspecs)
    if name.startswith("viewfinder_") and callable(getattr(hookspecs, name))
)


def test_hookspecs_found() -> None:
    assert "viewfinder_register_capture_backends" in HOOKS
    assert set(HOOKS) <= set(vars(get_plugin_manager().hook))


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_documented(hook: str) -> None:
    docs = (ROOT / "docs" / "hooks.md").read_text()
    assert re.search(rf"^## {hook}$", docs, re.MULTILINE), (
        f"docs/hooks.md has no section for {hook}"
    )


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_docstring(hook: str) -> None:
    assert (getattr(hookspecs, hook).__doc__ or "").strip()


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_is_exercised_by_a_test(hook: str) -> None:
    test_files = [
        path
        for pattern in ("*/*/tests/test_*.py", "tests/test_*.py")
        for path in ROOT.glob(pattern)
        if path.name != Path(__file__).name
    ]
    assert any(hook in path.read_text() for path in test_files), f"no test exercises {hook}"
