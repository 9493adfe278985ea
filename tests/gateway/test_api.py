"""The player API on a real redis-server, with a shard's logic in-process (no Ray), so that faults
can be placed exactly: a notice that outruns its entry, a stream cancelled at each step of its
set-up, a reply lost after the shard acted.  Each test reproduces one defect of the player-API issue
deterministically (no sleeps, no luck)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from engine.errors import KeyReused, Unavailable
from gateway import errors
from gateway.api import ApiConfig, PlayerAPI
from services.cluster import RedisProcess
from services.errors import error_dict
from services.shard import ShardCore
from services.shard_api import ShardApi, typed
from services.store import Store

WAIT_S = 20.0


def watch_gauges() -> tuple[float | None, float | None]:
    """The gateway's Watch streams (api.watch called directly: the "mcp" door) and connected players."""
    return (REGISTRY.get_sample_value("archipelago_watch_streams", {"door": "mcp"}),
            REGISTRY.get_sample_value("archipelago_connected_players"))


class GatedStore(Store):
    """A Store whose chosen methods stop at a gate (after doing their work, for the journal)."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix)
        self.gates: dict[str, asyncio.Event] = {}
        self.reached: dict[str, asyncio.Event] = {}

    def arm(self, method: str) -> tuple[asyncio.Event, asyncio.Event]:
        """(reached, release) of ``method``'s next call."""
        self.gates[method], self.reached[method] = asyncio.Event(), asyncio.Event()
        return self.reached[method], self.gates[method]

    async def _gate(self, method: str) -> None:
        gate = self.gates.pop(method, None)
        if gate is not None:
            self.reached.pop(method).set()
            await gate.wait()

    async def journal_append_publish(self, game_id: str, entry: dict[str, Any], notice: dict[str, Any],
                                     expected: int) -> None:
        await super().journal_append_publish(game_id, entry, notice, expected)
        await self._gate("journal_append_publish")  # written and announced, not yet applied

    async def connected(self, game_id: str, seats: Any) -> set[int]:
        await self._gate("connected")
        return await super().connected(game_id, seats)

    async def connected_elsewhere(self, game_id: str, seat: int, stream: str) -> bool:
        await self._gate("connected_elsewhere")
        return await super().connected_elsewhere(game_id, seat, stream)

    async def touch_streams(self, streams: Any, ttl_s: float) -> None:
        await self._gate("touch_streams")
        await super().touch_streams(streams, ttl_s)

    async def publish(self, game_id: str, message: dict[str, Any]) -> None:
        await self._gate("publish")
        await super().publish(game_id, message)


class LocalRouter:
    """The router's interface over one in-process ShardCore; errors travel as data, as over Ray."""

    def __init__(self, core: ShardCore) -> None:
        self.core = core
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.on_call: Callable[[str, tuple[Any, ...]], Awaitable[None]] | None = None
        self.lose_reply_of: set[str] = set()  # the shard acts, the caller never hears back

    async def place_new(self, game_id: str) -> str:
        return "local"

    async def close(self) -> None:
        self.closed = True

    def game(self, game_id: str) -> ShardApi:
        return typed(lambda method, args: self.call(game_id, method, *args))

    def shard(self, name: str) -> ShardApi:
        return typed(lambda method, args: self.call_shard(name, method, *args))

    async def call(self, game_id: str, method: str, *args: Any) -> Any:
        return await self.call_shard("local", method, *args)

    async def call_shard(self, _shard: str, method: str, *args: Any) -> Any:
        self.calls.append((method, args))
        if self.on_call is not None:
            await self.on_call(method, args)
        try:
            result = await getattr(self.core, method)(*args)
        except Exception as exc:
            raise errors.from_dict(error_dict(exc)) from None
        if method in self.lose_reply_of:
            self.lose_reply_of.discard(method)
            raise Unavailable("the reply was lost")
        return result

    async def ping_all(self) -> list[dict[str, Any]]:
        return [await self.core.stats()]


