"""`viewfinder --help`, `--version` and a capture import only what they use.

Each command runs in a process of its own, exactly as a user starts it, and reports the
modules it imported on the way out.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.cli.lazy import CommandRegistry, LazyGroup, build_command
from viewfinder.core import PluginError, hookimpl
from viewfinder.xvfb import Display

#: Never imported to list, describe or version the commands.
HEAVY = (
    "textual",
    "fastapi",
    "uvicorn",
    "starlette",
    "httpx",
    "websockets",
    "scipy",
    "numpy",
    "imagehash",
    "pydantic",
    "PIL",
    "Xlib",
    "mss",
    "matplotlib",
    "ray",
)
#: The viewfinder modules a listing may import: the command wiring, the plugin manager
#: and each distribution's plugin module (with its package, lazily empty).
ALLOWED_OWN = {"viewfinder.cli.app", "viewfinder.cli.lazy", "viewfinder.cli"}
ALLOWED_CORE = {"viewfinder.core.errors", "viewfinder.core.hookspecs", "viewfinder.core.plugins"}

RUN_AND_REPORT = textwrap.dedent(
    """
    import atexit, json, sys
    out, argv = sys.argv[1], sys.argv[2:]
    atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
    sys.argv = ["viewfinder", *argv]
    from viewfinder.cli.app import main
    main()
    """
)


def imported_by(tmp_path: Path, *argv: str, env: dict[str, str] | None = None) -> set[str]:
    report = tmp_path / "modules.json"
    result = subprocess.run(
        [sys.executable, "-c", RUN_AND_REPORT, str(report), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return set(json.loads(report.read_text()))


def heavy_or_foreign(
    modules: set[str], allowed_packages: frozenset[str] = frozenset()
) -> list[str]:
    found = [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY]
    for module in modules:
        parts = module.split(".")
        if parts[0] != "viewfinder" or len(parts) < 3 or module in ALLOWED_OWN | ALLOWED_CORE:
            continue
        if parts[1] in allowed_packages or parts[2] == "plugin":
            continue
        found.append(module)
    return sorted(found)


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_listing_and_versions_import_nothing_heavy(tmp_path: Path, argv: list[str]) -> None:
    modules = imported_by(tmp_path, *argv)
    assert "viewfinder.cache.plugin" in modules  # every plugin was asked for its commands
    assert heavy_or_foreign(modules) == []


def test_a_groups_help_imports_that_group_alone(tmp_path: Path) -> None:
    modules = imported_by(tmp_path, "cache", "--help")
    assert "viewfinder.cache.cli" in modules
    others = [m for m in heavy_or_foreign(modules, frozenset({"cache", "core"})) if "." in m]
    assert [m for m in others if m.startswith("viewfinder.")] == []
    assert not {"textual", "fastapi", "uvicorn"} & {m.split(".")[0] for m in modules}


def test_a_capture_imports_no_package_it_does_not_use(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    with Display(320, 200) as display:
        modules = imported_by(
            tmp_path, "capture", "--backend", "xvfb", "--display", display.name, "-o", str(out)
        )
    assert out.stat().st_size > 0
    used = {m.split(".")[1] for m in modules if m.count(".") >= 2 and not m.endswith(".plugin")}
    assert "xvfb" in used
    # the other backends' classes are asked for their priority, not their dependencies
    unused = {"cache", "codeenv", "recorder", "browser", "tui", "server"}
    assert used & unused == set()
    heavy = {"textual", "fastapi", "uvicorn", "scipy", "websockets", "imagehash", "httpx"}
    assert not heavy & {m.split(".")[0] for m in modules}


def test_the_listed_help_is_the_commands_own() -> None:
    """The one-line help each package registers matches its command's help."""
    app = build_app()
    assert app.lazy_specs
    for spec in app.lazy_specs:
        command = build_command(spec)
        first_paragraph = " ".join((command.help or "").strip().split("\n\n")[0].split())
        assert first_paragraph == " ".join(spec.help.split()), spec.name


def test_a_lazy_command_runs_and_shows_its_own_help() -> None:
    result = CliRunner().invoke(build_app(), ["display", "--help"])
    assert result.exit_code == 0, result.output
    assert "start" in result.output and "stop" in result.output
    assert "--install-completion" not in result.output


class _Clashing:
    @hookimpl
    def viewfinder_register_commands(self, app: Any) -> None:
        app.add_typer(typer.Typer(), name="display")


def test_two_plugins_adding_one_command_name_is_an_error_naming_both(viewfinder_plugin) -> None:
    viewfinder_plugin(_Clashing(), "clashing-plugin")
    with pytest.raises(PluginError) as caught:
        build_app()
    message = str(caught.value)
    assert "'clashing-plugin'" in message and "'xvfb'" in message and "'display'" in message


class _Broken:
    @hookimpl
    def viewfinder_register_commands(self, app: Any) -> None:
        app.add_lazy_command("broken", "viewfinder.no_such_module:run", help="Never runs.")


def test_a_command_that_cannot_be_imported_says_which_plugin(viewfinder_plugin) -> None:
    viewfinder_plugin(_Broken(), "broken-plugin")
    app = build_app()
    listing = CliRunner().invoke(app, ["--help"])
    assert listing.exit_code == 0 and "broken" in listing.output
    result = CliRunner().invoke(app, ["broken"])
    assert result.exit_code == 1
    assert "broken-plugin" in result.output and "viewfinder.no_such_module" in result.output


def test_a_target_without_a_module_is_refused() -> None:
    registry = CommandRegistry(cls=LazyGroup)
    with pytest.raises(PluginError, match=r"package\.module:attribute"):
        registry.add_lazy_command("x", "not_a_target", help="x")


class _Raising:
    @hookimpl
    def viewfinder_register_commands(self, app: Any) -> None:
        raise RuntimeError("a bug in the plugin")


def test_a_command_hook_that_raises_leaves_the_other_commands(viewfinder_plugin) -> None:
    viewfinder_plugin(_Raising(), "raising-plugin")
    result = CliRunner().invoke(build_app(), ["display", "--help"])
    assert result.exit_code == 0, result.output
