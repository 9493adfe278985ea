"""Replays and exports of finished games (community.proto ``GetReplay`` and ``ExportGame``; the record
format is docs/replay-format.md).

Pure functions over a game's journal entries (or the records an export made of them) and the engine:
no I/O, no clock, no Redis or Ray — the shard uses it (:class:`ReplayCache`, held by
:class:`services.shard.ShardCore`) and so does ``archipelago replay FILE`` (:mod:`client.replay_cmd`).

- :func:`record_of`: a journal entry as an export record — only the fields :data:`RECORD_FIELDS`
  documents for its kind: never a secret's hash, a request fingerprint, an idempotency key or a
  profile's id.
- :class:`Replay`: the records replayed by the engine alone (``new_game(config, seed)``, then every
  ``act``, ``close`` and ``action`` in order), its frames — frame 0 the game as it started, then one
  per round closed (``close``) or per turn action (``action``, the autopilot's included) — the final
  state and its hash (:func:`engine.base.state_hash`, what the shard's ``state_hash`` says of the
  live game). ``frame(n, seat)`` is one frame as the player API's ``view`` answers a view
  (:class:`services.actor_reads.ReadsPart`): ``engine.view`` of ``seat`` with the frame's events, or
  the whole game at that moment for seat -1 (:func:`whole_view`); never a seat's pending orders,
  standing orders or autopilot log.
- :class:`ReplayCache`: the replays of the finished games asked last (a bounded LRU), so a client
  stepping through a long game replays it once, not once per frame.

A replay keeps every state only for a short game: at most :data:`CHECKPOINTS` states per game (every
k-th frame, k = frames / CHECKPOINTS rounded up, and the last); any other frame is replayed from
the checkpoint before it (fewer than k engine steps), or from the frame asked just before it.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine import get_game
from engine.base import (
    SPECTATOR,
    STEP_OVER,
    Event,
    Game,
    canonical_json,
    state_hash,
)
from engine.errors import GameError, InvalidOrder, NotFound, NotOver, NotStarted
from services import journal

#: the format name of an export (ExportGameResponse.format)
FORMAT = "archipelago-journal/1"
#: the fields an export record keeps of a journal entry, by its ``op`` (each record type's ``EXPORTED``,
#: services/journal.py; docs/replay-format.md says what each means). Everything else — ``secret_hash``,
#: ``request``, ``key``, ``profile`` and any field added later — stays in the journal.
RECORD_FIELDS: dict[str, tuple[str, ...]] = {op: ("op", *cls.EXPORTED) for op, cls in journal.OPS.items()}
#: the ops that end a frame: a round closed, a turn or window action
FRAME_OPS = frozenset({journal.Close.OP, journal.Action.OP})
#: states kept per replay (besides the last): every k-th frame, k = ceil(frames / CHECKPOINTS)
CHECKPOINTS = 128
#: finished games whose replay a shard keeps (the ones asked last)
REPLAYS_KEPT = 4
#: the game's status, as the game actor says it (services.actor_core: LOBBY, RUNNING, OVER, ENDED)
LOBBY, RUNNING, OVER = "lobby", "running", "over"
ENDED, EXPIRED = "ended", "expired"


_WORDS = {LOBBY: "in its lobby", RUNNING: "running", OVER: "over"}


class ReplayError(ValueError):
    """Records that cannot be replayed: names the record (1-based, its op) and why."""


def record_of(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A journal entry as an export record: the fields of :data:`RECORD_FIELDS` it has, in that
    order; ReplayError for an entry of an unknown kind (nothing of it is exported)."""
    op = entry.get("op")
    fields = RECORD_FIELDS.get(op) if isinstance(op, str) else None
    if fields is None:
        raise ReplayError(f"a record of an unknown kind {str(op)[:40]!r} (the kinds: {', '.join(RECORD_FIELDS)})")
    return {f: entry[f] for f in fields if f in entry}


def record_json(record: Mapping[str, Any]) -> str:
    """One record as the JSON text an export carries (keys sorted, no spaces, UTF-8 as is)."""
    return canonical_json(record).decode()


def parse_export(text: str) -> tuple[list[dict[str, Any]], str]:
    """The records of an export file and the state hash it says the replay reaches ("" when it says
    none). The file is either the ExportGame answer as JSON (``{"format", "records": [JSON text or
    object, …], "state_hash"}``; ``stateHash`` too) or JSON lines: one record per line, optionally
    after a first line ``{"format": …, "state_hash": …}`` (no ``op``). ReplayError for anything else."""
    stripped = text.strip()
    if not stripped:
        raise ReplayError("the file is empty: expected an export of archipelago-journal/1 records")
    try:
        whole: Any = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "records" in whole:
        _check_format(whole, "the file")
        raw = whole["records"]
        if not isinstance(raw, list):
            raise ReplayError("records: expected a list of records")
        records = [_record_from(r, f"records[{i}]") for i, r in enumerate(raw)]
        return records, _hash_of(whole)
    records, expected = [], ""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"line {n}: not JSON ({exc.msg})") from None
        if isinstance(obj, dict) and "op" not in obj and not records and not expected:
            _check_format(obj, f"line {n}")  # the header line
            expected = _hash_of(obj) or "-"
            continue
        records.append(_record_from(obj, f"line {n}"))
    return records, "" if expected == "-" else expected


