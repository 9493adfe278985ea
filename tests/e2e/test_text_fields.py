"""Control characters are refused wherever text is accepted (issue 11; A2 nicknames, A53 chat, A90
labels, A16 idempotency keys, request ids), on both message doors, naming the field and changing
nothing."""

from __future__ import annotations

import pytest

from tests.conftest import Cluster
from tests.e2e.helpers import new_game, rpc_error

pytestmark = pytest.mark.e2e

BAD = ["a\x00b", "\x1b[2Jwiped", "line\nbreak", "bell\x07", "del\x7f", "bidi\u202eevil", "\u2028sep"]


@pytest.mark.parametrize("text", BAD)
async def test_control_characters_are_refused_in_every_text_field(cluster: Cluster, door: str, text: str) -> None:
    game = await new_game(lambda: cluster.client(door))
    before = await game.host.view(game.game_id)
    refusals = {
        "nickname (create)": (await rpc_error(game.host.create("salvo", seats=2, nickname=text)), "nickname"),
        "nickname (join)": (await rpc_error(cluster.client(door).join(game.code, text)), "nickname"),
        "request_id": (await rpc_error(cluster.client(door).create("salvo", seats=2, nickname="x",
                                                                   request_id=text + "0" * 20)), "request_id"),
        "chat": (await rpc_error(game.host.chat(game.game_id, text)), "chat.text"),
        "label": (await rpc_error(game.host.create_agent_token(game.game_id, text)), "label"),
        "idempotency_key": (await rpc_error(game.host.chat(game.game_id, "hi", key=text)), "idempotency_key"),
    }
    for what, (err, field) in refusals.items():
        assert err.status == "INVALID_ARGUMENT" and err.field == field, (what, err)
    after = await game.host.view(game.game_id)
    assert after.version == before.version, "nothing changed"
    assert len((await game.host.list_agent_tokens(game.game_id)).tokens) == 0
