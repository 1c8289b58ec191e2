"""Registers the ``ray`` session provider."""

from __future__ import annotations

from viewfinder.core import hookimpl
from viewfinder.core.hookspecs import RegisterProvider


@hookimpl
def viewfinder_register_session_providers(register: RegisterProvider) -> None:
    # by import path: Ray is imported only when a server or a pool asks for this provider
    register("ray", "viewfinder.ray.provider:RayProvider")