def _check_format(obj: Mapping[str, Any], where: str) -> None:
    got = obj.get("format", FORMAT)
    if got != FORMAT:
        raise ReplayError(f"{where}: format {str(got)[:60]!r}; this replayer reads {FORMAT}")


def _hash_of(obj: Mapping[str, Any]) -> str:
    return str(obj.get("state_hash") or obj.get("stateHash") or "")


def _record_from(obj: Any, where: str) -> dict[str, Any]:
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("op"), str):
        raise ReplayError(f"{where}: a record is a JSON object with an op")
    return obj


def not_over() -> NotOver:
    """The refusal of a replay or export of a game still running (FAILED_PRECONDITION ``game/not_over``)."""
    return NotOver("the game is not over: its replay and export come once it has ended (a public game's "
                   "spectators see it live meanwhile)", field="game_id")


def whole_view(engine: Game, state: Any, events: Sequence[Event]) -> dict[str, Any]:
    """The whole game at this moment (a replay's seat -1), in the spectator view's shape: the
    engine's ``full_view`` — what ``spectator_view`` shows once the game is over, for any moment —
    or, for a game without hidden information that has none, its ``spectator_view``."""
    full = getattr(engine, "full_view", None)
    view: dict[str, Any] = full(state, events) if full is not None else engine.spectator_view(state, events)
    return view


@dataclass(frozen=True)
class _Frame:
    entry: int  # the index of the record that made it (the start's for frame 0)
    round_version: int  # the version at which its round (turn) opened


