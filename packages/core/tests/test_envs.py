"""``viewfinder_register_envs``: environments registered by plugins, found by name."""

from __future__ import annotations

from typing import Any

import pytest

from viewfinder.core import PluginError, hookimpl
from viewfinder.core.envs import UnknownEnvError, env_entry, registered_envs
from viewfinder.core.plugins import register_plugin, unregister_plugin


class Echo:
    def __init__(self, settings: Any) -> None:
        self.settings = settings


class EchoPlugin:
    @hookimpl
    def viewfinder_register_envs(self, register: Any) -> None:
        register("echo", Echo, description="says   what it\nwas told")
        register("lazy", "viewfinder.core.geometry:Region")


class ClashPlugin:
    @hookimpl
    def viewfinder_register_envs(self, register: Any) -> None:
        register("echo", Echo)


def test_a_plugin_env_is_found_by_name() -> None:
    register_plugin(EchoPlugin(), name="echo-envs")
    try:
        envs = registered_envs()
        assert {"code", "desktop", "echo", "lazy"} <= set(envs)
        entry = env_entry("echo")
        assert (entry.plugin, entry.description) == ("echo-envs", "says what it was told")
        assert entry.factory("settings").settings == "settings"
        assert env_entry("lazy").factory.__name__ == "Region"  # imported when asked for
        assert envs["desktop"].plugin == "server"
    finally:
        unregister_plugin("echo-envs")
    assert "echo" not in registered_envs()


def test_unknown_env_lists_the_registered_ones() -> None:
    with pytest.raises(UnknownEnvError, match=r"unknown environment 'nope'; .*code, desktop"):
        env_entry("nope")


def test_two_plugins_claiming_one_name_are_named() -> None:
    register_plugin(EchoPlugin(), name="echo-envs")
    register_plugin(ClashPlugin(), name="clash-envs")
    try:
        with pytest.raises(PluginError, match=r"'echo' is registered by both"):
            registered_envs()
    finally:
        unregister_plugin("clash-envs")
        unregister_plugin("echo-envs")
