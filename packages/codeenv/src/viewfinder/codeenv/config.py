"""Settings of a code environment: limits of the sandbox and of each step."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

MiB = 1024 * 1024

#: Exit code of a step killed at its timeout (the one ``timeout(1)`` uses).
EXIT_TIMEOUT = 124
#: Exit code of a step cancelled by its client (a shell's for an interrupted command).
EXIT_CANCELLED = 130


@dataclass(frozen=True)
class CodeEnvConfig:
    """How a :class:`~viewfinder.codeenv.CodeEnvironment` runs code.

    - ``timeout_s``: a step's time limit when its action gives none.
    - ``max_timeout_s``: the most a step may ask for; a longer ``timeout_s`` in an action
      is cut to it, with a ``timeout_clamped`` note in the observation's metadata.
    - ``memory_mb``: memory of the session's processes together, where the server can
      give the session a cgroup of its own (see :mod:`viewfinder.codeenv.session_cgroup`;
      past it the kernel ends one of them), and of each process (``RLIMIT_DATA``: code
      past it gets ``MemoryError``). GUI toolkits take a few hundred MB, so keep it at
      512 or above.
    - ``max_processes``: processes and threads one session may have at once (needs a
      sandbox user, see ``sandbox_user``; its cgroup's ``pids.max`` too).
    - ``output_limit_bytes``: bytes of stdout and of stderr kept per step; the rest is
      left out with a note in the text.
    - ``file_size_mb``: the largest file the code may write.
    - ``max_captures``: ``capture_screenshot()`` calls per step.
    - ``observation_bytes``: the most an observation's captures, stdout and stderr may
      take as JSON; past it the oldest captures are left out, with a note in its
      metadata. The default (32 MiB) stays well under the 100 MB a message may have
      for OpenEnv's client, and bounds what the server holds per session.
    - ``sandbox_user``: run each worker under a user id of its own; ``"auto"`` does when
      the environment runs as root (the only case where it can).
    - ``isolation``: wall each session off from the others (Linux, as root: see
      :mod:`viewfinder.codeenv.worker.isolation`): its home, ``/tmp``, ``/var/tmp``
      and ``/dev/shm`` on one tmpfs of ``tmp_size_mb`` (see
      :mod:`viewfinder.codeenv.session_space`), the machine's files read-only, only its
      own processes and display, and ``session_network``
      (``"none"``: its own loopback only; ``"host"``: the machine's network).
      ``require_isolation`` makes a worker that cannot be isolated fail to start.
    - ``width`` / ``height``: the display's size, when the environment starts its own.
    - ``display``: False runs code without any display (capture_screenshot raises).
    - ``preload_capture``: import the capture code while a new worker is idle.
    - ``start_timeout_s``: how long a worker may take to get ready.
    - ``video_dir``: where ``start_recording()`` videos go (kept); None: a folder of the
      environment's own, removed when it closes. ``video_inline_bytes``: a video up to
      this size also comes back in the observation, as base64. ``max_recordings``:
      recordings one step may make.
    """

    timeout_s: float = 30.0
    max_timeout_s: float = 300.0
    memory_mb: int = 2048
    max_processes: int = 64
    output_limit_bytes: int = 1 * MiB
    file_size_mb: int = 256
    max_captures: int = 64
    observation_bytes: int = 32 * MiB
    open_files: int = 1024
    sandbox_user: bool | Literal["auto"] = "auto"
    isolation: bool = True
    session_network: Literal["none", "host"] = "none"
    tmp_size_mb: int = 512
    require_isolation: bool = False
    width: int = 1280
    height: int = 800
    display: bool = True
    preload_capture: bool = True
    start_timeout_s: float = 30.0
    video_dir: str | None = None
    video_inline_bytes: int = 8 * MiB
    max_recordings: int = 8

    def __post_init__(self) -> None:
        checks = {
            "timeout_s": self.timeout_s > 0,
            "max_timeout_s": self.max_timeout_s >= self.timeout_s,
            "memory_mb": self.memory_mb >= 64,
            "max_processes": self.max_processes >= 4,
            "output_limit_bytes": self.output_limit_bytes >= 1024,
            "file_size_mb": self.file_size_mb >= 1,
            "max_captures": self.max_captures >= 1,
            "observation_bytes": self.observation_bytes >= MiB,
            "open_files": self.open_files >= 64,
            "tmp_size_mb": self.tmp_size_mb >= 1,
            "session_network": self.session_network in ("none", "host"),
            "width": self.width > 0,
            "height": self.height > 0,
            "start_timeout_s": self.start_timeout_s > 0,
            "video_inline_bytes": self.video_inline_bytes >= 0,
            "max_recordings": self.max_recordings >= 0,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            values = ", ".join(f"{name}={getattr(self, name)!r}" for name in bad)
            raise ValueError(
                f"invalid code env settings: {values} (timeouts must be positive, "
                "max_timeout_s at least timeout_s, "
                "memory_mb >= 64, max_processes >= 4, output_limit_bytes >= 1024, "
                "observation_bytes >= 1 MiB)"
            )

    def with_changes(self, **changes: Any) -> CodeEnvConfig:
        """A copy with some settings changed."""
        return replace(self, **changes)
