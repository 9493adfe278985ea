"""`archipelago admin …`: where it connects, where its token comes from, how its commands parse
(tests/e2e/test_admin.py runs them against `archipelago serve`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.admin import (
    render_action,
    render_end,
    render_game,
    render_games,
    render_shards,
    resolve_token,
    resolve_url,
    server_flag,
    when,
)
from client.cli import build_parser
from client.play_base import clock_parts, deadline_label


def test_the_url_defaults_to_the_local_http_port() -> None:
    assert resolve_url(None, {}) == "http://127.0.0.1:8080"
    assert resolve_url(None, {"ARCHIPELAGO_HTTP_PORT": "18080"}) == "http://127.0.0.1:18080"
    assert resolve_url("https://ops.example.com/", {"ARCHIPELAGO_HTTP_PORT": "18080"}) == "https://ops.example.com"
    assert resolve_url("10.0.0.5:8080", {}) == "http://10.0.0.5:8080"  # HOST:PORT, as the other commands take
    with pytest.raises(SystemExit, match="ARCHIPELAGO_HTTP_PORT"):
        resolve_url(None, {"ARCHIPELAGO_HTTP_PORT": "http"})


def test_the_token_comes_from_a_file_or_the_environment_never_an_argument(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("  from-the-file-0123456789\nsecond line\n")
    assert resolve_token(str(token_file), {"ARCHIPELAGO_ADMIN_TOKEN": "from-env"}) == "from-the-file-0123456789"
    assert resolve_token(None, {"ARCHIPELAGO_ADMIN_TOKEN": " from-env\n"}) == "from-env"
    with pytest.raises(SystemExit, match="ARCHIPELAGO_ADMIN_TOKEN or pass --token-file"):
        resolve_token(None, {})
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(SystemExit, match="empty"):
        resolve_token(str(tmp_path / "empty"), {"ARCHIPELAGO_ADMIN_TOKEN": "from-env"})
    with pytest.raises(SystemExit):  # no --token option (nor an abbreviation of --token-file): refused
        build_parser().parse_args(["admin", "shards", "--token", "x"])
    with pytest.raises(SystemExit, match=r"--token-file .*missing"):
        resolve_token(str(tmp_path / "missing"), {})


def test_the_admin_commands_parse() -> None:
    p = build_parser()
    end = p.parse_args(["admin", "end", "3f2a", "--reason", "spam", "--server", "http://h:1", "--json"])
    assert (end.admin_command, end.game_id, end.reason, server_flag(end), end.json) == \
        ("end", "3f2a", "spam", "http://h:1", True)
    games = p.parse_args(["admin", "games", "--shard", "shard-1"])
    assert (games.admin_command, games.shard, server_flag(games), games.json) == ("games", "shard-1", None, False)
    for action in ("drain", "activate"):
        assert p.parse_args(["admin", action, "shard-0"]).shard == "shard-0"
    with pytest.raises(SystemExit):
        p.parse_args(["admin", "games"])  # --shard is required


def test_the_answers_read_as_tables() -> None:
    text = render_games({"shard": "shard-0", "in_memory": 1, "indexed": 2, "games": [
        {"game_id": "g1", "game": "salvo", "status": "running", "round": 2, "deadline_unix_ms": 1,
         "time_left_ms": 42_000, "journal_length": 12, "players": 2, "seats": 2, "in_memory": True},
        {"game_id": "g2", "game": "archipelago", "status": "lobby", "round": None, "deadline_unix_ms": 1,
         "time_left_ms": 80_000_000, "journal_length": None, "players": 1, "seats": 4, "in_memory": False}]})
    assert text.splitlines() == [
        "shard shard-0: 1 live game(s) in memory, 2 in its deadline index",
        "GAME  KIND         STATUS   ROUND  LEFT         JOURNAL  PLAYERS  LOADED",
        "g1    salvo        running  2      42 s         12       2/2      yes",
        "g2    archipelago  lobby    —      22 h 13 min  —        1/4      no"]
    outcome = {"winners": [], "draw": False, "reason": "ended", "scores": []}
    assert render_end({"game_id": "g1", "ended": False, "outcome": outcome}) == \
        "game g1 was already over: no winner (an operator ended the game)"


def test_admin_takes_server_as_every_command_and_url_as_its_deprecated_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    p = build_parser()
    for command in (["shards"], ["games", "--shard", "shard-0"], ["game", "g1"], ["end", "g1"], ["drain", "shard-0"],
                    ["activate", "shard-0"], ["remove", "shard-0"]):
        args = p.parse_args(["admin", *command, "--server", "ops.example:9000"])
        assert resolve_url(server_flag(args)) == "http://ops.example:9000", command
    assert capsys.readouterr().err == ""
    old = p.parse_args(["admin", "shards", "--url", "http://h:1"])
    assert server_flag(old) == "http://h:1"
    assert "--url is deprecated: use --server" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="give one of them"):
        server_flag(p.parse_args(["admin", "shards", "--url", "http://h:1", "--server", "http://other:2"]))


def test_the_outcome_reads_in_words_with_the_players_nicknames() -> None:
    game = {"game_id": "g1", "game": "arcmage", "status": "over", "round": 12, "journal_length": 40,
            "summary": {"code": "ABCDEF"}, "outcome": {"winners": [1], "draw": False, "reason": "last_player"},
            "players": [{"seat": 0, "nickname": "ann", "host": True}, {"seat": 1, "nickname": "bob"}]}
    assert "outcome   bob won (last player standing)" in render_game(game).splitlines()
    draw = {**game, "outcome": {"winners": [], "draw": True, "reason": "max_rounds"}}
    assert "outcome   a draw (the turn limit was reached)" in render_game(draw).splitlines()
    text = render_end({"game_id": "g1", "ended": True, "version": 9, "reason": "",
                       "outcome": {"winners": [], "draw": False, "reason": "ended", "scores": []}})
    assert text == "ended game g1 at version 9: no winner (an operator ended the game)"


def test_a_finished_game_in_memory_is_not_counted_as_live() -> None:
    shards = render_shards({"shards": [
        {"name": "shard-0", "state": "active", "pid": 41, "games": 5, "live": 3, "finished": 2, "armed": 3,
         "deadlines_fired": 7},
        {"name": "shard-1", "state": "unavailable", "pid": 0, "games": 0, "live": 0, "finished": 0, "armed": 0,
         "deadlines_fired": 0}]})
    assert shards.splitlines() == [
        "SHARD    STATE        PID  LIVE  FINISHED  ARMED  FIRED",
        "shard-0  active       41   3     2         3      7",
        "shard-1  unavailable  —    0     0         0      0"]
    games = render_games({"shard": "shard-0", "in_memory": 2, "indexed": 1, "games": [
        {"game_id": "g1", "game": "salvo", "status": "running", "round": 2, "deadline_unix_ms": 1,
         "time_left_ms": 42_000, "journal_length": 12, "players": 2, "seats": 2, "in_memory": True},
        {"game_id": "g2", "game": "salvo", "status": "over", "round": 9, "deadline_unix_ms": 0,
         "time_left_ms": 0, "journal_length": 40, "players": 2, "seats": 2, "in_memory": True}]})
    assert games.splitlines()[0] == ("shard shard-0: 1 live game(s) in memory and 1 finished (kept until evicted "
                                     "idle), 1 in its deadline index")


def test_a_drain_remove_or_activate_says_what_it_did_once() -> None:
    drained = render_action({"shard": "shard-1", "action": "drain", "result": {"shard": "shard-1", "moved": 3}})
    assert drained == ("shard shard-1 drained: 3 game(s) moved to the active shards; no new game goes there "
                       "(`admin activate shard-1` takes it back, `admin remove shard-1` stops it)")
    removed = render_action({"shard": "shard-1", "action": "remove",
                             "result": {"shard": "shard-1", "moved": 0, "removed": True}})
    assert removed == ("shard shard-1 removed: 0 game(s) moved to the active shards, its actor stopped, out of "
                       "the cluster's shard set")
    active = render_action({"shard": "shard-4", "action": "activate", "result": {"shard": "shard-4",
                                                                                 "state": "active"}})
    assert active.startswith("shard shard-4 active: new games may be placed there")
    for text in (drained, removed, active):
        assert "done (" not in text and text.count("shard shard-") == 1, text  # the shard named once


def test_deadlines_say_their_time_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    moment = 1_767_225_600_000 + 3_723_000  # 2026-01-01 01:02:03 UTC
    assert when(moment) == "2026-01-01 01:02:03 UTC"
    assert when(None) == "—"
    monkeypatch.setenv("TZ", "Asia/Jerusalem")
    time.tzset()
    try:
        assert clock_parts(moment, now_ms=moment - 5_000) == (5, "03:02:03 IST")
        assert deadline_label(3, moment, now_ms=moment - 57_000) == "[round 3 · closes 03:02:03 IST · 57 s left]"
        assert when(moment) == "2026-01-01 01:02:03 UTC", "the operators' times stay in UTC"
    finally:
        monkeypatch.undo()
        time.tzset()
