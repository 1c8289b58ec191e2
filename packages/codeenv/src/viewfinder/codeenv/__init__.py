"""viewfinder.codeenv: run Python on a virtual display, with ``capture_screenshot()`` inside.

>>> from viewfinder.codeenv import CodeAction, CodeEnvironment
>>> with CodeEnvironment() as env:                       # doctest: +SKIP
...     env.reset()
...     obs = env.step(CodeAction(code="import tkinter as tk; tk.Tk(); capture_screenshot()"))
...     len(obs.screenshots)
1

Names are imported on first use, so ``import viewfinder.codeenv`` stays cheap (the
worker subprocess imports this package at every start).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CodeAction": "viewfinder.codeenv.models",
    "CodeObservation": "viewfinder.codeenv.models",
    "CodeState": "viewfinder.codeenv.models",
    "StepResult": "viewfinder.codeenv.models",
    "observation_payload": "viewfinder.codeenv.models",
    "observation_from_payload": "viewfinder.codeenv.models",
    "CodeEnvConfig": "viewfinder.codeenv.config",
    "EXIT_TIMEOUT": "viewfinder.codeenv.config",
    "CodeEnvironment": "viewfinder.codeenv.environment",
    "LEGACY_CAPTURE_NOTE": "viewfinder.codeenv.environment",
    "DisplaySource": "viewfinder.codeenv.displays",
    "FreshDisplays": "viewfinder.codeenv.displays",
    "CodeEnvError": "viewfinder.codeenv.errors",
    "EnvironmentClosedError": "viewfinder.codeenv.errors",
    "SandboxError": "viewfinder.codeenv.errors",
    "WorkerStartError": "viewfinder.codeenv.errors",
    "SandboxUsers": "viewfinder.codeenv.sandbox_users",
    "Capture": "viewfinder.codeenv.worker_process",
    "StepRun": "viewfinder.codeenv.worker_process",
    "WorkerProcess": "viewfinder.codeenv.worker_process",
    "CodeEnvSandbox": "viewfinder.codeenv.tools",
}

__all__ = [
    "EXIT_TIMEOUT",
    "LEGACY_CAPTURE_NOTE",
    "Capture",
    "CodeAction",
    "CodeEnvConfig",
    "CodeEnvError",
    "CodeEnvSandbox",
    "CodeEnvironment",
    "CodeObservation",
    "CodeState",
    "DisplaySource",
    "EnvironmentClosedError",
    "FreshDisplays",
    "SandboxError",
    "SandboxUsers",
    "StepResult",
    "StepRun",
    "WorkerProcess",
    "WorkerStartError",
    "observation_from_payload",
    "observation_payload",
]

if TYPE_CHECKING:
    from viewfinder.codeenv.config import EXIT_TIMEOUT, CodeEnvConfig
    from viewfinder.codeenv.displays import DisplaySource, FreshDisplays
    from viewfinder.codeenv.environment import LEGACY_CAPTURE_NOTE, CodeEnvironment
    from viewfinder.codeenv.errors import (
        CodeEnvError,
        EnvironmentClosedError,
        SandboxError,
        WorkerStartError,
    )
    from viewfinder.codeenv.models import (
        CodeAction,
        CodeObservation,
        CodeState,
        StepResult,
        observation_from_payload,
        observation_payload,
    )
    from viewfinder.codeenv.sandbox_users import SandboxUsers
    from viewfinder.codeenv.tools import CodeEnvSandbox
    from viewfinder.codeenv.worker_process import Capture, StepRun, WorkerProcess


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'viewfinder.codeenv' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
