"""`archipelago admin …`: the operators' door of a gateway (``/admin/`` on its HTTP port) from a terminal.

The token comes from ``--token-file`` (its first line) or env ``ARCHIPELAGO_ADMIN_TOKEN`` — never from
the command line, which every user of the machine can read in ``ps``. Answers print as tables, or as
the door's raw JSON with ``--json``. Imports nothing of the server.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2 as httpx

TOKEN_ENV = "ARCHIPELAGO_ADMIN_TOKEN"
DEFAULT_HTTP_PORT = 8080
TIMEOUT_S = 120.0  # a drain waits for the calls in flight on its shard


class AdminError(Exception):
    """A refusal of the door (its error body) or a gateway that does not answer."""


def resolve_url(flag: str | None, env: Mapping[str, str] | None = None) -> str:
    """``--server`` (a URL, or HOST:PORT for ``http://HOST:PORT``), else
    ``http://127.0.0.1:${ARCHIPELAGO_HTTP_PORT:-8080}``: the admin door is on the gateway's HTTP port."""
    env = os.environ if env is None else env
    if flag:
        flag = flag.strip().rstrip("/")
        return flag if "://" in flag else f"http://{flag}"
    port = env.get("ARCHIPELAGO_HTTP_PORT") or str(DEFAULT_HTTP_PORT)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SystemExit(f"ARCHIPELAGO_HTTP_PORT: expected a port number, got {port!r}")
    return f"http://127.0.0.1:{int(port)}"


def server_flag(args: argparse.Namespace) -> str | None:
    """``--server``, or the deprecated ``--url`` (warned about); both, if they differ, are refused."""
    server: str | None = getattr(args, "server", None)
    url: str | None = getattr(args, "url", None)
    if url is None:
        return server
    if server is not None and server.rstrip("/") != url.rstrip("/"):
        raise SystemExit("--url is the old name of --server: give one of them")
    print("warning: admin --url is deprecated: use --server (as every archipelago command)", file=sys.stderr,
          flush=True)
    return url


def resolve_token(token_file: str | None, env: Mapping[str, str] | None = None) -> str:
    """The operators' token: ``--token-file`` (first line), else env ARCHIPELAGO_ADMIN_TOKEN."""
    env = os.environ if env is None else env
    if token_file:
        try:
            lines = Path(token_file).read_text(encoding="utf-8").strip().splitlines()
        except OSError as exc:
            raise SystemExit(f"--token-file {token_file}: {exc.strerror or exc}") from None
        if not lines or not lines[0].strip():
            raise SystemExit(f"--token-file {token_file}: the file is empty")
        return lines[0].strip()
    token = env.get(TOKEN_ENV, "").strip()
    if not token:
        raise SystemExit(f"no operator token: set {TOKEN_ENV} or pass --token-file FILE")
    return token


def call(url: str, token: str, method: str, path: str, body: dict[str, Any] | None = None,
         params: dict[str, str] | None = None) -> dict[str, Any]:
    """One request to the door; its JSON answer, or AdminError naming the refusal."""
    try:
        resp = httpx.request(method, url + path, params=params, json=body, timeout=TIMEOUT_S,
                             headers={"authorization": f"Bearer {token}"})
    except httpx.HTTPError as exc:
        raise AdminError(f"cannot reach the gateway at {url} ({type(exc).__name__}: {exc})") from None
    try:
        answer = resp.json()
    except ValueError:
        raise AdminError(f"HTTP {resp.status_code} from {url}{path}: not a JSON answer "
                         "(is this the gateway's HTTP port?)") from None
    if resp.status_code >= 400 or not isinstance(answer, dict):
        err = answer.get("error", {}) if isinstance(answer, dict) else {}
        raise AdminError(f"{err.get('code', 'HTTP ' + str(resp.status_code))}: {err.get('message', resp.text[:200])}")
    return answer


# ---------------------------------------------------------------- rendering
def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell."""
    cells = [[str(h) for h in headers]] + [["—" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def left(ms: int | None) -> str:
    """A time left, readably ("" when there is no deadline)."""
    if ms is None:
        return ""
    s = int(ms // 1000)
    if s < 120:
        return f"{s} s"
    if s < 2 * 3600:
        return f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def when(unix_ms: int | None) -> str:
    """A moment in UTC, saying so: '2026-12-06 15:42:10 UTC' (the operators of a cluster may sit in
    several time zones, and the gateway's log is in UTC on most hosts)."""
    if not unix_ms:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(unix_ms / 1000))


def render_shards(answer: dict[str, Any]) -> str:
    """LIVE: games in memory in a lobby or running; FINISHED: games over still in memory (until evicted idle)."""
    def live(s: dict[str, Any]) -> Any:
        return s.get("live", s.get("games"))  # (a gateway older than the split sends games alone)

    return table(["SHARD", "STATE", "PID", "LIVE", "FINISHED", "ARMED", "FIRED"],
                 [[s["name"], s["state"], s.get("pid") or "—", live(s), s.get("finished"), s.get("armed"),
                   s.get("deadlines_fired")] for s in answer["shards"]])


def render_games(answer: dict[str, Any]) -> str:
    rows = [[g["game_id"], g.get("game") or "?", g.get("status") or "?", g.get("round"),
             left(g.get("time_left_ms")) if g.get("deadline_unix_ms") else "—", g.get("journal_length"),
             f"{g.get('players') if g.get('players') is not None else '?'}/{g.get('seats') or '?'}",
             "yes" if g.get("in_memory") else "no"] for g in answer["games"]]
    finished = sum(1 for g in answer["games"] if g.get("in_memory") and g.get("status") == "over")
    head = (f"shard {answer['shard']}: {answer['in_memory'] - finished} live game(s) in memory"
            + (f" and {finished} finished (kept until evicted idle)" if finished else "")
            + f", {answer['indexed']} in its deadline index")
    return head + "\n" + table(["GAME", "KIND", "STATUS", "ROUND", "LEFT", "JOURNAL", "PLAYERS", "LOADED"], rows)


def render_game(g: dict[str, Any]) -> str:
    summary = g.get("summary", {})
    lines = [f"game      {g['game_id']} ({g['game']}, code {summary.get('code', '?')}, "
             f"{'public' if summary.get('public') else 'private'})",
             f"shard     {g.get('shard', '?')}",
             f"status    {g['status']}, round {g['round']}",
             f"deadline  {when(g.get('deadline_unix_ms'))}"
             + (f" ({left(g.get('time_left_ms'))} left)" if g.get("deadline_unix_ms") else ""),
             f"journal   {g['journal_length']} entries (round opened at version {g.get('round_version', 0)})",
             f"created   {when(g.get('created_unix_ms'))}"]
    outcome = g.get("outcome")
    if outcome:
        names = {int(p["seat"]): str(p["nickname"]) for p in g.get("players", [])}
        lines.append(f"outcome   {describe_outcome(outcome, names, str(g.get('game', '')))}")
    players = [[p["seat"], p["nickname"] + (" (host)" if p.get("host") else ""),
                "yes" if p.get("connected") else "no",
                "done" if p.get("submitted") else "draft" if p.get("draft") else "no",
                "yes" if p.get("autopilot") else "no"] for p in g.get("players", [])]
    return "\n".join(lines) + "\n\n" + table(["SEAT", "NICKNAME", "CONNECTED", "SUBMITTED", "AUTOPILOT"], players)


def describe_outcome(outcome: dict[str, Any], names: Mapping[int, str] | None = None, kind: str = "") -> str:
    """The outcome in words, as the players read it: "host won (every ship of the other fleet was sunk)",
    "no winner (an operator ended the game)" (``names``: nicknames by seat, when the answer has them)."""
    from client.bot import outcome_words
    from client.games import GAMES, game_client

    progress = game_client(kind).progress if kind in GAMES else "round"
    return outcome_words(outcome, names or {}, progress=progress)


def render_end(a: dict[str, Any]) -> str:
    if a.get("ended"):
        said = f" (your reason, in the log only: {a['reason']!r})" if a.get("reason") else ""
        return f"ended game {a['game_id']} at version {a['version']}{said}: {describe_outcome(a['outcome'] or {})}"
    return f"game {a['game_id']} was already over: {describe_outcome(a.get('outcome') or {})}"


def render_notifications(a: dict[str, Any]) -> str:
    head = (f"outbox: {a['outbox']} queued (at most {a['max_queue']}), {a['retrying']} waiting for a retry; "
            f"email {'configured' if a['email_available'] else 'not configured'}")
    if not a["failing"]:
        return head + "\nno failing notification channel"
    rows = [[f["game_id"], f["seat"], f["channel"], f["state"], f["failures"], when(f["last_failure_unix_ms"]),
             f["reason"]] for f in a["failing"]]
    return head + "\n" + table(["GAME", "SEAT", "CHANNEL", "STATE", "FAILURES", "LAST FAILURE", "REASON"], rows)


def render_action(a: dict[str, Any]) -> str:
    """What a drain, an activate or a remove did, said once."""
    result = a.get("result")
    result = result if isinstance(result, dict) else {}
    shard, moved = a["shard"], result.get("moved")
    games = f"{moved} game(s) moved to the active shards" if moved is not None else "its games moved"
    if a["action"] == "drain":
        return (f"shard {shard} drained: {games}; no new game goes there "
                f"(`admin activate {shard}` takes it back, `admin remove {shard}` stops it)")
    if a["action"] == "remove":
        return f"shard {shard} removed: {games}, its actor stopped, out of the cluster's shard set"
    if a["action"] == "activate":
        return f"shard {shard} active: new games may be placed there (games moved away stay where they are)"
    return f"shard {shard}: {a['action']} done"


# ---------------------------------------------------------------- the command
def run(args: argparse.Namespace) -> int:
    url = resolve_url(server_flag(args))
    token = resolve_token(args.token_file)
    what: str = args.admin_command
    try:
        if what == "shards":
            answer = call(url, token, "GET", "/admin/shards")
            text = render_shards(answer)
        elif what == "games":
            answer = call(url, token, "GET", "/admin/games", params={"shard": args.shard})
            text = render_games(answer)
        elif what == "game":
            answer = call(url, token, "GET", f"/admin/games/{quote(args.game_id, safe='')}")
            text = render_game(answer)
        elif what == "notifications":
            answer = call(url, token, "GET", "/admin/notifications")
            text = render_notifications(answer)
        elif what == "end":
            answer = call(url, token, "POST", f"/admin/games/{quote(args.game_id, safe='')}/end",
                          body={"reason": args.reason or ""})
            text = render_end(answer)
        else:  # drain, activate, remove
            answer = call(url, token, "POST", f"/admin/shards/{quote(args.shard, safe='')}/{what}")
            text = render_action(answer)
    except AdminError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2, ensure_ascii=False) if args.json else text, flush=True)
    return 0


