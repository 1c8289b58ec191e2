"""Registers the ``cdp`` capture backend and element source."""

from __future__ import annotations

from viewfinder.core import hookimpl
from viewfinder.core.hookspecs import RegisterBackend, RegisterElementSource


@hookimpl
def viewfinder_register_capture_backends(register: RegisterBackend) -> None:
    # by import path: the backend module loads only when a capture uses it
    register("cdp", "viewfinder.cdp.backend:CdpBackend")


@hookimpl
def viewfinder_register_element_sources(register: RegisterElementSource) -> None:
    register("cdp", "viewfinder.cdp.elements:CdpElementSource")
