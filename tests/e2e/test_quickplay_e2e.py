"""Quick play ("Play now", community.proto QuickPlay) through each door of the served cluster: strangers
meet in one game that starts by itself; many at once fill whole games, first come first seated; a lobby
that does not fill starts with the autopilot when its opener allowed it; a retried request id gets the
same answer; bad input is refused naming its field."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest

from archipelago.v1 import lobby_pb2
from client.base import BaseClient
from engine.errors import Unavailable
from gateway.api import ApiConfig, PlayerAPI
from gateway.limits import Limits
from tests.conftest import Cluster
from tests.e2e.helpers import WAIT_S, Game, connected, placement, round_closed, rpc_error, submit_and_close, wait_update

pytestmark = pytest.mark.e2e

LOBBY, RUNNING = lobby_pb2.GAME_STATUS_LOBBY, lobby_pb2.GAME_STATUS_RUNNING


async def empty_buckets(cluster: Cluster, *buckets: str) -> None:
    """Forget the quick-play lobbies of these buckets (another test's left-overs would be joined)."""
    store = cluster.api.store
    await store.redis.delete(*[store.key("quick", b, "lobbies") for b in buckets])


def as_player(client: BaseClient, secret: str) -> BaseClient:
    client.secret = secret
    return client


async def test_two_strangers_pressing_play_now_meet_in_one_game_that_starts_by_itself(
        cluster: Cluster, door: str) -> None:
    await empty_buckets(cluster, "salvo:fast:2")
    ann, bob = cluster.client(door), cluster.client(door)
    first = await ann.quick_play("salvo", nickname="ann")
    assert (first.opened, first.seat, first.status, first.starts_unix_ms) == (True, 0, LOBBY, 0)
    assert first.game == "salvo" and len(first.code) == 6 and first.secret
    second = await bob.quick_play("salvo", nickname="ann")  # the same name: it gets a number
    assert (second.game_id, second.code) == (first.game_id, first.code), "they meet in one game"
    assert (second.opened, second.seat, second.status) == (False, 1, RUNNING), "the last seat started it"
    assert second.secret != first.secret
    game = Game(first.game_id, first.code, as_player(ann, first.secret), as_player(bob, second.secret))
    for client, seat in ((game.host, 0), (game.guest, 1)):
        view = await client.view(game.game_id)
        assert view.status == RUNNING and view.you == seat
        assert [(p.seat, p.nickname, p.autopilot) for p in view.players] == [(0, "ann", False), (1, "ann 2", False)]
    closed = await submit_and_close(game, placement(0), placement(1))  # both play
    assert closed.round == 0
    assert (await game.guest.view(game.game_id)).round == 1
    summary = await cluster.api.store.summary(game.game_id)
    assert summary is not None and summary["public"] and summary["status"] == "running"
    assert await cluster.api.store.quick_lobbies("salvo:fast:2") == [], "a started lobby leaves its bucket"


async def test_eight_at_once_fill_exactly_two_four_seat_games(cluster: Cluster, door: str) -> None:
    await empty_buckets(cluster, "archipelago:fast:4")
    clients = [cluster.client(door) for _ in range(8)]
    got = await asyncio.gather(*(c.quick_play("archipelago") for c in clients))  # no nickname: "player"
    games: dict[str, list[int]] = {}
    for r in got:
        games.setdefault(r.game_id, []).append(r.seat)
    assert sorted(sorted(seats) for seats in games.values()) == [[0, 1, 2, 3], [0, 1, 2, 3]], games
    assert sum(r.opened for r in got) == 2 and all(r.opened == (r.seat == 0) for r in got)
    assert sum(r.status == RUNNING for r in got) == 2, "each game started with the join of its last seat"
    for game_id in games:
        r = next(r for r, c in zip(got, clients, strict=True) if r.game_id == game_id)
        client = next(c for r2, c in zip(got, clients, strict=True) if r2 is r)
        view = await as_player(client, r.secret).view(game_id)
        assert view.status == RUNNING and view.seats == 4
        assert sorted(p.nickname for p in view.players) == ["player", "player 2", "player 3", "player 4"]
        assert not any(p.autopilot for p in view.players)
    assert await cluster.api.store.quick_lobbies("archipelago:fast:4") == []


async def test_the_lobby_closest_to_full_is_joined_first_then_the_oldest(cluster: Cluster, door: str) -> None:
    """Two quick-play lobbies in the bucket (opened by other gateways, say): the fuller one fills first."""
    bucket = "archipelago:slow:4"
    await empty_buckets(cluster, bucket)
    quick = {"quick": {"wait_s": 3600.0, "autopilot": False, "bucket": bucket}}
    lobbies = []
    for taken in (1, 2):
        made = await cluster.api.create(game="archipelago", seats=4, nickname="host", public=True, speed="slow",
                                        extra=quick)
        for i in range(1, taken):
            await cluster.api.join(code=made["code"], nickname=f"guest {i}")
        await cluster.api.store.quick_add(bucket, made["game_id"], int(time.time() * 1000), 3600)
        lobbies.append(made["game_id"])
    older, fuller = lobbies
    seats = [await cluster.client(door).quick_play("archipelago", speed=lobby_pb2.SPEED_SLOW, nickname="x")
             for _ in range(3)]
    assert [(s.game_id, s.seat, s.status) for s in seats] == [
        (fuller, 2, LOBBY), (fuller, 3, RUNNING), (older, 1, LOBBY)]
    assert await cluster.api.store.quick_lobbies(bucket) == [older]
    await empty_buckets(cluster, bucket)


async def test_a_lobby_that_does_not_fill_starts_with_the_autopilot_when_its_opener_allowed_it(
        cluster: Cluster, door: str, monkeypatch: pytest.MonkeyPatch) -> None:
    await empty_buckets(cluster, "archipelago:fast:3")
    monkeypatch.setattr(cluster.api.quick.config, "wait_fast_s", 1.0)
    ann = cluster.client(door)
    before_ms = int(time.time() * 1000)
    got = await ann.quick_play("archipelago", seats=3, nickname="ann", allow_autopilot=True)
    assert got.opened and got.status == LOBBY
    assert before_ms + 1000 <= got.starts_unix_ms <= int(time.time() * 1000) + 1000, got.starts_unix_ms
    as_player(ann, got.secret)
    await wait_update(ann, got.game_id, 0, lambda u: u.kind == "started")
    view = await ann.view(got.game_id)
    assert view.status == RUNNING and view.round == 0
    assert [(p.nickname, p.autopilot) for p in view.players] == [
        ("ann", False), ("autopilot-2", True), ("autopilot-3", True)]
    await ann.submit(got.game_id, view.version, archipelago={})  # the human plays on; the autopilot seats act
    await wait_update(ann, got.game_id, view.seq, round_closed(0))
    assert await cluster.api.store.quick_lobbies("archipelago:fast:3") == []


async def test_a_retried_request_id_gets_the_same_game_seat_and_secret(cluster: Cluster, door: str) -> None:
    await empty_buckets(cluster, "salvo:slow:2")
    ann, bob = cluster.client(door), cluster.client(door)
    rid_ann, rid_bob = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    slow = lobby_pb2.SPEED_SLOW
    first = await ann.quick_play("salvo", speed=slow, nickname="ann", request_id=rid_ann)
    again = await ann.quick_play("salvo", speed=slow, nickname="ann", request_id=rid_ann)
    assert (again.game_id, again.seat, again.secret, again.opened) == (first.game_id, 0, first.secret, True)
    joined = await bob.quick_play("salvo", speed=slow, nickname="ann", request_id=rid_bob)
    assert (joined.game_id, joined.seat, joined.status) == (first.game_id, 1, RUNNING)
    # the lobby is full and running now: a retry still gets its own seat, nobody gets a new one
    retried = await bob.quick_play("salvo", speed=slow, nickname="ann", request_id=rid_bob)
    assert (retried.game_id, retried.seat, retried.secret, retried.opened, retried.status) == (
        first.game_id, 1, joined.secret, False, RUNNING)
    late = await ann.quick_play("salvo", speed=slow, nickname="ann", request_id=rid_ann)
    assert (late.game_id, late.seat, late.secret, late.status) == (first.game_id, 0, first.secret, RUNNING)
    view = await as_player(ann, first.secret).view(first.game_id)
    assert [p.nickname for p in view.players] == ["ann", "ann 2"]
    err = await rpc_error(ann.quick_play("salvo", nickname="ann", request_id=rid_ann))  # another speed
    assert err.field == "request_id", err


@pytest.mark.parametrize(("ask", "field"), [
    ({"game": "chess"}, "game"),
    ({"game": "archipelago", "seats": 9}, "seats"),
    ({"game": "salvo", "seats": 3}, "seats"),
    ({"game": "salvo", "request_id": "short"}, "request_id"),
    ({"game": "salvo", "nickname": "x" * 25}, "nickname"),
])
async def test_bad_input_is_refused_naming_its_field(cluster: Cluster, door: str, ask: dict[str, object],
                                                     field: str) -> None:
    before = await cluster.api.store.quick_lobbies("salvo:fast:2")
    kw = dict(ask)
    game = str(kw.pop("game"))
    err = await rpc_error(cluster.client(door).quick_play(game, **kw))
    assert (err.status, err.field) == ("INVALID_ARGUMENT", field), err
    assert await cluster.api.store.quick_lobbies("salvo:fast:2") == before, "nothing changed"


# ---------------------------------------------------------------------------------- several gateways
def gateway(cluster: Cluster) -> PlayerAPI:
    """Another gateway's player API: its own quick-play queue, the cluster's Redis and shards."""
    return PlayerAPI(cluster.api.store, cluster.api.router, ApiConfig(public_url="http://test.invalid",
                                                                      limits=Limits.off()))


async def test_eight_at_once_through_two_gateways_fill_exactly_two_games(cluster: Cluster) -> None:
    await empty_buckets(cluster, "arcmage:fast:4")
    apis = [cluster.api, gateway(cluster)]
    got = await asyncio.gather(*(apis[i % 2].quick.play(
        game="arcmage", speed="fast", seats=4, nickname=f"p{i}", request_id="", allow_autopilot=False, options=None,
        profile_secret="") for i in range(8)))
    games: dict[str, list[int]] = {}
    for r in got:
        games.setdefault(r["game_id"], []).append(r["seat"])
    assert sorted(sorted(s) for s in games.values()) == [[0, 1, 2, 3], [0, 1, 2, 3]], games
    assert sorted(r["status"] for r in got) == ["lobby"] * 6 + ["running"] * 2


async def queued(cluster: Cluster, bucket: str, n: int) -> None:
    store = cluster.api.store
    key = store.key("quick", bucket, "queue")
    async with asyncio.timeout(WAIT_S):
        while await store.redis.zcard(key) != n:
            await asyncio.sleep(0.01)


async def test_callers_of_several_gateways_take_the_bucket_in_arrival_order(cluster: Cluster) -> None:
    store, bucket = cluster.api.store, f"test:{secrets.token_hex(4)}"
    assert await store.quick_enter(bucket, "holder", lock_ms=60_000, alive_ms=60_000)
    order: list[int] = []
    inside = 0

    async def caller(i: int, api: PlayerAPI) -> None:
        nonlocal inside
        async with api.quick._turn(bucket):
            inside += 1
            assert inside == 1, "one caller at a time"
            order.append(i)
            await asyncio.sleep(0)  # (another caller would get in here if the lock let it)
            inside -= 1

    tasks = []
    for i in range(4):
        tasks.append(asyncio.get_running_loop().create_task(caller(i, gateway(cluster))))
        await queued(cluster, bucket, i + 1)  # each one queued before the next arrives
    await store.quick_exit(bucket, "holder")  # the release wakes the first in the queue
    async with asyncio.timeout(WAIT_S):
        await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3], "first come, first served"


