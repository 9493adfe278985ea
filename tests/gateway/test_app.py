"""`archipelago serve`'s start-up hint names a command the user can run from where it stands."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gateway.app import client_command


def test_hint_names_the_venv_command_when_archipelago_is_not_on_path(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / ".venv" / "bin" / "archipelago"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(exe), "serve"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert client_command() == ".venv/bin/archipelago"


def test_hint_is_the_bare_command_when_it_is_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "bin" / "archipelago"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(exe), "serve"])
    monkeypatch.setenv("PATH", str(exe.parent))
    assert client_command() == "archipelago"
