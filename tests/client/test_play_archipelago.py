"""`archipelago play` for Archipelago: the screen (A80-A85), the command parser (A13-A20, A36-A42, A51-A53)
and the round's prompt against a scripted game (orders built up and submitted, immediate actions, server
refusals, live notices, the prompt abandoned when the round closes)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from archipelago.v1 import archipelago_pb2 as A
from archipelago.v1 import game_pb2, lobby_pb2
from client import feed as feed_mod
from client.base import M
from client.errors import ApiError
from client.feed import Feed
from client.play import play
from client.play_archipelago import (
    ActionCmd,
    ArchipelagoUI,
    BonusCmd,
    BuildCmd,
    Context,
    ControlCmd,
    DeployCmd,
    Draft,
    StayCmd,
    UnitCmd,
    describe_event,
    parse_command,
    render,
)
from client.play_base import EmptyLine
from engine import get_game
from tests.client.test_play_loop import GAME, WAIT_S, Keyboard, ScriptedGame, Transcript

ROWS = ["??......",
        "?..##...",
        "...###..",
        "..###.#.",
        "........"]
ANN, BOB = "ann", "bob"


def a_view(round_: int = 3, **changes: Any) -> game_pb2.GetViewResponse:
    """Seat 0 (ann) of a two-player game on a small board: own units a-f (c is cargo of b), enemies A
    (revealed) and B in sight, one enemy-log entry, both bases, an outpost each, offers, chat, events."""
    av: dict[str, Any] = {
        "game": "archipelago", "player": 0, "players": 2, "round": round_, "version": 7, "target": 10,
        "max_rounds": 60, "width": 8, "height": 5, "rows": ROWS,
        "base": {"x": 4, "y": 3},
        "bases": [{"seat": 0, "tile": {"x": 4, "y": 3}}, {"seat": 1, "tile": {"x": 6, "y": 3}}],
        "units": [
            {"id": "aa00000001", "owner": 0, "type": "rank1", "tile": {"x": 3, "y": 1}},
            {"id": "aa00000002", "owner": 0, "type": "dvora", "tile": {"x": 1, "y": 2}, "cargo": ["aa00000003"]},
            {"id": "aa00000003", "owner": 0, "type": "rank3", "tile": {"x": 1, "y": 2}, "carrier": "aa00000002"},
            {"id": "aa00000004", "owner": 0, "type": "landmine", "tile": {"x": 4, "y": 2}},
            {"id": "aa00000005", "owner": 0, "type": "flag", "tile": {"x": 3, "y": 3}},
            {"id": "aa00000006", "owner": 0, "type": "fighter", "tile": {"x": 2, "y": 3}},
        ],
        "enemies": [
            {"id": "ee00000001", "owner": 1, "domain": "land", "tile": {"x": 5, "y": 2}, "type": "rank2"},
            {"id": "ee00000002", "owner": 1, "domain": "sea", "tile": {"x": 6, "y": 1}},
        ],
        "enemy_log": [{"id": "ee00000009", "owner": 1, "tile": {"x": 7, "y": 4}, "round": 1, "rounds_ago": 2,
                       "type": "dvora"}],
        "outposts": [{"tile": {"x": 4, "y": 1}, "owner": 0}, {"tile": {"x": 3, "y": 2}, "owner": 1}],
        "resource_tiles": [{"tile": {"x": 3, "y": 3}, "resource": "food"}, {"tile": {"x": 5, "y": 2},
                                                                            "resource": "iron"}],
        "ports": [{"tile": {"x": 5, "y": 2}, "resource": "iron"}],
        "control": [{"x": 3, "y": 3}],
        "stock": {"wood": 5, "food": 4, "iron": 1, "fuel": 0},
        "score": 3, "flags_captured": 1, "bonus": "iron",
        "seats": [{"seat": 0, "score": 3, "resource_total": 9}, {"seat": 1, "score": 5, "resource_total": 12}],
        "offers": [{"id": "o1", "from_seat": 1, "to_seat": 0, "give": {"wood": 2}, "get": {"iron": 1}},
                   {"id": "o2", "from_seat": 0, "give": {"food": 1}, "get": {"fuel": 1}}],
        "chat": [{"from_seat": 1, "to_seat": 0, "text": "psst", "round": round_},
                 {"from_seat": 0, "text": "hello all", "round": round_}],
        "events": [
            {"kind": "fight", "tile": {"x": 5, "y": 2}, "winner": "ee00000001",
             "units": [{"id": "aa00000007", "owner": 0, "type": "rank1", "died": True},
                       {"id": "ee00000001", "owner": 1, "type": "rank2"}]},
            {"kind": "production", "player": 0, "resources": {"food": 2, "wood": 1}},
        ],
    }
    av.update(changes)
    view = game_pb2.GetViewResponse(
        game_id=GAME, game="archipelago", version=40, round_version=38, status=lobby_pb2.GAME_STATUS_RUNNING,
        round=round_, you=0, deadline_unix_ms=int(time.time() * 1000) + 60_000, deadline_seconds=60, seats=2,
        expected=True, code="ABCDEF",
        players=[game_pb2.PlayerInfo(seat=0, nickname=ANN, connected=True, host=True),
                 game_pb2.PlayerInfo(seat=1, nickname=BOB, submitted=True, connected=True)])
    json_format.ParseDict(av, view.archipelago)
    return view


def ctx(round_: int = 3, **changes: Any) -> Context:
    return Context.of(a_view(round_, **changes))


# ---------------------------------------------------------------------------------------- the screen
def test_a81_a82_the_map_shows_coordinates_own_units_enemies_the_log_bases_and_outposts() -> None:
    lines = render(a_view()).splitlines()
    at = lines.index("    0")
    assert lines[at:at + 7] == [
        "    0",
        "    01234567",
        "  0 ??...... 0",
        "  1 ?..a+.B. 1",  # a: own Turai; + own outpost; B: an enemy ship in sight
        "  2 .b.=dA.. 2",  # b: own Dvora (its cargo c is not drawn); = seat 1's outpost; d own mine; A enemy
        "  3 ..fe@.%. 3",  # f own fighter, e own flag, @ own base, % seat 1's base
        "  4 .......* 4",  # *: an enemy last seen there (A83)
    ]


def test_a82_the_legend_lists_own_units_with_cargo_and_enemies_in_sight_with_type_only_once_revealed() -> None:
    text = render(a_view())
    assert "  a  Private (rank1)                (3,1)" in text
    assert "  b  Dvora (dvora)                  (1,2)  cargo: c (Sergeant at (1,2))" in text
    assert "  c  Sergeant (rank3)               (1,2)  in b (Dvora at (1,2))" in text
    assert "  A  seat 1 (bob)  land (5,2)  Corporal (rank2)" in text
    assert "  B  seat 1 (bob)  sea  (6,1)\n" in text  # no type: not revealed
    assert "aa0000000" not in text and "ee0000000" not in text  # no internal id on the screen


def test_a83_the_enemy_log_says_where_and_how_many_rounds_ago() -> None:
    text = render(a_view())
    assert "  *  seat 1 (bob)  last at (7,4), seen 2 rounds ago (round 1)  Dvora (dvora)" in text


def test_a84_stock_score_and_the_seats_public_figures() -> None:
    text = render(a_view())
    assert "Archipelago · round 3 of 60 · first to 10 points wins · you are seat 0" in text
    assert "stock: wood 5 · food 4 · iron 1 · fuel 0 · bonus choice iron · score 3 · flags captured 1" in text
    assert "  seat 0 ann (you): score 3, 9 resources · planning" in text
    assert "  seat 1 bob: score 5, 12 resources · done" in text
    assert "bases: @ yours (4,3) · % seat 1 (bob) (6,3)" in text
    assert "outposts: + yours (4,1) · = seat 1 (bob) (3,2)" in text
    assert "resource tiles (✓ yours): food (3,3)✓ · iron (5,2)" in text
    assert "ports: iron (5,2)" in text


def test_a53_pending_offers_and_this_rounds_chat() -> None:
    text = render(a_view())
    assert "  o1  seat 1 (bob) → you: gives 2 wood for 1 iron" in text
    assert "  o2  you → everyone: gives 1 food for 1 fuel" in text
    assert "chat (round 3):\n  seat 1 (bob) → you: psst\n  you → all: hello all" in text


def test_a85_the_last_rounds_events() -> None:
    text = render(a_view())
    assert "  fight at (5,2): your Private (destroyed); A (seat 1 (bob)'s Corporal at (5,2)) (won)" in text
    assert "  production: resources 1 wood + 2 food" in text


def test_a85_events_of_every_kind_the_engine_makes_are_described() -> None:
    """A few rounds of random play: every event of the engine renders as one line naming its kind."""
    game = get_game("archipelago")
    state = game.new_game(game.normalize_config({"players": 2}), 7)
    seen: set[str] = set()
    for r in range(10):
        state, events = game.resolve(state, {p: game.random_orders(game.view(state, p), r * 2 + p) for p in (0, 1)})
        for p in (0, 1):
            view = game_pb2.GetViewResponse(game="archipelago", you=p, seats=2, round=state.round)
            json_format.ParseDict(game.view(state, p, events), view.archipelago)
            c = Context.of(view)
            for ev in view.archipelago.events:
                d = json_format.MessageToDict(ev)
                line = describe_event(d, c)
                assert line.startswith(d["kind"].replace("_", " ")) and "\n" not in line
                seen.add(d["kind"])
            assert render(view).count("\n") > view.archipelago.height
    assert "production" in seen


def test_a_game_in_its_lobby_has_no_map_yet() -> None:
    view = game_pb2.GetViewResponse(game="archipelago", code="ABCDEF", status=lobby_pb2.GAME_STATUS_LOBBY)
    assert render(view) == "Archipelago — no map yet (the game has not started; code ABCDEF)"


# ---------------------------------------------------------------------------------------- commands
def test_a18_move_takes_a_path_of_steps_by_label_id_or_id_start() -> None:
    c = ctx()
    assert parse_command("move a S", c) == UnitCmd(A.UnitOrder(unit="aa00000001", path=["S"]))
    assert parse_command("MOVE b n,E", c) == UnitCmd(A.UnitOrder(unit="aa00000002", path=["N", "E"]))
    assert parse_command("move aa00000002 ne", c) == UnitCmd(A.UnitOrder(unit="aa00000002", path=["N", "E"]))
    with pytest.raises(ValueError, match="several of your units"):
        parse_command("move aa0000000 N", c)


@pytest.mark.parametrize(("line", "error"), [
    ("move a", "give the steps"),
    ("move a N E", r"moves at most 1 tile\(s\) a round \(A18\); 2 steps given"),
    ("move a X", "step 'X' is not one of N, E, S, W"),
    ("move d N", "never moves"),  # a land mine (A91)
    ("move q N", "no unit 'q' of yours"),
    ("move A N", "that is an enemy"),
    ("move", "name the unit"),
])
def test_a18_bad_moves_are_explained(line: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_command(line, ctx())


def test_a18_goto_takes_a_destination() -> None:
    c = ctx()
    want = UnitCmd(A.UnitOrder(unit="aa00000002", to=A.Tile(x=6, y=4)))
    assert parse_command("goto b 6 4", c) == want
    assert parse_command("goto b 6,4", c) == want
    assert parse_command("goto b (6, 4)", c) == want
    with pytest.raises(ValueError, match=r"\(8,4\) is off the board \(x 0-7, y 0-4\)"):
        parse_command("goto b 8 4", c)
    with pytest.raises(ValueError, match="give the tile as <x> <y>"):
        parse_command("goto b 6", c)


def test_a19_a36_to_a39_actions_with_their_targets() -> None:
    c = ctx()
    assert parse_command("act a outpost", c) == UnitCmd(A.UnitOrder(unit="aa00000001", action="outpost"))
    assert parse_command("act b bombard A", c) == UnitCmd(A.UnitOrder(unit="aa00000002", action="bombard",
                                                                      target="ee00000001"))
    assert parse_command("act f strike ee00000002", c) == UnitCmd(A.UnitOrder(unit="aa00000006", action="strike",
                                                                              target="ee00000002"))
    # a unit of the enemy log may be named by its id (the server decides whether it is in sight)
    reveal = parse_command("act a reveal ee00000009", c)
    assert isinstance(reveal, UnitCmd) and reveal.order.target == "ee00000009"
    for line, error in (("act a outpost A", "an outpost has no target"), ("act b bombard", "needs one target"),
                        ("act b fly", "not an action"), ("act b bombard a", "one of your units, not an enemy"),
                        ("act b bombard Z", "no enemy unit 'Z' in sight")):
        with pytest.raises(ValueError, match=error):
            parse_command(line, c)


def test_a40_to_a42_builds_name_a_type_and_a_mine_its_tile_a_raft_its_ship() -> None:
    c = ctx()
    assert parse_command("build dvora", c) == BuildCmd(A.Build(type="dvora"))
    assert parse_command("build Turai", c) == BuildCmd(A.Build(type="rank1"))  # the name works too
    assert parse_command("build saar5", c) == BuildCmd(A.Build(type="saar5"))
    assert parse_command("build landmine 3 3", c) == BuildCmd(A.Build(type="landmine", tile=A.Tile(x=3, y=3)))
    assert parse_command("build raft b", c) == BuildCmd(A.Build(type="raft", ship="aa00000002"))
    for line, error in (("build flag", "not a unit type you can build"), ("build landmine", "give the tile"),
                        ("build raft", "name the ship"), ("build dvora 3 3", "takes no tile or ship"),
                        ("build", "'types' lists")):
        with pytest.raises(ValueError, match=error):
            parse_command(line, c)


def test_a51_the_bonus_choice_is_a_resource() -> None:
    assert parse_command("bonus Iron", ctx()) == BonusCmd("iron")
    with pytest.raises(ValueError, match="'gold' is not a resource"):
        parse_command("bonus gold", ctx())


def test_a13_a14_deployment_in_round_0_only() -> None:
    zero = ctx(0)
    assert parse_command("deploy a 4 2", zero) == DeployCmd(A.Deployment(unit="aa00000001", tile=A.Tile(x=4, y=2)))
    with pytest.raises(ValueError, match=r"round 0 is for deployment \(A13\)"):
        parse_command("move a N", zero)
    with pytest.raises(ValueError, match=r"round 0 is for deployment \(A13\)"):
        parse_command("build dvora", zero)
    with pytest.raises(ValueError, match=r"deployment happens in round 0 only \(A13\)"):
        parse_command("deploy a 4 2", ctx(1))


def test_a52_bank_gives_one_resource_for_another() -> None:
    c = ctx()
    assert parse_command("bank wood iron", c) == ActionCmd("bank", A.BankAction(give="wood", get="iron", times=1))
    assert parse_command("bank Food wood 2", c) == ActionCmd("bank", A.BankAction(give="food", get="wood", times=2))
    for line, error in (("bank wood wood", "must differ"), ("bank wood", "bank <give> <get>"),
                        ("bank wood iron 0", "≥ 1"), ("bank gold iron", "not a resource")):
        with pytest.raises(ValueError, match=error):
            parse_command(line, c)


def test_a53_offers_to_a_seat_a_nickname_or_everyone() -> None:
    c = ctx()
    got = parse_command("offer 1 give wood=2,food=1 get iron=1", c)
    assert got == ActionCmd("offer", A.OfferAction(to=1, give={"wood": 2, "food": 1}, get={"iron": 1}))
    got = parse_command("offer all give wood get fuel:1, iron=2", c)
    assert got == ActionCmd("offer", A.OfferAction(give={"wood": 1}, get={"fuel": 1, "iron": 2}))
    assert isinstance(got, ActionCmd) and not got.message.HasField("to")
    got = parse_command("offer bob get iron=1 give wood=3", c)
    assert got == ActionCmd("offer", A.OfferAction(to=1, give={"wood": 3}, get={"iron": 1}))
    for line, error in (("offer 0 give wood get iron", "your own seat"), ("offer 1 give wood", "offer <seat|all>"),
                        ("offer 5 give wood get iron", "no seat 5"), ("offer carl give wood get iron", "nickname"),
                        ("offer 1 give wood=x get iron", "whole number"),
                        ("offer 1 give wood wood get iron", "wood named twice")):
        with pytest.raises(ValueError, match=error):
            parse_command(line, c)


def test_a53_accept_decline_withdraw_name_an_offer() -> None:
    c = ctx()
    assert parse_command("accept o1", c) == ActionCmd("accept", A.AcceptAction(offer="o1"))
    assert parse_command("decline o1", c) == ActionCmd("decline", A.DeclineAction(offer="o1"))
    assert parse_command("withdraw o2", c) == ActionCmd("withdraw", A.WithdrawAction(offer="o2"))
    with pytest.raises(ValueError, match="accept <offer>"):
        parse_command("accept", c)


def test_a53_chat_to_everyone_or_one_seat() -> None:
    c = ctx()
    assert parse_command("chat  hello,  world ", c) == ActionCmd("chat", game_pb2.ChatAction(text="hello,  world"))
    assert parse_command("chat @1 just you", c) == ActionCmd("chat", game_pb2.ChatAction(text="just you", to=1))
    assert parse_command("chat @Bob hi", c) == ActionCmd("chat", game_pb2.ChatAction(text="hi", to=1))
    assert parse_command("chat @all hi", c) == ActionCmd("chat", game_pb2.ChatAction(text="hi"))
    with pytest.raises(ValueError, match="chat <text>"):
        parse_command("chat @1", c)


def test_controls_blank_lines_and_unknown_commands() -> None:
    c = ctx()
    for word in ("show", "clear", "done", "draft", "map", "help", "types"):
        assert parse_command(f" {word.upper()} ", c) == ControlCmd(word)
    assert parse_command("?", c) == ControlCmd("help")
    with pytest.raises(EmptyLine):
        parse_command("   ", c)
    with pytest.raises(ValueError, match="unknown command 'fly'"):
        parse_command("fly a N", c)


def test_a18_the_last_order_given_to_a_unit_stands() -> None:
    c = ctx()
    draft = Draft()
    for line in ("move a S", "goto b 6 4", "move a E", "build dvora", "bonus food", "build landmine 3 3",
                 "act f strike B"):
        cmd = parse_command(line, c)
        assert not isinstance(cmd, (ControlCmd, ActionCmd))
        draft.apply(cmd, c)
    # stay: the unit holds still this round, an order to its own tile (no standing order moves it, A70)
    said = draft.apply(StayCmd("aa00000002"), c)
    assert said == "b (Dvora at (1,2)): stays this round (whatever its standing orders)"
    orders = draft.orders()
    assert [(o.unit, list(o.path), o.action) for o in orders.units] == [("aa00000001", ["E"], ""),
                                                                         ("aa00000006", [], "strike"),
                                                                         ("aa00000002", [], "")]
    assert orders.units[2].to == A.Tile(x=1, y=2)
    assert [b.type for b in orders.builds] == ["dvora", "landmine"] and orders.bonus == "food"
    assert draft.describe(c) == ["orders for round 3:", "  a (Private at (3,1)): move E",
                                 "  f (Fighter at (2,3)): strike B (seat 1 (bob)'s sea unit at (6,1))",
                                 "  b (Dvora at (1,2)): stays", "  build #1: Dvora (dvora)",
                                 "  build #2: Land mine (landmine) at (3,3)",
                                 "  bonus choice: food"]
    assert Draft.of(orders).orders() == orders  # a pending submission continues as the draft
    draft.clear()
    assert len(draft) == 0 and draft.orders() == A.ArchipelagoOrders()


# ---------------------------------------------------------------------------------------- the prompt
class ArchipelagoGame(ScriptedGame):
    """Seat 0 of a scripted Archipelago game: GetView, SubmitOrders (refusing a step W, as a step off the
    board, A91) and Act (chat, bank at 4 for 1, A52; any accept is refused, A53)."""

    def __init__(self) -> None:
        super().__init__()
        self.acts: list[game_pb2.ActRequest] = []
        self.standing: list[A.ArchipelagoStandingOrders] = []

    async def add(self, update: game_pb2.Update) -> None:
        """Push an update made by the test (its seq is the next one)."""
        async with self.new:
            update.seq = len(self.updates) + 1
            self.updates.append(update)
            self.new.notify_all()

    def set_round(self, round_: int, **kw: Any) -> None:
        self.current = a_view(round_, **kw)
        self.current.version = self.current.round_version = len(self.updates) + 10
        self.current.seq = len(self.updates)

    async def call(self, service: str, method: str, request: Message, response: type[M]) -> M:
        if method == "GetView":
            view = game_pb2.GetViewResponse()
            view.CopyFrom(self.current)
            return view  # type: ignore[return-value]
        if method == "SetStandingOrders":
            assert isinstance(request, game_pb2.SetStandingOrdersRequest)
            self.standing.append(request.archipelago)
            self.current.archipelago_standing.CopyFrom(request.archipelago)
            return game_pb2.SetStandingOrdersResponse()  # type: ignore[return-value]
        if method == "Act":
            assert isinstance(request, game_pb2.ActRequest)
            which = request.WhichOneof("action")
            stock = self.current.archipelago.stock
            if which == "bank":
                have = getattr(stock, request.bank.give)
                if have < 4:
                    raise ApiError("INVALID_ARGUMENT", "order/illegal", "bank.give", "A52",
                                   f"bank.give: rule A52: the bank wants 4 {request.bank.give} (4 for 1), you have "
                                   f"{have}", 422)
                setattr(stock, request.bank.give, have - 4)
                setattr(stock, request.bank.get, getattr(stock, request.bank.get) + 1)
            elif which == "accept":
                raise ApiError("INVALID_ARGUMENT", "order/illegal", "accept.offer", "A53",
                               "accept.offer: rule A53: offer no longer valid", 422)
            self.acts.append(request)
            return game_pb2.ActResponse(version=len(self.updates) + 10)  # type: ignore[return-value]
        assert method == "SubmitOrders" and isinstance(request, game_pb2.SubmitOrdersRequest)
        if request.version < self.current.round_version:
            raise ApiError("ABORTED", "action/stale_state_id", "version", "A16", "stale", 409)
        for i, o in enumerate(request.archipelago.units):
            if "W" in o.path:
                raise ApiError("INVALID_ARGUMENT", "order/illegal", f"units[{i}].path[0]", "A91",
                               f"units[{i}].path[0]: rule A91: unit {o.unit}: step 1 leaves the board", 422)
        self.submitted.append(request)
        self.current.archipelago_pending.CopyFrom(request.archipelago)
        if not request.draft:
            self.current.expected, self.current.submitted = False, True
        await self.push("submitted", self.current.round, seat=0, done=not request.draft)
        self.current.seq = len(self.updates)
        return game_pb2.SubmitOrdersResponse(version=len(self.updates) + 10, round=self.current.round,  # type: ignore[return-value]
                                             submitted=not request.draft)


@pytest.fixture
def agame(monkeypatch: pytest.MonkeyPatch) -> ArchipelagoGame:
    monkeypatch.setattr(feed_mod, "RETRY_S", 0.0)
    return ArchipelagoGame()


async def opened(game: ArchipelagoGame, round_: int) -> None:
    for kind in ("joined", "joined", "started"):
        await game.push(kind, 0)
    await game.push("round_opened", round_, deadline_unix_ms=0)
    game.set_round(round_)


async def test_a13_a15_round_0_deploys_and_is_done() -> None:
    game = ArchipelagoGame()
    await opened(game, 0)
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(game, GAME, lines=keys, out=screen))
    at = await screen.expect("round 0, deployment: deploy <unit> <x> <y>")
    at = await screen.expect("deploy (0 so far)> ", at)
    keys.typed.put_nowait("move a N")
    at = await screen.expect("error: round 0 is for deployment (A13)", at)
    keys.typed.put_nowait("deploy a 4 2")
    at = await screen.expect("a (Private at (3,1)): deploy at (4,2)", at)
    keys.typed.put_nowait("done")
    at = await screen.expect("orders in for round 0 (1 order)", at)
    await screen.expect("waiting for the others", at)
    assert [list(r.archipelago.deploy) for r in game.submitted] == [
        [A.Deployment(unit="aa00000001", tile=A.Tile(x=4, y=2))]]
    assert not game.submitted[0].draft
    keys.typed.put_nowait(None)
    await game.push("round_closed", 0, early=True)
    await game.push("round_opened", 1, deadline_unix_ms=0)
    game.set_round(1)
    async with asyncio.timeout(WAIT_S):
        assert await player == 1
    text = screen.getvalue()
    assert "round 0 closed: every connected player had submitted" in text
    assert "Archipelago · round 1 of 60" in text and "end of input" in text


async def test_a16_a52_a53_a_round_of_commands_refusals_notices_and_the_close_at_the_prompt(
        agame: ArchipelagoGame) -> None:
    await opened(agame, 1)
    screen, keys = Transcript(), Keyboard()
    player = asyncio.ensure_future(play(agame, GAME, lines=keys, out=screen))
    at = await screen.expect("  1 ?..a+.B. 1")  # the map
    at = await screen.expect("orders (0 so far)> ", at)
    assert agame.open_streams == 1  # connected at the prompt (A17)

    keys.typed.put_nowait("move a W")  # a land unit sent to sea: a plain reason, nothing sent
    at = await screen.expect("error: a (Private at (3,1)) walks on land only, and (2,1) is sea", at)
    keys.typed.put_nowait("move b W")
    at = await screen.expect("b (Dvora at (1,2)): move W", at)
    keys.typed.put_nowait("done")  # the server refuses: said about the player's own unit, never its id
    at = await screen.expect("refused: your order for b (Dvora at (1,2)): move W: units[0].path[0]: rule A91: unit "
                             "b (Dvora at (1,2)): step 1 leaves the board (rule A91: /rules/archipelago#A91)", at)
    keys.typed.put_nowait("stay b")
    keys.typed.put_nowait("move a S")  # the new order replaces the old one (A18)
    keys.typed.put_nowait("show")
    at = await screen.expect("orders for round 1:\n  b (Dvora at (1,2)): stays\n  a (Private at (3,1)): move S\n", at)

    keys.typed.put_nowait("bank food wood")  # A52, at once
    at = await screen.expect("done: bank: wood ×1 for your food — stock: wood 6 · food 0 · iron 1 · fuel 0", at)
    keys.typed.put_nowait("bank food wood")
    at = await screen.expect("refused: bank.give: rule A52: the bank wants 4 food (4 for 1), you have 0", at)
    keys.typed.put_nowait("chat @bob hi")
    at = await screen.expect("done: chat to seat 1 (bob): hi", at)
    keys.typed.put_nowait("accept o9")
    at = await screen.expect("refused: accept.offer: rule A53: offer no longer valid", at)
    keys.typed.put_nowait("fly a N")
    at = await screen.expect("error: unknown command 'fly' (help lists the commands)", at)
    assert [r.WhichOneof("action") for r in agame.acts] == ["bank", "chat"]
    assert agame.acts[1].chat == game_pb2.ChatAction(text="hi", to=1)

    # the others' chat and offers are shown as they come, and the prompt again
    at = await screen.expect("orders (2 so far)> ", at)
    await agame.add(game_pb2.Update(kind="chat", round=1, seat=1,
                                    chat=game_pb2.ChatMessage(seat=1, nickname=BOB, text="deal?", to=0)))
    at = await screen.expect("\n[chat] seat 1 (bob) → you: deal?\n", at)
    at = await screen.expect("orders (2 so far)> ", at)
    offer = game_pb2.Update(kind="event", event_kind="offer", round=1, seat=-1)
    offer.data.update({"id": "o3", "from": 1, "to": 0, "give": {"iron": 1}, "get": {"wood": 2}})
    await agame.add(offer)
    at = await screen.expect("[offer o3] seat 1 (bob) offers you 1 iron for 2 wood — accept o3 / decline o3", at)

    keys.typed.put_nowait("draft")  # A16: kept, not done; the prompt stays
    at = await screen.expect("draft saved for round 1 (2 orders)", at)
    at = await screen.expect("orders (2 so far)> ", at)
    assert [(r.draft, list(r.archipelago.units)) for r in agame.submitted] == [
        (True, [A.UnitOrder(unit="aa00000002", to=A.Tile(x=1, y=2)), A.UnitOrder(unit="aa00000001", path=["S"])])]

    # the deadline passes at the prompt: the prompt is abandoned; the draft stood
    await agame.push("round_closed", 1, early=False)
    await agame.push("round_opened", 2, deadline_unix_ms=0)
    agame.set_round(2)
    at = await screen.expect("Archipelago · round 2 of 60", at)  # the new screen, what happened under it
    at = await screen.expect("round 1 closed at its deadline — you were not done: your draft orders stood", at)
    at = await screen.expect("orders (0 so far)> ", at)
    assert keys.discarded == 1

    keys.typed.put_nowait("done")
    at = await screen.expect("orders in for round 2 (0 orders)", at)
    await agame.push("round_closed", 2, early=True)
    agame.set_round(2, outcome={"winners": [0], "reason": "target", "scores": [10, 5]})
    agame.current.status = lobby_pb2.GAME_STATUS_OVER
    await agame.push("game_over", 2)
    async with asyncio.timeout(WAIT_S):
        assert await player == 0
    text = screen.getvalue()[at:]
    assert "round 2 closed: every connected player had submitted" in text
    assert "final scores: you 10, seat 1 (bob) 5" in text
    assert "game over after round 2: ann won (the target score was reached) — you win" in text and "[0]" not in text
    assert agame.open_streams == 0


def test_live_notices_leave_out_the_players_own_doings() -> None:
    ui = ArchipelagoUI()
    ui.render(a_view())

    def event(kind: str, **data: Any) -> game_pb2.Update:
        u = game_pb2.Update(kind="event", event_kind=kind, seq=1)
        u.data.update(data)
        return u

    assert ui.notice(event("offer", id="o4", **{"from": 0}, give={"wood": 1}, get={"iron": 1})) is None
    assert ui.notice(event("offer", id="o4", **{"from": 1}, give={"wood": 1}, get={"iron": 1})) == \
        "[offer o4] seat 1 (bob) offers everyone 1 wood for 1 iron — accept o4"
    assert ui.notice(event("trade", offer="o2", **{"from": 0, "to": 1}, give={"food": 1}, get={"fuel": 1})) == \
        "[trade] seat 1 (bob) accepted your offer o2: you gave 1 food and got 1 fuel"
    assert ui.notice(event("trade", offer="o1", **{"from": 1, "to": 0}, give={"wood": 2}, get={"iron": 1})) is None
    assert ui.notice(event("offer_declined", offer="o2", by=1)) == "[offer o2 declined by seat 1 (bob)]"
    assert ui.notice(event("offer_withdrawn", offer="o1", by=1)) == "[offer o1 withdrawn by seat 1 (bob)]"
    assert ui.notice(event("offer_closed", offer="o7")) == "[offer o7 was taken by another player]"
    assert ui.notice(event("bank", player=0)) is None
    done = game_pb2.Update(kind="submitted", seat=1, round=3, seq=2)
    done.data.update({"done": True})
    assert ui.notice(done) == "[seat 1 (bob) is done for round 3]"
    mine = game_pb2.Update(kind="chat", seat=0, seq=3, chat=game_pb2.ChatMessage(seat=0, text="x"))
    assert ui.notice(mine) is None


def test_a_draft_of_the_player_is_reported_as_standing_at_the_close() -> None:
    feed = Feed(ArchipelagoGame(), GAME, a_view())
    view = a_view()
    view.archipelago_pending.CopyFrom(A.ArchipelagoOrders(bonus="food"))
    feed.seen(view)
    feed.closed.append(feed_mod.Closed(3, early=False))
    assert feed.reports() == ["round 3 closed at its deadline — you were not done: your draft orders stood"]


def test_the_archipelago_client_imports_no_server_module() -> None:
    """Like tests/client/test_isolation.py for the Salvo client: no gateway, services or Ray."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    probe = ("import json, sys, client.play, client.play_archipelago; client.play.game_ui('archipelago'); "
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('gateway', 'services', 'ray'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
