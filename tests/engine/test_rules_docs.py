"""The player rules in docs/rules/ cannot drift from the code.

- Every generated part (``<!-- generated: NAME -->`` … ``<!-- /generated -->``) equals what the
  engine's ``rules_doc.blocks()`` writes (``scripts/rules_docs.py`` rewrites them), and the unit,
  board and fleet tables are read back and compared with the engine's own tables.
- Every other number in the prose is either checked here against its source (the engine, the
  gateway or the game actor; A50/A51/A66 amounts by resolving a real round) or is on a short list of
  structural phrases (ordinals, the origin tile, an illustration).
- Every JSON example parses as the protobuf message it is tagged with (field names as in the
  .proto, unknown fields refused), converts to the engine's dict the way the doors do, and is
  accepted by the engine (validation, standing-order check, ``act``) on a state where its ids exist.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from archipelago.v1 import game_pb2, lobby_pb2
from engine import GAMES, get_game
from engine.archipelago import GAME as ARCHIPELAGO
from engine.archipelago.mapgen import BOARD_SIZES
from engine.archipelago.scenario import resolve_scenario, state_from_scenario
from engine.archipelago.state import State
from engine.archipelago.units import RESOURCES, TARGETS, UNIT_TYPES
from engine.errors import InvalidOrder
from engine.rules_doc import GENERATORS, MARKER, fill, names
from engine.salvo import GAME as SALVO
from engine.salvo.board import FLEETS
from gateway import convert
from gateway.api import SPEEDS, new_code
from services.game_actor import ACTIONS_PER_ROUND, SUBMISSIONS_PER_ROUND, check_nickname

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "rules"


def read(name: str) -> str:
    return (DOCS / f"{name}.md").read_text(encoding="utf-8")


def generated(text: str, name: str) -> str:
    """The content of the generated part ``name`` of ``text``."""
    found = [m.group(2) for m in MARKER.finditer(text) if m.group(1) == name]
    assert found, f"no generated part {name!r}"
    return found[0]


def table_rows(block: str) -> list[list[str]]:
    """The body rows of a Markdown table, each a list of stripped cells."""
    lines = [ln.strip() for ln in block.strip().splitlines()]
    assert len(lines) >= 2 and set(lines[1]) <= set("|-"), block
    return [[c.strip().strip("`") for c in ln.strip("|").split("|")] for ln in lines[2:]]


def goods(cell: str) -> dict[str, int]:
    """``"1 wood, 2 iron"`` -> ``{"wood": 1, "iron": 2}``; ``"–"`` -> ``{}``."""
    if cell == "–":
        return {}
    out = {}
    for part in cell.split(", "):
        n, r = part.split(" ")
        out[r] = int(n)
    return out


def dash(cell: str) -> int | None:
    return None if cell == "–" else int(cell)


# --------------------------------------------------------------------------------- generated parts


@pytest.mark.parametrize("game", sorted(GENERATORS))
def test_generated_parts_match_the_engine(game: str) -> None:
    text = read(game)
    blocks = GENERATORS[game]()
    used = set(names(text))
    assert used == set(blocks), f"unknown parts: {sorted(used - set(blocks))}, unused: {sorted(set(blocks) - used)}"
    assert fill(text, blocks) == text, f"docs/rules/{game}.md is stale: run scripts/rules_docs.py"


def test_fill_rewrites_stale_parts_and_refuses_unknown_ones() -> None:
    text = ("give <!-- generated: bank_rate -->7<!-- /generated --> for 1\n"
            "<!-- generated: units -->\n| old |\n<!-- /generated -->\n")
    out = fill(text, {"bank_rate": "4", "units": "| a |\n|---|\n| b |"})
    assert out == ("give <!-- generated: bank_rate -->4<!-- /generated --> for 1\n"
                   "<!-- generated: units -->\n| a |\n|---|\n| b |\n<!-- /generated -->\n")
    assert fill(out, {"bank_rate": "4", "units": "| a |\n|---|\n| b |"}) == out
    with pytest.raises(KeyError, match="nope"):
        fill("<!-- generated: nope -->1<!-- /generated -->", {"bank_rate": "4"})


def test_a10_a11_unit_table_reads_back_as_the_unit_types() -> None:
    rows = table_rows(generated(read("archipelago"), "units"))
    assert [r[1] for r in rows] == list(UNIT_TYPES)
    for name, uid, domain, strength, move, sight, cost, carries, limit in rows:
        t = UNIT_TYPES[uid]
        label = f"{t.name} ({t.rank})" if t.rank else t.name  # a rank's English name, its Hebrew rank beside it
        assert (name, domain, dash(strength), int(move), int(sight)) == (label, t.domain, t.strength, t.move,
                                                                          t.sight)
        if t.buildable:
            assert goods(cost) == t.cost, uid
        else:
            assert cost == "not buildable"
        assert (dash(carries) or 0, dash(limit)) == (t.capacity, t.limit), uid


def test_a5_a9_board_table_reads_back_as_sizes_and_targets() -> None:
    rows = table_rows(generated(read("archipelago"), "boards"))
    assert [int(r[0]) for r in rows] == sorted(BOARD_SIZES)
    for players, size, target, rings, _centres in rows:
        n = int(players)
        assert tuple(int(v) for v in size.split("×")) == BOARD_SIZES[n]
        assert int(target) == TARGETS[n]
        assert int(rings) == n  # A7: one ring island per player


def test_s2_s4_fleet_table_reads_back_as_the_fleets() -> None:
    rows = table_rows(generated(read("salvo"), "fleets"))
    for fleet, specs in FLEETS.items():
        mine = [r for r in rows if r[0] == fleet]
        assert [(r[1], int(r[2]), int(r[3])) for r in mine[:-1]] == [(s.name, s.size, s.shots) for s in specs]
        assert mine[-1][1:] == ["**total**", str(sum(s.size for s in specs)), str(sum(s.shots for s in specs))]
    assert {r[0] for r in rows} == set(FLEETS)


# ------------------------------------------------------------------- numbers outside generated parts


def prose(text: str) -> str:
    """``text`` without its generated parts, code, comments, link targets, rule ids and the unit
    names that hold a digit (Sa'ar 6, …): what is left is prose whose numbers must be checked."""
    text = MARKER.sub(" ", text)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    for name in sorted((t.name for t in UNIT_TYPES.values() if re.search(r"\d", t.name)), key=len, reverse=True):
        text = text.replace(name, " ")
    return re.sub(r"\b[ASM]\d+\b", " ", text)


@functools.cache
def _scenario_round() -> dict[str, Any]:
    """One resolved round in which seat 0 wins a fight on a ring island (A51), builds the first
    Shaldag of the game (A66) and controls one wood tile (A50)."""
    scenario = {
        "rows": ["0#w..##.",
                 ".....#..",
                 "......#1"],
        "units": [{"id": "a", "owner": 0, "type": "rank3", "tile": [5, 0]},
                  {"id": "b", "owner": 1, "type": "rank1", "tile": [6, 0]}],
        "stocks": {"0": {"wood": 2, "iron": 2}},
        "round": 1,
    }
    before = state_from_scenario(scenario)
    out = resolve_scenario(scenario, {0: {"units": [{"unit": "a", "path": ["E"]}],
                                          "builds": [{"type": "shaldag"}], "bonus": "food"}, 1: {}})
    kinds = [e["kind"] for e in out["events"]]
    assert "fight" in kinds and "first_big_build" in kinds and "bonus" in kinds, kinds
    return {"before": before.pstates[0], "after": out, "events": out["events"]}


def production_per_tile() -> str:
    r = _scenario_round()
    got = [e for e in r["events"] if e["kind"] == "production" and e.get("player") == 0]
    assert got, r["events"]
    (amount,) = set(got[0]["resources"].values())
    return str(amount)


def bonus_amount() -> str:
    r = _scenario_round()
    production = next(e for e in r["events"] if e["kind"] == "production" and e.get("player") == 0)
    food = r["after"]["stocks"]["0"]["food"] - r["before"].stock["food"] - production["resources"].get("food", 0)
    return str(food)


def a66_points() -> str:
    r = _scenario_round()
    return str(r["after"]["scores"]["0"] - r["before"].score)


def bank_gets() -> str:
    state = state_from_scenario({"rows": ["0#..#1"], "stocks": {"0": {"wood": 4}}})
    new = ARCHIPELAGO.act(state, 0, {"bank": {"give": "wood", "get": "iron"}})[0]
    return str(new.pstates[0].stock["iron"])


def nickname_lengths() -> tuple[str, str]:
    def ok(n: int) -> bool:
        try:
            check_nickname("x" * n)
        except InvalidOrder:
            return False
        return True

    accepted = [n for n in range(0, 200) if ok(n)]
    assert accepted == list(range(accepted[0], accepted[-1] + 1))
    return str(accepted[0]), str(accepted[-1])


def limit_of_one() -> str:
    limits = {t.limit for t in UNIT_TYPES.values() if t.id in ("rank13", "saar6")}
    assert len(limits) == 1
    return str(limits.pop())


def version_bits() -> str:
    field = game_pb2.SubmitOrdersRequest.DESCRIPTOR.fields_by_name["version"]
    return "64" if field.type == FieldDescriptor.TYPE_INT64 else str(field.type)


Check = tuple[str, str, Callable[[], str | tuple[str, ...]]]


def spaced(pattern: str) -> str:
    """A pattern whose spaces match any run of white space (a phrase may wrap onto the next line)."""
    return pattern.replace(" ", r"\s+")


#: (rule, pattern with the numbers as groups, their value from the source), per page
CHECKED: dict[str, list[Check]] = {
    "archipelago": [
        ("A1", r"at most (\d+) s\)", lambda: f"{SPEEDS['fast']:g}"),
        ("A1", r"at most (\d+) h\)", lambda: f"{SPEEDS['slow'] / 3600:g}"),
        ("A2", r"(\d+)-character \*\*game code", lambda: str(len(new_code()))),
        ("A2", r"nickname \((\d+)–(\d+) printable", nickname_lengths),
        ("A11", r"counts as −(\d+)\)", lambda: str(-UNIT_TYPES["landmine"].duel_strength)),
        ("A50", r"gives you (\d+) of\s+its resource", production_per_tile),
        ("A51", r"you get (\d+) more of your chosen", bonus_amount),
        ("A52", r"of one resource for (\d+) of another", bank_gets),
        ("A52", r"for (\d+) when you give", bank_gets),
        ("A42", r"\"At most (\d+)\" \(General", limit_of_one),
        ("A66", r"scores \+(\d+) \(players who do it", a66_points),
        ("A16", r"caps each player at (\d+) submissions and (\d+) actions",
         lambda: (str(SUBMISSIONS_PER_ROUND), str(ACTIONS_PER_ROUND))),
        ("", r"(\d+)-bit integers", version_bits),
    ],
    "salvo": [
        ("S9", r"caps each player at (\d+) submissions and (\d+)\s+actions",
         lambda: (str(SUBMISSIONS_PER_ROUND), str(ACTIONS_PER_ROUND))),
    ],
}

#: numbers that are not parameters of any part: ordinals, list numbering, the origin, illustrations
STRUCTURAL: tuple[str, ...] = (
    r"\b[Rr]ounds? \d\b(, \d, …)?",   # round 0 (the setup round), round 1, "rounds 1, 2, …"
    r"\bsub-step \d\b",              # A22's sub-steps, by number
    r"(?m)^\s*\d\. ",                # list numbering
    r"\(\d\)",                       # A21's resolution steps (1)…(6)
    r"\(0, 0\)",                     # the top-left tile
    r"never below 0",                # A41: stocks are never negative
    r"keep 2 wood",                  # an illustration of a bank rule (any number would do)
    r"0 or left\s+out",              # proto3: 0 is "not set"
    r"×\d",                          # an illustration of an S6 report
    r"each 1–",                      # a chat message is not empty (the upper bound is generated)
)


@pytest.mark.parametrize(("game", "rule", "pattern", "source"),
                         [(g, rule, pat, src) for g, checks in CHECKED.items() for rule, pat, src in checks],
                         ids=[f"{g}-{rule or 'api'}-{i}" for g, checks in CHECKED.items() for i, (rule, _, _) in
                              enumerate(checks)])
def test_numbers_in_the_prose_match_their_source(game: str, rule: str, pattern: str,
                                                 source: Callable[[], str | tuple[str, ...]]) -> None:
    found = re.findall(spaced(pattern), prose(read(game)))
    assert found, f"{rule}: the phrase {pattern!r} is gone from docs/rules/{game}.md (update this check)"
    expected = source()
    assert all(f == expected for f in found), (rule, found, expected)


@pytest.mark.parametrize("game", sorted(CHECKED))
def test_no_number_in_the_prose_goes_unchecked(game: str) -> None:
    text = prose(read(game))
    for _, pattern, _ in CHECKED[game]:
        text = re.sub(spaced(pattern), " ", text)
    for pattern in STRUCTURAL:
        text = re.sub(pattern, " ", text)
    left = [line.strip() for line in text.splitlines() if re.search(r"\d", line)]
    assert not left, ("numbers neither generated nor checked (put them between generated markers, "
                      f"or check them in this file): {left}")


def test_index_lists_every_page_and_its_player_counts() -> None:
    text = read("README")
    pages = re.findall(r"\]\(([a-z]+)\.md\)", text)
    assert set(pages) >= {*GENERATORS, "arcmage"}
    for game in GENERATORS:
        assert (DOCS / f"{game}.md").is_file()
    rows = {re.search(r"\(([a-z]+)\.md\)", r[2]).group(1): r  # type: ignore[union-attr]
            for r in table_rows(text[text.index("| game |"):text.index("\n\n", text.index("| game |"))])}
    for kind, row in rows.items():
        if kind not in GAMES:
            assert not re.search(r"\d", row[1]), f"{kind}: player counts are checked only for engine games"
            continue
        g = get_game(kind)
        want = str(g.min_players) if g.min_players == g.max_players else f"{g.min_players}–{g.max_players}"
        assert row[1] == want, (kind, row[1], want)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", [*sorted(GENERATORS), "README"])
def test_links_inside_the_pages_lead_somewhere(page: str) -> None:
    text = read(page)
    anchors = {slug(h) for h in re.findall(r"(?m)^#+ (.+)$", text)}
    for target in re.findall(r"\]\(#([^)]+)\)", text):
        assert target in anchors, f"{page}.md links to #{target}, which is no heading"
    for other in re.findall(r"\]\(([a-z]+\.md)\)", text):
        assert other == "arcmage.md" or (DOCS / other).is_file(), other


# --------------------------------------------------------------------------------- JSON examples

_EXAMPLE = re.compile(r"<!-- example: archipelago\.v1\.(\w+)(?: round=(\d+))? -->\s*```json\n(.*?)```", re.S)
_MESSAGES: dict[str, type[Message]] = {"CreateGameRequest": lobby_pb2.CreateGameRequest,
                                       "SubmitOrdersRequest": game_pb2.SubmitOrdersRequest,
                                       "ActRequest": game_pb2.ActRequest,
                                       "SetStandingOrdersRequest": game_pb2.SetStandingOrdersRequest}


def examples(game: str) -> list[tuple[str, int | None, Message]]:
    """(message name, round tag, parsed message) of every example of a page, in order."""
    out = []
    for m in _EXAMPLE.finditer(read(game)):
        name, rnd, body = m.group(1), m.group(2), m.group(3)
        msg = _MESSAGES[name]()
        json_format.ParseDict(json.loads(body), msg)  # unknown or misspelt fields raise
        out.append((name, None if rnd is None else int(rnd), msg))
    return out


@pytest.mark.parametrize("game", sorted(GENERATORS))
def test_every_json_example_is_tagged_and_parses_as_its_message(game: str) -> None:
    text = read(game)
    assert text.count("```json") == len(_EXAMPLE.findall(text)), "every JSON example names its message"
    got = examples(game)
    assert {name for name, _, _ in got} >= {"CreateGameRequest", "SubmitOrdersRequest", "ActRequest"}


#: a small board holding every id the Archipelago examples use (x grows East, y South)
EXAMPLE_SCENARIO: dict[str, Any] = {
    "rows": ["0##......",
             "###......",
             ".....##..",
             ".....#...",
             ".......##",
             ".......#1"],
    "units": [{"id": "3fa9c01e7b", "owner": 0, "type": "rank3", "tile": [1, 1]},
              {"id": "91c2d0aa45", "owner": 0, "type": "rank1", "tile": [0, 1]},
              {"id": "c07e55b2d9", "owner": 0, "type": "engineer", "tile": [5, 2]},
              {"id": "5d4e8b10f3", "owner": 0, "type": "dvora", "tile": [4, 3]},
              {"id": "e2a7c9d04b", "owner": 1, "type": "rank1", "tile": [5, 3]}],
    "stocks": {"0": {"wood": 6, "food": 4, "iron": 4, "fuel": 2}, "1": {r: 4 for r in RESOURCES}},
}


def example_state(rnd: int) -> State:
    return state_from_scenario({**EXAMPLE_SCENARIO, "round": rnd})


def test_a2_a5_create_game_examples_are_valid_options() -> None:
    for game in GENERATORS:
        for name, _, msg in examples(game):
            if name != "CreateGameRequest":
                continue
            assert isinstance(msg, lobby_pb2.CreateGameRequest) and msg.game == game
            options = convert.options_dict(msg)
            assert options, f"{game}: the example shows its options"
            get_game(game).normalize_config({**options, "players": msg.seats})


def test_a13_a18_a20_archipelago_order_examples_pass_validation() -> None:
    submitted = [(rnd, msg) for name, rnd, msg in examples("archipelago") if name == "SubmitOrdersRequest"]
    assert sorted(rnd for rnd, _ in submitted if rnd is not None) == [0, 3]
    for rnd, msg in submitted:
        assert rnd is not None
        orders = convert.member_dict("archipelago", msg, "orders")
        assert orders
        ARCHIPELAGO.validate(example_state(rnd), 0, orders)  # raises naming field and rule if refused


def test_a70_a74_standing_order_example_passes_the_check() -> None:
    (msg,) = [m for name, _, m in examples("archipelago") if name == "SetStandingOrdersRequest"]
    standing = convert.member_dict("archipelago", msg, "standing")
    out = ARCHIPELAGO.check_standing(example_state(3), 0, standing)
    assert out["posture"] == standing["posture"] and len(out["units"]) == len(standing["units"])


def test_a52_a53_action_examples_are_accepted_by_act() -> None:
    acts = [convert.to_dict(m) for name, _, m in examples("archipelago") if name == "ActRequest"]
    by_kind = {}
    for a in acts:
        del a["game_id"]
        a.pop("idempotency_key", None)
        (kind,) = a
        by_kind[kind] = a
    assert set(by_kind) == {"bank", "offer", "accept", "decline", "withdraw", "chat"}
    state = example_state(3)
    for kind in ("bank", "chat"):
        ARCHIPELAGO.act(state, 0, by_kind[kind])
    offered, events = ARCHIPELAGO.act(state, 0, by_kind["offer"])
    assert events[0].data["id"] == by_kind["accept"]["accept"]["offer"]  # the id the examples answer
    ARCHIPELAGO.act(offered, 1, by_kind["accept"])
    ARCHIPELAGO.act(offered, 1, by_kind["decline"])
    ARCHIPELAGO.act(offered, 0, by_kind["withdraw"])


def test_s3_s5_salvo_order_examples_pass_validation() -> None:
    got = [(rnd, convert.member_dict("salvo", m, "orders")) for name, rnd, m in examples("salvo")
           if name == "SubmitOrdersRequest"]
    assert [rnd for rnd, _ in got] == [0, 0, 1]
    state = SALVO.new_game({}, seed=7)
    for rnd, orders in got:
        if rnd == 0:
            SALVO.validate(state, 0, orders)
    placement = got[0][1]
    state, _ = SALVO.resolve(state, {0: placement, 1: placement})
    assert state.round == 1
    for rnd, orders in got:
        if rnd == 1:
            SALVO.validate(state, 0, orders)
    chat = [convert.to_dict(m) for name, _, m in examples("salvo") if name == "ActRequest"]
    assert len(chat) == 1
    SALVO.act(state, 0, {"chat": chat[0]["chat"]})


def test_a90_the_agents_rule_texts_carry_the_pages_as_they_are() -> None:
    """gateway/agent_rules/<game>.md that carries a game's page (Arcmage's) holds it as it is now,
    its number markers left out: ``scripts/rules_docs.py`` rewrites it, and would change nothing."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("rules_docs", Path(__file__).parents[2] / "scripts" / "rules_docs.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--check"]) == 0, "run scripts/rules_docs.py"
    page = (DOCS / "arcmage.md").read_text(encoding="utf-8")
    agent = (Path(__file__).parents[2] / "gateway" / "agent_rules" / "arcmage.md").read_text(encoding="utf-8")
    assert script.agent_copy(agent, page) == agent
    assert script.agent_copy(agent, page + "\nA new line.\n") != agent, "a change of the page reaches the copy"