@pytest.fixture
async def api(redis_server: RedisProcess) -> AsyncIterator[PlayerAPI]:
    prefix = f"api{secrets.token_hex(4)}:"
    core = ShardCore("local", GatedStore(redis_server.url, prefix))
    await core.start()
    # no presence grace (A17): a stream's cleanup is complete when it ends (the grace: test_presence_grace)
    the_api = PlayerAPI(GatedStore(redis_server.url, prefix), LocalRouter(core),  # type: ignore[arg-type]
                        ApiConfig(presence_grace_s=0))
    await the_api.start()
    yield the_api
    await the_api.stop()
    await core.flush()  # (its pending writes: none may run on a closed store)
    await core.stop()


def router(api: PlayerAPI) -> LocalRouter:
    r: LocalRouter = api.router  # type: ignore[assignment]
    return r


def store(api: PlayerAPI) -> GatedStore:
    """The gateway's store."""
    s: GatedStore = api.store  # type: ignore[assignment]
    return s


def shard_store(api: PlayerAPI) -> GatedStore:
    """The shard's store (its journal)."""
    s: GatedStore = router(api).core.store  # type: ignore[assignment]
    return s


async def two_players(api: PlayerAPI, deadline: float = 600) -> tuple[str, str, str]:
    made = await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=deadline)
    joined = await api.join(code=made["code"], nickname="bob")
    await api.start_game(made["secret"], made["game_id"])
    return made["game_id"], made["secret"], joined["secret"]


async def test_defect1_a_notice_that_outruns_its_entry_is_still_delivered(api: PlayerAPI) -> None:
    """The notice leaves with the journal write, before the shard applies the entry: a stream that
    reads at that moment must wait for the entry, not go silent."""
    game_id, ann, bob = await two_players(api)
    view = await api.view(ann, game_id)
    stream = await api.watch(ann, game_id, view["seq"] - 1)
    async with contextlib.aclosing(stream):
        assert (await anext(stream))["seq"] == view["seq"]  # set up: subscribed, history read
        written, release = shard_store(api).arm("journal_append_publish")
        read_after_notice = asyncio.Event()

        submitting = False

        async def on_call(method: str, args: tuple[Any, ...]) -> None:
            # the stream reads only when told: a read after the submission began follows its notice,
            # which leaves with the journal write — possibly before the store's gate is reached
            if method == "updates" and submitting:
                read_after_notice.set()  # the stream reads while the entry is written but not applied
        router(api).on_call = on_call
        next_update = asyncio.ensure_future(anext(stream))
        submitting = True
        submit = asyncio.ensure_future(api.submit(bob, game_id, orders={"random_placement": True},
                                                  version=view["version"], draft=True))
        async with asyncio.timeout(WAIT_S):
            await written.wait()
            await read_after_notice.wait()
            assert not next_update.done(), "an update was delivered before its entry was applied"
            release.set()
            update = await next_update
            await submit
    assert (update["kind"], update["seat"], update["seq"]) == ("submitted", 1, view["seq"] + 1)


async def test_defect1_a_stream_opened_just_after_a_notice_still_gets_its_entry(api: PlayerAPI) -> None:
    """The other side of the same race: the notice left before the stream subscribed, and the entry
    is applied only after the stream's first read — that read waits for the write in flight."""
    game_id, ann, bob = await two_players(api)
    view = await api.view(ann, game_id)
    written, release = shard_store(api).arm("journal_append_publish")
    submit = asyncio.ensure_future(api.submit(bob, game_id, orders={"random_placement": True},
                                              version=view["version"], draft=True))
    first_read = asyncio.Event()

    async def on_call(method: str, args: tuple[Any, ...]) -> None:
        if method == "updates":
            first_read.set()
    async with asyncio.timeout(WAIT_S):
        await written.wait()  # journaled and announced; nobody was listening
        router(api).on_call = on_call
        stream = await api.watch(ann, game_id, view["seq"])
        async with contextlib.aclosing(stream):
            next_update = asyncio.ensure_future(anext(stream))
            await first_read.wait()
            assert not next_update.done()
            release.set()
            update = await next_update
        await submit
    assert (update["kind"], update["seat"], update["seq"]) == ("submitted", 1, view["seq"] + 1)


