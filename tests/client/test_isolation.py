"""Client commands (and every game's client module) never import the server: no gateway, services or Ray
in a client's process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"

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


def test_client_modules_and_the_create_command_import_no_server_module() -> None:
    python = str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)
    done = subprocess.run([python, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert "--request-id" in got["help"]  # the parsing of `create --help` really ran
    assert got["server"] == []
