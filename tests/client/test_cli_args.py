"""The `archipelago` command's client side: the server address, create's request id, join retries."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2
from client.base import BaseClient, M
from client.cli import build_parser, join, player_secret, resolve_server
from client.errors import ApiError


def test_the_default_server_is_the_local_grpc_port() -> None:
    assert resolve_server(None, {}) == "127.0.0.1:50051"
    assert resolve_server(None, {"ARCHIPELAGO_GRPC_PORT": ""}) == "127.0.0.1:50051"


def test_the_default_server_follows_archipelago_grpc_port() -> None:
    assert resolve_server(None, {"ARCHIPELAGO_GRPC_PORT": "6001"}) == "127.0.0.1:6001"


def test_archipelago_server_and_then_server_flag_win() -> None:
    env = {"ARCHIPELAGO_GRPC_PORT": "6001", "ARCHIPELAGO_SERVER": "games.example:7000"}
    assert resolve_server(None, env) == "games.example:7000"
    assert resolve_server("10.0.0.2:8000", env) == "10.0.0.2:8000"
    assert resolve_server(None, {"ARCHIPELAGO_SERVER": "", "ARCHIPELAGO_GRPC_PORT": "6001"}) == "127.0.0.1:6001"


def test_a_bad_port_variable_is_an_error_naming_it() -> None:
    with pytest.raises(SystemExit, match="ARCHIPELAGO_GRPC_PORT"):
        resolve_server(None, {"ARCHIPELAGO_GRPC_PORT": "http"})


def test_create_takes_a_request_id() -> None:
    args = build_parser().parse_args(["create", "salvo", "--request-id", "r" * 20])
    assert args.request_id == "r" * 20
    assert build_parser().parse_args(["create", "salvo"]).request_id is None


class Flaky(BaseClient):
    """A lobby whose first JoinGame replies are lost with the given errors."""

    def __init__(self, *errors: BaseException) -> None:
        super().__init__()
        self.errors = list(errors)
        self.requests: list[lobby_pb2.JoinGameRequest] = []

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        assert isinstance(request, lobby_pb2.JoinGameRequest)
        self.requests.append(request)
        if self.errors:
            raise self.errors.pop(0)
        return response(game_id="g1", seat=1, secret="s" * 32)

    def watch(self, game_id: str, after_seq: int = 0) -> AsyncGenerator[game_pb2.Update, None]:
        raise NotImplementedError

    def with_secret(self, secret: str) -> BaseClient:
        raise NotImplementedError

    async def close(self) -> None:
        pass


def unavailable() -> ApiError:
    return ApiError("UNAVAILABLE", "", "", "", "connection reset", 503)


async def test_a_join_with_a_lost_reply_is_retried_once_with_the_same_request_id() -> None:
    for lost in (unavailable(), ConnectionResetError("reset")):
        c = Flaky(lost)
        joined = await join(c, "ABCDEF", "human")
        assert joined.seat == 1 and len(c.requests) == 2
        first, again = c.requests
        assert first == again and 16 <= len(first.request_id) <= 64


async def test_every_join_has_its_own_random_request_id() -> None:
    a, b = Flaky(), Flaky()
    await join(a, "ABCDEF", "human")
    await join(b, "ABCDEF", "human")
    assert a.requests[0].request_id != b.requests[0].request_id


async def test_a_join_is_retried_only_once_and_only_when_the_reply_may_be_lost() -> None:
    c = Flaky(unavailable(), unavailable())
    with pytest.raises(ApiError, match="UNAVAILABLE"):
        await join(c, "ABCDEF", "human")
    assert len(c.requests) == 2
    taken = ApiError("ALREADY_EXISTS", "lobby/nickname_taken", "nickname", "A2", "taken", 409)
    c = Flaky(taken)
    with pytest.raises(ApiError, match="ALREADY_EXISTS"):
        await join(c, "ABCDEF", "human")
    assert len(c.requests) == 1


def test_api_errors_print_status_code_and_message_and_exit_2(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import client.cli as cli

    async def refused(args: Any) -> int:
        raise ApiError("NOT_FOUND", "game/not_found", "code", "", "no game with code ZZZZZZ", 404)

    monkeypatch.setattr(cli, "_create", refused)
    assert cli.main(["create", "salvo", "--server", "127.0.0.1:1"]) == 2
    assert capsys.readouterr().err == "error: NOT_FOUND game/not_found: no game with code ZZZZZZ\n"


def test_the_secret_comes_from_a_file_or_the_environment_and_argv_is_warned_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ARCHIPELAGO_SECRET", raising=False)
    path = tmp_path / "seat"
    path.write_text("s3cret-from-file\n", encoding="utf-8")
    args = build_parser().parse_args(["bot", "ABCDEF", "--secret-file", str(path)])
    assert player_secret(args) == "s3cret-from-file"
    monkeypatch.setenv("ARCHIPELAGO_SECRET", "s3cret-from-env")
    assert player_secret(build_parser().parse_args(["play", "ABCDEF"])) == "s3cret-from-env"
    assert "warning" not in capsys.readouterr().err
    monkeypatch.delenv("ARCHIPELAGO_SECRET")
    assert player_secret(build_parser().parse_args(["bot", "ABCDEF", "--secret", "in-argv"])) == "in-argv"
    assert "ps" in capsys.readouterr().err
    assert player_secret(build_parser().parse_args(["bot", "ABCDEF"])) is None
