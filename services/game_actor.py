"""A game actor: owns one game — its lobby, engine state, round deadline and autopilot.

Hard state is the game's journal in Redis; everything in memory is derived from it by
:meth:`GameActor.apply`, which is the only place state changes, both live and when a game reloads
after its shard restarted.  Every mutation follows the same path::

    validate (nothing changes on error) -> journal entry appended to Redis -> apply -> answer

so nothing acknowledged is lost.  Calls may be retried (a shard restarts, a gateway retries):
submissions are idempotent by their idempotency key, creation by game id.

Messages of one game are serialised by the actor's lock.  The clock is injected (``now_ms``) so the
logic can be tested with a fake one; the shard owns the timer that calls :meth:`deadline_passed`.

What is played follows the engine's step (:class:`engine.base.Step`), read again after every entry:

- ``SIMULTANEOUS``: a round of orders — ``submit`` (journal op ``submit``), closed at the deadline
  or early (A17) with the standing orders' actions (``act``) and the autopilot (op ``close``).
- ``TURN`` / ``WINDOW``: actions one at a time — :meth:`action` (op ``action``: seat, action, key,
  request, ``auto`` false, at), refused with NotYourTurn for a seat outside the step.  Each step
  runs on its deadline kind (:func:`engine.base.step_seconds`: a turn the game's deadline, a
  response window an eighth of it, at least 1 s, unless the config's ``deadlines`` say otherwise);
  a new step (another kind, acting seat or deadline kind, or new seats to answer) opens a new
  deadline, a window losing the seats that answered keeps its own.  When it passes, the autopilot
  (``autopilot_action``, from each seat's view) acts for every seat of that step until the step
  changes (op ``action`` with ``auto`` true, at most :data:`AUTOPILOT_ACTIONS`); a seat whose turn
  the autopilot took over gets no new turn deadline in that turn (M25).  Autopilot seats (A4) act
  at once.  Watchers get each action's events and a ``step`` update (kind, players, active,
  deadline, deadline_unix_ms); a new round (turn) also gets ``round_opened``.

``act`` (chat, bank, trades) is allowed whatever the step.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine import get_game
from engine.base import (
    SIMULTANEOUS,
    STEP_OVER,
    TURN,
    WINDOW,
    Core,
    Event,
    Game,
    Step,
    TurnGame,
    canonical_json,
    expected_players,
    rounds_of,
    standing_of,
    step_seconds,
    turns_of,
)
from engine.errors import (
    AlreadyExists,
    Conflict,
    GameError,
    GameOver,
    InvalidOrder,
    KeyReused,
    NotFound,
    NotStarted,
    NotYourTurn,
    PermissionDenied,
    RateLimited,
    StaleVersion,
)
from services import metrics, tracing

log = logging.getLogger(__name__)

LOBBY, RUNNING, OVER = "lobby", "running", "over"
MAX_UPDATES = 4000  # updates kept in memory for Watch resumption; older ones -> "resync"
SUBMISSIONS_PER_ROUND = 100  # resubmitting is allowed (A16), but not without end: the journal keeps each
ACTIONS_PER_ROUND = 100  # the engine bounds each kind (A53); this bounds them all
TURN_ACTIONS_PER_ROUND = 1000  # turn and window actions of one seat in one round (the journal keeps each)
AUTOPILOT_ACTIONS = 200  # the autopilot's actions at one deadline (or for the autopilot seats) at most
MAX_KEY_LEN = 64
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
                          created_ms: int) -> None: ...

    async def retire(self, game_id: str, *, code: str, secret_hashes: Any, retention_s: float) -> None: ...


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
    return cfg


@dataclass
class Seat:
    seat: int
    nickname: str
    secret_hash: str
    bot: bool = False


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

    def to_dict(self, seat: int) -> dict[str, Any]:
        d: dict[str, Any] = {"version": self.version, "kind": self.kind, "round": self.round,
                             "seat": self.seat, "seq": self.seqs[seat]}
        if self.event_kind:
            d["event_kind"] = self.event_kind
        if self.data:
            d["data"] = self.data
        if self.chat:
            d["chat"] = self.chat
        if self.status:
            d["status"] = self.status
        return d


class GameActor:
    """One game. Not a Ray actor: a plain object hosted (thousands at a time) by a GameShard."""

    def __init__(self, game_id: str, store: Journal, *, now_ms: Callable[[], int] = wall_ms,
                 on_deadline: Callable[[str, int | None], None] | None = None,
                 retention: Retention | None = None) -> None:
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
        self.code = ""
        self.created_ms = 0
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
        self.outcome: dict[str, Any] | None = None
        self.final_round = 0  # the last round played, once the game is over
        self.last_events: list[Event] = []  # the last round's, for views that show them (A85)
        self.act_answer: dict[str, Any] = {}  # the answer of the last action applied (_apply_act)
        self.autoplayed: frozenset[int] = frozenset()  # seats the autopilot played in the last closed round
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

    # ------------------------------------------------------------------ loading and journaling
    @classmethod
    async def load(cls, game_id: str, store: Journal, **kwargs: Any) -> GameActor:
        """Rebuild a game from its journal; NotFound if it has none."""
        entries = await store.journal_read(game_id)
        if not entries:
            raise NotFound(f"no game {game_id}", field="game_id")
        actor = cls(game_id, store, **kwargs)
        for entry in entries:
            actor.apply(entry)
        if actor.status == OVER:  # a shard stopped between the end and the retirement: finish it
            await actor._retire()
        return actor

    async def _commit(self, entry: dict[str, Any]) -> None:
        """Journal an entry (durable) and tell watchers the new version, then apply it.

        The notice goes out with the entry in one round trip, so a watcher may hear of version V
        before V is applied; ``writing`` names the version in flight meanwhile, and a read of the
        updates waits for it (:meth:`wait_version`) — whether or not the watcher heard its notice."""
        self.writing = self.version + 1
        try:
            with metrics.JOURNAL.time(), tracing.span("journal.write", game=self.game_id, op=entry["op"]):
                # Only if the journal ends where this actor's state does: no two writers of one game.
                await self.store.journal_append_publish(self.game_id, entry, {"version": self.version + 1},
                                                        expected=self.version)
        except BaseException:
            self.writing = 0
            self._wake_waiters()  # nothing comes: readers waiting for it look again
            raise
        self.writing = 0
        if entry["op"] == "act":  # (journaled: a player's Act, or an automatic trade of standing orders)
            metrics.count_action(entry["action"])
        elif entry["op"] == "action" and not entry.get("auto"):  # a player's turn action: under its game's kind
            metrics.count_action({self.kind: entry["action"]})
        if entry["op"] == "close":
            with metrics.RESOLUTION.time(), tracing.span("engine.resolve", game=self.game_id,
                                                         round=self.state.round):
                self.apply(entry)
        else:
            self.apply(entry)

    def apply(self, entry: Mapping[str, Any]) -> None:
        """Apply one journal entry to the in-memory game. Never fails for a journaled entry."""
        op = entry["op"]
        self.version += 1
        getattr(self, f"_apply_{op}")(entry)
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
        self.updates.append(UpdateRecord(version=self.version, kind=kind, round=round_, seqs=tuple(seqs), **kw))

    def _apply_create(self, e: Mapping[str, Any]) -> None:
        self.kind = e["kind"]
        self.engine = get_game(self.kind)
        self.config = dict(e["config"])
        self.seed = int(e["seed"])
        self.seats_total = int(self.config["players"])
        self.deadline_s = float(e["deadline_s"])
        self.public = bool(e["public"])
        self.code = e["code"]
        self.created_ms = int(e["at"])
        self.create_fingerprint = str(e.get("request", ""))
        self.seats = [Seat(0, e["nickname"], e["secret_hash"])]
        self.seq = [0] * self.seats_total
        self._push("joined", seat=0)
        self.deadline_ms = self.created_ms + int(self.retention.lobby_ttl_s * 1000)  # the lobby's expiry
        self.on_deadline(self.game_id, self.deadline_ms)

    def _apply_join(self, e: Mapping[str, Any]) -> None:
        self.seats.append(Seat(int(e["seat"]), e["nickname"], e["secret_hash"]))
        if "config" in e:  # the joiner chose for its seat (its deck)
            self.config = dict(e["config"])
        self._push("joined", seat=int(e["seat"]))

    def _apply_start(self, e: Mapping[str, Any]) -> None:
        assert self.engine is not None
        for i in range(len(self.seats), self.seats_total):
            self.seats.append(Seat(i, f"autopilot-{i + 1}", "", bot=True))
        self.state = self.engine.new_game(self.config, self.seed)
        standing = standing_of(self.engine)
        for s in self.seats:
            if s.bot:  # autopilot seats play with the game's sensible default (A4, A70)
                self.standing[s.seat] = standing.check_standing(
                    self.state, s.seat, standing.default_standing(self.state, s.seat))
        self.status = RUNNING
        self._push("started", status=RUNNING)
        self._open_round(int(e["at"]))

    def _remember_key(self, seat: int, key: str, request: str, ack: dict[str, Any]) -> None:
        if key:
            self.keys[(seat, key)] = (request, ack)

    def _apply_submit(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        self.submissions[seat] = Submission(dict(e["orders"]), bool(e["draft"]), e["key"])
        self.submit_count[seat] = self.submit_count.get(seat, 0) + 1
        ack = {"version": self.version, "round": self.state.round, "submitted": not e["draft"]}
        self._remember_key(seat, e["key"], str(e.get("request", "")), ack)
        self._push("submitted", seat=seat, data={"done": not e["draft"]})

    def _apply_standing(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        self.standing[seat] = dict(e["standing"])
        self.act_count[seat] = self.act_count.get(seat, 0) + 1
        self._remember_key(seat, e["key"], str(e.get("request", "")), {"version": self.version})

    def _apply_act(self, e: Mapping[str, Any]) -> None:
        assert self.engine is not None
        seat = int(e["seat"])
        self.state, events = self.engine.act(self.state, seat, e["action"])
        self.act_count[seat] = self.act_count.get(seat, 0) + 1
        # the answer: an offer's id (A53) is in it
        self.act_answer = {"version": self.version,
                           "offer_id": next((str(ev.data["id"]) for ev in events if ev.kind == "offer"), "")}
        self._remember_key(seat, e["key"], str(e.get("request", "")), self.act_answer)
        for ev in events:
            self._push_event(ev)

    def _apply_close(self, e: Mapping[str, Any]) -> None:
        assert self.engine is not None
        orders = {int(s): o for s, o in e["orders"].items()}
        closed = self.state.round
        self.autoplayed = frozenset(s for s in orders if s not in self._done())
        self.state, events = rounds_of(self.engine).resolve(self.state, orders)
        self.last_events = events
        standing = standing_of(self.engine)
        for seat, used in orders.items():  # A73: builds the round used leave the standing queue
            if self.standing.get(seat):
                self.standing[seat] = standing.standing_after_round(self.standing[seat], used)
        self._push("round_closed", round_=closed, data={"early": bool(e.get("early"))})
        for ev in events:
            self._push_event(ev, closed)
        if not self._game_over(closed):
            self._open_round(int(e["at"]))

    def _game_over(self, final_round: int) -> bool:
        """If the engine's game has ended: status OVER, the outcome, no deadline, ``game_over``."""
        assert self.engine is not None
        outcome = self.engine.outcome(self.state)
        if outcome is None:
            return False
        self.status = OVER
        self.final_round = final_round
        self.outcome = outcome.to_dict()
        self.deadline_ms = None
        self.current_step = STEP_OVER
        self.submissions = {}
        self.keys = {}
        self._push("game_over", round_=final_round, status=OVER, data={"outcome": self.outcome})
        self.on_deadline(self.game_id, None)
        return True

    def _apply_action(self, e: Mapping[str, Any]) -> None:
        """A turn or window action (:meth:`action`, or the autopilot's: ``auto``), applied by the
        engine; then the step is read again: the game may be over, a new round (turn) may open, a
        new step opens a new deadline, and watchers hear of the step."""
        assert self.engine is not None and self.current_step is not None
        seat = int(e["seat"])
        before = self.current_step
        self.state, events = turns_of(self.engine).apply_action(self.state, seat, e["action"])
        self.turn_count[seat] = self.turn_count.get(seat, 0) + 1
        if e.get("auto") and before.kind == TURN and before.active == seat:
            self.overdue.add(seat)  # M25: the autopilot finishes this seat's turn, windows and all
        for ev in events:
            self._push_event(ev)
        at = int(e["at"])
        if not self._game_over(self.state.round):
            step = self.engine.step(self.state)
            if step.active != before.active:
                self.overdue = set()  # another seat's turn
            if self.state.round != self.step_round:
                self._open_round(at)  # (with its step update when the new round is a turn)
                if step.kind == SIMULTANEOUS:
                    self._push_step()  # turns gave way to a round of orders
            else:
                if self._continues(before, step):
                    self.current_step = step
                else:
                    self._open_step(step, at)
                    self.on_deadline(self.game_id, self.deadline_ms)
                self._push_step()  # after every action: whose turn it is now
        # (after a new round's reset: a retry of the action that ended the round is still a replay)
        self._remember_key(seat, e["key"], str(e.get("request", "")), {"version": self.version})

    @staticmethod
    def _continues(before: Step, step: Step) -> bool:
        """``step`` is ``before`` going on (same kind, acting seat and deadline kind; in a window,
        fewer seats left to answer): its deadline stands. Anything else is a new step."""
        return (step.kind == before.kind and step.active == before.active and step.deadline == before.deadline
                and set(step.players) <= set(before.players))

    def _open_step(self, step: Step, at_ms: int) -> None:
        """A new step: its deadline from its kind (:func:`engine.base.step_seconds`); at once for a
        turn the autopilot has taken over."""
        self.current_step = step
        self.step_round = self.state.round
        self.step_version = self.version
        if step.kind == TURN and step.active in self.overdue:
            self.deadline_ms = at_ms
        else:
            self.deadline_ms = at_ms + int(step_seconds(self.config, self.deadline_s, step.deadline) * 1000)

    def _push_step(self) -> None:
        """Tell watchers the step: its kind, players, acting seat, deadline kind and deadline."""
        assert self.current_step is not None
        self._push("step", data=self._step_dict())

    def _step_dict(self) -> dict[str, Any]:
        step = self.current_step or STEP_OVER
        return {**step.to_dict(), "deadline_unix_ms": self.deadline_ms or 0}

    def _apply_expire(self, e: Mapping[str, Any]) -> None:
        """A lobby nobody started in time ends with no winner (reason "expired")."""
        self.status = OVER
        self.outcome = {"winners": [], "draw": False, "reason": "expired", "scores": []}
        self.deadline_ms = None
        self._push("game_over", round_=0, status=OVER, data={"outcome": self.outcome})
        self.on_deadline(self.game_id, None)

    def _apply_end(self, e: Mapping[str, Any]) -> None:
        """An operator ended the game (the admin door, :meth:`end`): no winner, reason "ended". The
        operator's own words are not journaled: no player ever sees them."""
        self.status = OVER
        self.final_round = self.state.round if self.state is not None else 0
        self.outcome = {"winners": [], "draw": False, "reason": ENDED, "scores": []}
        self.deadline_ms = None
        self.current_step = STEP_OVER
        self.submissions = {}
        self.keys = {}
        self._push("game_over", round_=self.final_round, status=OVER, data={"outcome": self.outcome})
        self.on_deadline(self.game_id, None)

    async def _retire(self) -> None:
        """The game is over: its keys leave Redis after the retention time (idempotent)."""
        await self._publish_summary()  # the public summary says so (ListGames, Rejoin, operators)
        await self.store.retire(self.game_id, code=self.code, secret_hashes=[s.secret_hash for s in self.seats],
                                retention_s=self.retention.retention_s)

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

    def _open_round(self, at_ms: int) -> None:
        """A new round (a turn-based game: a new turn) and its first step, with the step's deadline
        (a simultaneous round: the game's deadline)."""
        assert self.engine is not None
        self.round_version = self.version
        self.submissions = {}
        self.keys = {}
        self.act_count = {}
        self.submit_count = {}
        self.turn_count = {}
        step = self.engine.step(self.state)
        self._open_step(step, at_ms)
        self._push("round_opened", data={"deadline_unix_ms": self.deadline_ms})
        self.on_deadline(self.game_id, self.deadline_ms)
        if step.kind in (TURN, WINDOW):
            self._push_step()

    # ------------------------------------------------------------------ lobby
    async def create(self, *, kind: str, config: Mapping[str, Any], nickname: str, secret_hash: str,
                     public: bool, deadline_s: float, code: str, request: str = "") -> dict[str, Any]:
        """Create the game. Idempotent by game id: a retried create (same ``request`` fingerprint)
        finds it journaled and finishes the rest again; a different request under the same id is
        :class:`KeyReused`."""
        async with self.lock:
            if self.version:
                if request != self.create_fingerprint or secret_hash != self.seats[0].secret_hash:
                    raise KeyReused("this request id already created another game", field="request_id")
            else:
                cfg = check_creation(kind, config, nickname, deadline_s)
                entry = {"op": "create", "kind": kind, "config": cfg, "seed": secrets.randbits(128),
                         "nickname": nickname, "secret_hash": secret_hash, "public": public,
                         "deadline_s": deadline_s, "code": code, "at": self.now_ms(), "request": request}
                await self._commit(entry)
            await self.store.put_secret(self.seats[0].secret_hash, self.game_id, 0)
            await self._publish_summary()
            return self.summary()

    async def join(self, nickname: str, secret_hash: str, options: Mapping[str, Any] | None = None
                   ) -> dict[str, Any]:
        """Take a seat. Idempotent by secret: a retried join gets the seat the first one took.
        ``options`` (``{kind: seat options}``, JoinGameRequest.options) are the joiner's own choices
        for its seat, checked by the engine's ``seat_config`` and journaled with the join."""
        async with self.lock:
            again = next((s for s in self.seats if s.secret_hash == secret_hash and not s.bot), None)
            if again is not None:  # a retried join (same request id): the seat it took
                if again.nickname != nickname:
                    raise KeyReused("this request id already joined with another nickname", field="request_id")
                await self.store.put_secret(secret_hash, self.game_id, again.seat)
                return {"game_id": self.game_id, "seat": again.seat, "game": self.kind}
            check_nickname(nickname)
            if self.status != LOBBY:
                raise Conflict("the game has already started", field="code", rule="A4")
            if len(self.seats) >= self.seats_total:
                raise Conflict("the game is full", field="code", rule="A4")
            if any(s.nickname == nickname for s in self.seats):
                raise AlreadyExists(f"nickname {nickname!r} is taken in this game", field="nickname", rule="A2")
            seat = len(self.seats)
            entry: dict[str, Any] = {"op": "join", "seat": seat, "nickname": nickname,
                                     "secret_hash": secret_hash, "at": self.now_ms()}
            if options:
                entry["config"] = self._seat_config(seat, options)
            await self._commit(entry)
            await self.store.put_secret(secret_hash, self.game_id, seat)
            await self._publish_summary()
            return {"game_id": self.game_id, "seat": seat, "game": self.kind}

    def _seat_config(self, seat: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """The game's config with a joiner's seat options (``{kind: options}``) applied."""
        if len(options) != 1 or self.kind not in options:
            raise InvalidOrder(f"this is a {self.kind} game: send {self.kind} options, or none", field="options")
        seating = getattr(self._engine(), "seat_config", None)
        if seating is None:
            raise InvalidOrder(f"{self.kind} has no seat options", field="options")
        config: dict[str, Any] = seating(self.config, seat, options[self.kind])
        return config

    async def start(self, seat: int, fill_with_autopilot: bool) -> dict[str, Any]:
        async with self.lock:
            if seat != 0:
                raise PermissionDenied("only the host may start the game", rule="A4", field="authorization")
            if self.status != LOBBY:  # a retried start (a lost reply): the same summary, nothing changes
                return self.summary()
            if len(self.seats) < self.seats_total and not fill_with_autopilot:
                raise Conflict(f"{len(self.seats)} of {self.seats_total} seats are filled",
                               field="fill_with_autopilot", rule="A4")
            await self._commit({"op": "start", "fill": fill_with_autopilot, "at": self.now_ms()})
            await self._autoplay_bots()  # a turn-based game whose first turn is an autopilot seat's
            await self._publish_summary()
            if self.status == OVER:
                await self._retire()
            return self.summary()

    def summary(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "game": self.kind, "code": self.code,
                "seats": self.seats_total, "taken": len(self.seats),  # players and autopilot seats
                "status": self.status, "deadline_seconds": self.deadline_s,
                "host": self.seats[0].nickname if self.seats else "", "public": self.public}

    async def _publish_summary(self) -> None:
        listed = self.public and self.status == LOBBY and len(self.seats) < self.seats_total
        await self.store.put_summary(self.game_id, self.summary(), listed, self.created_ms)

    # ------------------------------------------------------------------ playing
    def _engine(self) -> Game:
        if self.engine is None:
            raise NotFound(f"no game {self.game_id}", field="game_id")
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
        return str(getattr(self.engine, "over_rule", "A67"))

    async def submit(self, seat: int, orders: dict[str, Any], *, version: int, key: str = "",
                     draft: bool = False) -> dict[str, Any]:
        """Validate, journal and apply a player's orders for the current round (A16, A20)."""
        async with self.lock:
            request = fingerprint({"orders": orders, "draft": bool(draft)})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                if not draft:  # (the first try may have been journaled by a shard that died before closing)
                    await self._maybe_close_early()
                return replayed
            engine = self._check_playing(seat)
            if version < self.round_version:
                raise StaleVersion(f"version {version} is older than this round, which opened at version "
                                   f"{self.round_version}; fetch the view and resubmit", field="version",
                                   rule="A16")
            if version > self.version:
                raise InvalidOrder(f"version {version} is newer than the game's version {self.version}",
                                   field="version", rule="A16")
            if self.submit_count.get(seat, 0) >= SUBMISSIONS_PER_ROUND:
                raise RateLimited(f"at most {SUBMISSIONS_PER_ROUND} submissions per round", rule="A16",
                                  field="orders")
            if engine.step(self.state).kind != SIMULTANEOUS:
                raise NotYourTurn("this step is a turn, not a round of orders: send an action", field="orders",
                                  rule="A16")
            engine.validate(self.state, seat, orders)  # names its own rule for "not your turn"
            if seat not in expected_players(engine, self.state):
                raise NotYourTurn("this player is not expected to act now", field="orders", rule="A16")
            await self._commit({"op": "submit", "seat": seat, "round": self.state.round, "orders": orders,
                                "draft": bool(draft), "key": key, "request": request, "at": self.now_ms()})
            ack = {"version": self.version, "round": self.state.round, "submitted": not draft,
                   "replayed": False}
            if not draft:
                await self._maybe_close_early()
            return ack

    async def set_standing(self, seat: int, standing: dict[str, Any], *, key: str = "") -> dict[str, Any]:
        """Replace the player's standing orders (A70–A74): checked by the engine against the state
        as the player knows it, journaled, applied."""
        async with self.lock:
            request = fingerprint({"standing": standing})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                return replayed
            engine = self._check_playing(seat)
            if self.act_count.get(seat, 0) >= ACTIONS_PER_ROUND:
                raise RateLimited(f"at most {ACTIONS_PER_ROUND} changes and actions per round", rule="A70",
                                  field="standing")
            normalised = standing_of(engine).check_standing(self.state, seat, standing)
            await self._commit({"op": "standing", "seat": seat, "standing": normalised, "key": key,
                                "request": request, "at": self.now_ms()})
            return {"version": self.version, "replayed": False}

    async def act(self, seat: int, action: dict[str, Any], *, key: str = "") -> dict[str, Any]:
        """An immediate action (chat, bank, trade): checked by the engine, journaled, applied."""
        async with self.lock:
            request = fingerprint({"action": action})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                return replayed
            engine = self._check_playing(seat)
            if self.act_count.get(seat, 0) >= ACTIONS_PER_ROUND:
                raise RateLimited(f"at most {ACTIONS_PER_ROUND} actions per round", rule="A53", field="action")
            engine.act(self.state, seat, action)  # validates; the result is recomputed by apply
            await self._commit({"op": "act", "seat": seat, "action": action, "key": key, "request": request,
                                "at": self.now_ms()})
            return {**self.act_answer, "replayed": False}  # (what apply made of it)

    async def action(self, seat: int, action: dict[str, Any], *, key: str = "", version: int | None = None,
                     kind: str = "") -> dict[str, Any]:
        """A turn or window action (a ``TURN`` / ``WINDOW`` step; a pass is an action too): checked
        by the engine (``apply_action``, which names its own rule), journaled as ``action`` before
        the answer, applied; then the autopilot seats in the new step act. Idempotent by ``key``
        like :meth:`submit`; ``version``, when given, is the version the player saw: older than the
        current step is :class:`StaleVersion`."""
        async with self.lock:
            request = fingerprint({"turn_action": action})
            replayed = self._check_key(seat, key, request)
            if replayed is not None:
                return replayed
            engine = self._check_playing(seat)
            if kind and kind != self.kind:
                raise InvalidOrder(f"this is a {self.kind} game: send {self.kind} actions", field="action")
            step = engine.step(self.state)
            if step.kind not in (TURN, WINDOW):
                raise NotYourTurn("no turn is open: this round is played with orders (submit them)",
                                  field="action", rule="A16")
            if version is not None and not self.step_version <= version <= self.version:
                raise StaleVersion(f"version {version} is not of this step, which opened at version "
                                   f"{self.step_version}; fetch the view and act again", field="version",
                                   rule="A16")
            if self.turn_count.get(seat, 0) >= TURN_ACTIONS_PER_ROUND:
                raise RateLimited(f"at most {TURN_ACTIONS_PER_ROUND} actions per round", rule="A16",
                                  field="action")
            turns_of(engine).apply_action(self.state, seat, action)  # validates; apply recomputes it
            if seat not in step.players:
                raise NotYourTurn("this player may not act now", field="action", rule="A16")
            await self._commit({"op": "action", "seat": seat, "action": action, "key": key, "request": request,
                                "auto": False, "at": self.now_ms()})
            ack = {"version": self.version, "replayed": False}
            await self._autoplay_bots()
            if self.status == OVER:
                await self._retire()
            return ack

    def _turn_step(self) -> Step | None:
        """The current step if the game is running a turn or a window, else None."""
        if self.status != RUNNING or self.engine is None:
            return None
        step = self.engine.step(self.state)
        return step if step.kind in (TURN, WINDOW) else None

    def _autopilot_action(self, turns: TurnGame, seat: int) -> dict[str, Any] | None:
        """The autopilot's action for ``seat`` from its view (M53), if the engine accepts it; else
        its first legal action; None when it has none."""
        with metrics.AUTOPILOT.time():
            view = turns.view(self.state, seat)
            proposals = [turns.autopilot_action(view)]
        for action in proposals + turns.legal_actions(view)[:1]:
            if not action:
                continue
            try:
                turns.apply_action(self.state, seat, action)
                return action
            except GameError:
                log.exception("autopilot action %r of seat %d refused in %s", action, seat, self.game_id)
        return None

    async def _autoplay(self, seats: Callable[[Step], list[int]]) -> int:
        """Autopilot actions, each journaled as an ``action`` with ``auto``, one at a time, for the
        first seat of ``seats(step)`` that can act, until none can or :data:`AUTOPILOT_ACTIONS`;
        returns how many."""
        done = 0
        while done < AUTOPILOT_ACTIONS and (step := self._turn_step()) is not None:
            turns = turns_of(self._engine())
            for seat in seats(step):
                action = self._autopilot_action(turns, seat)
                if action is not None:
                    await self._commit({"op": "action", "seat": seat, "action": action, "key": "", "request": "",
                                        "auto": True, "at": self.now_ms()})
                    done += 1
                    break
            else:
                break
        return done

    async def _autoplay_bots(self) -> None:
        """The autopilot seats (A4) of a turn or window step act at once."""
        await self._autoplay(lambda step: [s for s in step.players if self.seats[s].bot])

    async def _step_deadline(self, timed_out: Step) -> None:
        """A turn's or window's deadline passed (M25): the autopilot acts for every seat of that
        step until the step changes (a seat that lets a window pass, passes), then the autopilot
        seats of the new step act."""
        round_ = self.state.round

        def late(step: Step) -> list[int]:
            return list(step.players) if self.state.round == round_ and self._continues(timed_out, step) else []

        await self._autoplay(late)
        await self._autoplay_bots()
        if self.status == OVER:
            await self._retire()
            return
        step = self._turn_step()
        if step is not None and self.state.round == round_ and self._continues(timed_out, step):
            # the autopilot could not end the step: try again one step length later (not journaled;
            # a reload fires at once)
            log.error("game %s: the autopilot did not end the %s step of seat(s) %s", self.game_id, step.kind,
                      list(step.players))
            self.deadline_ms = self.now_ms() + int(step_seconds(self.config, self.deadline_s, step.deadline) * 1000)
            self.on_deadline(self.game_id, self.deadline_ms)

    def _humans_expected(self) -> list[int]:
        engine = self._engine()
        return [s for s in expected_players(engine, self.state) if not self.seats[s].bot]

    async def _maybe_close_early(self) -> None:
        """A17: close once every connected expected player is done; with nobody connected, wait.
        (A turn or window ends by the actions themselves.)"""
        if self.status != RUNNING or self._engine().step(self.state).kind != SIMULTANEOUS:
            return
        humans = self._humans_expected()
        connected = await self.store.connected(self.game_id, humans)
        if not connected:
            return
        if connected <= self._done():
            await self._close(early=True)

    def _done(self) -> set[int]:
        """The seats that submitted "done" (not a draft) this round."""
        return {s for s, sub in self.submissions.items() if not sub.draft}

    async def presence_changed(self) -> None:
        async with self.lock:
            await self._maybe_close_early()
            if self._turn_step() is not None:  # (a reloaded game whose autopilot seats had not acted yet)
                await self._autoplay_bots()
                if self.status == OVER:
                    await self._retire()

    async def deadline_passed(self) -> bool:
        """Called by the shard's timer; closes the round (or expires the lobby) if its deadline passed."""
        async with self.lock:
            if self.status == OVER or self.deadline_ms is None or self.now_ms() < self.deadline_ms:
                return False
            if self.status == LOBBY:
                await self._commit({"op": "expire", "at": self.now_ms()})
                await self._retire()
                return True
            step = self._turn_step()
            if step is not None:
                await self._step_deadline(step)
                return True
            await self._close(early=False)
            return True

    async def end(self, reason: str = "") -> dict[str, Any]:
        """An operator ends the game now (the admin door), in its lobby or running: journaled as
        ``end`` before the answer, applied (status OVER, no winner, reason "ended", the deadline
        cleared, ``game_over`` to every player, whose streams then end), then retired like any
        finished game. Idempotent: a game already over answers its outcome again (``ended`` False).
        ``reason``, the operator's words, goes to the log and the answer only."""
        async with self.lock:
            self._engine()  # (NotFound for a game not created)
            ended = self.status != OVER
            if ended:
                await self._commit({"op": "end", "at": self.now_ms()})
                log.info("game %s ended by an operator: %r", self.game_id, reason[:200])
                await self._retire()
            return {"game_id": self.game_id, "ended": ended, "status": self.status, "round": self.final_round,
                    "version": self.version, "outcome": self.outcome}

    async def _standing_actions(self, engine: Core) -> None:
        """A74: the automatic trades of players who did not submit, each journaled as an action."""
        orders = standing_of(engine)
        for seat in expected_players(engine, self.state):
            standing = self.standing.get(seat)
            if not standing or seat in self.submissions:
                continue
            for action in orders.standing_actions(engine.view(self.state, seat), standing):
                try:
                    engine.act(self.state, seat, action)
                except GameError as exc:  # e.g. the offer was taken meanwhile: skip it
                    log.info("standing action of seat %d in %s skipped: %s", seat, self.game_id, exc)
                    continue
                await self._commit({"op": "act", "seat": seat, "action": action, "key": "", "request": "",
                                    "at": self.now_ms()})

    async def _close(self, *, early: bool) -> None:
        """Close the round: submitted orders stand, completed by the standing orders for units
        without one; the standing orders play everyone else (A70, S9)."""
        engine = rounds_of(self._engine())
        standing_orders = standing_of(engine)
        await self._standing_actions(engine)
        orders: dict[str, Any] = {}
        for seat in expected_players(engine, self.state):
            sub = self.submissions.get(seat)
            standing = self.standing.get(seat) or {}
            if sub is not None and not standing:
                orders[str(seat)] = sub.orders
                continue
            with metrics.AUTOPILOT.time():
                view = engine.view(self.state, seat)
                proposal = (standing_orders.complete_orders(view, standing, sub.orders) if sub is not None
                            else standing_orders.autopilot(view, standing or None))
            try:
                engine.validate(self.state, seat, proposal)
            except GameError:
                log.exception("autopilot produced invalid orders in %s; seat %d plays its own or nothing",
                              self.game_id, seat)
                proposal = sub.orders if sub is not None else {}
            orders[str(seat)] = proposal
        await self._commit({"op": "close", "round": self.state.round, "orders": orders, "early": early,
                            "at": self.now_ms()})
        metrics.ROUNDS_CLOSED.labels("early" if early else "deadline").inc()
        if self.status == OVER:
            await self._retire()

    # ------------------------------------------------------------------ reading
    async def view(self, seat: int) -> dict[str, Any]:
        engine = self._engine()
        connected = await self.store.connected(self.game_id, range(len(self.seats)))
        done = self._done()
        out: dict[str, Any] = {
            "game_id": self.game_id, "game": self.kind, "version": self.version,
            "round_version": self.round_version, "status": self.status,
            "round": self.final_round if self.status == OVER else self.state.round if self.state is not None else 0,
            "you": seat,
            "deadline_unix_ms": self.deadline_ms or 0, "deadline_seconds": self.deadline_s,
            "code": self.code, "submitted": seat in done, "seats": self.seats_total,
            "expected": self.status == RUNNING and seat in expected_players(engine, self.state)
            and seat not in done,
            "seq": self.seq[seat] if 0 <= seat < len(self.seq) else 0,
            "autopilot_played": seat in self.autoplayed,
            "players": [{"seat": s.seat, "nickname": s.nickname, "submitted": s.seat in done,
                         "connected": s.seat in connected, "host": s.seat == 0, "autopilot": s.bot}
                        for s in self.seats],
        }
        if self.state is not None:
            out["step"] = self._step_dict()  # who may act now: kind, players, active, deadline (+ its time)
            out["view"] = engine.view(self.state, seat, self.last_events)
            if self.status == OVER and self.outcome is not None and out["view"].get("outcome") is None:
                out["view"]["outcome"] = dict(self.outcome)  # ended by an operator: the engine's game went on
        sub = self.submissions.get(seat)
        if sub is not None:
            out["pending"] = sub.orders
        if self.standing.get(seat):
            out["standing"] = self.standing[seat]
        return out

    def updates_since(self, seat: int, after_seq: int) -> list[dict[str, Any]]:
        """``seat``'s updates with seq > ``after_seq``, in order; a "resync" first if some of them are
        no longer kept."""
        if not 0 <= seat < len(self.seq) or after_seq >= self.seq[seat]:
            return []
        tail: list[dict[str, Any]] = []
        for u in reversed(self.updates):  # newest first: a live stream asks for the last few
            s = u.seqs[seat]
            if s:
                if s <= after_seq:
                    break
                tail.append(u.to_dict(seat))
        tail.reverse()
        first = tail[0]["seq"] if tail else self.seq[seat] + 1
        if after_seq < first - 1:  # some are no longer kept
            tail.insert(0, {"version": self.version, "kind": "resync", "round": 0, "seat": -1, "seq": first - 1})
        return tail

    def whoami(self, seat: int) -> dict[str, Any]:
        if not 0 <= seat < len(self.seats):
            raise NotFound("no such seat", field="seat")
        s = self.seats[seat]
        return {"game_id": self.game_id, "seat": seat, "nickname": s.nickname, "game": self.kind,
                "code": self.code, "host": seat == 0, "status": self.status}

    # ------------------------------------------------------------------ for operators (the admin door)
    # Public facts only — what every player of the game may know (the summary, the players' list of
    # the views, the outcome) — never a secret's hash, a fleet, a unit or anything else of the engine's
    # state.
    def brief(self) -> dict[str, Any]:
        """One line of a shard's listing."""
        round_ = self.final_round if self.status == OVER else self.state.round if self.state is not None else 0
        return {"game_id": self.game_id, "game": self.kind, "status": self.status, "round": round_,
                "deadline_unix_ms": self.deadline_ms or 0, "journal_length": self.version,
                "players": sum(1 for s in self.seats if not s.bot), "autopilot": sum(1 for s in self.seats if s.bot),
                "seats": self.seats_total}

    async def inspect(self) -> dict[str, Any]:
        """The game as an operator sees it: its summary, where it stands, its players."""
        self._engine()
        connected = await self.store.connected(self.game_id, range(len(self.seats)))
        now = self.now_ms()
        return {**self.brief(), "summary": self.summary(), "version": self.version,
                "round_version": self.round_version, "created_unix_ms": self.created_ms,
                "time_left_ms": max(0, self.deadline_ms - now) if self.deadline_ms else 0,
                "outcome": self.outcome,
                "players": [{"seat": s.seat, "nickname": s.nickname, "host": s.seat == 0,
                             "connected": s.seat in connected, "autopilot": s.bot,
                             "submitted": s.seat in self.submissions and not self.submissions[s.seat].draft,
                             "draft": s.seat in self.submissions and self.submissions[s.seat].draft}
                            for s in self.seats]}


__all__ = ["LOBBY", "OVER", "RUNNING", "GameActor", "Journal"]
