"""``viewfinder display start | list | stop`` through the plugin's command hook."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from viewfinder.xvfb import XvfbBackend, find_display, server, sockets
from viewfinder.xvfb.commands import display_app
from viewfinder.xvfb.testing import socket_left

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The root command, as apps/cli builds it."""

    app.add_typer(display_app(), name="display")
    return app


def test_start_list_stop_one_display(state_dir) -> None:
    app = _app()
    started = runner.invoke(app, ["display", "start", "--size", "320x200"])
    assert started.exit_code == 0, started.output
    line = started.output.strip()
    assert line.startswith("export DISPLAY=:")  # so `eval "$(viewfinder display start)"` works
    name = line.removeprefix("export DISPLAY=")
    record = find_display(name)
    assert record is not None and record.is_alive()
    assert record.framebuffer_path.is_file()
    assert record.framebuffer_path.is_relative_to(state_dir)

    listed = runner.invoke(app, ["display", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert [(row["name"], row["width"], row["height"], row["alive"]) for row in rows] == [
        (name, 320, 200, True)
    ]
    table = runner.invoke(app, ["display", "list"]).output
    assert name in table and "yes" in table and "320x200" in table

    # another process finds the display through the record, and knows its server
    with XvfbBackend(name) as backend:
        assert backend.grab_path == "shm"
        assert backend._pid == record.pid
        assert backend.capture().size == (320, 200)

    stopped = runner.invoke(app, ["display", "stop", name])
    assert stopped.exit_code == 0, stopped.output
    assert f"stopped {name}" in stopped.output
    assert not server.pid_alive(record.pid)
    assert not socket_left(record.number)
    assert not sockets.lock_path(record.number).exists()
    assert list(state_dir.iterdir()) == []


def test_start_json_and_stop_all(state_dir) -> None:
    app = _app()
    names = []
    for _ in range(2):
        result = runner.invoke(app, ["display", "start", "--size", "100x100", "--json"])
        assert result.exit_code == 0, result.output
        names.append(json.loads(result.output)["name"])
    assert len(set(names)) == 2
    stopped = runner.invoke(app, ["display", "stop", "--all", "--json"])
    assert stopped.exit_code == 0, stopped.output
    assert sorted(json.loads(stopped.output)) == sorted(names)
    assert runner.invoke(app, ["display", "list", "--json"]).output.strip() == "[]"


def test_stop_unknown_display_fails_clearly(state_dir) -> None:
    result = runner.invoke(_app(), ["display", "stop", ":4242"])
    assert result.exit_code == 1
    assert "no display :4242" in result.output
    assert "viewfinder display list" in result.output


def test_stop_needs_a_display_or_all(state_dir) -> None:
    result = runner.invoke(_app(), ["display", "stop"])
    assert result.exit_code == 1
    assert "--all" in result.output


def test_bad_size_is_a_usage_error(state_dir) -> None:
    result = runner.invoke(_app(), ["display", "start", "--size", "big"])
    assert result.exit_code == 2
    assert "WIDTHxHEIGHT" in result.output


def test_list_prunes_dead_displays(state_dir, wait_until) -> None:
    import os
    import signal

    app = _app()
    name = runner.invoke(app, ["display", "start", "--size", "100x100"]).output.strip()
    record = find_display(name.removeprefix("export DISPLAY="))
    assert record is not None
    os.kill(record.pid, signal.SIGKILL)
    wait_until(lambda: not record.is_alive(), "Xvfb to die")
    rows = json.loads(runner.invoke(app, ["display", "list", "--json"]).output)
    assert [row["alive"] for row in rows] == [False]
    assert json.loads(runner.invoke(app, ["display", "list", "--json"]).output) == []
    assert list(state_dir.iterdir()) == []
    assert not socket_left(record.number)