@pytest.mark.parametrize("step", ["touch_streams", "connected_elsewhere", "publish", "presence_changed", "updates",
                                  "live"])
async def test_defect8_a_stream_cancelled_at_any_step_leaves_nothing_behind(api: PlayerAPI, step: str) -> None:
    game_id, ann, _bob = await two_players(api)
    gauges_before = watch_gauges()
    reached = asyncio.Event()
    if step in ("touch_streams", "connected_elsewhere", "publish"):
        reached, _never = store(api).arm(step)
    unblock = asyncio.Event()
    if step in ("presence_changed", "updates"):
        async def on_call(method: str, args: tuple[Any, ...]) -> None:
            if method == step:
                reached.set()
                await unblock.wait()  # stuck in the shard call until the stream is gone
        router(api).on_call = on_call
    latest = (await api.view(ann, game_id))["seq"]

    async def consume() -> None:
        stream = await api.watch(ann, game_id, 0)
        async with contextlib.aclosing(stream):
            async for u in stream:
                if step == "live" and u["seq"] == latest:
                    reached.set()  # history read: the stream now waits for notices
    task = asyncio.ensure_future(consume())
    async with asyncio.timeout(WAIT_S):
        await reached.wait()
        if step == "live":
            assert api.open_streams() == 1 and await api.store.connected(game_id, [0]) == {0}
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        unblock.set()
        router(api).on_call = None
        store(api).gates.clear()
        while api.presence._cleanup:  # the tracked clean-up of the cancelled stream
            await asyncio.gather(*api.presence._cleanup)
    assert api.open_streams() == 0 and api.mailboxes() == 0
    assert watch_gauges() == gauges_before
    assert await api.store.connected(game_id, [0, 1]) == set()


async def test_defect9_a_join_whose_reply_was_lost_is_retried_to_the_same_seat(api: PlayerAPI) -> None:
    made = await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=600)
    rid = secrets.token_urlsafe(16)
    router(api).lose_reply_of.add("join")
    with pytest.raises(Unavailable):
        await api.join(code=made["code"], nickname="bob", request_id=rid)
    await api.start_game(made["secret"], made["game_id"])  # the game starts meanwhile
    again = await api.join(code=made["code"], nickname="bob", request_id=rid)
    assert again["seat"] == 1
    who = await api.rejoin(again["secret"])
    assert (who["seat"], who["nickname"]) == (1, "bob")
    view = await api.view(again["secret"], made["game_id"])
    assert [p["nickname"] for p in view["players"]] == ["ann", "bob"] and not view["players"][1]["autopilot"]
    with pytest.raises(KeyReused) as err:  # the same id for another request
        await api.join(code=made["code"], nickname="carl", request_id=rid)
    assert err.value.field == "request_id"


async def test_defect9_a_create_whose_reply_was_lost_is_retried_to_the_same_game(api: PlayerAPI) -> None:
    rid = secrets.token_urlsafe(16)
    router(api).lose_reply_of.add("create_game")
    with pytest.raises(Unavailable):
        await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=600, request_id=rid)
    first = await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=600, request_id=rid)
    again = await api.create(game="salvo", seats=2, nickname="ann", deadline_seconds=600, request_id=rid)
    assert first == again
    assert (await api.rejoin(first["secret"]))["game_id"] == first["game_id"]
    journal = await api.store.journal_read(first["game_id"])
    assert [e["op"] for e in journal] == ["create"]
    with pytest.raises(KeyReused):
        await api.create(game="salvo", seats=2, nickname="zed", deadline_seconds=600, request_id=rid)
