"""Running the server image with Docker, for ``CodingEnv.from_docker_image``."""

from __future__ import annotations

import contextlib
import secrets
import shutil
import subprocess
import time

import httpx

from viewfinder.server.errors import DockerUnavailableError, ServerError
from viewfinder.server.settings import TOKEN_ENV

#: The port the server listens on inside the image.
CONTAINER_PORT = 8000


def check_engine() -> str:
    """The ``docker`` program's path, or :class:`DockerUnavailableError` saying what is missing."""
    program = shutil.which("docker")
    if program is None:
        raise DockerUnavailableError(
            "the docker program is not installed; install Docker, or run the server without "
            "it: CodingEnv.local() (or `viewfinder serve` and CodingEnv(base_url))"
        )
    try:
        probe = subprocess.run(
            [program, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired as exc:
        raise DockerUnavailableError("`docker info` did not answer within 30 s") from exc
    if probe.returncode != 0:
        said = (probe.stderr or probe.stdout).strip().splitlines()
        reason = said[-1] if said else f"exit status {probe.returncode}"
        raise DockerUnavailableError(
            f"no Docker engine is running ({reason}). Start the Docker daemon, or run the "
            "server without it: CodingEnv.local() (or `viewfinder serve` and CodingEnv(base_url))"
        )
    return program


class DockerContainer:
    """A server container on a loopback port, with a fresh token; :meth:`stop` removes it."""

    def __init__(self, image: str, *, start_timeout: float = 120.0) -> None:
        self.image = image
        self.start_timeout = start_timeout
        self.token = secrets.token_urlsafe(24)
        self.container_id: str | None = None
        self.base_url: str | None = None
        self._docker = check_engine()

    def start(self) -> DockerContainer:
        run = subprocess.run(
            [
                self._docker,
                "run",
                "--detach",
                "--rm",
                "--init",
                "--publish",
                f"127.0.0.1::{CONTAINER_PORT}",
                "--env",
                f"{TOKEN_ENV}={self.token}",
                self.image,
            ],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise ServerError(f"docker could not start {self.image}: {run.stderr.strip()}")
        self.container_id = run.stdout.strip()
        port = subprocess.run(
            [self._docker, "port", self.container_id, f"{CONTAINER_PORT}/tcp"],
            capture_output=True,
            text=True,
        )
        address = port.stdout.strip().splitlines()[0] if port.returncode == 0 else ""
        if not address:
            self.stop()
            raise ServerError(f"docker published no port for {self.image}: {port.stderr.strip()}")
        self.base_url = f"http://{address}"
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        headers = {"Authorization": f"Bearer {self.token}"}
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/health", headers=headers, timeout=5).is_success:
                    return
            time.sleep(0.5)
        self.stop()
        raise ServerError(
            f"the server in {self.image} did not answer within {self.start_timeout:g} s"
        )

    def stop(self) -> None:
        """Stop (and so remove) the container; idempotent."""
        container, self.container_id = self.container_id, None
        if container is not None:
            subprocess.run([self._docker, "stop", container], capture_output=True)
