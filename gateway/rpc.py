"""The rpcs of the Lobby, Game and Community services, once, as protobuf message in -> player API -> message out.

Every door uses this table: gRPC (:mod:`gateway.grpc_door`) with the secret from the call's
metadata, JSON over HTTP + WebSocket (:mod:`gateway.web`) with the secret from the ``Authorization``
header, and MCP (:mod:`gateway.mcp_door`) with an agent token — same request and response messages
(JSON ones parsed and written by :func:`convert.parse_json` / :func:`convert.to_json`), same errors.
A door only moves messages and renders errors.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass

from google.protobuf.message import Message

from archipelago.v1 import community_pb2, game_pb2, lobby_pb2, notify_pb2
from engine.errors import InvalidOrder
from gateway import convert, rpc_community
from gateway.api import MAX_AGENT_TOKENS, PlayerAPI

Unary = Callable[[PlayerAPI, Message, str], Awaitable[Message]]
Streaming = Callable[[PlayerAPI, Message, str], Awaitable[AsyncGenerator[game_pb2.Update, None]]]


async def create_game(api: PlayerAPI, req: lobby_pb2.CreateGameRequest, secret: str) -> Message:
    options = convert.options_dict(req)  # also checks the game kind
    made = await api.create(game=req.game, seats=req.seats, nickname=req.nickname, public=req.public,
                            speed=convert.speed_name(req.speed), deadline_seconds=req.deadline_seconds,
                            options=options, request_id=req.request_id, profile_secret=secret)
    return lobby_pb2.CreateGameResponse(**made)


async def join_game(api: PlayerAPI, req: lobby_pb2.JoinGameRequest, secret: str) -> Message:
    which = req.WhichOneof("options")
    options = {which: convert.to_dict(getattr(req, which))} if which else None
    return lobby_pb2.JoinGameResponse(**await api.join(code=req.code, nickname=req.nickname,
                                                       request_id=req.request_id, options=options,
                                                       profile_secret=secret))


async def start_game(api: PlayerAPI, req: lobby_pb2.StartGameRequest, secret: str) -> Message:
    return convert.summary_message(await api.start_game(secret, req.game_id, req.fill_with_autopilot))


async def list_games(api: PlayerAPI, req: lobby_pb2.ListGamesRequest, _secret: str) -> Message:
    return lobby_pb2.ListGamesResponse(games=[convert.summary_message(s) for s in await api.list_games(req.game)])


async def rejoin(api: PlayerAPI, _req: lobby_pb2.RejoinRequest, secret: str) -> Message:
    who = await api.rejoin(secret)
    return lobby_pb2.RejoinResponse(game_id=who["game_id"], seat=who["seat"], nickname=who["nickname"],
                                    game=who["game"], code=who["code"], host=who["host"],
                                    status=convert.STATUS[who["status"]])


async def get_view(api: PlayerAPI, req: game_pb2.GetViewRequest, secret: str) -> Message:
    return convert.view_response(await api.view(secret, req.game_id))


async def submit_orders(api: PlayerAPI, req: game_pb2.SubmitOrdersRequest, secret: str) -> Message:
    who = await api.auth(secret, req.game_id)  # (first: who may learn the game's kind; once per call)
    orders = convert.member_dict(await api.kind_of(req.game_id), req, "orders")
    ack = await api.submit(secret, req.game_id, orders=orders, version=req.version, key=req.idempotency_key,
                           draft=req.draft, who=who)
    return game_pb2.SubmitOrdersResponse(**ack)


async def act(api: PlayerAPI, req: game_pb2.ActRequest, secret: str) -> Message:
    ack = await api.act(secret, req.game_id, action=convert.action_dict(req), key=req.idempotency_key,
                        version=req.version if req.HasField("version") else None)
    return game_pb2.ActResponse(**ack)


async def set_standing_orders(api: PlayerAPI, req: game_pb2.SetStandingOrdersRequest, secret: str) -> Message:
    who = await api.auth(secret, req.game_id)  # (first: who may learn the game's kind; once per call)
    standing = convert.member_dict(await api.kind_of(req.game_id), req, "standing")
    ack = await api.set_standing(secret, req.game_id, standing=standing, key=req.idempotency_key, who=who)
    return game_pb2.SetStandingOrdersResponse(**ack)


async def create_agent_token(api: PlayerAPI, req: game_pb2.CreateAgentTokenRequest, secret: str) -> Message:
    return game_pb2.AgentToken(**await api.create_agent_token(secret, req.game_id, req.label,
                                                              key=req.idempotency_key))


async def list_agent_tokens(api: PlayerAPI, req: game_pb2.ListAgentTokensRequest, secret: str) -> Message:
    tokens = await api.list_agent_tokens(secret, req.game_id)
    return game_pb2.ListAgentTokensResponse(tokens=[game_pb2.AgentToken(**t) for t in tokens],
                                            max_tokens=MAX_AGENT_TOKENS)


async def revoke_agent_token(api: PlayerAPI, req: game_pb2.RevokeAgentTokenRequest, secret: str) -> Message:
    await api.revoke_agent_token(secret, req.game_id, req.token_id)
    return game_pb2.RevokeAgentTokenResponse()


async def get_notifications(api: PlayerAPI, req: notify_pb2.GetNotificationsRequest, secret: str) -> Message:
    return notify_pb2.NotificationSettings(**await api.get_notifications(secret, req.game_id))


async def set_notifications(api: PlayerAPI, req: notify_pb2.SetNotificationsRequest, secret: str) -> Message:
    return notify_pb2.NotificationSettings(**await api.set_notifications(secret, req.game_id, convert.to_dict(req)))


def check_after_seq(after_seq: int, latest: int | None = None) -> None:
    """A Watch's ``after_seq`` is 0 (from the beginning) or the seq of an update the caller has had:
    not negative, not beyond ``latest`` (the caller's latest seq) — such a stream would deliver
    nothing, silently, until the game caught up with it."""
    if after_seq < 0:
        raise InvalidOrder(f"after_seq is 0 (from the start) or the seq of an update you received, not {after_seq}",
                           field="after_seq")
    if latest is not None and after_seq > latest:
        raise InvalidOrder(f"after_seq {after_seq} is beyond your latest update (seq {latest}): watch from the last "
                           "seq you received, or GetView's seq", field="after_seq")


async def watch(api: PlayerAPI, req: game_pb2.WatchRequest, secret: str) -> AsyncGenerator[game_pb2.Update, None]:
    """Authenticates and checks ``after_seq`` at once (errors before the first update: a seq beyond
    the caller's latest is refused, as GetView tells it, before the stream opens; seqs only grow, so
    one within it stays valid); the iterator must be closed."""
    check_after_seq(req.after_seq)
    if req.after_seq > 0:
        check_after_seq(req.after_seq, int((await api.view(secret, req.game_id))["seq"]))
    return convert.update_messages(await api.watch(secret, req.game_id, req.after_seq))


@dataclass(frozen=True)
class Rpc:
    service: str  # "Lobby", "Game" or "Community"
    name: str
    request: type[Message]
    handler: Unary


@dataclass(frozen=True)
class Stream:
    """A server-streaming rpc of Update messages: gRPC streams it, the JSON door serves it as a
    WebSocket at ``/v1/{service}/{name}`` (first frame: the request and the authorization)."""

    service: str
    name: str
    request: type[Message]
    handler: Streaming


UNARY: dict[str, Rpc] = {r.name: r for r in (
    Rpc("Lobby", "CreateGame", lobby_pb2.CreateGameRequest, create_game),  # type: ignore[arg-type]
    Rpc("Lobby", "JoinGame", lobby_pb2.JoinGameRequest, join_game),  # type: ignore[arg-type]
    Rpc("Lobby", "StartGame", lobby_pb2.StartGameRequest, start_game),  # type: ignore[arg-type]
    Rpc("Lobby", "ListGames", lobby_pb2.ListGamesRequest, list_games),  # type: ignore[arg-type]
    Rpc("Lobby", "Rejoin", lobby_pb2.RejoinRequest, rejoin),  # type: ignore[arg-type]
    Rpc("Game", "GetView", game_pb2.GetViewRequest, get_view),  # type: ignore[arg-type]
    Rpc("Game", "SubmitOrders", game_pb2.SubmitOrdersRequest, submit_orders),  # type: ignore[arg-type]
    Rpc("Game", "Act", game_pb2.ActRequest, act),  # type: ignore[arg-type]
    Rpc("Game", "SetStandingOrders", game_pb2.SetStandingOrdersRequest, set_standing_orders),  # type: ignore[arg-type]
    Rpc("Game", "CreateAgentToken", game_pb2.CreateAgentTokenRequest, create_agent_token),  # type: ignore[arg-type]
    Rpc("Game", "ListAgentTokens", game_pb2.ListAgentTokensRequest, list_agent_tokens),  # type: ignore[arg-type]
    Rpc("Game", "RevokeAgentToken", game_pb2.RevokeAgentTokenRequest, revoke_agent_token),  # type: ignore[arg-type]
    Rpc("Game", "GetNotifications", notify_pb2.GetNotificationsRequest, get_notifications),  # type: ignore[arg-type]
    Rpc("Game", "SetNotifications", notify_pb2.SetNotificationsRequest, set_notifications),  # type: ignore[arg-type]
    *(Rpc("Community", name, request, handler) for name, request, handler in rpc_community.UNARY_COMMUNITY),
)}

#: the streaming rpcs, by name: a player's Watch and a spectator's Spectate
STREAMS: dict[str, Stream] = {s.name: s for s in (
    Stream("Game", "Watch", game_pb2.WatchRequest, watch),  # type: ignore[arg-type]
    Stream("Community", "Spectate", community_pb2.SpectateRequest, rpc_community.spectate),  # type: ignore[arg-type]
)}


def _check_complete() -> None:
    """Every rpc of the .proto services has a handler here (and nothing else does)."""
    services = (lobby_pb2.DESCRIPTOR.services_by_name["Lobby"], game_pb2.DESCRIPTOR.services_by_name["Game"],
                community_pb2.DESCRIPTOR.services_by_name["Community"])
    declared = {m.name for svc in services for m in svc.methods if not m.server_streaming}
    assert declared == set(UNARY), (declared, set(UNARY))
    streaming = {m.name for svc in services for m in svc.methods if m.server_streaming}
    assert streaming == set(STREAMS), (streaming, set(STREAMS))


_check_complete()
