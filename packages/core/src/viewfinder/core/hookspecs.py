"""The hooks viewfinder plugins implement.

Every hook is documented with an example in docs/hooks.md. Implement one with::

    from viewfinder.core import hookimpl

    @hookimpl
    def viewfinder_register_capture_backends(register):
        register("mybackend", MyBackend)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from viewfinder.core.backend import CaptureBackend
    from viewfinder.core.element_sources import ElementSource
    from viewfinder.core.providers import ProviderFactory
    from viewfinder.core.screenshot import Screenshot
    from viewfinder.core.tools import Tool

PROJECT = "viewfinder"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: ``register(name, factory)``: the callback handed to
#: :func:`viewfinder_register_capture_backends`.
RegisterBackend = Callable[[str, "Callable[..., CaptureBackend] | str"], None]


@hookspec
def viewfinder_register_capture_backends(register: RegisterBackend) -> None:
    """Register capture backends by calling ``register(name, factory)`` once per backend.

    ``factory(**options)`` returns a :class:`~viewfinder.core.CaptureBackend` (anything
    else is a :class:`~viewfinder.core.PluginError` naming the plugin). ``factory`` may
    also be the import path ``"package.module:Class"``, imported only when the backend is
    needed, so that a capture with another backend does not import this one's
    dependencies. When the factory has an ``availability(**options)`` callable (a backend
    class has), ``viewfinder backends`` and backend selection use it; an integer
    ``priority`` attribute orders the choice of "best available" backend (higher first;
    below zero: never picked unless named). The keyword parameters of the factory are the
    backend's options: an option it does not take is refused with
    :class:`~viewfinder.core.BackendOptionError`. Every implementation is called; results
    are ignored. Called again whenever the backend table is needed, so plugins
    registered later are seen.
    """


#: ``register(tool)``: the callback handed to :func:`viewfinder_register_tools`.
RegisterTool = Callable[["Tool"], None]


@hookspec
def viewfinder_register_commands(app: Any) -> None:
    """Add sub-commands to the ``viewfinder`` command.

    ``app`` is the root ``typer.Typer``. Register by import path, so the command's module
    is imported only when it runs and ``viewfinder --help`` stays fast:
    ``app.add_lazy_typer(name, "package.module:make_app", help=...)`` for a group of
    sub-commands, ``app.add_lazy_command(name, "package.module:function", help=...)`` for
    one command. ``app.add_typer(sub_app, name=...)`` and ``app.command()(fn)`` work too
    (imported at once). A name that another plugin registered already is a
    :class:`~viewfinder.core.PluginError` naming both. Every implementation is called.
    """


@hookspec
def viewfinder_screenshot_captured(screenshot: Screenshot, context: Mapping[str, Any]) -> None:
    """Observe every screenshot any backend captured, once per capture.

    ``context`` always has ``backend`` (the backend's name) and whatever the caller
    added (a code env adds ``session_id`` and ``step``, the browser tool ``call_id``).
    Every implementation is called, each on its own: one that raises is logged and
    neither the capture nor the other observers are affected. Keep it quick; it runs in
    the capturing thread.
    """


@hookspec(firstresult=True)
def viewfinder_replay_handoff(result: Any, context: Mapping[str, Any]) -> Any:
    """Take over from a cached-trajectory replay that stopped before its end.

    Called by ``viewfinder.cache.CacheExecutor`` once per replay that ends with status
    ``NEEDS_AGENT`` (the screen no longer looks as recorded before a step, a step needs
    a tool replay cannot perform, or the file is marked invalid) or ``FAILED`` (an
    action raised), after the cache file's metadata was updated. Not called for a
    replay that completed.

    ``result`` is a ``viewfinder.cache.ReplayResult`` (typed ``Any`` here: core imports
    no package): ``status``, ``step_index`` (the first step not performed),
    ``distance`` and ``threshold`` (for a visual mismatch), ``message`` (written for an
    agent to read) and ``steps`` (what was done).
    ``context`` has ``cache_path`` (str or None), ``backend`` (the capture backend's
    name), ``step`` (the stopped step as an API tool_use block, parameters filled in),
    ``parameters`` (the values used) and ``resume_from_step_index`` (where to continue
    once the step is handled; None when the whole file is in doubt).

    The first implementation that returns something other than None has taken over;
    later ones are not called, and the value is stored as ``result.handoff``. Return
    None to let another plugin (or the caller) handle it.
    """


@hookspec
def viewfinder_register_tools(register: RegisterTool) -> None:
    """Register the tools an agent may call, by calling ``register(tool)`` once per tool.

    ``tool`` is a :class:`~viewfinder.core.Tool`: a name, a description written for a
    model, a pydantic model of its parameters (its JSON schema is the input schema) and
    ``function(arguments, context) -> ToolResult`` (text and images). ``context`` is the
    :class:`~viewfinder.core.ToolContext` of the calling session (its display, its
    sandbox, resources kept across calls). A tool that runs model-written code sets
    ``runs_code=True`` and runs it in ``context.sandbox`` when the host requires one.
    A name another plugin registered already, or something that is not a ``Tool``, is a
    :class:`~viewfinder.core.PluginError` naming both plugins. Every implementation is
    called whenever the registry is built (``viewfinder.core.tool_registry()``), so
    plugins registered later are seen; keep it cheap (no imports of heavy modules:
    import them inside the tool's function).
    """


#: ``register(name, factory)``: the callback handed to
#: :func:`viewfinder_register_session_providers`.
RegisterProvider = Callable[[str, "ProviderFactory | str"], None]


@hookspec
def viewfinder_register_session_providers(register: RegisterProvider) -> None:
    """Register where env sessions can run, by calling ``register(name, factory)`` once
    per provider.

    ``factory(spec, **options)`` returns a :class:`~viewfinder.core.providers.SessionProvider`
    running sessions of ``spec`` (an :class:`~viewfinder.core.providers.EnvSpec`: the
    import path of the env factory and its picklable keyword arguments); ``options``
    are the provider's own settings (a cluster address, ...), and an option the factory
    does not take is a :class:`~viewfinder.core.providers.ProviderOptionError`.
    ``factory`` may be the import path ``"package.module:Class"``, imported only when
    that provider is asked for, so a server that runs sessions locally never imports a
    cluster client. A name another plugin registered already is a
    :class:`~viewfinder.core.PluginError` naming both. Every implementation is called
    whenever the table is needed (``viewfinder.core.providers.session_providers()``);
    results are ignored.
    """


#: ``register(name, factory)``: the callback handed to
#: :func:`viewfinder_register_element_sources`.
RegisterElementSource = Callable[[str, "Callable[..., ElementSource] | str"], None]


@hookspec
def viewfinder_register_element_sources(register: RegisterElementSource) -> None:
    """Register element sources (what is on a screen, named) by calling
    ``register(name, factory)`` once per source.

    ``factory(**options)`` returns a :class:`~viewfinder.core.element_sources.ElementSource`
    whose ``read()`` gives an :class:`~viewfinder.core.ElementTree` (role, name, value,
    states, box in screen pixels, a ref stable within the source's session). ``factory``
    may be the import path ``"package.module:Class"``, imported only when that source is
    used. Its keyword parameters are the source's options (``display``, ``url``, ...);
    its ``availability(**options)`` and ``priority`` drive the choice of the best
    source, as for capture backends. A name another plugin registered already is a
    :class:`~viewfinder.core.PluginError` naming both. Every implementation is called
    whenever the table is needed (``viewfinder.core.element_sources()``); results are
    ignored.
    """


#: ``register(name, factory, description="")``: the callback handed to
#: :func:`viewfinder_register_envs`.
RegisterEnv = Callable[..., None]


@hookspec
def viewfinder_register_envs(register: RegisterEnv) -> None:
    """Register environments a server can serve (``viewfinder serve --env NAME``) by
    calling ``register(name, factory, description="...")`` once per environment.

    ``factory(settings)`` returns the served environment (for the server: a
    ``viewfinder.server.served.ServedEnv``: the messages a session takes, the
    :class:`~viewfinder.core.providers.EnvSpec` each session runs, how a message is
    answered, its schemas and metadata); ``settings`` are the host's settings (the
    server's ``ServerSettings``). ``factory`` may be the import path
    ``"package.module:Class"``, imported only when that environment is served.
    ``description`` is one line for ``viewfinder serve --help`` and
    ``viewfinder plugins``. A name another plugin registered already is a
    :class:`~viewfinder.core.PluginError` naming both. Every implementation is called
    whenever the table is needed (``viewfinder.core.envs.registered_envs()``); results
    are ignored.
    """
