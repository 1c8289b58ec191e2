"""ViewfinderEnvironment with a real Chromium, a real Xvfb and real processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from viewfinder.cdp import connect, launch_chromium
from viewfinder.cdp.launcher import processes_mentioning
from viewfinder.tui import NothingToCaptureError
from viewfinder.tui.config import parse_config
from viewfinder.tui.environment import ViewfinderEnvironment
from viewfinder.tui.process_groups import group_members

RED_PAGE = "data:text/html,<body style='margin:0;background:rgb(255,0,0)'></body>"


def alive(pid: int | None) -> bool:
    assert pid is not None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def assert_gone(facts: dict[str, object]) -> None:
    """Everything the environment had is gone: processes, browser, display, folders."""
    for pgid in facts["groups"]:  # type: ignore[attr-defined]
        assert group_members(pgid) == [], f"process group {pgid} left behind"
    if facts.get("browser_pid"):
        assert not alive(facts["browser_pid"])  # type: ignore[arg-type]
        root = facts["browser_root"]
        assert not Path(root).exists()  # type: ignore[arg-type]
        assert list(processes_mentioning(str(root))) == []
    if facts.get("xvfb_pid"):
        assert not alive(facts["xvfb_pid"])  # type: ignore[arg-type]
        assert not Path(facts["fbdir"]).exists()  # type: ignore[arg-type]
    assert not Path(facts["temp_dir"]).exists()  # type: ignore[arg-type]


def facts_of(env: ViewfinderEnvironment) -> dict[str, object]:
    browser = env.browser
    return {
        "groups": [info.pid for info in env.processes.list_processes()],
        "browser_pid": browser.pid if browser else None,
        "browser_root": browser.process.root if browser and browser.process else None,
        "xvfb_pid": env.display.pid if env.display else None,
        "fbdir": env.display.fbdir if env.display else None,
        "temp_dir": env.temp_dir,
    }


async def test_without_browser_or_display() -> None:
    async with ViewfinderEnvironment(parse_config('[browser]\ncdp_url = "none"')) as env:
        assert env.browser is None and env.browser_error is None and env.display is None
        await env.processes.spawn("sleep", ["60"])
        assert env.temp_dir is not None and env.temp_dir.is_dir()
        with pytest.raises(NothingToCaptureError, match="neither a display nor a browser"):
            await env.capture()
        facts = facts_of(env)
    assert_gone(facts)


async def test_auto_launches_a_local_chromium_and_captures_its_page() -> None:
    settings = parse_config('[browser]\ncdp_url = "auto"\n[display]\nsize = "320x200"')
    async with ViewfinderEnvironment(settings) as env:
        browser = env.browser
        assert browser is not None and browser.launched and browser.ready
        assert alive(browser.pid) and browser.endpoint.startswith("http://127.0.0.1:")
        await browser.navigate(RED_PAGE)
        shot = await env.capture()
        assert shot.source == "cdp" and (shot.width, shot.height) == (320, 200)
        assert shot.pixel(160, 100) == (255, 0, 0)
        await env.processes.spawn("sleep", ["60"])
        facts = facts_of(env)
    assert_gone(facts)


async def test_attaches_to_an_external_browser_and_leaves_it_running() -> None:
    with launch_chromium(width=320, height=200) as external:
        settings = parse_config(f'[browser]\ncdp_url = "{external.http_url}"')
        async with ViewfinderEnvironment(settings) as env:
            browser = env.browser
            assert browser is not None and not browser.launched and browser.pid is None
            assert browser.endpoint == external.http_url
            await browser.navigate(RED_PAGE)
            assert (await env.capture("browser")).pixel(10, 10) == (255, 0, 0)
            our_tab = browser.page.target_id
            facts = facts_of(env)
        assert_gone(facts)
        assert external.running
        async with await connect(external.ws_url) as connection:
            targets = await connection.call("Target.getTargets")
        assert our_tab not in {target["targetId"] for target in targets["targetInfos"]}


async def test_auto_without_chromium_goes_on_without_a_browser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIEWFINDER_CHROMIUM", "/nonexistent/chromium")
    async with ViewfinderEnvironment(parse_config('[browser]\ncdp_url = "auto"')) as env:
        assert env.browser is None
        assert env.browser_error is not None and "chromium" in env.browser_error.lower()
        info = await env.processes.spawn("sleep", ["60"])
        assert info.running
        with pytest.raises(NothingToCaptureError, match="the browser failed"):
            await env.capture("browser")
        facts = facts_of(env)
    assert_gone(facts)


async def test_an_unreachable_browser_url_is_reported() -> None:
    settings = parse_config('[browser]\ncdp_url = "http://127.0.0.1:9"\ntimeout = 5')
    async with ViewfinderEnvironment(settings) as env:
        assert env.browser is None
        assert env.browser_error is not None and "127.0.0.1:9" in env.browser_error


async def test_display_for_gui_processes_and_its_capture() -> None:
    settings = parse_config("[display]\nenabled = true\nsize = '200x120'")
    async with ViewfinderEnvironment(settings) as env:
        assert env.display is not None and env.display_name is not None
        info = await env.processes.spawn("sh", ["-c", 'echo "$DISPLAY"'])
        await env.processes.wait(info.id, timeout=20)
        assert [line.text for line in env.processes.logs(info.id)] == [env.display_name]
        painter = await env.processes.spawn("xsetroot", ["-solid", "#00ff00"])
        assert (await env.processes.wait(painter.id, timeout=20)).exit_code == 0
        shot = await env.capture()
        assert shot.source == "xvfb" and (shot.width, shot.height) == (200, 120)
        assert shot.pixel(100, 60) == (0, 255, 0)
        with pytest.raises(NothingToCaptureError, match="no browser"):
            await env.capture("browser")
        facts = facts_of(env)
    assert_gone(facts)


async def test_everything_is_gone_when_the_block_raised() -> None:
    settings = parse_config('[browser]\ncdp_url = "auto"\n[display]\nenabled = true')
    facts: dict[str, object] = {}

    async def work_that_fails() -> None:
        nonlocal facts
        async with ViewfinderEnvironment(settings) as env:
            await env.processes.spawn("sh", ["-c", "sleep 60 & sleep 60"])
            facts = facts_of(env)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await work_that_fails()
    assert facts["browser_pid"] and facts["xvfb_pid"] and facts["groups"]
    assert_gone(facts)


async def test_browser_session_is_a_temporary_browser() -> None:
    async with ViewfinderEnvironment() as env:
        assert env.browser is None
        async with env.browser_session(RED_PAGE) as browser:
            assert browser.launched and browser.url == RED_PAGE
            assert (await browser.capture()).pixel(5, 5) == (255, 0, 0)
            pid, root = browser.pid, browser.process.root  # type: ignore[union-attr]
        assert not alive(pid) and not root.exists()
        assert env.browser is None


async def test_browser_session_is_stopped_when_the_environment_exits() -> None:
    started = asyncio.Event()
    pids: list[int | None] = []

    async def hold(env: ViewfinderEnvironment) -> None:
        async with env.browser_session() as browser:
            pids.append(browser.pid)
            started.set()
            await asyncio.Event().wait()  # until cancelled

    async with ViewfinderEnvironment() as env:
        holder = asyncio.create_task(hold(env))
        await asyncio.wait_for(started.wait(), 60)
    holder.cancel()
    await asyncio.gather(holder, return_exceptions=True)
    assert not alive(pids[0])


async def _cdp_url_seen_by_a_child(env: ViewfinderEnvironment) -> str:
    info = await env.processes.spawn("sh", ["-c", 'echo "${VIEWFINDER_CDP_URL-unset}"'])
    await env.processes.wait(info.id, timeout=20)
    return env.processes.logs(info.id)[-1].text


async def test_children_get_the_browsers_address_only_when_there_is_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIEWFINDER_CDP_URL", "")  # an empty value this process inherited
    async with ViewfinderEnvironment(parse_config('[browser]\ncdp_url = "none"')) as env:
        assert await _cdp_url_seen_by_a_child(env) == "unset"
    settings = parse_config('[browser]\ncdp_url = "auto"\n[display]\nsize = "320x200"')
    async with ViewfinderEnvironment(settings) as env:
        assert env.browser is not None
        assert await _cdp_url_seen_by_a_child(env) == env.browser.endpoint
