"""The README's protocol and error sections say what the doors do (issue 19): its error table is the
code's table, and each statement a client author relies on is both written there (and in the
.proto) and true of the server — each checked here against a real cluster, on both doors."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import pytest

from archipelago.v1 import salvo_pb2
from gateway import errors
from tests.conftest import Cluster
from tests.e2e.helpers import new_game, placement, rpc_error, wait_update

pytestmark = pytest.mark.e2e

README = Path("README.md").read_text(encoding="utf-8")
PROTO = "\n".join(Path(f"proto/archipelago/v1/{n}.proto").read_text(encoding="utf-8")
                  for n in ("lobby", "game", "archipelago"))


def flat(text: str) -> str:
    """Markdown / comment text with line breaks and comment markers folded to single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"\n\s*//", " ", text))


def test_the_readme_error_table_is_the_code_table() -> None:
    start = README.index("| code | gRPC status | HTTP | retry | meaning |")
    table = README[start:README.index("\n\n", start)]
    assert table == errors.markdown_table()


#: (where, statement): what the README and the .proto promise; each is checked by a test below
STATEMENTS = [
    (README, "newer is `INVALID_ARGUMENT` (`order/invalid`); both name field `version` and rule A16"),
    (PROTO, "newer INVALID_ARGUMENT (`order/invalid`), both with field `version` and rule A16"),
    (README, "refused (`request/key_reused`, field `idempotency_key`, rule A16)"),
    (PROTO, "(`request/key_reused`, field `idempotency_key`, rule A16)"),
    (README, "An id shorter than 16 or longer than 64 characters is `order/invalid` (field `request_id`, no rule)"),
    (PROTO, "An id shorter than 16 or longer than 64 characters, or not printable, is INVALID_ARGUMENT "
            "(`order/invalid`, field `request_id`, no rule)"),
    (README, "the 101st is `action/rate_limited`, field `orders`, rule A16; drafts count"),
    (README, "Only accepted requests count: refused submissions and replayed ones (a known key) do not, and a "
             "replay is answered even past the limit"),
    (PROTO, "refused submissions and replayed ones (a known idempotency key) do not, and a replay is answered "
            "even past the limit"),
    (README, "a private message is echoed to its sender — sender and addressee both get the `chat` update"),
    (PROTO, "A private message goes to its addressee and back to its sender: both receive the `chat` update"),
    (README, "A square name that is not one (`Z`) is `order/invalid`, a well-formed square off the grid (`K1`) "
             "`order/illegal` (S1)"),
    (README, "`to` naming your own seat or no seat is `order/invalid` (field `chat.to`, rule A53), and so is an "
             "offer to yourself (`offer.to`)"),
    (README, "the host's StartGame sent again answers the game's summary and changes nothing"),
    (PROTO, "Idempotent: the host's StartGame sent again (a retry after a lost reply) answers the game's summary "
            "and changes nothing"),
    (README, "The `Authorization` scheme is case-insensitive"),
    (README, "Accepting, declining or withdrawing an id that is not pending — taken, withdrawn, declined, "
             "expired with its round, or never made"),
    (PROTO, "An id that is not pending — taken (an offer to all goes to its first acceptor), withdrawn, "
            "declined, expired with its round, or never made"),
    (PROTO, "ActResponse.offer_id is the new offer's id"),
]


@pytest.mark.parametrize(("where", "statement"), STATEMENTS)
def test_the_docs_state_it(where: str, statement: str) -> None:
    assert flat(statement) in flat(where), statement


async def test_a16_version_key_and_request_id_errors_are_as_documented(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    err = await rpc_error(game.host.submit(game.game_id, view.version + 1, salvo=placement(0)))
    assert (err.status, err.code, err.field, err.rule) == ("INVALID_ARGUMENT", "order/invalid", "version", "A16")
    await game.host.submit(game.game_id, view.version, key="k", draft=True, salvo=placement(0))
    err = await rpc_error(game.host.submit(game.game_id, view.version, key="k", salvo=placement(1)))
    assert (err.code, err.field, err.rule) == ("request/key_reused", "idempotency_key", "A16")
    for rid in ("short", "x" * 65):
        err = await rpc_error(cluster.client(door).create("salvo", seats=2, nickname="n", request_id=rid))
        assert (err.status, err.code, err.field, err.rule) == ("INVALID_ARGUMENT", "order/invalid", "request_id", "")


async def test_s1_a_bad_square_name_is_invalid_and_an_off_grid_square_illegal(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    got = []
    for bow in ("Z", "K1"):
        orders = salvo_pb2.SalvoOrders(placement=[salvo_pb2.ShipPlacement(ship="battleship", bow=bow)])
        err = await rpc_error(game.host.submit(game.game_id, view.version, salvo=orders))
        got.append((err.code, err.field, err.rule))
    assert got == [("order/invalid", "placement[0].bow", "S1"), ("order/illegal", "placement[0].bow", "S1")]


async def test_a16_only_accepted_submissions_count_toward_the_100(cluster: Cluster, door: str) -> None:
    """A refused submission and a replay do not count; the 101st accepted one is refused citing A16;
    a replay is still answered past the limit."""
    game = await new_game(lambda: cluster.client(door))
    view = await game.host.view(game.game_id)
    bad = salvo_pb2.SalvoOrders(placement=[salvo_pb2.ShipPlacement(ship="battleship", bow="K1")])
    await rpc_error(game.host.submit(game.game_id, view.version, salvo=bad))  # refused: not counted
    for i in range(100):
        ack = await game.host.submit(game.game_id, view.version, key=f"k{i}", draft=True, salvo=placement(0))
        assert not ack.replayed
        if i == 50:
            assert (await game.host.submit(game.game_id, view.version, key="k0", draft=True,
                                           salvo=placement(0))).replayed  # a replay: not counted
    err = await rpc_error(game.host.submit(game.game_id, view.version, key="k100", draft=True, salvo=placement(0)))
    assert (err.status, err.code, err.field, err.rule) == ("RESOURCE_EXHAUSTED", "action/rate_limited", "orders",
                                                          "A16")
    again = await game.host.submit(game.game_id, view.version, key="k99", draft=True, salvo=placement(0))
    assert again.replayed


async def test_a53_a_private_chat_is_echoed_to_its_sender(cluster: Cluster, door: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    before = await game.guest.view(game.game_id)
    text = "just you " + secrets.token_hex(3)
    await game.guest.chat(game.game_id, text, to=0)
    for reader in (game.guest, game.host):
        got = await wait_update(reader, game.game_id, before.seq, lambda u: u.kind == "chat")
        assert (got.chat.text, got.chat.seat, got.chat.to) == (text, 1, 0)
    err = await rpc_error(game.guest.chat(game.game_id, "me", to=1))
    assert (err.code, err.field, err.rule) == ("order/invalid", "chat.to", "A53")