async def test_a_crashed_holder_and_a_vanished_waiter_hold_nobody_up_for_long(cluster: Cluster) -> None:
    store, bucket = cluster.api.store, f"test:{secrets.token_hex(4)}"
    assert await store.quick_enter(bucket, "crashed", lock_ms=500, alive_ms=500)  # never released
    assert not await store.quick_enter(bucket, "vanished", lock_ms=500, alive_ms=500)  # queued, never asks again
    start = time.monotonic()
    async with asyncio.timeout(WAIT_S), cluster.api.quick._turn(bucket) as token:
        assert await store.redis.get(store.key("quick", bucket, "lock")) == token
    assert time.monotonic() - start >= 0.4, "it waited for the crashed holder's lock to expire"
    assert await store.redis.zcard(store.key("quick", bucket, "queue")) == 0
    assert await store.redis.get(store.key("quick", bucket, "lock")) is None, "released"


async def test_a_caller_that_waits_too_long_is_told_to_retry_and_leaves_the_queue(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    store, bucket = cluster.api.store, f"test:{secrets.token_hex(4)}"
    api = gateway(cluster)
    monkeypatch.setattr(api.quick.config, "lock_wait_s", 0.3)
    assert await store.quick_enter(bucket, "busy", lock_ms=60_000, alive_ms=60_000)
    with pytest.raises(Unavailable) as caught:
        async with api.quick._turn(bucket):
            raise AssertionError("the lock is held by another")
    assert caught.value.field == "game"
    assert await store.redis.zcard(store.key("quick", bucket, "queue")) == 0, "it left the queue"
    await store.quick_exit(bucket, "busy")


# ---------------------------------------------------------------------------------- the terminal
async def test_archipelago_play_quick_opens_a_lobby_a_stranger_fills_and_the_human_plays_on(cluster: Cluster) -> None:
    from client.grpc_client import Client
    from tests.e2e.test_play import EXE, Output

    await empty_buckets(cluster, "salvo:slow:2")
    human = await asyncio.create_subprocess_exec(
        EXE, "play", "--quick", "salvo", "--speed", "slow", "--nickname", "human", "--server", cluster.address,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    assert human.stdin is not None and human.stdout is not None
    out = Output(human.stdout)
    try:
        at = await out.expect("opened a quick-play lobby: seat 0 of salvo game ")
        code = out.text[at:at + 6]
        at = await out.expect("it starts when every seat is taken", at)
        at = await out.expect("secret: ", at)
        secret = out.text[at:].split()[0]
        at = await out.expect("waiting in the lobby: 1/2 players", at)
        stranger = Client(cluster.address)
        seated = await stranger.quick_play("salvo", speed=lobby_pb2.SPEED_SLOW, nickname="stranger")
        assert (seated.code, seated.seat, seated.status) == (code, 1, RUNNING)
        as_player(stranger, seated.secret)
        at = await out.expect("place your fleet", at)
        async with connected(stranger, seated.game_id):  # (the round waits for the stranger too, A17)
            human.stdin.write(b"random\n")
            await human.stdin.drain()
            view = await stranger.view(seated.game_id)
            await stranger.submit(seated.game_id, view.version, salvo=placement(1))
            await wait_update(stranger, seated.game_id, view.seq, round_closed(0))
        at = await out.expect("fire up to 7 shots", at)
        mine = await Client(cluster.address, secret).view(seated.game_id)
        assert (mine.you, mine.round, [p.nickname for p in mine.players]) == (0, 1, ["human", "stranger"])
        human.stdin.close()  # the end of input at the round-1 prompt
        async with asyncio.timeout(WAIT_S):
            await human.communicate()
        assert human.returncode == 1, out.text
    finally:
        if human.returncode is None:
            human.kill()
            await human.wait()


@pytest.mark.parametrize(("argv", "said"), [
    (["play", "ABCDEF", "--quick", "salvo"], "not both"),
    (["play"], "--quick GAME"),
    (["play", "ABCDEF", "--seats", "3"], "go with --quick"),
    (["play", "--quick", "salvo", "--secret", "a-seat-secret"], "takes a new seat"),
])
async def test_archipelago_play_quick_refuses_what_does_not_fit(argv: list[str], said: str) -> None:
    from tests.e2e.test_play import EXE

    proc = await asyncio.create_subprocess_exec(EXE, *argv, "--server", "127.0.0.1:9", stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    async with asyncio.timeout(WAIT_S):
        text, _ = await proc.communicate()
    assert proc.returncode == 1 and said in text.decode(), text.decode()


def test_a_taken_nickname_gets_a_number_within_24_characters() -> None:
    from gateway.quickplay import nicknames

    assert nicknames("ann", 4) == ["ann", "ann 2", "ann 3", "ann 4"]
    long = "a" * 23 + " "  # (a variant never ends in a space before its number)
    assert nicknames(long, 2) == [long, "a" * 22 + " 2"]
    assert all(len(n) <= 24 for n in nicknames("n" * 24, 8))


async def test_play_now_under_profiles_takes_their_handles_and_links_the_seats(cluster: Cluster, door: str) -> None:
    """A profile's secret as bearer (community.proto): an empty nickname is the handle, the seat is linked
    (the players' list shows the handle to everyone)."""
    await empty_buckets(cluster, "arcmage:fast:2")
    handles = [f"Q{secrets.token_hex(4)}", f"R{secrets.token_hex(4)}"]
    made = [await cluster.client(door).create_profile(h) for h in handles]
    ann, bob = (as_player(cluster.client(door), m.secret) for m in made)
    first = await ann.quick_play("arcmage", allow_autopilot=True)
    second = await bob.quick_play("arcmage", nickname="bob")
    assert (second.game_id, second.status) == (first.game_id, RUNNING)
    view = await as_player(cluster.client(door), second.secret).view(first.game_id)
    assert [(p.nickname, p.handle) for p in view.players] == [(handles[0], handles[0]), ("bob", handles[1])]
    assert (await ann.my_profile()).handle == handles[0]  # the profile secret still acts as the profile
