"""docs/operating.md's audit snippet, run as an operator would: against a game ended through the admin
door (its journal compacted into the archive key) and a running one (its journal list)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, new_game

pytestmark = pytest.mark.e2e

DOC = Path(__file__).parents[2] / "docs" / "operating.md"


def snippet() -> str:
    found = re.search(r"<!-- audit-snippet -->\n```python\n(.*?)```", DOC.read_text(), re.S)
    assert found, "docs/operating.md has its audit snippet"
    return found[1]


def audit(game_id: str, cluster: Cluster, tmp_path: Path) -> list[tuple[int, str, dict[str, object]]]:
    script = tmp_path / "audit.py"
    script.write_text(snippet())
    out = subprocess.run([sys.executable, str(script), game_id, cluster.redis_url, cluster.prefix],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    rows = []
    for line in out.splitlines():
        version, op, entry = line.split(" ", 2)
        rows.append((int(version), op, json.loads(entry)))
    return rows


async def test_the_audit_snippet_reads_a_finished_games_archive_and_a_running_games_journal(
        cluster: Cluster, tmp_path: Path) -> None:
    over = await new_game(lambda: cluster.client("grpc"))
    running = await new_game(lambda: cluster.client("grpc"))
    ended = await cluster.api.router.game(over.game_id).end_game(over.game_id, "audit test")
    store = cluster.api.store
    archive, journal = store.key("g", over.game_id, "archive"), store.key("g", over.game_id, "journal")
    async with asyncio.timeout(WAIT_S):
        while not (await store.redis.exists(archive) and not await store.redis.exists(journal)):
            await asyncio.sleep(0.05)  # (retired just after the end is journaled)

    rows = await asyncio.to_thread(audit, over.game_id, cluster, tmp_path)
    assert [e for _, _, e in rows] == await store.journal_read(over.game_id)
    assert [v for v, _, _ in rows] == list(range(1, len(rows) + 1))
    assert rows[-1][:2] == (ended["version"], "end"), "entry V is at index V - 1: the end's version is the last"
    assert rows[0][1] == "create" and "audit test" not in json.dumps(rows)

    live = await asyncio.to_thread(audit, running.game_id, cluster, tmp_path)
    assert [e for _, _, e in live] == await store.journal_read(running.game_id)
    assert [op for _, op, _ in live] == ["create", "join", "start"]

    gone = subprocess.run([sys.executable, str(tmp_path / "audit.py"), "no-such-game", cluster.redis_url,
                           cluster.prefix], capture_output=True, text=True, timeout=60)
    assert gone.returncode == 1 and "no game no-such-game" in gone.stderr
    for game in (over, running):
        await game.host.close()
        await game.guest.close()