def add_parser(sub: Any) -> None:
    """``archipelago admin …`` on the CLI's subparsers."""
    a = sub.add_parser("admin", help="the operators' door of a gateway (token: env ARCHIPELAGO_ADMIN_TOKEN)",
                       description="Operate a running cluster through a gateway's admin door (/admin/ on its "
                       "HTTP port). The token comes from env ARCHIPELAGO_ADMIN_TOKEN or --token-file.")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", metavar="URL",
                        help="the gateway's HTTP address, where its admin door is: a URL or HOST:PORT (default "
                        "http://127.0.0.1:$ARCHIPELAGO_HTTP_PORT, 8080; not the gRPC address the player commands "
                        "take)")
    common.add_argument("--url", help="deprecated: the old name of --server")
    common.add_argument("--token-file", metavar="FILE",
                        help=f"read the operator token from this file (its first line); default env {TOKEN_ENV}")
    common.add_argument("--json", action="store_true", help="print the door's JSON answer instead of a table")
    cmds = a.add_subparsers(dest="admin_command", required=True, metavar="COMMAND")
    # (no abbreviations: "--token X" must not pass as "--token-file X")
    cmds.add_parser("shards", parents=[common], allow_abbrev=False,
                    help="the shards: state, pid, games in memory, deadlines armed")
    g = cmds.add_parser("games", parents=[common], allow_abbrev=False,
                        help="a shard's games (in memory and in its deadline index)")
    g.add_argument("--shard", required=True, help="the shard's name (see `admin shards`)")
    one = cmds.add_parser("game", parents=[common], allow_abbrev=False, help="one game's public state and players")
    one.add_argument("game_id", help="the game's id (`admin games`, or `game:` of create), not its code")
    e = cmds.add_parser("end", parents=[common], allow_abbrev=False,
                        help="end a game now (no winner; players see \"an operator ended the game\")")
    e.add_argument("game_id", help="the game's id (`admin games`), not its code")
    e.add_argument("--reason", help="why (kept in the answer and the gateway's log; players never see it)")
    cmds.add_parser("notifications", parents=[common], allow_abbrev=False,
                    help="the notification outbox and the players' channels that fail (no addresses shown)")
    for action, text in (("drain", "move a shard's games to the others and keep new ones away"),
                         ("activate", "take a shard back into service (a new name shard-N adds one)"),
                         ("remove", "drain a shard, stop it and take it out of the cluster")):
        d = cmds.add_parser(action, parents=[common], allow_abbrev=False, help=text)
        d.add_argument("shard", help="the shard's name, e.g. shard-1 (see `admin shards`)")
    a.set_defaults(fn=run)


__all__ = ["AdminError", "add_parser", "call", "describe_outcome", "resolve_token", "resolve_url", "run", "server_flag"]
