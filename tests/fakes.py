"""In-memory stand-ins for fast unit tests of the service logic (never the only thing tested:
the same logic runs against real Redis in tests/e2e)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


class FakeClock:
    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.ms = start_ms

    def __call__(self) -> int:
        return self.ms

    def advance(self, seconds: float) -> None:
        self.ms += int(seconds * 1000)


class MemoryJournal:
    """The Journal protocol of services.game_actor, in memory (entries round-trip through JSON)."""

    def __init__(self) -> None:
        self.journals: dict[str, list[str]] = {}
        self.present: set[tuple[str, int]] = set()
        self.published: list[tuple[str, dict[str, Any]]] = []
        self.secrets: dict[str, tuple[str, int]] = {}
        self.summaries: dict[str, dict[str, Any]] = {}
        self.retired: dict[str, float] = {}  # game -> retention (s) it was retired with
        self.notices: list[tuple[str, Any]] = []  # (game, Notice) queued, in order (deduplicated)
        self.notice_marks: dict[str, int] = {}
        self.seen_notices: set[tuple[str, str]] = set()

    async def notify(self, game_id: str, game: str, notices: Iterable[Any], *, version: int,
                     at_ms: int) -> tuple[list[int], int]:
        queued = []
        for i, n in enumerate(notices):
            if (game_id, n.dedup()) not in self.seen_notices:
                self.seen_notices.add((game_id, n.dedup()))
                self.notices.append((game_id, n))
                queued.append(i)
        if version > self.notice_marks.get(game_id, 0):
            self.notice_marks[game_id] = version
        return queued, 0

    async def notify_mark(self, game_id: str) -> int:
        return self.notice_marks.get(game_id, 0)

    async def journal_append_publish(self, game_id: str, entry: dict[str, Any], notice: dict[str, Any],
                                     expected: int) -> None:
        from services.store import JournalConflict

        journal = self.journals.setdefault(game_id, [])
        if len(journal) != expected:
            raise JournalConflict(game_id)
        journal.append(json.dumps(entry))
        self.published.append((game_id, notice))

    async def journal_read(self, game_id: str) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.journals.get(game_id, [])]

    async def connected(self, game_id: str, seats: Iterable[int]) -> set[int]:
        return {s for s in seats if (game_id, s) in self.present}

    async def put_secret(self, secret_hash: str, game_id: str, seat: int) -> None:
        self.secrets[secret_hash] = (game_id, seat)

    async def put_summary(self, game_id: str, summary: dict[str, Any], listed: bool, created_ms: int,
                          live: str = "") -> None:
        self.summaries[game_id] = summary

    async def retire(self, game_id: str, *, code: str, secret_hashes: Iterable[str], retention_s: float) -> None:
        self.retired[game_id] = retention_s
