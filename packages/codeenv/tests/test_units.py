"""Logic without a display: frames, bounded output, models, settings, user id leases."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from viewfinder.codeenv import (
    CodeAction,
    CodeEnvConfig,
    CodeEnvironment,
    CodeObservation,
    CodeState,
    EnvironmentClosedError,
    SandboxError,
    SandboxUsers,
    observation_from_payload,
    observation_payload,
)
from viewfinder.codeenv.output import OutputStream
from viewfinder.codeenv.sandbox_users import default_lock_dir
from viewfinder.codeenv.worker import protocol


def test_frames_round_trip_through_a_pipe_and_a_decoder() -> None:
    read_fd, write_fd = os.pipe()
    try:
        protocol.write_frame(write_fd, {"type": "capture", "n": 1}, b"\x89PNG...")
        frame = protocol.read_frame(read_fd)
        assert frame is not None
        assert (frame.kind, frame.header["n"], frame.payload) == ("capture", 1, b"\x89PNG...")
    finally:
        os.close(read_fd)
        os.close(write_fd)
    data = protocol.encode_frame({"type": "a"}) + protocol.encode_frame({"type": "b"}, b"xy")
    decoder = protocol.FrameDecoder()
    got = []
    for at in range(len(data)):  # one byte at a time
        got += decoder.feed(data[at : at + 1])
    assert [(f.kind, f.payload) for f in got] == [("a", b""), ("b", b"xy")]
    assert decoder.pending == 0


def test_a_frame_that_is_not_json_is_a_protocol_error() -> None:
    body = b"not json"
    bad = len(body).to_bytes(4, "big") + (0).to_bytes(4, "big") + body
    with pytest.raises(protocol.ProtocolError, match="not JSON"):
        protocol.FrameDecoder().feed(bad)


def test_output_splits_on_the_marker_even_across_reads() -> None:
    stream = OutputStream("stdout", limit=1024)
    stream.begin(b"<END>")
    for piece in (b"hello <", b"EN", b"D>late"):
        stream.feed(piece)
    assert stream.marker_seen
    assert stream.result().text == "hello "
    stream.begin(b"<END2>")
    stream.feed(b" more<END2>")
    assert stream.result().text == "late more"


def test_output_over_the_limit_keeps_head_and_tail_with_a_note() -> None:
    stream = OutputStream("stderr", limit=1000)
    stream.begin(b"<END>")
    stream.feed(b"H" * 5000)
    stream.feed(b"T" * 100 + b"<END>")
    result = stream.result()
    assert result.truncated and result.total_bytes == 5100
    assert result.text.startswith("H" * 750)
    assert result.text.endswith("T" * 100)
    assert (
        "[... 4100 bytes of stderr left out: the step wrote 5100 bytes, the limit is 1000 ...]"
        in result.text
    )


def test_models_match_openenv_coding_env_fields() -> None:
    from openenv.core.env_server.types import Action, Observation, State

    assert set(Action.model_fields) | {"code", "timeout_s", "capture_screenshot"} == set(
        CodeAction.model_fields
    )
    assert set(Observation.model_fields) | {
        "stdout",
        "stderr",
        "exit_code",
        "screenshot",
        "screenshots",
        "videos",
    } == set(CodeObservation.model_fields)
    assert set(State.model_fields) | {"last_exit_code"} == set(CodeState.model_fields)
    defaults = CodeObservation()
    assert (defaults.stdout, defaults.stderr, defaults.exit_code) == ("", "", 0)
    assert (defaults.done, defaults.reward, defaults.metadata) == (False, None, {})


def test_bad_actions_are_rejected_with_the_reason() -> None:
    with pytest.raises(ValidationError, match="code"):
        CodeAction()  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="extra_forbidden"):
        CodeAction(code="x", language="python")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="greater than 0"):
        CodeAction(code="x", timeout_s=0)
    with pytest.raises(ValidationError, match="valid string"):
        CodeAction(code=5)  # type: ignore[arg-type]


def test_wire_form_leaves_out_empty_additions() -> None:
    plain = CodeObservation(stdout="hi\n")
    assert observation_payload(plain) == {
        "observation": {"stdout": "hi\n", "stderr": "", "exit_code": 0},
        "reward": None,
        "done": False,
    }
    full = CodeObservation(screenshot="QQ==", screenshots=["QQ=="], metadata={"a": 1}, reward=1.0)
    payload = observation_payload(full)
    assert payload["observation"]["screenshots"] == ["QQ=="]
    assert observation_from_payload(payload) == full


def test_invalid_settings_say_which() -> None:
    with pytest.raises(ValueError, match=r"timeout_s=0.*memory_mb=1"):
        CodeEnvConfig(timeout_s=0, memory_mb=1)
    with pytest.raises(ValueError, match=r"observation_bytes=1000.*observation_bytes >= 1 MiB"):
        CodeEnvConfig(observation_bytes=1000)
    with pytest.raises(ValueError, match=r"tmp_size_mb=0, session_network='lan'"):
        CodeEnvConfig(tmp_size_mb=0, session_network="lan")  # type: ignore[arg-type]


def test_a_closed_environment_says_so() -> None:
    env = CodeEnvironment(CodeEnvConfig(display=False))
    env.close()
    with pytest.raises(EnvironmentClosedError, match="is closed; create a new one"):
        env.step(CodeAction(code="pass"))


def test_servers_with_different_temporary_folders_never_lease_the_same_id(
    tmp_path: Path,
) -> None:
    """Two real processes, each with a TMPDIR of its own, hold a lease at once."""
    program = (
        "import sys\n"
        "from viewfinder.codeenv.sandbox_users import shared_users\n"
        "lease = shared_users().lease()\n"
        "print(lease.uid, shared_users().lock_dir, flush=True)\n"
        "sys.stdin.read()\n"
    )
    holders = []
    try:
        for name in ("a", "b"):
            folder = tmp_path / name
            folder.mkdir()
            holders.append(
                subprocess.Popen(
                    [sys.executable, "-c", program],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    env={**os.environ, "TMPDIR": str(folder)},
                )
            )
        answers = [holder.stdout.readline().split() for holder in holders]  # type: ignore[union-attr]
    finally:
        for holder in holders:
            holder.communicate(timeout=30)
    (first, first_dir), (second, second_dir) = answers
    assert first != second
    assert first_dir == second_dir == str(default_lock_dir())
    assert [list((tmp_path / name).iterdir()) for name in ("a", "b")] == [[], []]


def test_user_id_leases_are_exclusive_across_instances(tmp_path: Path) -> None:
    first = SandboxUsers(first=64000, count=2, lock_dir=tmp_path)
    second = SandboxUsers(first=64000, count=2, lock_dir=tmp_path)  # another "server"
    a = first.lease()
    b = second.lease()
    assert a.uid != b.uid
    with pytest.raises(SandboxError, match="all 2 sandbox user ids"):
        first.lease()
    a.release()
    assert second.lease().uid == a.uid
    with pytest.raises(ValueError, match="1000 or above"):
        SandboxUsers(first=0)
