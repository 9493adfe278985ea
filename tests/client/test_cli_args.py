"""The `archipelago` command's client side: the server address, create's request id, join retries, its
help and version, the nickname rule, where a seat's secret goes (never into a bot's output), and the
outcome line in words."""

from __future__ import annotations

import argparse
import os
import stat
import tomllib
import types
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
from google.protobuf.message import Message

import client.bot
import client.grpc_client
from archipelago.v1 import archipelago_pb2, arcmage_pb2, game_pb2, lobby_pb2, salvo_pb2
from client import cli
from client.base import BaseClient, M
from client.bot import REASONS, describe_outcome, outcome_words
from client.cli import build_parser, join_secret_values, package_version, resolve_server
from client.errors import ApiError
from client.seating import come_back_line, join, player_secret
from gateway.serve import build_parser as serve_parser

ROOT = Path(__file__).resolve().parents[2]


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
        assert response is lobby_pb2.JoinGameResponse
        return cast(M, lobby_pb2.JoinGameResponse(game_id="g1", seat=1, secret="s" * 32))

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


def test_api_errors_print_the_reason_and_code_and_exit_2(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import client.cli as cli

    async def refused(args: Any) -> int:
        raise ApiError("NOT_FOUND", "game/not_found", "code", "", "no game with code ZZZZZZ", 404)

    monkeypatch.setattr(cli, "_create", refused)
    assert cli.main(["create", "salvo", "--server", "127.0.0.1:1"]) == 2
    assert capsys.readouterr().err == "error: no game with code ZZZZZZ (field code, game/not_found)\n"


@pytest.mark.parametrize(("error", "said"), [
    (ApiError("INVALID_ARGUMENT", "lobby/invalid", "nickname", "A2", "nickname: rule A2: a nickname is 1–24 printable "
              "characters", 400), "nickname: rule A2: a nickname is 1–24 printable characters (lobby/invalid)"),
    (ApiError("ALREADY_EXISTS", "lobby/nickname_taken", "nickname", "A2", "nickname 'bob' is taken in this game", 409),
     "nickname 'bob' is taken in this game (field nickname, rule A2, lobby/nickname_taken)"),
    (ApiError("UNAVAILABLE", "", "", "", "failed to connect to all addresses", 503),
     "cannot reach the gateway (failed to connect to all addresses); is it running, and is --server right?"),
])
def test_a_refusal_is_printed_reason_first_naming_field_rule_and_code(error: ApiError, said: str) -> None:
    assert error.said() == said


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


def test_a_secret_beginning_with_a_dash_is_read_as_the_secret() -> None:
    # a seat's secret is URL-safe base64: one in 64 begins with "-" (a clean CI run met one), which
    # argparse alone takes for an option ("--secret: expected one argument")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bot", "ABCDEF", "--secret", "-x9Yz"])
    argv = join_secret_values(["bot", "ABCDEF", "--secret", "-x9Yz", "--server", "h:1"])
    assert argv == ["bot", "ABCDEF", "--secret=-x9Yz", "--server", "h:1"]
    args = build_parser().parse_args(argv)
    assert (args.secret, args.server) == ("-x9Yz", "h:1")
    assert join_secret_values(["bot", "ABCDEF", "--secret"]) == ["bot", "ABCDEF", "--secret"]  # (argparse says)


# ---------------------------------------------------------------------------------------- help and version
def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                                             argparse.ArgumentParser]]:
    """Every (sub)command's parser, by its words after `archipelago`."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


def test_every_command_and_option_has_help_text(capsys: pytest.CaptureFixture[str]) -> None:
    seen = {path for path, _ in parsers(build_parser())}
    assert {("serve",), ("create",), ("join",), ("bot",), ("play",), ("admin",), ("admin", "end")} <= seen
    for path, parser in parsers(build_parser()):
        if path == ("serve",):  # the server's command: its flags and help are gateway.serve's, handed over by main
            parser = serve_parser()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    assert choice.help, (path, choice.dest)
                continue
            name = "/".join(action.option_strings) or action.dest
            assert action.help and action.help != argparse.SUPPRESS and len(action.help) >= 10, (path, name)
        with pytest.raises(SystemExit) as done:
            if path == ("serve",):
                cli.main([*path, "--help"])
            build_parser().parse_args([*path, "--help"])
        assert done.value.code == 0
        text = " ".join(capsys.readouterr().out.split())  # (argparse wraps the lines)
        for action in parser._actions:
            if action.help and not isinstance(action, argparse._SubParsersAction):
                assert " ".join(action.help.split()) in text, (path, action.dest)


def test_the_code_and_the_nickname_rule_are_explained() -> None:
    for command in ("join", "bot", "play"):
        sub = dict(parsers(build_parser()))[(command,)]
        helps = {a.dest: a.help or "" for a in sub._actions}
        assert "6-character code" in helps["code"] and "/join/CODE" in helps["code"], command
        assert "1-24 printable characters" in helps["nickname"] and "(A2)" in helps["nickname"], command


def test_a2_a_nickname_the_server_would_refuse_is_refused_at_once_naming_the_flag_and_rule(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["join", "ABCDEF", "--nickname", "n" * 24]).nickname == "n" * 24
    assert build_parser().parse_args(["play", "ABCDEF", "--nickname", "אבי 🐙"]).nickname == "אבי 🐙"
    for bad in ("n" * 25, "", "   ", "tab\there"):
        for command in (["create", "salvo"], ["join", "ABCDEF"], ["bot", "ABCDEF"], ["play", "ABCDEF"]):
            with pytest.raises(SystemExit) as refused:
                build_parser().parse_args([*command, "--nickname", bad])
            assert refused.value.code == 2
            err = capsys.readouterr().err
            assert "argument --nickname: a nickname is 1-24 printable characters" in err and "(rule A2)" in err


def test_serve_help_shows_each_default_and_its_variable(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    out = capsys.readouterr().out
    text = " ".join(out[out.index("options:"):].split())
    for flag, env, default in (("--host", "ARCHIPELAGO_HOST", "127.0.0.1"),
                               ("--data-dir", "ARCHIPELAGO_DATA_DIR", "var"),
                               ("--grpc-port", "ARCHIPELAGO_GRPC_PORT", "50051"),
                               ("--http-port", "ARCHIPELAGO_HTTP_PORT", "8080"),
                               ("--shards", "ARCHIPELAGO_SHARDS", "2"),
                               ("--gateways", "ARCHIPELAGO_GATEWAYS", "1")):
        after = text[text.index(f"{flag} "):]
        assert f"env {env}, else {default}" in after[:400], flag


@pytest.mark.parametrize(("argv", "env", "host", "data_dir"), [
    ([], {}, "127.0.0.1", "var"),
    ([], {"ARCHIPELAGO_HOST": "0.0.0.0", "ARCHIPELAGO_DATA_DIR": "/srv/arch"}, "0.0.0.0", "/srv/arch"),
    (["--host", "::1", "--data-dir", "d"], {"ARCHIPELAGO_HOST": "0.0.0.0", "ARCHIPELAGO_DATA_DIR": "/srv"}, "::1", "d"),
])
def test_serve_takes_host_and_data_dir_from_the_flag_then_the_variable_then_the_default(
        monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], host: str, data_dir: str) -> None:
    for name in ("ARCHIPELAGO_HOST", "ARCHIPELAGO_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    got: dict[str, Any] = {}

    async def serve(**kw: Any) -> None:
        got.update(kw)

    monkeypatch.setitem(__import__("sys").modules, "gateway.app", types.SimpleNamespace(serve=serve))
    assert cli.main(["serve", *argv]) == 0
    assert (got["host"], got["data_dir"]) == (host, Path(data_dir))


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"archipelago {package_version()}\n"
    from importlib import metadata

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)  # a source tree that was never installed
    assert package_version() == declared


def test_play_help_points_at_the_in_game_help_and_how_to_come_back(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "type `help` for its commands" in text and "--secret-file FILE or env ARCHIPELAGO_SECRET" in text


def test_the_come_back_line_names_the_command_never_the_secret() -> None:
    assert come_back_line("7KQ2ZP", secret_file="/home/me/seat 1.txt") == \
        "to come back: archipelago play 7KQ2ZP --secret-file '/home/me/seat 1.txt'"
    assert come_back_line("7KQ2ZP", server="games.example:7000") == \
        "to come back: ARCHIPELAGO_SECRET=<your secret> archipelago play 7KQ2ZP --server games.example:7000"


# ---------------------------------------------------------------------------------------- where a secret goes
class Seats:
    """A lobby of one game, code ABCDEF, whose JoinGame hands out a fresh secret (or fails)."""

    joined: ClassVar[list[str]] = []
    fail: ClassVar[ApiError | None] = None

    def __init__(self, address: str, secret: str | None = None) -> None:
        self.secret = secret

    async def __aenter__(self) -> Seats:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        pass

    async def join(self, code: str, nickname: str, request_id: str = "", **options: Any) -> lobby_pb2.JoinGameResponse:
        if self.fail is not None:
            raise self.fail
        self.secret = f"seat-secret-{os.urandom(12).hex()}"
        self.joined.append(self.secret)
        return lobby_pb2.JoinGameResponse(game_id="g1", seat=1, secret=self.secret)

    async def rejoin(self) -> lobby_pb2.RejoinResponse:
        return lobby_pb2.RejoinResponse(game_id="g1", seat=0, nickname="host", code="ABCDEF")


def final_view(you: int) -> game_pb2.GetViewResponse:
    return game_pb2.GetViewResponse(
        game="salvo", status=lobby_pb2.GAME_STATUS_OVER, round=7, you=you,
        players=[game_pb2.PlayerInfo(seat=0, nickname="host"), game_pb2.PlayerInfo(seat=1, nickname="bot-1a2b")],
        salvo=salvo_pb2.SalvoView(outcome=salvo_pb2.SalvoOutcome(winners=[1], reason="fleet_sunk", scores=[3, 17])))


@pytest.fixture
def seats(monkeypatch: pytest.MonkeyPatch) -> type[Seats]:
    monkeypatch.setattr(client.grpc_client, "Client", Seats)
    Seats.joined.clear()
    Seats.fail = None

    async def play_seat(c: Any, game_id: str, *, log: Any = print) -> game_pb2.GetViewResponse:
        log("round 1: submitted")
        return final_view(1)

    monkeypatch.setattr(client.bot, "play_seat", play_seat)
    monkeypatch.delenv("ARCHIPELAGO_SECRET", raising=False)
    return Seats


def test_a_bot_that_joins_never_prints_its_secret(seats: type[Seats], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bot", "abcdef", "--server", "x:1"]) == 0
    [secret] = seats.joined
    out, err = capsys.readouterr()
    assert secret not in out + err and "secret:" not in out + err
    assert out.splitlines() == [
        "joined seat 1 of game ABCDEF", "(its secret is not kept: --save-secret FILE keeps it)", "round 1: submitted",
        "game over after round 7: bot-1a2b won (every ship of the other fleet was sunk) — you win"]


def test_a_bot_saves_its_secret_only_when_asked_in_a_file_only_its_owner_reads(
        seats: type[Seats], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bot-seat"
    assert cli.main(["bot", "ABCDEF", "--save-secret", str(path), "--server", "x:1"]) == 0
    [secret] = seats.joined
    assert path.read_text(encoding="utf-8") == secret + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    out, err = capsys.readouterr()
    assert secret not in out + err and f"secret saved in {path} (mode 0600)" in out
    # the file exists: refused before any seat is taken (it may hold another seat's secret)
    with pytest.raises(SystemExit, match="the file exists"):
        cli.main(["bot", "ABCDEF", "--save-secret", str(path), "--server", "x:1"])
    assert len(seats.joined) == 1 and path.read_text(encoding="utf-8") == secret + "\n"
    # a seat that was not taken leaves no file behind
    seats.fail = ApiError("FAILED_PRECONDITION", "lobby/full", "code", "A1", "the game is full", 409)
    assert cli.main(["bot", "ABCDEF", "--save-secret", str(tmp_path / "other"), "--server", "x:1"]) == 2
    assert not (tmp_path / "other").exists()
    # with the seat's own secret there is nothing new to save
    with pytest.raises(SystemExit, match="only for a new seat"):
        cli.main(["bot", "ABCDEF", "--secret-file", str(path), "--save-secret", str(tmp_path / "x"), "--server", "x:1"])


def test_a_bot_playing_an_existing_seat_prints_who_it_plays_never_the_secret(
        seats: type[Seats], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "host"
    path.write_text("the-hosts-secret-0123456789\n", encoding="utf-8")
    assert cli.main(["bot", "ABCDEF", "--secret-file", str(path), "--server", "x:1"]) == 0
    out, err = capsys.readouterr()
    assert "the-hosts-secret" not in out + err
    assert out.splitlines()[0] == "playing seat 0 (host) of game ABCDEF"


def test_join_says_the_secret_once_labelled_or_only_into_the_file(
        seats: type[Seats], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["join", "ABCDEF", "--nickname", "guest", "--server", "x:1"]) == 0
    out, err = capsys.readouterr()
    secret = seats.joined[-1]
    assert (out + err).count(secret) == 1 and f"secret: {secret}\n" in out
    assert "only way back to your seat" in err and "archipelago play ABCDEF" in err
    path = tmp_path / "guest"
    assert cli.main(["join", "ABCDEF", "--nickname", "guest", "--save-secret", str(path), "--server", "x:1"]) == 0
    out, err = capsys.readouterr()
    assert seats.joined[-1] not in out + err and path.read_text(encoding="utf-8") == seats.joined[-1] + "\n"
    assert f"to come back: archipelago play ABCDEF --secret-file {path}" in out


# ---------------------------------------------------------------------------------------- the outcome in words
NAMES = {0: "Alice", 1: "Bob", 2: "Chen"}


@pytest.mark.parametrize(("outcome", "you", "progress", "line"), [
    ({"winners": [0], "reason": "last_player"}, 1, "turn", "Alice won (last player standing) — you lose"),
    ({"winners": [], "draw": True, "reason": "max_rounds"}, 0, "turn",
     "a draw (the turn limit was reached)"),
    ({"winners": [], "draw": True, "reason": "all_out_at_once"}, 0, "turn",
     "a draw (every player was out at once)"),
    ({"winners": [1], "reason": "fleet_sunk"}, 1, "round",
     "Bob won (every ship of the other fleet was sunk) — you win"),
    ({"winners": [], "draw": True, "reason": "both_fleets_sunk"}, 0, "round",
     "a draw (both fleets sank in the same salvo)"),
    ({"winners": [0], "reason": "max_rounds"}, 1, "round",
     "Alice won (the best score when the round limit was reached) — you lose"),
    ({"winners": [], "draw": True, "reason": "max_rounds"}, 1, "round",
     "a draw (the round limit was reached)"),
    ({"winners": [2], "reason": "target"}, 2, "round",
     "Chen won (the target score was reached) — you win"),
    ({"winners": [0, 2], "reason": "max_rounds"}, 1, "round",
     "Alice and Chen share the win (the best score when the round limit was reached) — you lose"),
    ({"winners": [], "reason": "ended"}, 0, "round", "no winner (an operator ended the game)"),
    ({"winners": [], "reason": "expired"}, 0, "round", "no winner (nobody started the game in time)"),
    ({"winners": [7], "reason": "some_new_reason"}, None, "round", "seat 7 won (some new reason)"),
])
def test_s7_a67_m3_the_outcome_is_said_with_nicknames_and_reasons_in_words(
        outcome: dict[str, Any], you: int | None, progress: str, line: str) -> None:
    assert outcome_words(outcome, NAMES, you=you, progress=progress) == line


def test_every_reason_an_engine_or_the_server_gives_has_words() -> None:
    from engine.salvo import game as salvo_game
    from services.actor_core import ENDED

    salvo = {v for k, v in vars(salvo_game).items() if k.startswith("REASON_")}
    assert salvo == {"fleet_sunk", "both_fleets_sunk", "max_rounds"}
    sources = {"archipelago": "".join(path.read_text(encoding="utf-8")  # (the round's resolution: resolve*.py)
                                      for path in sorted((ROOT / "engine/archipelago").glob("resolve*.py"))),
               "arcmage": (ROOT / "engine/arcmage/core.py").read_text(encoding="utf-8")}
    for reason in ("target", "max_rounds"):
        assert f'"{reason}"' in sources["archipelago"]
    for reason in ("max_rounds", "last_player", "all_out_at_once"):
        assert f'"{reason}"' in sources["arcmage"]
    for reason in salvo | {"target", "last_player", "all_out_at_once", ENDED, "expired"}:
        assert reason in REASONS and "_" not in REASONS[reason], reason


def test_describe_outcome_reads_each_games_view() -> None:
    assert describe_outcome(final_view(0)) == \
        "game over after round 7: bot-1a2b won (every ship of the other fleet was sunk) — you lose"
    players = [game_pb2.PlayerInfo(seat=0, nickname="host"), game_pb2.PlayerInfo(seat=1, nickname="lister")]
    arcmage = game_pb2.GetViewResponse(game="arcmage", status=lobby_pb2.GAME_STATUS_OVER, round=12, you=0,
                                       players=players, arcmage=arcmage_pb2.ArcmageView(
                                           outcome=arcmage_pb2.ArcmageOutcome(winners=[1], reason="last_player")))
    assert describe_outcome(arcmage) == "game over after turn 12: lister won (last player standing) — you lose"
    archipelago = game_pb2.GetViewResponse(
        game="archipelago", status=lobby_pb2.GAME_STATUS_OVER, round=60, you=1, players=players,
        archipelago=archipelago_pb2.ArchipelagoView(outcome=archipelago_pb2.ArchipelagoOutcome(
            winners=[0, 1], reason="max_rounds", scores=[9, 9])))
    assert describe_outcome(archipelago) == ("game over after round 60: host and lister share the win (the best score "
                                             "when the round limit was reached) — you win")
