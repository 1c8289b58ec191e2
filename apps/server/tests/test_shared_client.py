"""One client object used from many threads or tasks at once: every call gets its own
reply, and nothing is lost or mixed up."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx

from viewfinder.server import AsyncCodingEnv, CodingEnv, LocalServer


def test_one_sync_client_from_eight_threads(server: LocalServer) -> None:
    with CodingEnv(server.base_url, token=server.settings.token) as env:
        env.reset()
        env.step("import time\ncalls = []")

        def call(number: int) -> tuple[int, str]:
            if number % 3 == 0:
                return number, str(env.state().step_count)
            code = f"time.sleep(0.05)\ncalls.append({number})\nprint({number} * 10)"
            return number, env.step(code).observation.stdout

        with ThreadPoolExecutor(max_workers=8) as pool:
            replies = list(pool.map(call, range(24)))
        for number, text in replies:
            if number % 3:
                assert text == f"{number * 10}\n"  # its own output, no other call's
            else:
                assert text.isdigit()
        # every step ran once, and the session is still in order afterwards
        ran = env.step("print(sorted(calls))").observation.stdout
        assert ran == f"{sorted(n for n in range(24) if n % 3)}\n"
        assert env.state().step_count == 1 + 16 + 1


async def test_one_async_client_under_gather(server: LocalServer) -> None:
    async with AsyncCodingEnv(server.base_url, token=server.settings.token) as env:
        await env.reset()
        results = await asyncio.gather(
            *(env.step(f"print({number} + 1)") for number in range(12)),
            env.state(),
            env.step("import sys\nsys.exit(3)"),
        )
        outputs = [result.observation.stdout for result in results[:12]]
        assert outputs == [f"{number + 1}\n" for number in range(12)]
        assert results[13].observation.exit_code == 3
        assert (await env.state()).step_count == 13


async def test_a_fresh_async_client_connects_once_under_gather(server: LocalServer) -> None:
    # the first calls all race to connect: one session, not several
    env = AsyncCodingEnv(server.base_url, token=server.settings.token)
    try:
        await asyncio.gather(*(env.state() for _ in range(6)))
        health = httpx.get(f"{server.base_url}/health").json()
        assert health["active_sessions"] == 1
        await env.reset()
        await env.step("x = 1")
        assert (await env.step("print(x)")).observation.stdout == "1\n"
    finally:
        await env.close()
