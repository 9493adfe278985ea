"""Client commands (and every game's client module) never import the server: no gateway, services or Ray
in a client's process. `archipelago serve` is the server's command (gateway.serve): the client hands it
over and imports nothing of it for any other command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
SERVER = ("gateway", "services", "ray")

PROBE = """
import contextlib, io, json, sys
import client.cli, client.bot, client.play, client.grpc_client, client.web_client, client.games
for kind in client.games.GAMES:  # every game's client module and terminal UI
    client.play.game_ui(kind)
with contextlib.redirect_stdout(io.StringIO()) as help_text:
    try:
        client.cli.build_parser().parse_args(["create", "--help"])
    except SystemExit:
        pass
server = sorted(m for m in sys.modules if m.split(".")[0] in ("gateway", "services", "ray"))
print(json.dumps({"server": server, "help": help_text.getvalue()}))
"""

# Every client command run through the command's own entry (client.cli.main) as far as it goes without a
# server: each --help, then create, join, bot, play and notify stopped by their own checks before any call,
# and replay of a missing file (past its import of the pure services.replay).
COMMANDS_PROBE = """
import contextlib, io, json, os, sys
import client.cli
os.environ.pop("ARCHIPELAGO_SECRET", None)
runs = [["--help"], *[[c, "--help"] for c in ("create", "join", "bot", "play", "notify", "replay", "admin")],
        ["create", "salvo", "--seats", "9"], ["join", "ABC123", "--nickname", ""], ["bot", "ABC123", "--nickname", ""],
        ["play"], ["notify", "ABC123"]]
said = {}
for argv in runs:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            rc = client.cli.main(argv)
        except SystemExit as exc:
            rc = exc.code
    said[" ".join(argv)] = [str(rc), out.getvalue() + err.getvalue()]
server = sorted(m for m in sys.modules if m.split(".")[0] in ("gateway", "services", "ray"))
with contextlib.redirect_stderr(io.StringIO()) as err:
    replay_rc = client.cli.main(["replay", "/nonexistent/export.json"])
after_replay = sorted(m for m in sys.modules if m.split(".")[0] in ("gateway", "services", "ray", "redis"))
print(json.dumps({"server": server, "said": said, "replay": [replay_rc, err.getvalue(), after_replay]}))
"""


def _python() -> str:
    return str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)


def _probe(code: str) -> Any:
    done = subprocess.run([_python(), "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_client_modules_and_the_create_command_import_no_server_module() -> None:
    got = _probe(PROBE)
    assert "--request-id" in got["help"]  # the parsing of `create --help` really ran
    assert got["server"] == []


def test_every_client_command_runs_without_importing_the_server() -> None:
    got = _probe(COMMANDS_PROBE)
    said = got["said"]
    assert "serve" in said["--help"][1] and "run the cluster" in said["--help"][1]  # listed, not imported
    for command in ("create", "join", "bot", "play", "notify", "replay", "admin"):
        assert said[f"{command} --help"][0] == "0" and f"usage: archipelago {command}" in said[f"{command} --help"][1]
    # each stopped by its own check, i.e. really ran as far as it could without a server
    assert "--seats: a Salvo game has 2 seats" in said["create salvo --seats 9"][0]
    assert said["join ABC123 --nickname "][0] == "2" and "a nickname is 1-24" in said["join ABC123 --nickname "][1]
    assert said["bot ABC123 --nickname "][0] == "2"
    assert "play: give the game's CODE" in said["play"][0]
    assert "notify: give your seat's secret" in said["notify ABC123"][0]
    assert got["server"] == []
    replay_rc, replay_err, after_replay = got["replay"]
    assert replay_rc == 2 and "/nonexistent/export.json" in replay_err
    # replay: the engine and the pure services.replay (no I/O: no Redis, Ray or gateway)
    assert "services.replay" in after_replay
    assert [m for m in after_replay if not m.startswith("services")] == []


def test_serve_is_the_servers_command_and_keeps_its_flags(tmp_path: Path) -> None:
    exe = Path(_python()).with_name("archipelago")
    command = [str(exe)] if exe.exists() else [_python(), "-m", "client.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARCHIPELAGO_GATEWAYS", None)

    def serve(*args: str) -> subprocess.CompletedProcess[str]:  # (in an empty folder: nothing here to serve from)
        return subprocess.run([*command, "serve", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)

    helped = serve("--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: archipelago serve [-h] [--grpc-port PORT] [--http-port PORT]")
    for flag in ("--host HOST", "--shards N", "--gateways N", "--data-dir DIR", "ARCHIPELAGO_GRPC_PORT, else 50051"):
        assert flag in helped.stdout
    # flags out of range are refused by the server's command before anything starts
    refused = serve("--gateways=-1")
    assert (refused.returncode, refused.stderr.strip()) == (2, "error: --gateways must be at least 1")
    bad = serve("--grpc-port", "x")
    assert bad.returncode == 2
    assert "archipelago serve: error: argument --grpc-port: invalid int value: 'x'" in bad.stderr
