"""The viewfinder TUI: processes, their output, the browser and the screen in a terminal.

Build it with :func:`create_app`, which takes its dependencies, so tests and embedders
hand in their own process manager, environment, capture backend or command history.

The command line behaves like a shell's: Up and Down walk the command history, Tab
completes ``!`` commands and process ids, and ``!logs ID /TEXT`` shows only the lines
of a log that contain TEXT.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Header, RichLog

from viewfinder.core import CaptureBackend, ViewfinderError
from viewfinder.tui.commands import Command, help_rows, parse_command, parse_logs_argument
from viewfinder.tui.config import TuiSettings
from viewfinder.tui.environment import ViewfinderEnvironment
from viewfinder.tui.errors import HistoryFileError, NothingToCaptureError, TuiCommandError
from viewfinder.tui.events import ProcessEvent, ProcessExited, ProcessOutput, ProcessStarted
from viewfinder.tui.history import CommandHistory
from viewfinder.tui.log_search import LogSearch
from viewfinder.tui.processes import ProcessManager, utc_now
from viewfinder.tui.shots import ShotTaker, backend_shot_taker, save_shot
from viewfinder.tui.table_rows import PROCESS_KEY_PREFIX, format_duration, table_rows
from viewfinder.tui.widgets import CommandInput, ProcessLog, ProcessTable, ShotPreview

Clock = Callable[[], datetime]
SHOT_SOURCES = ("auto", "display", "browser")
#: Commands whose argument Tab completes with the id of a running process.
RUNNING_PROCESS_ARGUMENT = frozenset({"kill"})
#: Commands whose argument Tab completes with the id of any process.
PROCESS_ARGUMENT = frozenset({"logs"})
#: Lines the console keeps.
CONSOLE_LINES = 1000


class ViewfinderApp(App[None]):
    """Process table, log of the selected process, console, shot preview, command line.

    ``history`` holds the commands run (Up and Down walk it); without one they are kept
    in memory only.
    """

    # Absolute, so subclasses defined elsewhere find it too.
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "viewfinder"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "command('!help')", "Help"),
        Binding("f2", "command('!ps')", "Processes"),
        Binding("f3", "logs_highlighted", "Logs"),
        Binding("f4", "command('!shot')", "Shot"),
        Binding("f5", "prompt_run", "Run"),
        Binding("f8", "kill_highlighted", "Kill"),
        Binding("f9", "command('!kill-all')", "Kill all"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+f", "prompt_search", "Search log", show=False),
        # Up and Down belong to the command line's history; these move the table's
        # cursor from anywhere (and Up and Down do, where nothing else takes them).
        Binding("ctrl+up,up", "move_cursor(-1)", "Up", show=False),
        Binding("ctrl+down,down", "move_cursor(1)", "Down", show=False),
    ]

    def __init__(
        self,
        processes: ProcessManager,
        *,
        environment: ViewfinderEnvironment | None = None,
        shot_taker: ShotTaker | None = None,
        settings: TuiSettings | None = None,
        clock: Clock = utc_now,
        history: CommandHistory | None = None,
    ) -> None:
        super().__init__()
        self.processes = processes
        self.environment = environment
        self.shot_taker = shot_taker
        self.settings = settings or TuiSettings()
        self.clock = clock
        if history is None:
            history = CommandHistory(max_entries=self.settings.history_size)
        self.history = history
        #: The last shot saved by !shot, for callers and tests.
        self.last_shot: Path | None = None
        #: Everything written to the console, as plain text, unwrapped (newest last).
        self.transcript: deque[str] = deque(maxlen=CONSOLE_LINES)
        self._table_dirty = True
        self._last_table_refresh = 0.0

    # -- layout ---------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        settings = self.settings
        yield Header(icon="◉")
        yield ProcessTable(settings.columns, id="processes")
        with Horizontal(id="main"):
            yield ProcessLog(
                max_lines=settings.log_lines,
                refresh_interval=settings.refresh_interval,
                id="log",
            )
            with Vertical(id="side"):
                yield RichLog(
                    id="console", max_lines=CONSOLE_LINES, wrap=True, markup=False, min_width=20
                )
                yield ShotPreview(id="shot")
        command = CommandInput(
            self.history,
            self._argument_words,
            placeholder="!help for commands; !run COMMAND starts one",
            id="command",
        )
        command.cursor_blink = settings.cursor_blink
        yield command
        yield Footer()

    @property
    def table(self) -> ProcessTable:
        return self.query_one(ProcessTable)

    @property
    def log_view(self) -> ProcessLog:
        return self.query_one(ProcessLog)

    @property
    def console_log(self) -> RichLog:
        return self.query_one("#console", RichLog)

    @property
    def command_input(self) -> CommandInput:
        return self.query_one("#command", CommandInput)

    def on_mount(self) -> None:
        self.console_log.border_title = "console"
        self.follow_events()
        self.set_interval(self.settings.refresh_interval, self._refresh_table)
        self._refresh_table(force=True)
        self.say("Type !help for the commands.", "dim")
        if self.history.problem:
            self.say(self.history.problem, "yellow")
        known = self.processes.list_processes()
        if known:  # processes started before the app: show the newest
            self.show_logs(known[-1].id)
        self.command_input.focus()

    # -- events from the process manager ---------------------------------------------

    @work(exclusive=True, group="events", name="follow process events")
    async def follow_events(self) -> None:
        """Feed process events to the log and the table until the app ends."""
        with self.processes.subscribe() as subscription:
            async for event in subscription:
                self._on_process_event(event)
                for queued in subscription.drain():  # batch whatever else is waiting
                    self._on_process_event(queued)

    def _on_process_event(self, event: ProcessEvent) -> None:
        self._table_dirty = True
        if not self.query(ProcessLog):  # closing: the widgets go before the workers
            return
        if isinstance(event, ProcessOutput):
            log = self.log_view
            if event.process_id == log.process_id:
                log.queue_lines(event.lines)
        elif isinstance(event, ProcessStarted):
            self.show_logs(event.process_id)
        elif isinstance(event, ProcessExited):
            info = self.processes.get(event.process_id)
            self.say(f"{event.process_id} ({info.command_line}): {info.status}", "dim")

    def _refresh_table(self, force: bool = False) -> None:
        # Running times change every second even when nothing else happens.
        now = asyncio.get_running_loop().time()
        if not (force or self._table_dirty or now - self._last_table_refresh >= 1.0):
            return
        if not self.query(ProcessTable):  # closing: the widgets go before the timers
            return
        self._table_dirty = False
        self._last_table_refresh = now
        rows = table_rows(self.processes.list_processes(), self.environment, self.clock())
        self.table.set_rows(rows)

    # -- the command line ------------------------------------------------------------

    @on(CommandInput.Submitted, "#command")
    def _submitted(self, event: CommandInput.Submitted) -> None:
        event.input.value = ""
        try:
            self.history.add(event.value)
        except HistoryFileError as exc:
            self.say(str(exc), "yellow")
        if event.value.strip():
            self.run_command(event.value)

    @on(CommandInput.CompletionCandidates)
    def _completion_candidates(self, event: CommandInput.CompletionCandidates) -> None:
        self.say("  ".join(event.candidates), "dim")

    def _argument_words(self, command: str) -> list[str]:
        """What Tab offers for the argument of ``command``."""
        if command in RUNNING_PROCESS_ARGUMENT:
            return [info.id for info in self.processes.list_processes() if info.running]
        if command in PROCESS_ARGUMENT:
            return [info.id for info in self.processes.list_processes()]
        if command == "shot":
            return [source for source in SHOT_SOURCES if source != "auto"]
        return []

    def run_command(self, line: str) -> None:
        """Run one ``!`` command line as if typed; errors go to the console."""
        self.say(f"> {line.strip()}", "bold")
        try:
            command = parse_command(line)
            self._dispatch(command)
        except ViewfinderError as exc:
            self.say(str(exc), "red")

    def _dispatch(self, command: Command) -> None:
        name = command.name
        if name == "help":
            self._help()
        elif name == "ps":
            self._list_processes()
        elif name == "logs":
            process_id, search = parse_logs_argument(command.argument)
            self.processes.get(process_id)  # raises UnknownProcessError with the known ids
            self.show_logs(process_id, search)
        elif name == "run":
            self._spawn(command.words())
        elif name == "kill":
            self._kill(self._process_id(command))
        elif name == "kill-all":
            self._kill_all()
        elif name == "shot":
            source = command.argument or "auto"
            if source not in SHOT_SOURCES:
                raise TuiCommandError(f"!shot takes display or browser, not {source!r}")
            self._shoot(source)
        elif name == "open":
            self._open(command.argument)

    def _process_id(self, command: Command) -> str:
        process_id = command.argument.split()[0]
        self.processes.get(process_id)  # raises UnknownProcessError with the known ids
        return process_id

    def say(self, message: str, style: str = "") -> None:
        """Write a line to the console."""
        self.transcript.append(message)
        self.console_log.write(Text(message, style=style))

    # -- what the commands do --------------------------------------------------------

    def _help(self) -> None:
        table = Table(box=None, show_header=False, padding=(0, 1, 0, 0))
        table.add_column("command", style="bold", no_wrap=True)
        table.add_column("key", style="yellow", no_wrap=True)
        table.add_column("what")
        for row in help_rows():
            table.add_row(*(Text(cell) for cell in row))  # Text: "[...]" is not markup
            self.transcript.append("  ".join(cell for cell in row if cell))
        self.console_log.write(table)

    def _list_processes(self) -> None:
        infos = self.processes.list_processes()
        if not infos:
            self.say("no processes yet; start one with !run COMMAND")
            return
        now = self.clock()
        self.say(f"{'ID':<6}{'PID':<8}{'TIME':<8}{'STATUS':<10}COMMAND", "bold")
        for info in infos:
            time = format_duration(info.running_time(now))
            self.say(f"{info.id:<6}{info.pid:<8}{time:<8}{info.status:<10}{info.command_line}")

    def show_logs(self, process_id: str, search: LogSearch | None = None) -> None:
        """Show the output of ``process_id`` in the log view and follow it.

        With ``search``, only the lines that match (of all the process keeps), and the
        console says how many did.
        """
        info = self.processes.get(process_id)
        limit = self.settings.log_lines if search is None else None
        lines = [line.text for line in self.processes.logs(process_id, limit)]
        log = self.log_view
        log.show(process_id, f"log: {process_id} · {info.command_line}", lines, search)
        if search is not None:
            self.say(
                f"{log.matched_lines} of {log.searched_lines} lines of {process_id} "
                f"match {search}; !logs {process_id} shows them all"
            )
        self._refresh_table(force=True)
        self.table.highlight(PROCESS_KEY_PREFIX + process_id)

    @work(group="spawn", name="spawn a process")
    async def _spawn(self, words: list[str]) -> None:
        try:
            info = await self.processes.spawn(words[0], words[1:])
        except (ViewfinderError, ValueError) as exc:
            self.say(str(exc), "red")
            return
        self.say(f"started {info.id}: {info.command_line}", "green")

    @work(group="kill", name="kill a process")
    async def _kill(self, process_id: str) -> None:
        info = await self.processes.kill(process_id, self.settings.kill_timeout)
        self.say(f"killed {process_id} ({info.command_line}), exit code {info.exit_code}")

    @work(exclusive=True, group="kill-all", name="kill every process")
    async def _kill_all(self) -> None:
        killed = await self.processes.kill_all(self.settings.kill_timeout)
        self.say(f"killed {len(killed)} process{'es' if len(killed) != 1 else ''}")

    @work(exclusive=True, group="shot", name="take a shot")
    async def _shoot(self, source: str) -> None:
        taker = self.shot_taker
        if taker is None:
            self.say(str(NothingToCaptureError("there is no display, browser or backend")), "red")
            return
        try:
            shot = await taker(source)
            path = await asyncio.to_thread(save_shot, shot, self.settings.shots_dir, self.clock())
        except (ViewfinderError, OSError) as exc:
            self.say(f"!shot failed: {exc}", "red")
            return
        self.last_shot = path
        self.query_one(ShotPreview).show(shot, path)
        self.say(f"saved {path} ({shot.width}x{shot.height} from {shot.source})", "green")

    @work(exclusive=True, group="open", name="open a page")
    async def _open(self, url: str) -> None:
        browser = self.environment.browser if self.environment is not None else None
        if browser is None:
            self.say('there is no browser; set [browser] cdp_url = "auto" in the config', "red")
            return
        try:
            await browser.navigate(url)
        except ViewfinderError as exc:
            self.say(str(exc), "red")
            return
        self._table_dirty = True
        self.say(f"loaded {url}", "green")

    # -- key bindings ----------------------------------------------------------------

    def action_command(self, line: str) -> None:
        self.run_command(line)

    def action_prompt_run(self) -> None:
        self._prompt("!run ")

    def action_prompt_search(self) -> None:
        process_id = self.log_view.process_id
        if process_id is None:
            self.say("no log to search yet: start a process with !run COMMAND", "yellow")
            return
        self._prompt(f"!logs {process_id} /")

    def _prompt(self, text: str) -> None:
        command = self.command_input
        command.history.reset_walk()
        command.value = text
        command.cursor_position = len(text)
        command.focus()

    def _highlighted_process(self) -> str | None:
        key = self.table.highlighted_key
        if key is None or not key.startswith(PROCESS_KEY_PREFIX):
            self.say("move the cursor to a process row first (up/down)", "yellow")
            return None
        return key.removeprefix(PROCESS_KEY_PREFIX)

    def action_logs_highlighted(self) -> None:
        process_id = self._highlighted_process()
        if process_id is not None:
            self.run_command(f"!logs {process_id}")

    def action_kill_highlighted(self) -> None:
        process_id = self._highlighted_process()
        if process_id is not None:
            self.run_command(f"!kill {process_id}")

    def action_move_cursor(self, step: int) -> None:
        table = self.table
        table.move_cursor(row=max(0, table.cursor_row + step))

    @on(DataTable.RowSelected, "#processes")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value or ""
        if key.startswith(PROCESS_KEY_PREFIX):
            self.show_logs(key.removeprefix(PROCESS_KEY_PREFIX))

    async def action_quit(self) -> None:
        running = [info for info in self.processes.list_processes() if info.running]
        if running:
            self.say(f"stopping {len(running)} processes…", "yellow")
            await self.processes.kill_all(self.settings.kill_timeout)
        self.exit()


def create_app(
    *,
    environment: ViewfinderEnvironment | None = None,
    processes: ProcessManager | None = None,
    capture: CaptureBackend | ShotTaker | None = None,
    settings: TuiSettings | None = None,
    clock: Clock = utc_now,
    history: CommandHistory | None = None,
) -> ViewfinderApp:
    """Build the app from its dependencies.

    ``environment`` provides the processes, the browser row and ``!shot`` (its display,
    else its browser page). Without one, pass ``processes`` (a new manager otherwise)
    and, for ``!shot``, ``capture``: a capture backend or an async ``take(source)``.
    ``settings`` default to the environment's ``[tui]`` settings; ``clock`` gives "now"
    for running times and shot names (fix it for stable snapshots). ``history`` is the
    command history (``CommandHistory.load(path)`` keeps it in a file); by default it
    lives in memory only.
    """
    if environment is not None:
        processes = processes or environment.processes
        settings = settings or environment.config.tui
    if processes is None:
        tui = settings or TuiSettings()
        processes = ProcessManager(
            buffer_lines=tui.buffer_lines, kill_timeout=tui.kill_timeout, reap_orphans=True
        )
    shot_taker: ShotTaker | None
    if isinstance(capture, CaptureBackend):
        shot_taker = backend_shot_taker(capture)
    elif capture is not None:
        shot_taker = capture
    elif environment is not None:
        shot_taker = environment.capture  # type: ignore[assignment]
    else:
        shot_taker = None
    return ViewfinderApp(
        processes,
        environment=environment,
        shot_taker=shot_taker,
        settings=settings,
        clock=clock,
        history=history,
    )
