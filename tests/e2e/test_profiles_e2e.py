"""Profiles (community.proto) on the message doors: created with a handle, moved to another device by
their link, their secret reset (the old one refused at once), retried creates and resets, handles
unique whatever their case, bad handles refused, games played under a profile. Every test runs once
per door (gRPC, JSON + WebSocket)."""

from __future__ import annotations

import secrets
from collections.abc import Callable

import pytest

from archipelago.v1 import salvo_pb2
from client.base import BaseClient
from tests.conftest import Cluster
from tests.e2e.helpers import rpc_error

pytestmark = pytest.mark.e2e

Connect = Callable[..., BaseClient]


@pytest.fixture
def connect(cluster: Cluster, door: str) -> Connect:
    """A new client (its own connection) of the door, with a secret if given."""
    return lambda secret=None: cluster.client(door, secret)


def handle() -> str:
    return f"Ann{secrets.token_hex(4)}"  # (unique: the cluster's Redis outlives a test)


async def test_create_then_move_to_another_device_then_reset(connect: Connect) -> None:
    name = handle()
    async with connect() as phone:
        made = await phone.create_profile(name)
    assert made.secret.startswith("prf_") and len(made.secret) == 44
    assert made.link == f"http://test.invalid/profile#{made.secret}"
    assert made.profile.handle == name and made.profile.created_unix_ms > 0
    assert made.profile.games == 0 and list(made.profile.ratings) == []

    # another device, another connection: the secret from the link's fragment is the profile
    async with connect(made.link.split("#", 1)[1]) as laptop, connect(made.secret) as phone:
        mine = await laptop.my_profile()
        assert mine.handle == name and mine.created_unix_ms == made.profile.created_unix_ms
        assert (await phone.my_profile()).handle == name

        reset = await laptop.reset_profile_secret()
        assert reset.secret.startswith("prf_") and reset.secret != made.secret and reset.profile.handle == name
        assert reset.link.endswith("#" + reset.secret)
        for old in (laptop, phone):  # the old secret, on every device: refused from the next call on
            err = await rpc_error(old.my_profile())
            assert err.status == "UNAUTHENTICATED" and err.code == "auth/unauthenticated"
            assert err.field == "authorization"
            err = await rpc_error(old.reset_profile_secret())
            assert err.status == "UNAUTHENTICATED"
        assert (await laptop.with_secret(reset.secret).my_profile()).handle == name
        # the public page is the same profile
        assert (await laptop.profile(name.upper())).created_unix_ms == made.profile.created_unix_ms


async def test_retried_create_and_reset_answer_the_same_secret(connect: Connect) -> None:
    name, rid = handle(), secrets.token_urlsafe(16)
    async with connect() as c:
        first = await c.create_profile(name, request_id=rid)
        again = await c.create_profile(name, request_id=rid)
        assert again.secret == first.secret and again.profile.created_unix_ms == first.profile.created_unix_ms
        # the same request id for another handle is another profile; another request id for this handle
        # is a handle taken
        other = await c.create_profile(handle(), request_id=rid)
        assert other.secret != first.secret
        err = await rpc_error(c.create_profile(name, request_id=secrets.token_urlsafe(16)))
        assert err.status == "ALREADY_EXISTS" and err.field == "handle"

        owner, reset_id = c.with_secret(first.secret), secrets.token_urlsafe(16)
        reset = await owner.reset_profile_secret(request_id=reset_id)
        # the reply was lost: the retry (with the old secret, now refused) answers the same new secret
        retried = await owner.reset_profile_secret(request_id=reset_id)
        assert retried.secret == reset.secret != first.secret
        assert (await c.with_secret(reset.secret).my_profile()).handle == name
        # a retried create after the reset does not bring the old secret back
        err = await rpc_error(c.create_profile(name, request_id=rid))
        assert err.status == "ALREADY_EXISTS"
        # once the new secret is reset again, the first reset's retry is refused
        await c.with_secret(reset.secret).reset_profile_secret()
        err = await rpc_error(owner.reset_profile_secret(request_id=reset_id))
        assert err.status == "UNAUTHENTICATED" and err.field == "authorization"


async def test_handles_are_unique_whatever_their_case(connect: Connect) -> None:
    name = handle()
    async with connect() as c:
        await c.create_profile(name)
        for taken in (name.upper(), name.lower(), name.swapcase()):
            err = await rpc_error(c.create_profile(taken))
            assert err.status == "ALREADY_EXISTS" and err.code == "lobby/already_exists" and err.field == "handle"
        assert (await c.profile(name.lower())).handle == name  # found whatever the case asked


async def test_bad_handles_and_unknown_profiles_are_refused(connect: Connect) -> None:
    async with connect() as c:
        for bad in ("", "x" * 25, "tab\there", "   "):
            err = await rpc_error(c.create_profile(bad))
            assert err.status == "INVALID_ARGUMENT" and err.field == "handle" and err.rule == "A2", bad
        err = await rpc_error(c.profile(handle()))
        assert err.status == "NOT_FOUND" and err.field == "handle"
        err = await rpc_error(c.profile_games(handle()))
        assert err.status == "NOT_FOUND"
        err = await rpc_error(c.my_profile())  # no secret at all
        assert err.status == "UNAUTHENTICATED" and err.field == "authorization"
        err = await rpc_error(c.with_secret("prf_" + "x" * 40).my_profile())
        assert err.status == "UNAUTHENTICATED" and err.field == "authorization"
        err = await rpc_error(c.leaderboard("chess"))
        assert err.status == "INVALID_ARGUMENT" and err.field == "game"
        err = await rpc_error(c.profile_games(handle(), limit=-1))
        assert err.status == "INVALID_ARGUMENT" and err.field == "limit"


async def test_games_joined_with_a_profile_are_linked_to_it(connect: Connect) -> None:
    host_name, guest_name = handle(), handle()
    async with connect() as c:
        host_secret = (await c.create_profile(host_name)).secret
        guest_secret = (await c.create_profile(guest_name)).secret
    async with connect(host_secret) as host_profile, connect(guest_secret) as guest_profile:
        created = await host_profile.create("salvo", seats=2, nickname="host", deadline_seconds=600,
                                            salvo=salvo_pb2.SalvoOptions())
        # one seat per profile in a game
        err = await rpc_error(host_profile.join(created.code, "host again"))
        assert err.status == "ALREADY_EXISTS"
        joined = await guest_profile.join(created.code, "guest")
        view = await guest_profile.with_secret(joined.secret).view(created.game_id)
        assert [(p.nickname, p.handle) for p in view.players] == [("host", host_name), ("guest", guest_name)]
        # a reset profile secret is refused when it joins a game
        reset = await guest_profile.reset_profile_secret()
        other = await host_profile.create("salvo", seats=2, nickname="host", deadline_seconds=600,
                                          salvo=salvo_pb2.SalvoOptions())
        err = await rpc_error(guest_profile.join(other.code, "guest"))
        assert err.status == "UNAUTHENTICATED" and err.field == "authorization"
        assert (await guest_profile.with_secret(reset.secret).join(other.code, "guest")).seat == 1
