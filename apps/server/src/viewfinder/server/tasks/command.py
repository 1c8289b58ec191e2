"""``viewfinder tasks``: validate, list and run suites of tasks that score themselves."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from viewfinder.server.tasks.model import Suite, TaskFileError, load_tasks, task_schema

app = typer.Typer(help="Tasks that score themselves: validate, list and run suites with an agent.")

SuitePath = Annotated[Path, typer.Argument(help="A task or suite file (.json or .toml).")]


def _load(path: Path) -> Suite:
    try:
        return load_tasks(path)
    except TaskFileError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from None


@app.command("validate")
def validate(suite: SuitePath) -> None:
    """Check a task file against the format; a wrong field is named, in one line."""
    loaded = _load(suite)
    typer.echo(f"{suite}: {len(loaded.tasks)} task(s), valid")


@app.command("list")
def list_tasks(suite: SuitePath, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List a suite's tasks: id, step limit, instruction."""
    loaded = _load(suite)
    if as_json:
        rows = [
            {"id": t.id, "max_steps": t.max_steps, "instruction": t.instruction}
            for t in loaded.tasks
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    for task in loaded.tasks:
        typer.echo(f"{task.id:<28} {task.max_steps:>4}  {task.instruction}")


@app.command("schema")
def schema() -> None:
    """Print the JSON schema of task files."""
    typer.echo(json.dumps(task_schema(), indent=2))


@app.command("run")
def run(
    suite: SuitePath,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="scripted (plays each task's solution), nothing, cache:PATH (replays a "
            "cache file, or a folder of <task id>.json), or module:function "
            "(observation -> action or None).",
        ),
    ] = "scripted",
    parallel: Annotated[int, typer.Option("--parallel", min=1, max=64)] = 1,
    provider: Annotated[str, typer.Option("--provider", help="local or ray.")] = "local",
    output: Annotated[
        Path | None, typer.Option("--output", help="Write the results as JSON here.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
    sessions: Annotated[
        Path | None,
        typer.Option(
            "--sessions",
            help="Record every episode as a session folder (viewfinder view opens it) under "
            "this folder [default: viewfinder-episodes/SUITE-TIME beside --output, or here].",
        ),
    ] = None,
    record: Annotated[
        bool, typer.Option("--record/--no-record", help="Record the episodes.")
    ] = True,
) -> None:
    """Run every task's episode with an agent and print the results table."""
    from viewfinder.server.tasks.runner import load_agent, run_suite

    loaded = _load(suite)
    try:
        chosen = load_agent(agent)
    except (ImportError, TypeError, ValueError) as exc:
        typer.secho(f"error: --agent: {exc}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from None
    if record and sessions is None:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        base = output.parent if output is not None else Path.cwd()
        sessions = base / "viewfinder-episodes" / f"{loaded.name}-{stamp}"
    with typer.progressbar(length=len(loaded.tasks), label="episodes", file=None) as bar:
        results = run_suite(
            loaded, chosen, parallel=parallel, provider=provider,
            on_result=lambda _: bar.update(1), sessions=sessions if record else None,
        )  # fmt: skip
    rows = [result.to_dict() for result in results]
    solved = sum(result.success for result in results)
    summary = {
        "suite": loaded.name,
        "agent": agent,
        "solved": solved,
        "tasks": len(results),
        "mean_reward": round(sum(r.reward for r in results) / max(len(results), 1), 4),
        "sessions": str(sessions) if record and sessions is not None else None,
        "results": rows,
    }
    if output is not None:
        output.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        typer.echo(
            f"{'task':<28} {'ok':<3} {'reward':>6} {'steps':>5} {'seconds':>8}  "
            f"{'session':<32} reason"
        )
        for r in results:
            ok = "yes" if r.success else "no"
            session = Path(r.session).name if r.session else "-"
            typer.echo(
                f"{r.task:<28} {ok:<3} {r.reward:>6.2f} {r.steps:>5} {r.seconds:>8.2f}  "
                f"{session:<32} {r.reason}"
            )
            if r.agent_note:
                typer.echo(f"{'':<28} agent: {r.agent_note}")
        typer.echo(f"{solved}/{len(results)} solved, mean reward {summary['mean_reward']}")
        if summary["sessions"]:
            typer.echo(f"sessions: {sessions} (open them with: viewfinder view {sessions})")
    raise typer.Exit(0)
