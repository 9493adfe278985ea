"""`archipelago play`'s local state stays bounded: the latest rounds' drafts of a game, the files of
the latest games (client.draft_store)."""

from __future__ import annotations

import os
from pathlib import Path

from client.draft_store import KEEP_ROUNDS, DraftStore


def test_only_the_latest_games_files_are_kept(tmp_path: Path) -> None:
    for i in range(5):
        store = DraftStore(f"g{i}", root=tmp_path)
        store.set_draft(1, {"shots": ["A1"]})
        os.utime(store.path, (1_000_000 + i, 1_000_000 + i))  # written in this order
    from client import draft_store

    draft_store.prune(tmp_path, keep=3)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["g2.json", "g3.json", "g4.json"]
    assert DraftStore("g4", root=tmp_path).draft(1) == {"orders": {"shots": ["A1"]}, "done": False}


def test_a_new_games_file_prunes_the_folder_and_a_game_keeps_its_latest_rounds(tmp_path: Path) -> None:
    from client import draft_store

    for i in range(draft_store.KEEP_GAMES + 2):
        DraftStore(f"g{i:03}", root=tmp_path).set_draft(0, {})
    assert len(list(tmp_path.glob("*.json"))) == draft_store.KEEP_GAMES
    store = DraftStore("long", root=tmp_path)
    for r in range(10):
        store.set_draft(r, {"r": r})
    kept = DraftStore("long", root=tmp_path)
    assert [r for r in range(10) if kept.draft(r)] == list(range(10 - KEEP_ROUNDS, 10))
    assert oct(kept.path.stat().st_mode & 0o777) == "0o600"