class Replay:
    """A game replayed from its journal entries or export records (see the module docstring).

    ``status``: "lobby" (never started), "running" or "over"; ``frames``: the last frame's number
    (-1 for a game that never started); ``state``: the final state (None if never started);
    ``state_hash``: its hash ("" then); ``outcome``: the outcome's dict once over."""

    def __init__(self, entries: Sequence[Mapping[str, Any]], game_id: str = "", *,
                 checkpoints: int = CHECKPOINTS) -> None:
        self.game_id = game_id
        self.records = [record_of(e) for e in entries]
        if not self.records or self.records[0]["op"] != journal.Create.OP:
            raise ReplayError("record 1: a game's records begin with its create")
        self.kind = ""
        self.engine: Game | None = None
        self.config: dict[str, Any] = {}
        self.seed = 0
        self.seats_total = 0
        self.deadline_s = 0.0
        self.players: list[dict[str, Any]] = []
        self.status = LOBBY
        self.outcome: dict[str, Any] | None = None
        self.final_round = 0
        self.state: Any = None
        self._last_events: list[Event] = []
        self._frames: list[_Frame] = []
        starts = [i for i, r in enumerate(self.records) if r["op"] == journal.Start.OP]
        boundaries = sum(1 for r in self.records[starts[0]:] if r["op"] in FRAME_OPS) if starts else 0
        self._every = max(1, math.ceil((boundaries + 1) / max(1, checkpoints)))
        self._kept: dict[int, tuple[Any, list[Event]]] = {}  # frame -> (state, events)
        self._cursor: tuple[int, Any, list[Event]] | None = None  # the frame asked last
        self._play()
        self.state_hash = state_hash(self.state) if self.state is not None else ""

    @property
    def frames(self) -> int:
        return len(self._frames) - 1

    # ------------------------------------------------------------------ replaying
    def _fail(self, i: int, why: str) -> ReplayError:
        return ReplayError(f"record {i + 1} ({self.records[i]['op']}): {why}")

    def _step(self, state: Any, i: int) -> tuple[Any, list[Event] | None]:
        """Record ``i`` applied to ``state``: the new state and its events (None: a record that does not
        change the state)."""
        rec = self.records[i]
        if rec["op"] not in journal.PLAYED:
            return state, None
        assert self.engine is not None
        try:
            return journal.parse_played(rec).play(self.engine, state)
        except GameError as exc:
            raise self._fail(i, f"the engine refused it: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise self._fail(i, f"malformed ({type(exc).__name__}: {str(exc)[:200]})") from None

    def _play(self) -> None:
        changed = False  # the state changed (an act) since the last frame
        round_version = 0
        for i, rec in enumerate(self.records):
            op, version = rec["op"], i + 1
            if op == journal.Rated.OP:  # a rated game's rating changes, journaled after its end
                self._need(i, OVER)
                continue
            if self.status == OVER:
                raise self._fail(i, "a record after the game's end")
            if op == journal.Create.OP:
                if i:
                    raise self._fail(i, "a second create")
                self._create(rec, i)
            elif op == journal.Join.OP:
                self._need(i, LOBBY)
                self.players.append(self._player(rec, i, int(rec.get("seat", len(self.players)))))
                if "config" in rec:  # the joiner's seat options (its deck): the game's config from now on
                    self.config = dict(rec["config"])
            elif op == journal.Start.OP:
                self._need(i, LOBBY)
                assert self.engine is not None
                for seat in range(len(self.players), self.seats_total):
                    self.players.append({"seat": seat, "nickname": f"autopilot-{seat + 1}", "handle": "",
                                         "autopilot": True})
                try:
                    self.state = self.engine.new_game(self.config, self.seed)
                except (GameError, KeyError, TypeError, ValueError) as exc:
                    raise self._fail(i, f"the engine refused the config ({str(exc)[:200]})") from None
                self.status, round_version = RUNNING, version
                self._frame(i, round_version, [])
            elif op in (journal.Submit.OP, journal.Standing.OP, *journal.PLAYED):
                self._need(i, RUNNING)
                before = self.state.round
                self.state, events = self._step(self.state, i)
                if op in (journal.Submit.OP, journal.Standing.OP):
                    continue
                if op == journal.Act.OP:
                    changed = True
                    continue
                assert self.engine is not None and events is not None
                outcome = self.engine.outcome(self.state)
                if outcome is not None:
                    self.status, self.outcome = OVER, outcome.to_dict()
                    self.final_round = before if op == journal.Close.OP else self.state.round
                elif op == journal.Close.OP or self.state.round != before:
                    round_version = version  # a new round (turn) opened
                self._frame(i, round_version, events)
                changed = False
            elif op == journal.Expire.OP:
                self._need(i, LOBBY)
                self.status = OVER
                self.outcome = {"winners": [], "draw": False, "reason": EXPIRED, "scores": []}
            elif op == journal.End.OP:  # an operator ended it (its words are not journaled)
                self.status = OVER
                self.outcome = {"winners": [], "draw": False, "reason": ENDED, "scores": []}
                if self.state is not None:
                    self.final_round = self.state.round
                    if changed:  # acts since the last frame: the final state is a frame of its own
                        self._frame(i, round_version, [])
            else:  # (record_of refuses unknown kinds)
                raise self._fail(i, "an unknown kind of record")
        if self._frames:
            self._kept[self.frames] = (self.state, self._last_events)

    def _create(self, rec: Mapping[str, Any], i: int) -> None:
        try:
            self.kind = str(rec["kind"])
            self.engine = get_game(self.kind)
            self.config = dict(rec["config"])
            self.seed = int(rec["seed"])
            self.seats_total = int(self.config["players"])
            self.deadline_s = float(rec.get("deadline_s", 0))
        except KeyError as exc:
            raise self._fail(i, f"no {exc}: a create names its kind (a game kind), config (with players) "
                             "and seed") from None
        except (TypeError, ValueError) as exc:
            raise self._fail(i, f"malformed ({str(exc)[:200]})") from None
        self.players = [self._player(rec, i, 0)]

    def _player(self, rec: Mapping[str, Any], i: int, seat: int) -> dict[str, Any]:
        if not 0 <= seat < max(1, self.seats_total) or seat != len(self.players):
            raise self._fail(i, f"seat {seat}: seats are taken in order, 0 .. {self.seats_total - 1}")
        return {"seat": seat, "nickname": str(rec.get("nickname", "")), "handle": str(rec.get("handle") or ""),
                "autopilot": False}

    def _need(self, i: int, status: str) -> None:
        if self.status != status:
            raise self._fail(i, f"only while the game is {_WORDS[status]} (it is {_WORDS[self.status]})")

    def _frame(self, i: int, round_version: int, events: list[Event]) -> None:
        self._frames.append(_Frame(i, round_version))
        self._last_events = events
        if self.frames % self._every == 0:
            self._kept[self.frames] = (self.state, events)

    def state_at(self, n: int) -> tuple[Any, list[Event]]:
        """Frame ``n``'s state and events (the round's as ``resolve`` gave them, the action's as
        ``apply_action`` did; none for frame 0 and for an ended game's last frame)."""
        kept = self._kept.get(n)
        if kept is not None:
            return kept
        start = n - n % self._every
        state, events = self._kept[start]
        if self._cursor is not None and start < self._cursor[0] <= n:
            start, state, events = self._cursor
        for i in range(self._frames[start].entry + 1, self._frames[n].entry + 1):
            state, got = self._step(state, i)
            if got is not None:
                events = got
        if self.records[self._frames[n].entry]["op"] not in FRAME_OPS:
            events = []
        self._cursor = (n, state, events)
        return state, events

    # ------------------------------------------------------------------ answers
    def require_over(self) -> None:
        """NotOver while the game runs (its replay and export wait for its end, A9: the seed)."""
        if self.status != OVER:
            raise not_over()

    def frame(self, n: int, seat: int) -> dict[str, Any]:
        """ReplayFrame's fields (community.proto): frame ``n`` seen by ``seat`` (below 0: the whole
        game), ``view`` a dict as the player API's ``view`` answers (``services.actor_reads``) with
        no deadline, no code, nobody's submissions, pending or standing orders or autopilot log.
        InvalidOrder naming ``frame`` or ``seat`` out of range; NotStarted for a game never started."""
        if self.engine is None or not self._frames:
            raise NotStarted("the game never started: it has no replay", field="game_id")
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= self.frames:
            raise InvalidOrder(f"a frame of this game is 0 .. {self.frames}", field="frame")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat >= self.seats_total:
            raise InvalidOrder(f"a seat of this game is 0 .. {self.seats_total - 1}, or -1 for the whole game",
                               field="seat")
        seat = max(seat, SPECTATOR)
        state, events = self.state_at(n)
        over = self.status == OVER and n == self.frames
        round_ = self.final_round if over else int(state.round)
        if seat == SPECTATOR:
            shown = whole_view(self.engine, state, events)
        else:
            shown = self.engine.view(state, seat, [e for e in events if e.visible_to(seat)])
        if over and self.outcome is not None and shown.get("outcome") is None:
            shown["outcome"] = dict(self.outcome)  # ended by an operator: the engine's game went on
        step = STEP_OVER if over else self.engine.step(state)
        view = {
            "game_id": self.game_id, "game": self.kind, "version": self._frames[n].entry + 1,
            "round_version": self._frames[n].round_version, "status": OVER if over else RUNNING,
            "round": round_, "you": seat, "deadline_unix_ms": 0, "deadline_seconds": self.deadline_s,
            "code": "", "submitted": False, "seats": self.seats_total, "expected": False, "seq": 0,
            "autopilot_played": False, "autopilot_log": [],
            "players": [{**p, "submitted": False, "connected": False, "host": p["seat"] == 0} for p in self.players],
            "step": {**step.to_dict(), "deadline_unix_ms": 0},
            "view": shown,
        }
        return {"game_id": self.game_id, "game": self.kind, "frames": self.frames, "frame": n, "round": round_,
                "seat": seat, "view": view}

    def export(self) -> dict[str, Any]:
        """ExportGameResponse's fields: the format, every record as JSON text, the final state's hash."""
        return {"format": FORMAT, "records": [record_json(r) for r in self.records], "state_hash": self.state_hash}


class ReplayCache:
    """The replays of the finished games asked last, at most ``kept`` (least recently used first out).

    ``get`` reads a game's journal (``read``: the store's ``journal_read``) once and replays it off the
    event loop (a thread: an 8-player game of 100 rounds takes a fraction of a second of CPU); callers
    asking for a game being replayed wait for that one replay."""

    def __init__(self, read: Callable[[str], Awaitable[list[dict[str, Any]]]], kept: int = REPLAYS_KEPT) -> None:
        self.read = read
        self.kept = kept
        self._replays: OrderedDict[str, Replay] = OrderedDict()
        self._loading: dict[str, asyncio.Future[Replay]] = {}

    def __contains__(self, game_id: str) -> bool:
        return game_id in self._replays

    def __len__(self) -> int:
        return len(self._replays)

    async def get(self, game_id: str, live_status: str | None = None) -> Replay:
        """The replay of a finished game; NotOver for one still running (``live_status``: the status of
        the game actor in memory, if any: a running game is refused without reading its journal),
        NotFound for an unknown one."""
        if live_status is not None and live_status != OVER:
            raise not_over()
        replay = self._replays.get(game_id)
        if replay is not None:
            self._replays.move_to_end(game_id)
            return replay
        pending = self._loading.get(game_id)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[Replay] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = fut
        try:
            entries = await self.read(game_id)
            if not entries:
                raise NotFound(f"no game {game_id[:40]!r}", field="game_id")
            replay = await asyncio.to_thread(Replay, entries, game_id)
            replay.require_over()
            self._replays[game_id] = replay
            while len(self._replays) > self.kept:
                self._replays.popitem(last=False)
            fut.set_result(replay)
            return replay
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # (retrieved: nobody else may be waiting)
            raise
        finally:
            del self._loading[game_id]
