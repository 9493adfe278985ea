"""What `archipelago play` keeps on this machine so that a restart never loses a turn: per game, the
draft of the latest rounds (orders entered, not yet done), the stable unit labels, the last seq seen
(the Watch stream resumes from it) and the autopilot rounds already reported.

One small JSON file per game in ``$XDG_STATE_HOME/archipelago`` (default ``~/.local/state/archipelago``),
readable by its owner only (0600, the folder 0700); only the latest :data:`KEEP_ROUNDS` rounds' drafts are
kept, and the files of the latest :data:`KEEP_GAMES` games (a game left unfinished ages out; a finished
game's file goes at its end).  A file that cannot be read is ignored (the game goes on without it)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

KEEP_ROUNDS = 3
KEEP_GAMES = 50  # state files kept (the most recently written): a game left unfinished ages out


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "archipelago"


def _private_dir() -> Path:
    d = state_dir()
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    return d


def _write_private(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with_suppress_unlink(tmp)
        raise


def with_suppress_unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)[:64] or "game"


class DraftStore:
    """The state file of one game."""

    def __init__(self, game_id: str, root: Path | None = None) -> None:
        self.game_id = game_id
        self.root = root
        self.data: dict[str, Any] = {"game_id": game_id, "seq": 0, "labels": {}, "drafts": {}, "reported": []}
        self.loaded = False
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(raw, dict) and raw.get("game_id") == game_id:
                self.data.update(raw)
                self.loaded = True
        except (OSError, ValueError):
            pass

    @property
    def path(self) -> Path:
        return (self.root or state_dir()) / f"{safe_name(self.game_id)}.json"

    def save(self) -> None:
        try:
            if self.root is None:
                _private_dir()
            else:
                self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            new = not self.path.exists()
            _write_private(self.path, json.dumps(self.data, sort_keys=True))
            if new:
                prune(self.path.parent, spare=self.path)
        except OSError:
            pass  # no state kept: the game goes on

    def forget(self, code: str = "") -> None:
        """The game is over: its file (and a secret kept for it) go."""
        for path in (self.path, (self.root or state_dir()) / f"{safe_name(code.upper())}.secret" if code else None):
            if path is not None:
                with_suppress_unlink(str(path))
        self.data["drafts"] = {}

    # ------------------------------------------------------------------ the parts
    @property
    def seq(self) -> int:
        return int(self.data.get("seq") or 0)

    def set_seq(self, seq: int) -> None:
        if seq > self.seq:
            self.data["seq"] = seq
            self.save()

    @property
    def labels(self) -> dict[str, str]:
        labels: dict[str, str] = self.data.setdefault("labels", {})
        return labels

    def draft(self, round_: int) -> dict[str, Any] | None:
        d = (self.data.get("drafts") or {}).get(str(round_))
        return d if isinstance(d, dict) else None

    def set_draft(self, round_: int, orders: dict[str, Any], done: bool = False) -> None:
        drafts: dict[str, Any] = self.data.setdefault("drafts", {})
        drafts[str(round_)] = {"orders": orders, "done": done}
        for old in sorted(drafts, key=int)[:-KEEP_ROUNDS]:
            del drafts[old]
        self.save()

    def reported(self, round_: int) -> bool:
        return round_ in (self.data.get("reported") or [])

    def set_reported(self, round_: int) -> None:
        rep: list[int] = self.data.setdefault("reported", [])
        if round_ not in rep:
            rep.append(round_)
            del rep[:-20]
            self.save()


def prune(folder: Path, keep: int = KEEP_GAMES, spare: Path | None = None) -> None:
    """Only the ``keep`` most recently written game files stay in ``folder`` (``spare`` among them)."""
    files = sorted(folder.glob("*.json"), key=lambda p: (p == spare, p.stat().st_mtime), reverse=True)
    for old in files[keep:]:
        with_suppress_unlink(str(old))


def secret_file(code: str, secret: str, root: Path | None = None) -> Path | None:
    """The seat's secret kept in a private file (0600) for the command that comes back; None when
    it cannot be written."""
    path = (root or state_dir()) / f"{safe_name(code.upper())}.secret"
    try:
        if path.exists() and path.read_text(encoding="utf-8").strip() == secret:
            return path
        (root or _private_dir()).mkdir(parents=True, exist_ok=True, mode=0o700)
        _write_private(path, secret + "\n")
    except OSError:
        return None
    return path


__all__ = ["KEEP_GAMES", "KEEP_ROUNDS", "DraftStore", "prune", "secret_file", "state_dir"]
