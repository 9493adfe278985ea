"""The core of a game actor: its state derived from the journal, the journal write and apply, updates,
keys — what every part (lobby, rounds, steps, reads, notifications, ratings, the end) shares. See
services/game_actor.py; the journal's records are services/journal.py."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Self

from engine import get_game
from engine.base import (
    DEADLINES_KEY,
    TURN,
    WINDOW,
    Event,
    Game,
    Step,
    canonical_json,
)
from engine.errors import (
    GameOver,
    InvalidOrder,
    KeyReused,
    NotFound,
    NotStarted,
)
from services import journal, metrics, tracing
from services.notify.config import WarnPolicy
from services.notify.kinds import Notice

log = logging.getLogger(__name__)

LOBBY, RUNNING, OVER = "lobby", "running", "over"
#: the "seat" of a spectator (community.proto): it receives the updates every seat receives, numbered
#: by their own seqs, and sees what every player knows
SPECTATOR = -1
MAX_UPDATES = 4000  # updates kept in memory for Watch resumption; older ones -> "resync"
SUBMISSIONS_PER_ROUND = 100  # resubmitting is allowed (A16), but not without end: the journal keeps each
ACTIONS_PER_ROUND = 100  # the engine bounds each kind (A53); this bounds them all
TURN_ACTIONS_PER_ROUND = 1000  # turn and window actions of one seat in one round (the journal keeps each)
AUTOPILOT_ACTIONS = 200  # the autopilot's actions at one deadline (or for the autopilot seats) at most
MAX_KEY_LEN = 64
TURN_KEYS_KEPT = 512  # a turn game's idempotency keys kept across turns (the newest; per game)
AUTOLOG_KEPT = 10  # per seat: the latest rounds (turns) the autopilot or standing orders played for it
AUTOLOG_ACTIONS = 50  # per logged turn: the autopilot's actions kept (a turn game)
WAIT_VERSION_S = 2.0  # how long a Watch read waits for an announced version to be applied
ENDED = "ended"  # the outcome's reason when an operator ended the game (the admin door)


@dataclass(frozen=True)
class Retention:
    """How long games stay: a lobby never started expires after ``lobby_ttl_s`` (it ends, reason
    "expired"); a finished game's keys leave Redis ``retention_s`` after its end (its rejoin link shows
    the result until then). From the environment of the process that starts the shards."""

    retention_s: float = 7 * 24 * 3600.0
    lobby_ttl_s: float = 24 * 3600.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Retention:
        import os

        env = os.environ if env is None else env
        return cls(retention_s=float(env.get("ARCHIPELAGO_RETENTION_S") or cls.retention_s),
                   lobby_ttl_s=float(env.get("ARCHIPELAGO_LOBBY_TTL_S") or cls.lobby_ttl_s))


def fingerprint(obj: Any) -> str:
    """A short digest of a request body: a reused idempotency key must come with the same body."""
    return hashlib.sha256(canonical_json(obj)).hexdigest()[:32]


class Journal(Protocol):
    """What a game actor needs of the store (see :class:`services.store.Store`)."""

    async def journal_append_publish(self, game_id: str, entry: dict[str, Any],
                                     notice: dict[str, Any], expected: int) -> None: ...

    async def journal_read(self, game_id: str) -> list[dict[str, Any]]: ...

    async def connected(self, game_id: str, seats: Any) -> set[int]: ...

    async def put_secret(self, secret_hash: str, game_id: str, seat: int) -> None: ...

    async def put_summary(self, game_id: str, summary: dict[str, Any], listed: bool,
                          created_ms: int, live: str = "") -> None: ...

    async def retire(self, game_id: str, *, code: str, secret_hashes: Any, retention_s: float) -> None: ...

    async def notify(self, game_id: str, game: str, notices: Any, *, version: int,
                     at_ms: int) -> tuple[list[int], int]: ...

    async def notify_mark(self, game_id: str) -> int: ...


def wall_ms() -> int:
    return int(time.time() * 1000)


def check_nickname(nickname: str) -> str:
    """A2: 1–24 printable characters."""
    if not isinstance(nickname, str) or not 1 <= len(nickname) <= 24 or not nickname.isprintable() \
            or nickname.strip() == "":
        raise InvalidOrder("a nickname is 1–24 printable characters", rule="A2", field="nickname")
    return nickname


MAX_DEADLINE_S = 7 * 24 * 3600


def check_creation(kind: str, config: Mapping[str, Any], nickname: str, deadline_s: float) -> dict[str, Any]:
    """Validate a game's creation request; returns the engine's normalised config."""
    try:
        engine = get_game(kind)
    except KeyError:
        raise InvalidOrder(f"unknown game kind {kind!r}", field="game") from None
    cfg = engine.normalize_config(config)
    check_nickname(nickname)
    if not 1 <= deadline_s <= MAX_DEADLINE_S:
        raise InvalidOrder(f"a round deadline is 1 s .. 7 days, not {deadline_s:g} s", field="deadline_seconds",
                           rule="A1")
    for step_kind, seconds in dict(cfg.get(DEADLINES_KEY) or {}).items():  # a turn's, a response window's
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 1 <= seconds <= MAX_DEADLINE_S:
            # (an infinite one would break the game at its start: no time is that deadline's)
            raise InvalidOrder(f"a {step_kind} deadline is 1 s .. 7 days, not {str(seconds)[:20]} s",
                               field=f"{DEADLINES_KEY}.{step_kind}", rule="A1")
    return cfg


@dataclass
class Seat:
    seat: int
    nickname: str
    secret_hash: str
    bot: bool = False
    profile: str = ""  # the id of the profile it plays under (community.proto), "" for none
    handle: str = ""  # that profile's handle (public)


@dataclass
class Submission:
    orders: dict[str, Any]
    draft: bool
    key: str


@dataclass
class UpdateRecord:
    version: int
    kind: str
    round: int
    audience: frozenset[int] | None = None  # None: every player
    seat: int = -1
    event_kind: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    chat: dict[str, Any] | None = None
    status: str = ""
    seqs: tuple[int, ...] = ()  # per seat: this update's seq for that seat, 0 when hidden from it
    public_seq: int = 0  # a spectator's seq (SPECTATOR): 0 unless every seat receives this update

    def seq_for(self, seat: int) -> int:
        return self.public_seq if seat == SPECTATOR else self.seqs[seat]

    def to_dict(self, seat: int) -> dict[str, Any]:
        """The update as ``seat`` receives it (``SPECTATOR``: as a spectator does)."""
        d: dict[str, Any] = {"version": self.version, "kind": self.kind, "round": self.round,
                             "seat": self.seat, "seq": self.seq_for(seat)}
        if self.event_kind:
            d["event_kind"] = self.event_kind
        if self.data:
            d["data"] = self.data
        if self.chat:
            d["chat"] = self.chat
        if self.status:
            d["status"] = self.status
        return d



class ActorCore:
    """The state of one game and the journal path every part shares; the parts' methods that others call
    are declared here and implemented by the part."""

    def __init__(self, game_id: str, store: Journal, *, now_ms: Callable[[], int] = wall_ms,
                 on_deadline: Callable[[str, int | None], None] | None = None,
                 retention: Retention | None = None, warn: WarnPolicy | None = None) -> None:
        self.game_id = game_id
        self.store = store
        self.now_ms = now_ms
        self.retention = retention or Retention()
        self.on_deadline = on_deadline or (lambda _g, _d: None)
        self.lock = asyncio.Lock()
        # --- derived from the journal ---
        self.kind = ""
        self.engine: Game | None = None
        self.config: dict[str, Any] = {}
        self.seed = 0
        self.seats_total = 0
        self.deadline_s = 60.0
        self.public = False
        self.speed = ""  # the speed asked at the creation ("fast", "slow"; "" for an explicit deadline only)
        self.quick: dict[str, Any] = {}  # a quick-play lobby's settings (gateway.quickplay); {} otherwise
        self.code = ""
        self.created_ms = 0
        self.started_ms = 0  # when play began (the start entry's time; 0 before): a game's duration
        self.seats: list[Seat] = []
        self.status = LOBBY
        self.state: Any = None
        self.version = 0
        self.round_version = 0
        self.deadline_ms: int | None = None
        self.submissions: dict[int, Submission] = {}
        # idempotency keys of this round: (seat, key) -> (request fingerprint, answer)
        self.keys: dict[tuple[int, str], tuple[str, dict[str, Any]]] = {}
        self.act_count: dict[int, int] = {}
        self.submit_count: dict[int, int] = {}
        self.updates: deque[UpdateRecord] = deque(maxlen=MAX_UPDATES)
        self.seq: list[int] = []  # per seat: the seq of its latest update
        self.public_seq = 0  # a spectator's latest seq: updates every seat received
        self.outcome: dict[str, Any] | None = None
        self.final_round = 0  # the last round played, once the game is over
        self.last_events: list[Event] = []  # the last round's, for views that show them (A85)
        self.act_answer: dict[str, Any] = {}  # the answer of the last action applied (_apply_act)
        # seats the autopilot played in the last closed round (a turn game: since the seat's own last action)
        self.autoplayed: frozenset[int] = frozenset()
        # seat -> what the autopilot / standing orders played for it (GetViewResponse.autopilot_log)
        self.autolog: dict[int, deque[dict[str, Any]]] = {}
        self.standing: dict[int, dict[str, Any]] = {}  # seat -> normalised standing orders (A70–A74)
        # --- the step (engine.base.Step): who may act now; derived from the state at every apply ---
        self.current_step: Step | None = None  # None in the lobby
        self.step_round = 0  # the round the current step belongs to
        self.step_version = 0  # the version at which the current step (and its deadline) opened
        self.turn_count: dict[int, int] = {}  # seat -> its turn and window actions this round
        self.overdue: set[int] = set()  # seats whose turn the autopilot has taken over (deadline passed)
        self.create_fingerprint = ""
        self._applied = asyncio.Event()  # set (and replaced) at every apply
        self.writing = 0  # the version whose journal write is in flight (0: none)
        # --- notifications (services.actor_notify) ---
        self.warn = warn or WarnPolicy()
        self.step_opened_ms = 0  # when the current step (and its deadline) opened
        self.warned_version = -1  # the step_version whose deadline warning was queued
        self.notices_pending: list[Notice] = []  # not queued yet (the outbox was unreachable)
        self.notified: set[str] = set()  # dedup fields queued by this actor (the outbox dedups too)

    # ------------------------------------------------------------------ loading and journaling
    @classmethod
    async def load(cls, game_id: str, store: Journal, **kwargs: Any) -> Self:
        """Rebuild a game from its journal; NotFound if it has none."""
        entries = await store.journal_read(game_id)
        if not entries:
            raise NotFound(f"no game {game_id[:40]!r}", field="game_id")
        actor = cls(game_id, store, **kwargs)
        for entry in entries:
            actor.apply(entry)
        await actor._notify_after_load()
        if actor.status == OVER:  # a shard stopped between the end and the retirement: finish it
            await actor._retire()
        return actor

    async def _commit(self, op: journal.Op) -> None:
        """Journal a record (durable) and tell watchers the new version, then apply it.

        The notice goes out with the entry in one round trip, so a watcher may hear of version V
        before V is applied; ``writing`` names the version in flight meanwhile, and a read of the
        updates waits for it (:meth:`wait_version`) — whether or not the watcher heard its notice."""
        self.writing = self.version + 1
        before = self.status
        try:
            with metrics.JOURNAL.time(), tracing.span("journal.write", game=self.game_id, op=op.OP):
                # Only if the journal ends where this actor's state does: no two writers of one game.
                await self.store.journal_append_publish(self.game_id, op.to_entry(), {"version": self.version + 1},
                                                        expected=self.version)
        except BaseException:
            self.writing = 0
            self._wake_waiters()  # nothing comes: readers waiting for it look again
            raise
        self.writing = 0
        if isinstance(op, journal.Act):  # (journaled: a player's Act, or an automatic trade of standing orders)
            metrics.count_action(op.action)
        elif isinstance(op, journal.Action) and not op.auto:  # a player's turn action: under its game's kind
            metrics.count_action({self.kind: op.action})
        if isinstance(op, journal.Close):
            with metrics.RESOLUTION.time(), tracing.span("engine.resolve", game=self.game_id,
                                                         round=self.state.round):
                self.apply_op(op)
        else:
            self.apply_op(op)
        metrics.count_game(self.kind, op.OP, before, self.status, at_ms=int(op.at or self.now_ms()),
                           created_ms=self.created_ms, started_ms=self.started_ms, outcome=self.outcome)
        await self._notify_entry(self.version)

    def apply(self, entry: Mapping[str, Any]) -> None:
        """Apply one journal entry (as read from the journal) to the in-memory game."""
        self.apply_op(journal.parse(entry))

    def apply_op(self, op: journal.Op) -> None:
        """Apply one journal record to the in-memory game. Never fails for a journaled record."""
        self.version += 1
        self._apply(op)
        self._wake_waiters()

    def _wake_waiters(self) -> None:
        applied, self._applied = self._applied, asyncio.Event()
        applied.set()

    async def wait_version(self, version: int, timeout_s: float = WAIT_VERSION_S) -> None:
        """Return once ``version`` — and any version being written now — is applied (or after
        ``timeout_s``): a watcher told of version V by pub/sub may ask before the shard has applied
        V, since the notice leaves with the journal write; and a watcher that subscribed just after
        a notice left must still get that entry on its first read."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while self.version < max(version, self.writing):
            left = end - loop.time()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(self._applied.wait(), left)
            except TimeoutError:
                return

    def _log_auto(self, seat: int, round_: int, source: str, *, orders: dict[str, Any] | None = None,
                  action: dict[str, Any] | None = None) -> None:
        """Record that the autopilot (or ``seat``'s standing orders) played for a player in ``round_``:
        a round's ``orders``, or one more ``action`` of a turn game's turn (bounded: AUTOLOG_KEPT turns,
        AUTOLOG_ACTIONS actions each). Applied from the journal, so a restarted shard has it too."""
        if not 0 <= seat < len(self.seats) or self.seats[seat].bot:
            return
        log_ = self.autolog.setdefault(seat, deque(maxlen=AUTOLOG_KEPT))
        if action is not None:
            last = log_[-1] if log_ else None
            if last is None or last["round"] != round_ or last["source"] != source:
                last = {"round": round_, "source": source, self.kind: {"actions": []}}
                log_.append(last)
            actions = last[self.kind]["actions"]
            if len(actions) < AUTOLOG_ACTIONS:
                actions.append(action)
        else:
            log_.append({"round": round_, "source": source, self.kind: dict(orders or {})})

    def _push(self, kind: str, *, round_: int | None = None, **kw: Any) -> None:
        if round_ is None:
            round_ = self.state.round if self.state is not None else 0
        audience: frozenset[int] | None = kw.get("audience")
        seqs = []
        for s in range(len(self.seq)):
            if audience is None or s in audience:
                self.seq[s] += 1
                seqs.append(self.seq[s])
            else:
                seqs.append(0)
        public = 0
        chat = kw.get("chat")
        if all(seqs) and not (chat and chat.get("to") is not None):
            # every seat receives it, and it is no chat to one seat (private even when its sender and
            # addressee are every seat): a spectator receives it too (engine.base.Event.is_public)
            self.public_seq += 1
            public = self.public_seq
        self.updates.append(UpdateRecord(version=self.version, kind=kind, round=round_, seqs=tuple(seqs),
                                         public_seq=public, **kw))

    def _remember_key(self, seat: int, key: str, request: str, ack: dict[str, Any]) -> None:
        if key:
            self.keys[(seat, key)] = (request, ack)

    def _push_event(self, ev: Event, round_: int | None = None) -> None:
        if ev.kind == "game_over":
            return  # the "game_over" update that follows the close carries the outcome
        if ev.kind == "chat":  # chat has its own update kind, with the sender's nickname
            sender = int(ev.data["from"])
            chat = {"seat": sender, "nickname": self.seats[sender].nickname, "text": ev.data["text"]}
            if ev.data.get("to") is not None:
                chat["to"] = int(ev.data["to"])
            self._push("chat", round_=round_, seat=sender, chat=chat, audience=ev.audience)
            return
        self._push("event", round_=round_, event_kind=ev.kind, data=dict(ev.data), audience=ev.audience)

    # ------------------------------------------------------------------ playing
    def _engine(self) -> Game:
        if self.engine is None:
            raise NotFound(f"no game {self.game_id[:40]!r}", field="game_id")
        return self.engine

    def _check_key(self, seat: int, key: str, request: str) -> dict[str, Any] | None:
        """The first answer of a retried request (same key, same body), else None."""
        if not isinstance(key, str) or len(key) > MAX_KEY_LEN or not key.isprintable():
            raise InvalidOrder(f"at most {MAX_KEY_LEN} printable characters", field="idempotency_key", rule="A16")
        seen = self.keys.get((seat, key)) if key else None
        if seen is None:
            return None
        if seen[0] != request:
            raise KeyReused("this idempotency key was used this round for a different request",
                            field="idempotency_key", rule="A16")
        return {**seen[1], "replayed": True}

    def _check_playing(self, seat: int) -> Game:
        engine = self._engine()
        if self.status == LOBBY:
            raise NotStarted("the game has not started", rule="A4", field="game_id")
        if self.status == OVER:
            raise GameOver("the game is over", field="game_id", rule=self._over_rule())
        return engine

    def _over_rule(self) -> str:
        """The rule that ends a game of this kind (the engine's ``over_rule``: S7, A67, M3)."""
        return self.engine.over_rule if self.engine is not None else "A67"

    def _open_round(self, at_ms: int) -> None:
        """A new round (a turn-based game: a new turn) and its first step, with the step's deadline
        (a simultaneous round: the game's deadline)."""
        assert self.engine is not None
        self.round_version = self.version
        self.submissions = {}
        if step_is_turn := self.engine.step(self.state).kind in (TURN, WINDOW):
            # a turn game's round is one turn: a retried action must still find its key after the turn
            # moved on (its version is optional), so the newest keys stay, bounded
            self.keys = dict(list(self.keys.items())[-TURN_KEYS_KEPT:])
        else:
            self.keys = {}
        self.act_count = {}
        self.submit_count = {}
        self.turn_count = {}
        step = self.engine.step(self.state)
        self._open_step(step, at_ms)
        self._push("round_opened", data={"deadline_unix_ms": self.deadline_ms})
        self._wake_changed()
        if step_is_turn:
            self._push_step()

    # ------------------------------------------------------------------ implemented by the parts
    if TYPE_CHECKING:  # (each part of GameActor implements some; see services/game_actor.py)
        def _apply(self, op: journal.Op) -> None: ...  # the dispatch table: GameActor._apply
        def _game_over(self, final_round: int) -> bool: ...  # services/actor_end.py
        async def _retire(self) -> None: ...
        def summary(self) -> dict[str, Any]: ...
        async def _publish_summary(self) -> None: ...
        def _holds_game_over(self) -> bool: ...
        async def _record_result(self) -> bool: ...
        async def _notify_entry(self, version: int) -> None: ...
        async def _notify_after_load(self) -> None: ...
        def _wake_changed(self) -> None: ...
        async def _autoplay_bots(self) -> None: ...
        async def _close(self, *, early: bool) -> None: ...
        def _done(self) -> set[int]: ...
        async def _maybe_close_early(self) -> None: ...
        def _open_step(self, step: Step, at_ms: int) -> None: ...
        def _push_step(self) -> None: ...
        async def _step_deadline(self, timed_out: Step) -> None: ...
        def _step_dict(self) -> dict[str, Any]: ...
        def _turn_step(self) -> Step | None: ...
