"""One test per rule id of the Arcmage spec (M1–M58)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from engine.arcmage import GAME, core
from engine.arcmage.carddb import DECK_SIZE, DECKS, DEFS, HAND_LIMIT, MAX_COPIES, DeckError
from engine.arcmage.game import IMPLEMENTED
from engine.arcmage.scenario import summary
from engine.base import RESPONSE_DEADLINE, TURN, TURN_DEADLINE, WINDOW, has_standing, standing_of, state_hash
from engine.errors import IllegalOrder, InvalidOrder, NotYourTurn, RateLimited
from tests.engine.arcmage import test_cards
from tests.engine.arcmage.helpers import (
    EVENTS,
    attack,
    block,
    card,
    cast,
    choose,
    do,
    fight,
    head,
    make,
    pending_kind,
    raises,
    settle,
    zone,
)


def _list(deck: str) -> list[str]:
    return [DEFS[k]["name"] for k, n in sorted(DECKS[deck].items()) for _ in range(n)]


# --- players, decks, winning ---------------------------------------------------------------------

def test_m1_decks_have_45_cards_3_cities_3_copies_and_2_to_4_players() -> None:
    ok = _list("Brothers in Arms")
    assert len(ok) == DECK_SIZE
    GAME.normalize_config({"players": 2, "decks": [ok, "Gaian love for life"]})
    raises(lambda: GAME.normalize_config({"players": 5}), InvalidOrder, "M1")
    e = raises(lambda: GAME.normalize_config({"players": 2, "decks": [ok[:-1], ok]}), DeckError, "M1")
    assert "44 cards" in str(e)
    four = [n for n in ok if n != "Bearer"] + ["Mentor"] * 3  # 4 Mentors... and 45 cards
    e = raises(lambda: GAME.normalize_config({"players": 2, "decks": [four, ok]}), DeckError)
    assert any("Mentor: 6 copies" in p for p in e.problems)  # type: ignore[attr-defined]
    no_city = [n for n in ok if DEFS[core_key(n)]["type"] != "city"] + ["Mentor"] * 0
    e = raises(lambda: GAME.normalize_config({"players": 2, "decks": [no_city, ok]}), DeckError)
    assert any("0 cities" in p for p in e.problems)  # type: ignore[attr-defined]


def core_key(name: str) -> str:
    from engine.arcmage.carddb import card_key
    k = card_key(name)
    assert k is not None
    return k


def test_m2_built_in_decks_and_custom_lists_every_problem_named() -> None:
    cfg = GAME.normalize_config({"players": 2})
    assert cfg["decks"] == ["Brothers in Arms", "Gaian love for life"]
    raises(lambda: GAME.normalize_config({"players": 2, "decks": ["Nope", "Brothers in Arms"]}), InvalidOrder, "M2")
    bad = [*_list("Gaian love for life")[:40], "Not A Card", "Crop Token"]
    e = raises(lambda: GAME.normalize_config({"players": 2, "decks": [bad, "Brothers in Arms"]}), DeckError)
    probs = e.problems  # type: ignore[attr-defined]
    assert any("Not A Card" in p for p in probs) and any("token" in p for p in probs)
    assert any("cards, a deck has exactly 45" in p for p in probs)


def test_m3_a_game_past_max_rounds_turns_is_a_draw() -> None:
    cfg = GAME.normalize_config({"players": 2})
    assert cfg["max_rounds"] == 500
    assert GAME.normalize_config({"players": 2, "max_rounds": 0})["max_rounds"] == 500  # 0: the default (proto)
    raises(lambda: GAME.normalize_config({"players": 2, "max_rounds": -1}), InvalidOrder, "M3")
    s = GAME.new_game({"players": 2, "max_rounds": 2}, 8)
    for _ in range(400):
        if GAME.outcome(s) is not None:
            break
        p = GAME.step(s).players[0]
        s = do(s, p, GAME.autopilot_action(GAME.view(s, p)))
    o = GAME.outcome(s)
    assert o is not None and o.draw and o.reason == "max_rounds" and s.data["turn"] == 2


def test_m3_a_player_without_any_city_is_out_and_the_last_one_wins() -> None:
    s = make({"army": [{"card": "mercenary", "id": "mc"}]}, {"cities": [{"card": "farmland", "id": "F",
                                                                          "defense": 2}]}, phase="attack")
    s = fight(block(attack(s, ["mc"], "F"), []))
    assert s.data["seats"][1]["out"]
    o = GAME.outcome(s)
    assert o is not None and o.winners == (0,) and not o.draw
    s2 = make()
    g = core.G(s2.data)
    core.put_out(g, [0, 1], "test")
    assert s2.data["outcome"]["draw"] and s2.data["outcome"]["winners"] == []


def test_m4_setup_first_player_from_rng_three_cities_aside_seven_cards_each_builds_one() -> None:
    firsts = {GAME.new_game({"players": 3}, seed).data["first"] for seed in range(12)}
    assert firsts == {0, 1, 2}
    s = GAME.new_game({"players": 2}, 5)
    assert state_hash(s) == state_hash(GAME.new_game({"players": 2}, 5))
    for seat in s.data["seats"]:
        assert len(seat["unbuilt"]) == 3 and len(seat["hand"]) == 7 and len(seat["deck"]) == 35
    first = s.data["first"]
    assert GAME.step(s).players == (first,)
    s = choose(s, head(s)["options"][0])
    s = choose(s, head(s)["options"][0])
    assert all(len(x["cities"]) == 1 and len(x["unbuilt"]) == 2 for x in s.data["seats"])
    assert s.data["active"] == first and head(s)["phase"] == "build"


def test_m5_zones_resource_piles_are_face_down_counts_for_opponents() -> None:
    s = make({"hand": [{"card": "mentor", "id": "m"}]}, phase="resource")
    s.data["t"]["res_left"] = 1
    s = do(s, 0, {"resource": {"card": "m", "faction": "Gaian"}})
    assert zone(s, "m") == "pile" and "m" in s.data["seats"][0]["piles"]["Gaian"]
    v1 = GAME.view(s, 1)
    assert "m" not in v1["cards"] and v1["seats"][0]["pile_counts"]["Gaian"] == 1
    assert "m" in GAME.view(s, 0)["cards"]


def test_m6_a_marked_creature_cannot_be_marked_again() -> None:
    s = make({"army": [{"card": "elvish_ambush", "id": "ea", "marked": True}]})
    raises(lambda: do(s, 0, {"ability": {"card": "ea", "targets": ["F"]}}), IllegalOrder, "M29")
    raises(lambda: do(s, 0, {"move": {"card": "ea", "to": "A"}}), IllegalOrder, "M47")


def test_m7_unmark_unmarks_all_the_active_players_cards() -> None:
    s = make({"army": [{"card": "mentor", "id": "m", "marked": True}], "marked_piles": {"The Empire": 3}},
             {"army": [{"card": "botanist", "id": "bo", "marked": True}]}, phase="play2")
    s = do(s, 0, {"pass": {}})  # end of turn 0 -> turn of seat 1
    assert card(s, "m")["marked"] and not card(s, "bo")["marked"]
    assert s.data["active"] == 1


def test_m8_build_instead_skips_the_rest_of_the_turn_but_discard() -> None:
    s = make({"unbuilt": [{"card": "barracks", "id": "B"}], "hand": ["bearer"] * 3}, phase="build")
    s = do(s, 0, {"build": {"card": "B"}})
    assert zone(s, "B") == "city" and s.data["active"] == 1


def test_m9_draw_and_resource_options() -> None:
    s = make({"hand": [{"card": "mentor", "id": "m"}]}, phase="draw")
    s = do(s, 0, {"draw": {"option": "draw1"}})
    assert head(s)["phase"] == "resource"
    s = do(s, 0, {"resource": {"card": "m", "faction": "The Empire"}})
    assert head(s)["phase"] == "tactics"
    s = make({"hand": [{"card": "mentor", "id": "m"}]}, phase="draw")
    raises(lambda: do(s, 0, {"draw": {"option": "draw0"}}), IllegalOrder, "M9")
    s = make({"hand": ["mentor", "bearer"]}, phase="draw")
    s = do(s, 0, {"draw": {"option": "draw0"}})
    raises(lambda: do(s, 0, {"pass": {}}), IllegalOrder, "M9")
    s = make({"hand": []}, phase="draw")
    raises(lambda: do(s, 0, {"draw": {"option": "draw0"}}), IllegalOrder)
    s = do(make({"hand": []}, phase="draw"), 0, {"draw": {"option": "draw2"}})
    assert len(s.data["seats"][0]["hand"]) == 2 and head(s)["phase"] == "tactics"


def test_m10_tactics_devotion_sums_loyalty_and_triggers_levels_lowest_first() -> None:
    s = make({"cities": [{"card": "farmland", "id": "F0", "residents": [{"card": "poison_ivy", "id": "a"},
                                                                       {"card": "nourished_flower", "id": "b"}]}]},
             phase="tactics")
    s = do(s, 0, {"devote": {"card": "a"}})
    s = do(s, 0, {"devote": {"card": "b"}})
    EVENTS.clear()
    s = do(s, 0, {"pass": {}})
    kinds = [e.kind for e in EVENTS]
    assert ("devotion" in kinds) and kinds.index("devotion") < kinds.index("advantage")
    assert [a["a"] for a in s.data["adv"]] == ["farmland4"]
    assert any(c["k"] == "crop_token" for c in s.data["cards"].values())


def test_m11_play_phases_twice_and_not_during_attack() -> None:
    s = make({"hand": ["bearer", "bearer"]})
    b1, b2 = s.data["seats"][0]["hand"]
    s = cast(s, 0, card=b1, to="A")
    s = do(s, 0, {"pass": {}})
    raises(lambda: do(s, 0, {"play": {"card": b2, "to": "A"}}), IllegalOrder, "M15")
    s = do(s, 0, {"pass": {}})
    assert head(s)["phase"] == "play2"
    s = cast(s, 0, card=b2, to="A")
    assert zone(s, b2) == "res"


def test_m12_one_attack_per_turn() -> None:
    s = make({"army": [{"card": "bearer", "id": "b"}, {"card": "mentor", "id": "m"}]}, phase="attack")
    s = fight(block(attack(s, ["b"], "F"), []))
    assert head(s)["phase"] == "play2"
    raises(lambda: do(s, 0, {"attack": {"attackers": ["m"], "city": "F"}}), IllegalOrder, "M12")


def test_m13_discard_down_to_7() -> None:
    s = make({"hand": ["bearer"] * 9}, phase="play2")
    s = do(s, 0, {"pass": {}})
    assert pending_kind(s) == "discard"
    s = choose(s, head(s)["options"][0])
    s = choose(s, head(s)["options"][0])
    assert len(s.data["seats"][0]["hand"]) == HAND_LIMIT and s.data["active"] == 1


def test_m14_cost_marks_resources_with_loyalty_from_the_cards_faction() -> None:
    s = make({"hand": [{"card": "mentor", "id": "m"}], "piles": {"Gaian": 5}})
    raises(lambda: do(s, 0, {"play": {"card": "m", "to": "A"}}), IllegalOrder, "M14")
    s = make({"hand": [{"card": "mentor", "id": "m"}], "piles": {"Gaian": 5, "The Empire": 2}})
    raises(lambda: do(s, 0, {"play": {"card": "m", "to": "A", "pay": {"Gaian": 2, "The Empire": 1}}}),
           IllegalOrder, "M14")
    s = cast(s, 0, card="m", to="A", pay={"Gaian": 1, "The Empire": 2})
    marked = [c for f in ("Gaian", "The Empire") for c in s.data["seats"][0]["piles"][f] if s.data["cards"][c]["m"]]
    assert len(marked) == 3


def test_m15_creatures_into_cities_sudden_into_the_army_magic_only_in_own_play() -> None:
    s = make({"hand": [{"card": "bearer", "id": "b"}, {"card": "mercenary", "id": "mc"}]})
    raises(lambda: do(s, 0, {"play": {"card": "b", "to": "army"}}), IllegalOrder, "M15")
    s = cast(s, 0, card="mc", to="army")
    assert zone(s, "mc") == "army"
    s = make({"hand": [{"card": "bearer", "id": "b"}]},
             {"hand": [{"card": "natures_outrage", "id": "no"}], "piles": {"Gaian": 8}})
    s = do(s, 0, {"play": {"card": "b", "to": "A"}})
    raises(lambda: do(s, 1, {"play": {"card": "no"}}), IllegalOrder, "M15")


def test_m16_events_answer_on_the_stack_last_in_first_out() -> None:
    s = make({"hand": [{"card": "battering_ram", "id": "r"}], "army": [{"card": "bearer", "id": "b"}]},
             {"hand": [{"card": "early_spring", "id": "es"}], "army": [{"card": "poison_ivy", "id": "iv"}]})
    s = do(s, 0, {"play": {"card": "r"}})
    assert GAME.step(s).kind == WINDOW and GAME.step(s).players == (1,)
    s = do(s, 1, {"play": {"card": "es"}})
    assert [it["card"] for it in s.data["stack"]] == ["r", "es"]
    EVENTS.clear()
    s = settle(s)
    order = [e.data["card"]["id"] for e in EVENTS if e.kind == "resolves"]
    assert order == ["es", "r"]


def test_m17_one_move_per_city_per_turn_army_unlimited() -> None:
    s = make({"cities": [{"card": "armory", "id": "A", "residents": [{"card": "bearer", "id": "b1"},
                                                                   {"card": "bearer", "id": "b2"}]},
                         {"card": "barracks", "id": "B"}], "army": [{"card": "mentor", "id": "m"}]})
    s = do(s, 0, {"move": {"card": "b1", "to": "army"}})
    assert card(s, "b1")["marked"]
    raises(lambda: do(s, 0, {"move": {"card": "b2", "to": "army"}}), IllegalOrder, "M17")
    s = do(s, 0, {"move": {"card": "m", "to": "B"}})
    assert zone(s, "m") == "res"


def test_m18_attackers_are_marked_veterans_not_peaceful_cannot_attack() -> None:
    s = make({"army": [{"card": "bearer", "id": "b"}]},
             {"army": [{"card": "majestic_griffin", "id": "g"}, {"card": "botanist", "id": "bo"}]}, phase="attack")
    s = attack(s, ["b"], "F")
    assert card(s, "b")["marked"]
    s = make(p1={"army": [{"card": "majestic_griffin", "id": "g"}, {"card": "botanist", "id": "bo"}]},
             phase="attack", active=1)
    raises(lambda: do(s, 1, {"attack": {"attackers": ["bo"], "city": "A"}}), IllegalOrder, "M18")
    s = attack(s, ["g"], "A", seat=1)
    assert not card(s, "g")["marked"]


def test_m19_interceptors_from_army_or_the_attacked_city_marked_or_not_several_per_attacker() -> None:
    p1 = {"cities": [{"card": "farmland", "id": "F", "residents": [{"card": "botanist", "id": "r1"}]},
                     {"card": "sanctuary", "id": "SA", "residents": [{"card": "botanist", "id": "r2"}]}],
          "army": [{"card": "botanist", "id": "a1", "marked": True}]}
    s = attack(make({"army": [{"card": "mentor", "id": "m"}]}, p1, phase="attack"), ["m"], "F")
    opts = head(s)["options"]
    assert ["r1", "m"] in opts and ["a1", "m"] in opts and ["r2", "m"] not in opts
    s = block(s, [("r1", "m"), ("a1", "m")])
    assert s.data["combat"]["blocks"]["m"] == ["r1", "a1"]
    assert not card(s, "r1")["marked"]


def test_m20_equal_damage_kills_and_first_strike_on_both_sides_is_simultaneous() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]}, {"army": [{"card": "sequoia_saplings", "id": "q"}]},
             phase="attack", effects=[{"card": "q", "a": 3, "until": "eot"}])  # q: 3/1 vs m 2/3
    s = fight(block(attack(s, ["m"], "F"), [("q", "m")]))
    assert zone(s, "m") == "grave" and zone(s, "q") == "grave"  # 3 damage on defense 3 kills
    s = make({"army": [{"card": "mercenary", "id": "mc"}]}, {"army": [{"card": "kolibri", "id": "k"}]},
             phase="attack", effects=[{"card": "k", "a": 1, "kw": ["first_strike"], "until": "eot"}])
    s = fight(block(attack(s, ["mc"], "F"), [("k", "mc")]))
    assert zone(s, "mc") == "grave" and zone(s, "k") == "grave"


def test_m21_unblocked_damage_lowers_city_defense_permanently() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]}, phase="attack")
    s = fight(block(attack(s, ["m"], "F"), []))
    assert card(s, "F")["defense"] == 5
    s = do(s, 0, {"pass": {}})
    assert card(s, "F")["defense"] == 5


def test_m22_a_destroyed_city_sends_unmarked_residents_on_and_marked_ones_home() -> None:
    p1 = {"cities": [{"card": "farmland", "id": "F", "defense": 1, "residents": [
        {"card": "kolibri", "id": "k1"}, {"card": "kolibri", "id": "k2", "marked": True}]},
        {"card": "sanctuary", "id": "SA"}, {"card": "spirit_tree", "id": "ST"}]}
    s = fight(block(attack(make({"army": [{"card": "mentor", "id": "m"}]}, p1, phase="attack"), ["m"], "F"), []))
    assert zone(s, "F") == "grave" and zone(s, "k2") == "hand"
    assert pending_kind(s) == "resident_to" and GAME.step(s).players == (1,)
    s = choose(s, "ST")
    assert card(s, "k1")["at"] == "ST"


def test_m23_every_card_of_the_built_in_decks_is_implemented_with_its_keywords() -> None:
    for deck in DECKS.values():
        for key in deck:
            assert key in IMPLEMENTED
    assert DEFS["majestic_griffin"]["keywords"] == ["flying", "veteran"]
    assert set(DEFS["mercenary"]["keywords"]) == {"first_strike", "sudden"}
    assert core.rules("spearman").forces == "soldier"


def test_m24_a_card_not_implemented_is_refused_by_name() -> None:
    lst = [*_list("Brothers in Arms")[:-1], "Ghoul"]
    e = raises(lambda: GAME.normalize_config({"players": 2, "decks": [lst, "Brothers in Arms"]}), DeckError)
    assert any("Ghoul is not implemented" in p for p in e.problems)  # type: ignore[attr-defined]


def test_m25_turns_and_windows_have_their_deadlines_and_the_autopilot_finishes_a_turn() -> None:
    s = make({"hand": [{"card": "bearer", "id": "b"}]})
    st = GAME.step(s)
    assert st.kind == TURN and st.deadline == TURN_DEADLINE and st.players == (0,)
    s2 = do(s, 0, {"play": {"card": "b", "to": "A"}})
    st = GAME.step(s2)
    assert st.kind == WINDOW and st.deadline == RESPONSE_DEADLINE and st.active == 0
    for _ in range(40):
        if s.data["active"] != 0:
            break
        p = GAME.step(s).players[0]
        s = do(s, p, GAME.autopilot_action(GAME.view(s, p)))
    assert s.data["active"] == 1


def test_m26_views_show_own_hand_piles_unbuilt_and_only_counts_of_others() -> None:
    s = GAME.new_game({"players": 2}, 3)
    v = GAME.view(s, 0)
    other = s.data["seats"][1]
    hidden = set(other["hand"]) | set(other["deck"]) | set(other["unbuilt"]) | set(s.data["seats"][0]["deck"])
    assert not hidden & set(v["cards"])
    assert set(v["hand"]) == set(s.data["seats"][0]["hand"]) and v["seats"][1]["hand_count"] == 7
    assert v["seats"][1]["unbuilt_count"] == 3 and "deck" not in v["seats"][0]


def test_m27_devotion_counts_printed_loyalty_tokens_0_unmarked_residents_only() -> None:
    s = make({"cities": [{"card": "armory", "id": "A", "residents": [{"card": "mentor", "id": "m"},
                                                                   {"card": "bearer", "id": "b", "marked": True}]}],
              "army": [{"card": "spearman", "id": "sp"}]}, phase="tactics")
    raises(lambda: do(s, 0, {"devote": {"card": "b"}}), IllegalOrder, "M27")
    raises(lambda: do(s, 0, {"devote": {"card": "sp"}}), IllegalOrder, "M27")
    s = do(do(s, 0, {"devote": {"card": "m"}}), 0, {"pass": {}})
    assert [a["a"] for a in s.data["adv"]] == ["armory2"]
    s = make(p1={"cities": [{"card": "farmland", "id": "F", "residents": [{"card": "crop_token", "id": "c1"},
                                                                         {"card": "kolibri", "id": "k"}]}]},
             active=1, phase="tactics")
    s = do(do(do(s, 1, {"devote": {"card": "c1"}}), 1, {"devote": {"card": "k"}}), 1, {"pass": {}})
    assert s.data["adv"] == [] and len(card(s, "F")["residents"]) == 2  # devotion 1: nothing


def test_m28_lasting_advantages_cover_later_arrivals_and_end_at_the_next_tactics() -> None:
    s = make({"hand": [{"card": "bearer", "id": "b"}]}, advantages=[{"p": 0, "city": "A", "a": "armory2"}],
             phase="play2")
    s = cast(s, 0, card="b", to="A")
    assert card(s, "b")["attack"] == 2
    g = core.G(s.data)
    core.op_tactics_start(g, {})
    assert card(s, "b")["attack"] == 1


def test_m29_abilities_mark_as_cost_play_abilities_only_in_own_play_phase() -> None:
    s = make({"hand": [{"card": "bearer", "id": "b"}]},
             {"army": [{"card": "elvish_ambush", "id": "ea"}, {"card": "kolibri", "id": "k"}]})
    s = do(s, 0, {"play": {"card": "b", "to": "A"}})
    raises(lambda: do(s, 1, {"ability": {"card": "ea", "targets": ["A"]}}), IllegalOrder, "M29")
    s = do(s, 1, {"ability": {"card": "k"}})  # resource abilities whenever it holds priority
    assert card(s, "k")["marked"] and s.data["seats"][1]["temp"] == {"Gaian": 1}


def test_m30_produced_resources_pay_like_pile_cards_and_vanish_at_end_of_turn() -> None:
    s = make(p1={"army": [{"card": "kolibri", "id": "k"}], "hand": [{"card": "nourished_flower", "id": "nf"}],
                 "piles": {"Gaian": 1}}, active=1)
    raises(lambda: do(s, 1, {"play": {"card": "nf", "to": "F"}}), IllegalOrder, "M14")
    s = cast(do(s, 1, {"ability": {"card": "k"}}), 1, card="nf", to="F")
    assert zone(s, "nf") == "res"
    s = make(p1={"army": [{"card": "kolibri", "id": "k"}]}, active=1, phase="play2")
    s = do(do(s, 1, {"ability": {"card": "k"}}), 1, {"pass": {}})
    assert s.data["seats"][1]["temp"] == {}


def test_m31_sacrificing_more_than_you_have_sacrifices_all_and_spent_resources_stay_spent() -> None:
    s = make({"cities": [{"card": "borgs_keep", "id": "K", "residents": [{"card": "bearer", "id": "b"}]}],
              "army": [{"card": "bearer", "id": "b2"}, {"card": "bearer", "id": "b3"}], "piles": {"The Empire": 2}},
             phase="tactics")
    s = settle(do(do(s, 0, {"devote": {"card": "b"}}), 0, {"pass": {}}))
    while pending_kind(s) == "sacrifice_resource":
        s = choose(s, head(s)["options"][0])
    assert s.data["seats"][0]["piles"]["The Empire"] == []
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]}, {"army": [{"card": "kolibri", "id": "k"}]})
    s = do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["k"]}})
    s.data["cards"]["k"]["z"] = "grave"  # the target is gone by resolution
    s.data["seats"][1]["army"].remove("k")
    s.data["seats"][1]["grave"].append("k")
    s = settle(s)
    assert zone(s, "p") == "grave"
    assert sum(1 for c in s.data["seats"][0]["piles"]["The Empire"] if s.data["cards"][c]["m"]) == 3


def test_m32_x_at_least_loyalty_and_reductions_never_below_zero() -> None:
    s = make({"hand": [{"card": "bearer", "id": "b"}], "piles": {}},
             advantages=[{"p": 0, "city": "A", "a": "barracks3", "reduce": "soldier", "by": 1}])
    s = cast(s, 0, card="b", to="A")  # cost 1 - 1 = 0, loyalty min(1, 0) = 0
    assert zone(s, "b") == "res"
    s = make(p1={"hand": [{"card": "grassroots", "id": "g"}], "army": [{"card": "kolibri", "id": "k"}]}, active=1)
    raises(lambda: do(s, 1, {"play": {"card": "g", "x": 1, "targets": ["k"]}}), IllegalOrder, "M32")


def test_m33_put_into_play_is_not_playing_and_cast_creatures_in_cities_cannot_attack_at_once() -> None:
    p1 = {"cities": [{"card": "spirit_tree", "id": "ST", "residents": [{"card": "nightingale", "id": "n"}]}],
          "army": [{"card": "nourished_flower", "id": "nf"}], "grave": [{"card": "kolibri", "id": "k"}]}
    s = make({"army": [{"card": "bearer", "id": "b"}]}, p1, active=1, phase="tactics")
    s = do(do(s, 1, {"devote": {"card": "n", "target": "b"}}), 1, {"pass": {}})
    s = choose(s, "k")
    assert zone(s, "k") == "army" and card(s, "nf")["attack"] == 1  # not played: no counter
    s = make({"hand": [{"card": "bearer", "id": "b"}]})
    s = do(cast(s, 0, card="b", to="A"), 0, {"move": {"card": "b", "to": "army"}})
    s = do(s, 0, {"pass": {}})
    raises(lambda: do(s, 0, {"attack": {"attackers": ["b"], "city": "F"}}), IllegalOrder, "M18")


def test_m34_tokens_cease_to_exist_when_leaving_play() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]}, {"army": [{"card": "crop_token", "id": "ct"}]})
    EVENTS.clear()
    s = cast(s, 0, card="p", mode="creature", targets=["ct"])
    assert "ct" not in s.data["cards"] and "ct" not in s.data["seats"][1]["grave"]
    assert any(e.kind == "died" and e.data["card"] == "ct" for e in EVENTS)


def test_m35_dying_creatures_die_together_unless_saved_in_a_dying_window() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"army": [{"card": "kolibri", "id": "k1"}, {"card": "kolibri", "id": "k2"},
                       {"card": "botanist", "id": "bo"}, {"card": "poison_ivy", "id": "iv"}], "piles": {"Gaian": 4}})
    s = settle(do(s, 0, {"play": {"card": "p", "mode": "creatures", "targets": ["k1", "k2", "iv"]}}),
               kinds=("stack",))
    assert head(s)["kind"] == "dying" and set(head(s)["cards"]) == {"k1", "k2", "iv"}
    s = settle(do(s, 1, {"ability": {"card": "bo", "targets": ["iv"]}}))
    assert zone(s, "k1") == "grave" and zone(s, "k2") == "grave" and zone(s, "iv") == "army"
    assert card(s, "iv")["marked"] and card(s, "iv")["damage"] == 0


def test_m36_city_defense_gains_stay_and_seat_of_the_throne_caps_damage() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}, {"card": "bearer", "id": "b"}]},
             {"cities": [{"card": "farmland", "id": "F",
                          "enchantments": [{"card": "seat_of_the_throne", "id": "st"}]}]},
             phase="attack")
    s = fight(block(attack(s, ["m", "b"], "F"), []))
    assert card(s, "F")["defense"] == 6


def test_m37_end_of_turn_heals_and_ends_turn_effects_no_discard_at_7() -> None:
    s = make({"army": [{"card": "mentor", "id": "m", "damage": 2}], "hand": ["bearer"] * 7},
             effects=[{"card": "m", "a": 2, "until": "eot"}], phase="play2")
    s = do(s, 0, {"pass": {}})
    assert card(s, "m")["damage"] == 0 and card(s, "m")["attack"] == 2
    assert len(s.data["seats"][0]["hand"]) == 7 and s.data["active"] == 1


def test_m38_a_response_restarts_the_round_and_the_next_round_starts_with_the_active_player() -> None:
    more = [{"cities": [{"card": "sanctuary", "id": "S2"}], "piles": {"Gaian": 8},
             "hand": [{"card": "early_spring", "id": "e2"}], "deck": ["kolibri"] * 3}]
    s = make({"hand": [{"card": "battering_ram", "id": "r"}]},
             {"hand": [{"card": "early_spring", "id": "e1"}]}, more=more)
    s = do(s, 0, {"play": {"card": "r"}})
    assert GAME.step(s).players == (1, 2)
    raises(lambda: do(s, 0, {"pass": {}}), NotYourTurn, "M38")
    s = do(s, 2, {"play": {"card": "e2"}})  # seat 2 answers: the round restarts after it
    assert GAME.step(s).players == (0, 1)
    s = do(do(s, 0, {"pass": {}}), 1, {"pass": {}})  # e2 resolves; r is left: a round from the active player
    assert GAME.step(s).players == (1, 2)


def test_m39_everything_played_uses_the_stack_and_a_gone_target_fizzles() -> None:
    s = make({"hand": [{"card": "bearer", "id": "b"}]})
    s = do(s, 0, {"play": {"card": "b", "to": "A"}})
    assert zone(s, "b") == "stack" and s.data["stack"][0]["card"] == "b"
    s = settle(s)
    assert zone(s, "b") == "res"
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]}, {"army": [{"card": "crop_token", "id": "ct"}]})
    s = do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["ct"]}})
    s = do(s, 1, {"ability": {"card": "ct"}})  # the target sacrifices itself in answer
    EVENTS.clear()
    s = settle(s)
    assert zone(s, "p") == "grave" and any(e.kind == "fizzled" for e in EVENTS)


def test_m40_windows_open_only_at_stops() -> None:
    more = [{"cities": [{"card": "sanctuary", "id": "S2"}], "piles": {"Gaian": 8}, "deck": ["kolibri"] * 3}]
    s = make({"army": [{"card": "bearer", "id": "b"}]}, {"army": [{"card": "kolibri", "id": "k"}]}, more=more,
             phase="attack")
    s = do(s, 0, {"attack": {"attackers": ["b"], "city": "F"}})
    assert head(s)["kind"] == "attack" and head(s)["players"] == [1]  # seat 2 is not attacked
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"army": [{"card": "kolibri", "id": "k"}, {"card": "botanist", "id": "bo"}]})
    s = settle(do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["k"]}}), kinds=("stack",))
    assert zone(s, "k") == "grave"  # Botanist cannot save a Bird: no dying window shown


def test_m40_a_player_may_add_stops_at_the_start_of_opponents_phases() -> None:
    raises(lambda: GAME.normalize_config({"players": 2, "stops": [["lunch"], []]}), InvalidOrder, "M40")
    s = GAME.new_game({"players": 2, "stops": [["play1"], ["play1"]]}, 4)
    seen = []
    for _ in range(80):
        h = head(s)
        if h["op"] == "window" and h["kind"] == "phase":
            seen.append((s.data["active"], tuple(h["players"])))
        p = GAME.step(s).players[0]
        s = do(s, p, GAME.autopilot_action(GAME.view(s, p)))
    assert seen and all(players == (1 - active,) for active, players in seen)


def test_m41_combat_steps_first_strike_then_regular() -> None:
    s = make({"army": [{"card": "bearer", "id": "b"}, {"card": "mentor", "id": "m"}]},
             {"army": [{"card": "kolibri", "id": "k"}, {"card": "botanist", "id": "bo"}]}, phase="attack")
    s = block(attack(s, ["b", "m"], "F"), [("k", "b"), ("bo", "m")])
    EVENTS.clear()
    s = fight(s)
    dmg = [(e.data["source"], e.data["target"]) for e in EVENTS if e.kind == "damage"]
    assert dmg[0] == ("b", "k") and ("k", "b") not in dmg  # first strike; the Kolibri died first
    assert ("m", "bo") in dmg and ("bo", "m") in dmg


def test_m42_a_blocked_attacker_whose_blockers_died_deals_no_damage_unless_overrun() -> None:
    def run(extra: list[dict[str, Any]]) -> int:
        s = make({"army": [{"card": "footsoldier", "id": "f"}]}, {"army": [{"card": "elvish_ambush", "id": "ea"}]},
                 phase="attack", active=1, effects=extra)
        s = attack(s, ["ea"], "A", seat=1)
        s = settle(choose(s, ["f", "ea"]))  # the 1/1 blocker gets -1/-1 and dies at once
        assert zone(s, "f") == "grave" and s.data["combat"]["blocked"] == ["ea"]
        s = fight(s)
        return int(card(s, "A")["defense"])
    assert run([]) == 7
    assert run([{"card": "ea", "kw": ["overrun"], "until": "eot"}]) == 6


def test_m43_overrun_assigns_lethal_first_and_the_rest_hits_the_city() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]},
             {"army": [{"card": "kolibri", "id": "k"}, {"card": "botanist", "id": "bo"}]}, phase="attack",
             effects=[{"card": "m", "a": 3, "kw": ["overrun"], "until": "eot"}])
    s = fight(block(attack(s, ["m"], "F"), [("k", "m"), ("bo", "m")]))
    assert zone(s, "k") == "grave" and zone(s, "bo") == "grave" and card(s, "F")["defense"] == 5
    s = make({"army": [{"card": "mentor", "id": "m"}]},
             {"army": [{"card": "botanist", "id": "b1"}, {"card": "botanist", "id": "b2"}]}, phase="attack")
    s = do(block(attack(s, ["m"], "F"), [("b1", "m"), ("b2", "m")]), 0, {"pass": {}})
    assert pending_kind(s) == "split"
    raises(lambda: do(s, 0, {"choose": {"option": [1, 2]}}), IllegalOrder, "M43")
    s = settle(choose(s, [2, 0]))
    assert zone(s, "b1") == "grave" and card(s, "F")["defense"] == 7


def test_m44_empty_deck_overdraw_is_illegal_while_another_option_exists_else_out() -> None:
    s = make({"deck": ["bearer"], "hand": ["bearer"]}, phase="draw")
    raises(lambda: do(s, 0, {"draw": {"option": "draw2"}}), IllegalOrder, "M44")
    s = make({"deck": [], "hand": ["bearer"]}, phase="draw")
    s = do(s, 0, {"draw": {"option": "draw1"}})
    assert s.data["seats"][0]["out"] and GAME.outcome(s).winners == (1,)  # type: ignore[union-attr]


def test_m45_without_a_built_city_build_first_sudden_only_and_cannot_be_attacked() -> None:
    s = make({"cities": [], "unbuilt": [{"card": "barracks", "id": "B"}], "hand": [{"card": "bearer", "id": "b"},
                                                                                 {"card": "mercenary", "id": "mc"}]},
             phase="build")
    raises(lambda: do(s, 0, {"pass": {}}), IllegalOrder, "M45")
    s = make({"cities": [], "unbuilt": [{"card": "barracks", "id": "B"}], "hand": [{"card": "bearer", "id": "b"},
                                                                                 {"card": "mercenary", "id": "mc"}]})
    raises(lambda: do(s, 0, {"play": {"card": "b", "to": "army"}}), IllegalOrder, "M15")
    s = cast(s, 0, card="mc", to="army")
    assert zone(s, "mc") == "army"
    s = make({"cities": [], "unbuilt": [{"card": "barracks", "id": "B"}]},
             {"army": [{"card": "majestic_griffin", "id": "g"}]}, active=1, phase="attack")
    assert not [a for a in GAME.legal_actions(GAME.view(s, 1)) if "attack" in a]


def test_m46_a_player_out_leaves_the_game_and_the_next_player_goes_on() -> None:
    more = [{"cities": [{"card": "sanctuary", "id": "S2"}], "piles": {"Gaian": 8}, "deck": ["kolibri"] * 3,
             "army": [{"card": "kolibri", "id": "k2"}]}]
    s = make({"deck": [], "hand": ["bearer"], "army": [{"card": "mentor", "id": "m"}]}, more=more, phase="draw")
    s = do(s, 0, {"draw": {"option": "draw1"}})
    assert s.data["seats"][0]["out"] and zone(s, "m") == "removed" and zone(s, "A") == "removed"
    assert s.data["active"] == 1 and GAME.outcome(s) is None


def test_m47_leaving_play_loses_damage_marks_counters_and_enchantments() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"army": [{"card": "mentor", "id": "m", "damage": 2, "marked": True, "counters": [1, 0],
                        "enchantments": [{"card": "grassroots", "id": "gr"}]}]})
    s = cast(s, 0, card="p", mode="creatures", targets=["m"])
    assert zone(s, "m") == "grave" and zone(s, "gr") == "grave"
    c = s.data["cards"]["m"]
    assert "dmg" not in c and "pa" not in c and "m" not in c


def test_m48_searches_are_seen_by_the_searcher_and_found_cards_shown_to_all() -> None:
    s = make({"hand": [{"card": "mentor", "id": "me"}], "deck": [{"card": "bearer", "id": "d1"}]})
    s = cast(s, 0, card="me", to="A")
    assert "d1" in GAME.view(s, 0)["cards"] and "d1" not in GAME.view(s, 1)["cards"]
    EVENTS.clear()
    s = choose(s, "d1")
    assert [e.data["cards"] for e in EVENTS if e.kind == "revealed"] == [["Bearer"]]


def test_m49_unmark_conditions_default_to_staying_marked() -> None:
    s = make({"army": [{"card": "mentor", "id": "m", "marked": True, "gr": 2,
                        "enchantments": [{"card": "grassroots", "id": "g"}]}]}, phase="play2", active=1)
    s = do(s, 1, {"pass": {}})  # seat 0's turn: its Unmark asks
    assert pending_kind(s) == "unmark_pay" and head(s)["options"] == [False, True]
    v = GAME.view(s, 0)
    assert GAME.autopilot_action(v) == {"choose": {"option": False}}
    s = choose(s, False)
    assert card(s, "m")["marked"]


def test_m50_keywords_sanctuary_and_salvage() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]}, {"army": [{"card": "kolibri", "id": "k"}]},
             effects=[{"card": "k", "kw": ["sanctuary"], "until": "eot"}])
    raises(lambda: do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["k"]}}), IllegalOrder, "M50")
    s = make({"grave": [{"card": "revenge", "id": "rv"}], "piles": {"The Empire": 4}})
    raises(lambda: do(s, 0, {"salvage": {"card": "rv"}}), IllegalOrder, "M50")


def test_m51_subtypes_are_word_sets() -> None:
    assert DEFS["mentor"]["subs"] == frozenset({"knight", "soldier"})
    assert DEFS["mounted_eagle"]["subs"] == frozenset({"soldier", "bird"})
    assert DEFS["spirit_tree"]["type"] == "city" and "tree" not in DEFS["spirit_tree"]["subs"]


def test_m52_every_card_of_both_decks_has_a_named_test() -> None:
    names = {n for n, _ in inspect.getmembers(test_cards, inspect.isfunction) if n.startswith("test_card_")}
    for deck in DECKS.values():
        for key in deck:
            assert any(n.startswith(f"test_card_{key}_") for n in names), key
    assert any(n.startswith("test_card_crop_token_") for n in names)


def test_m53_autopilot_is_deterministic_legal_and_saves_its_own_creatures() -> None:
    s = GAME.new_game({"players": 2}, 11)
    for _ in range(60):
        p = GAME.step(s).players[0]
        v = GAME.view(s, p)
        a = GAME.autopilot_action(v)
        assert a == GAME.autopilot_action(GAME.view(s, p)) and a in GAME.legal_actions(v)
        s = do(s, p, a)
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"army": [{"card": "botanist", "id": "bo"}, {"card": "poison_ivy", "id": "iv"}], "piles": {"Gaian": 3}})
    s = settle(do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["iv"]}}), kinds=("stack",))
    assert GAME.autopilot_action(GAME.view(s, 1)) == {"ability": {"card": "bo", "targets": ["iv"]}}


def test_m54_after_blocks_the_defender_gets_its_window_then_the_attacker_may_play_an_event() -> None:
    s = make({"army": [{"card": "bearer", "id": "b"}], "hand": [{"card": "battering_ram", "id": "r"}]},
             {"army": [{"card": "botanist", "id": "bo"}]}, phase="attack")
    s = attack(s, ["b"], "F")
    s = choose(s, ["bo", "b"])
    assert head(s)["kind"] == "blocks" and GAME.step(s).players == (1,)
    s = do(s, 1, {"pass": {}})
    assert head(s)["phase"] == "blocks" and GAME.step(s).players == (0,)
    s = fight(cast(s, 0, card="r"))
    assert zone(s, "bo") == "grave" and card(s, "F")["defense"] == 6  # overrun: 3 - 2 lethal = 1


def test_m55_deaths_come_before_triggers_and_while_blocking_bonuses_end_with_combat() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]}, {"army": [{"card": "mounted_eagle", "id": "e"}]},
             phase="attack", effects=[{"card": "m", "a": 1, "until": "eot"}])
    s = fight(block(attack(s, ["m"], "F"), [("e", "m")]))  # eagle 4/4 blocking takes 3, dies at combat end
    assert zone(s, "e") == "grave" and zone(s, "m") == "grave"


def test_m56_forced_attacks_only_while_a_soldier_must_and_can_attack() -> None:
    s = make({"army": [{"card": "spearman", "id": "sp", "marked": True}, {"card": "majestic_griffin", "id": "g"}]},
             phase="attack")
    s = do(s, 0, {"pass": {}})
    assert head(s)["phase"] == "play2"


def test_m57_enchantments_go_to_their_owners_graveyards() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"army": [{"card": "kolibri", "id": "k"}]})
    s.data["cards"]["gr"] = {"k": "grassroots", "o": 1, "z": "ench", "at": "k", "m": False, "dmg": 0}
    s.data["cards"]["k"]["ench"] = ["gr"]
    s = cast(s, 0, card="p", mode="creature", targets=["k"])
    assert "gr" in s.data["seats"][1]["grave"]
    t = make({"army": [{"card": "mentor", "id": "m", "enchantments": []}],
              "hand": [{"card": "dimensional_pocket", "id": "p"}]})
    t.data["cards"]["gr"] = {"k": "grassroots", "o": 1, "z": "ench", "at": "m", "m": False, "dmg": 0}
    t.data["cards"]["m"]["ench"] = ["gr"]
    t = cast(t, 0, card="p", mode="creature", targets=["m"])
    assert "gr" in t.data["seats"][1]["grave"] and "gr" not in t.data["seats"][0]["grave"]


def test_m58_several_attackers_against_seat_of_the_throne_are_credited_in_declared_order() -> None:
    s = make({"army": [{"card": "bearer", "id": "b1"}, {"card": "bearer", "id": "b2"}],
              "hand": [{"card": "mentor", "id": "m"}]},
             {"cities": [{"card": "farmland", "id": "F",
                          "enchantments": [{"card": "seat_of_the_throne", "id": "st"}]}]}, phase="attack")
    EVENTS.clear()
    s = fight(block(attack(s, ["b2", "b1"], "F"), []))
    dmg = [(e.data["source"], e.data["amount"]) for e in EVENTS if e.kind == "damage"]
    assert dmg == [("b2", 1)] and card(s, "F")["defense"] == 6
    assert pending_kind(s) == "bearer"
    assert summary(s)["pending"]["seat"] == 0


@pytest.mark.parametrize("const,value", [(HAND_LIMIT, 7), (DECK_SIZE, 45), (MAX_COPIES, 3)])
def test_m1_constants(const: int, value: int) -> None:
    assert const == value


def test_m53_legal_moves_random_action_and_the_rest_of_the_contract() -> None:
    s = GAME.new_game({"players": 2}, 21)
    p = GAME.step(s).players[0]
    v = GAME.view(s, p)
    lm = GAME.legal_moves(v)
    assert lm["phase"] == v["phase"] and lm["actions"] == GAME.legal_actions(v) and lm["actions"]
    raises(lambda: GAME.legal_moves(v, unit="x"), InvalidOrder)
    a = GAME.random_action(v, 5)
    assert a == GAME.random_action(v, 5) and a in lm["actions"]
    other = GAME.view(s, 1 - p)
    assert GAME.legal_actions(other) == [] and GAME.random_action(other, 1) == {}
    assert GAME.autopilot_action(other) == {}
    raises(lambda: GAME.apply_action(s, 1 - p, lm["actions"][0]), NotYourTurn, "M38")
    raises(lambda: GAME.apply_action(s, p, {"fly": {}}), InvalidOrder)
    standing = standing_of(GAME)  # no standing orders of its own: the contract's default
    assert not has_standing(GAME) and standing.check_standing(s, 0, {}) == {}
    assert standing.default_standing(s, 0) == {} and GAME.autopilot(v, {}) == {}
    raises(lambda: standing.check_standing(s, 0, {"x": 1}), InvalidOrder)
    raises(lambda: GAME.resolve(s, {}), IllegalOrder, "M25")
    before = state_hash(s)
    s2, ev = GAME.act(s, 0, {"chat": {"text": "hi"}})
    assert ev[0].kind == "chat" and state_hash(s) == before and s2.data["chats"] == [1, 0]
    for _ in range(9):
        s2, _ = GAME.act(s2, 0, {"chat": {"text": "again"}})
    raises(lambda: GAME.act(s2, 0, {"chat": {"text": "one too many"}}), RateLimited, "A53")
    assert GAME.expected_players(s) == list(GAME.step(s).players)


def test_m52_every_rule_id_m1_to_m58_has_a_test_named_after_it() -> None:
    import pathlib
    import re
    names: set[int] = set()
    for f in pathlib.Path(__file__).parent.glob("test_*.py"):
        names.update(int(n) for n in re.findall(r"def test_m(\d+)_", f.read_text(encoding="utf-8")))
    assert set(range(1, 59)) <= names
