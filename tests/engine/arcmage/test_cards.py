"""One test per card of the two built-in decks (M23, M52), named after the card."""

from __future__ import annotations

from typing import Any

from engine.arcmage import GAME, core
from engine.errors import IllegalOrder
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

# --- The Empire ----------------------------------------------------------------------------------


def test_card_armory_levels_2_and_4_buff_every_soldier_later_arrivals_too() -> None:
    s = make({"cities": [{"card": "armory", "id": "A", "residents": [{"card": "mentor", "id": "m1"},
                                                                   {"card": "spearman", "id": "s1"}]}],
              "army": [{"card": "footsoldier", "id": "f1"}], "hand": [{"card": "bearer", "id": "b1"}]},
             phase="tactics")
    s = do(s, 0, {"devote": {"card": "m1"}})
    s = do(s, 0, {"devote": {"card": "s1"}})
    s = do(s, 0, {"pass": {}})  # devotion 4: Armory 2 and 4
    assert card(s, "f1")["attack"] == 2 and card(s, "f1")["defense"] == 2
    assert "first_strike" in card(s, "f1")["keywords"]
    assert card(s, "m1")["attack"] == 3  # Mentor is a Knight Soldier (M51)
    s = cast(s, 0, card="b1", to="A")
    assert card(s, "b1")["attack"] == 2 and card(s, "b1")["defense"] == 2


def test_card_assemble_the_army_moves_unmarked_soldiers_unmarked_outside_the_move_limit() -> None:
    s = make({"cities": [{"card": "armory", "id": "A", "residents": [
        {"card": "footsoldier", "id": "f1"}, {"card": "spearman", "id": "s1", "marked": True},
        {"card": "trebuchet", "id": "t1"}]}], "hand": [{"card": "assemble_the_army", "id": "x"}]})
    s = cast(s, 0, card="x")
    assert zone(s, "f1") == "army" and not card(s, "f1")["marked"]
    assert zone(s, "s1") == "res" and zone(s, "t1") == "res"
    assert s.data["t"]["moves"] == []
    s = do(s, 0, {"move": {"card": "t1", "to": "army"}})  # the city is still free for one move
    assert zone(s, "t1") == "army"


def test_card_barracks_level_3_reduces_soldier_cost_and_level_5_puts_a_soldier_into_the_army() -> None:
    s = make({"cities": [{"card": "barracks", "id": "B", "residents": [{"card": "squad_leader", "id": "q1"}]}],
              "piles": {"The Empire": 2}, "hand": [{"card": "mentor", "id": "m1"}]}, phase="tactics")
    s = do(s, 0, {"devote": {"card": "q1"}})
    s = do(s, 0, {"pass": {}})  # devotion 3: Soldiers cost 1 less
    s = cast(s, 0, card="m1", to="B")  # cost 3 - 1 = 2, loyalty min(2, 2)
    assert zone(s, "m1") == "res"
    s = make({"cities": [{"card": "barracks", "id": "B", "residents": [
        {"card": "squad_leader", "id": "q1"}, {"card": "mentor", "id": "m2"}]}],
        "hand": [{"card": "spearman", "id": "sp"}, {"card": "assemble_the_army", "id": "x"}]}, phase="tactics")
    s = do(s, 0, {"devote": {"card": "q1"}})
    s = do(s, 0, {"devote": {"card": "m2"}})
    s = do(s, 0, {"pass": {}})  # devotion 5: level 5, mandatory
    assert pending_kind(s) == "barracks5" and None not in head(s)["options"]
    s = choose(s, "sp")
    assert zone(s, "sp") == "army" and not card(s, "sp")["marked"]


def test_card_battering_ram_soldiers_get_2_0_and_overrun_until_end_of_turn() -> None:
    s = make({"army": [{"card": "footsoldier", "id": "f1"}], "hand": [{"card": "battering_ram", "id": "r"}]},
             p1={"deck": ["kolibri"] * 6})
    s = cast(s, 0, card="r")
    assert card(s, "f1")["attack"] == 3 and "overrun" in card(s, "f1")["keywords"]
    s = do(s, 0, {"pass": {}})  # play1 -> attack
    s = do(s, 0, {"pass": {}})  # no attack -> play2
    s = do(s, 0, {"pass": {}})  # end of turn
    assert card(s, "f1")["attack"] == 1 and "overrun" not in card(s, "f1")["keywords"]


def test_card_bearer_may_put_a_soldier_from_hand_into_a_city_when_it_damages_a_city() -> None:
    s = make({"army": [{"card": "bearer", "id": "b1"}], "hand": [{"card": "mentor", "id": "m1"}]},
             phase="attack")
    s = attack(s, ["b1"], "F")
    s = block(s, [])
    s = fight(s)
    assert card(s, "F")["defense"] == 6
    assert pending_kind(s) == "bearer" and None in head(s)["options"]
    s = choose(s, ["m1", "A"])
    assert zone(s, "m1") == "res" and card(s, "m1")["at"] == "A"


def test_card_borgs_keep_level_1_sacrifices_and_level_3_gives_a_second_combat() -> None:
    s = make({"cities": [{"card": "borgs_keep", "id": "K", "residents": [{"card": "footsoldier", "id": "f1"}]}],
              "army": [{"card": "footsoldier", "id": "f2"}], "piles": {"The Empire": 1}}, phase="tactics")
    s = do(s, 0, {"devote": {"card": "f1"}})
    s = do(s, 0, {"pass": {}})  # L1: two creatures, one resource card: all of it (M31)
    assert s.data["seats"][0]["piles"]["The Empire"] == []
    s = make({"cities": [{"card": "borgs_keep", "id": "K", "residents": [{"card": "squad_leader", "id": "q1"}]}],
              "army": [{"card": "footsoldier", "id": "f2"}], "piles": {"The Empire": 3}}, phase="tactics")
    s = do(s, 0, {"devote": {"card": "q1"}})
    s = do(s, 0, {"pass": {}})
    s = settle(s)
    while pending_kind(s) == "sacrifice_resource":
        s = choose(s, head(s)["options"][0])
    s = do(s, 0, {"pass": {}})  # play1 -> attack
    s = attack(s, ["f2"], "F")
    s = fight(block(s, []))
    assert head(s)["phase"] == "attack"  # a second Attack phase, f2 unmarked again
    assert not card(s, "f2")["marked"]
    s = attack(s, ["f2"], "F")
    s = fight(block(s, []))
    assert card(s, "F")["defense"] == 5 and head(s)["phase"] == "play2"


def test_card_conscript_reveals_soldiers_and_puts_them_on_top_in_the_chosen_order() -> None:
    s = make({"hand": [{"card": "conscript", "id": "c"}],
              "deck": [{"card": "kolibri", "id": "k1"}, {"card": "mentor", "id": "d1"},
                       {"card": "trebuchet", "id": "d2"}, {"card": "spearman", "id": "d3"}]})
    s = cast(s, 0, card="c", to="A")
    assert pending_kind(s) == "conscript"
    assert set(head(s)["options"]) == {None, "d1", "d3"}
    s = choose(s, "d3")
    s = choose(s, "d1")
    assert s.data["seats"][0]["deck"][:2] == ["d3", "d1"]
    assert sorted(s.data["seats"][0]["deck"]) == ["d1", "d2", "d3", "k1"]


def test_card_dimensional_pocket_has_three_modes() -> None:
    base = {"army": [], "hand": [{"card": "dimensional_pocket", "id": "p"}]}
    foes = {"army": [{"card": "majestic_griffin", "id": "g"}, {"card": "kolibri", "id": "k1"},
                     {"card": "kolibri", "id": "k2"}, {"card": "botanist", "id": "bo"}]}
    s = cast(make(base, foes), 0, card="p", mode="city", targets=["F"])
    assert card(s, "F")["defense"] == 6
    s = cast(make(base, foes), 0, card="p", mode="creature", targets=["g"])
    assert card(s, "g")["damage"] == 3
    s = cast(make(base, foes), 0, card="p", mode="creatures", targets=["k1", "k2", "bo"])
    assert zone(s, "k1") == "grave" and zone(s, "k2") == "grave" and card(s, "bo")["damage"] == 1
    raises(lambda: do(make(base, foes), 0, {"play": {"card": "p", "mode": "creature", "targets": ["g", "k1"]}}),
           IllegalOrder, "M39")


def test_card_footsoldier_may_pay_per_footsoldier_to_fetch_another_into_the_army() -> None:
    s = make({"hand": [{"card": "footsoldier", "id": "f1"}], "piles": {"The Empire": 4},
              "deck": [{"card": "bearer", "id": "d0"}, {"card": "footsoldier", "id": "f2"},
                       {"card": "footsoldier", "id": "f3"}]})
    s = cast(s, 0, card="f1", to="A")
    assert pending_kind(s) == "footsoldier_pay" and head(s)["n"] == 1
    s = choose(s, True)
    s = choose(s, head(s)["options"][0])
    found = [c for c in ("f2", "f3") if zone(s, c) == "army"]
    assert len(found) == 1
    assert pending_kind(s) == "footsoldier_pay" and head(s)["n"] == 2  # its ETB happens, two in play
    s = choose(s, False)
    assert sum(1 for c in s.data["seats"][0]["piles"]["The Empire"] if s.data["cards"][c]["m"]) == 2


def test_card_mentor_searches_a_soldier_into_hand_seen_only_by_its_owner() -> None:
    s = make({"hand": [{"card": "mentor", "id": "m"}],
              "deck": [{"card": "kolibri", "id": "k"}, {"card": "bearer", "id": "b"}]})
    s = cast(s, 0, card="m", to="A")
    assert head(s)["options"] == [None, "b"]
    assert "options" not in GAME.view(s, 1)["pending"]
    assert "b" not in GAME.view(s, 1)["cards"]
    EVENTS.clear()
    s = choose(s, "b")
    assert zone(s, "b") == "hand"
    assert any(e.kind == "revealed" and e.audience is None for e in EVENTS)


def test_card_mercenary_is_sudden_first_strike_and_leaves_after_attacking() -> None:
    s = make({"hand": [{"card": "mercenary", "id": "mc"}]}, p1={"army": [{"card": "nourished_flower", "id": "n"}]})
    s = cast(s, 0, card="mc", to="army")
    s = do(s, 0, {"pass": {}})
    s = attack(s, ["mc"], "F")
    s = fight(block(s, [("n", "mc")]))
    assert zone(s, "n") == "grave" and card(s, "mc")["damage"] == 0  # first strike: no strike back
    EVENTS.clear()
    s = do(s, 0, {"pass": {}})  # play2 -> discard
    assert zone(s, "mc") == "grave"
    assert not any(e.kind == "died" and e.data["card"] == "mc" for e in EVENTS)


def test_card_mounted_eagle_flies_and_gets_2_1_blocking_a_non_flyer() -> None:
    s = make({"army": [{"card": "mounted_eagle", "id": "e"}]}, p1={"army": [{"card": "botanist", "id": "bo"}]},
             phase="attack")
    s = attack(s, ["e"], "F")
    assert head(s)["op"] != "decide"  # Botanist (no flying/ranged) cannot intercept it
    s = make({"army": [{"card": "footsoldier", "id": "f"}], "cities": [{"card": "armory", "id": "A"}]},
             p1={"army": [{"card": "mounted_eagle", "id": "e"}], "piles": {"The Empire": 4}}, phase="attack")
    s = attack(s, ["f"], "F")
    s = block(s, [("e", "f")])
    assert card(s, "e")["attack"] == 4 and card(s, "e")["defense"] == 4
    s = fight(s)
    assert zone(s, "f") == "grave" and card(s, "e")["attack"] == 2


def test_card_revenge_gives_blood_vengeance_counters_and_salvages_for_5() -> None:
    s = make({"hand": [{"card": "revenge", "id": "rv"}, {"card": "bearer", "id": "f"}],
              "piles": {"The Empire": 10}}, p1={"army": [{"card": "majestic_griffin", "id": "g"}]},
             dealt_prev={"g": 2})
    s = cast(s, 0, card="rv", targets=["g"])
    s = cast(s, 0, card="f", to="A")
    assert card(s, "f")["attack"] == 3
    assert zone(s, "rv") == "grave"
    s = do(s, 0, {"salvage": {"card": "rv"}})
    assert zone(s, "rv") == "hand"


def test_card_seat_of_the_throne_gives_3_defense_caps_damage_and_destroys_other_cities() -> None:
    s = make({"cities": [{"card": "armory", "id": "A"}, {"card": "barracks", "id": "B", "residents": [
        {"card": "footsoldier", "id": "f1"}, {"card": "bearer", "id": "b1", "marked": True}]}],
        "hand": [{"card": "seat_of_the_throne", "id": "st"}]},
        p1={"army": [{"card": "majestic_griffin", "id": "g"}]})
    s = cast(s, 0, card="st", targets=["A"])
    assert card(s, "A")["defense"] == 10 and zone(s, "B") == "grave"
    assert zone(s, "f1") == "res" and card(s, "f1")["at"] == "A" and zone(s, "b1") == "hand"
    assert zone(s, "st") == "ench"
    core_s = s.data
    g = core.G(core_s)
    core.deal_damage(g, [("g", "A", 4)])
    core.deal_damage(g, [("g", "A", 4)])
    assert core_s["cards"]["A"]["cdef"] == 9  # at most 1 damage each turn


def test_card_spearman_forces_soldiers_to_attack_and_gives_battle_scream_1() -> None:
    s = make({"army": [{"card": "spearman", "id": "sp"}, {"card": "footsoldier", "id": "f"},
                       {"card": "majestic_griffin", "id": "g"}]}, phase="attack")
    raises(lambda: do(s, 0, {"pass": {}}), IllegalOrder, "M56")
    raises(lambda: do(s, 0, {"attack": {"attackers": ["sp"], "city": "F"}}), IllegalOrder, "M56")
    s = attack(s, ["sp", "f"], "F")  # the Griffin is not a Soldier: never forced
    assert card(s, "f")["attack"] == 2 and card(s, "sp")["attack"] == 1


def test_card_squad_leader_reveals_the_top_4_soldiers_to_hand_the_rest_to_the_bottom() -> None:
    s = make({"hand": [{"card": "squad_leader", "id": "q"}], "piles": {"The Empire": 6},
              "deck": [{"card": "bearer", "id": "d1"}, {"card": "kolibri", "id": "d2"},
                       {"card": "mentor", "id": "d3"}, {"card": "trebuchet", "id": "d4"},
                       {"card": "spearman", "id": "d5"}]})
    s = cast(s, 0, card="q", to="A")
    assert zone(s, "d1") == "hand" and zone(s, "d3") == "hand"
    assert s.data["seats"][0]["deck"] == ["d5", "d2", "d4"]


def test_card_trebuchet_marks_two_soldiers_deals_5_and_they_skip_two_unmarks() -> None:
    s = make({"army": [{"card": "trebuchet", "id": "t"}, {"card": "footsoldier", "id": "f1"},
                       {"card": "bearer", "id": "f2"}]}, p1={"army": [{"card": "majestic_griffin", "id": "g"}]})
    s = do(s, 0, {"ability": {"card": "t", "with": ["f1", "f2"], "targets": ["g"]}})
    s = settle(s)
    assert zone(s, "g") == "grave"
    assert all(card(s, x)["marked"] for x in ("t", "f1", "f2"))
    for _ in range(2):  # two of its controller's Unmark phases pass without unmarking them
        s.data["active"] = 1
        s = _through_unmark(s, 0)
        assert all(card(s, x)["marked"] for x in ("t", "f1", "f2"))
    s = _through_unmark(s, 0)
    assert not any(card(s, x)["marked"] for x in ("t", "f1", "f2"))


def _through_unmark(s: Any, seat: int) -> Any:
    """Run seat's Unmark phase directly (a new turn of that seat)."""
    s.data["active"] = seat
    g = core.G(s.data)
    core.op_unmark(g, {})
    return s


# --- Gaian ---------------------------------------------------------------------------------------


def test_card_botanist_saves_a_dying_flower_for_two_resource_cards() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             p1={"army": [{"card": "botanist", "id": "bo"}, {"card": "poison_ivy", "id": "iv"}],
                 "piles": {"Gaian": 3}})
    s = do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["iv"]}})
    s = settle(s, kinds=("stack",))
    h = head(s)
    assert h["op"] == "window" and h["kind"] == "dying" and h["players"] == [1]
    raises(lambda: do(s, 1, {"ability": {"card": "bo", "targets": ["bo"]}}), IllegalOrder)
    s = do(s, 1, {"ability": {"card": "bo", "targets": ["iv"]}})
    s = settle(s)
    assert zone(s, "iv") == "army" and card(s, "iv")["damage"] == 0 and card(s, "iv")["marked"]
    assert sum(len(v) for v in s.data["seats"][1]["piles"].values()) == 1
    assert "peaceful" in card(s, "bo")["keywords"]


def test_card_call_to_aid_lets_residents_of_one_city_defend_another() -> None:
    p1 = {"cities": [{"card": "farmland", "id": "F"}, {"card": "sanctuary", "id": "SA", "residents": [
        {"card": "botanist", "id": "bo"}]}], "hand": [{"card": "call_to_aid", "id": "ca"}]}
    s = make({"army": [{"card": "footsoldier", "id": "f"}]}, p1, phase="attack")
    s = do(s, 0, {"attack": {"attackers": ["f"], "city": "F"}})
    assert head(s)["kind"] == "attack"
    s = do(s, 1, {"play": {"card": "ca", "targets": ["SA"]}})
    s = settle(s)
    assert pending_kind(s) == "intercept" and ["bo", "f"] in head(s)["options"]


def test_card_crop_token_sacrifices_itself_for_one_gaian_resource() -> None:
    s = make(p1={"cities": [{"card": "farmland", "id": "F", "residents": [{"card": "crop_token", "id": "ct"}]}]},
             active=1)
    s = do(s, 1, {"ability": {"card": "ct"}})
    assert "ct" not in s.data["cards"]  # a token that leaves play ceases to exist (M34)
    assert s.data["seats"][1]["temp"] == {"Gaian": 1}


def test_card_early_spring_trees_and_flowers_get_2_2_and_gaian_cities_gain_2() -> None:
    s = make({"army": [{"card": "footsoldier", "id": "f"}]},
             {"army": [{"card": "poison_ivy", "id": "iv"}, {"card": "kolibri", "id": "k"}],
              "hand": [{"card": "early_spring", "id": "es"}]}, active=1)
    s = cast(s, 1, card="es")
    assert card(s, "iv")["attack"] == 3 and card(s, "iv")["defense"] == 3
    assert card(s, "k")["defense"] == 1 and card(s, "F")["defense"] == 9 and card(s, "A")["defense"] == 7


def test_card_elvish_ambush_weakens_its_interceptors_and_pings_for_1() -> None:
    s = make({"army": [{"card": "footsoldier", "id": "f"}, {"card": "mentor", "id": "m"}]},
             {"army": [{"card": "elvish_ambush", "id": "ea"}]}, active=1, phase="attack")
    s = attack(s, ["ea"], "A", seat=1)
    s = choose(s, ["f", "ea"])
    s = settle(s)
    assert zone(s, "f") == "grave"  # 1/1 gets -1/-1 at once
    s = make({"army": [{"card": "footsoldier", "id": "f"}]}, {"army": [{"card": "elvish_ambush", "id": "ea"}]},
             active=1)
    s = do(s, 1, {"ability": {"card": "ea", "targets": ["A"]}})
    assert card(s, "A")["defense"] == 6 and card(s, "ea")["marked"]


def test_card_elvish_archer_raises_its_city_and_gives_elves_ranged() -> None:
    s = make(p1={"army": [{"card": "botanist", "id": "bo"}], "hand": [{"card": "elvish_archer", "id": "ar"}]},
             active=1)
    s = cast(s, 1, card="ar", to="F")
    assert card(s, "F")["defense"] == 9
    assert "ranged" in card(s, "bo")["keywords"] and "ranged" in card(s, "ar")["keywords"]
    s = make({"army": [{"card": "mounted_eagle", "id": "e"}]},
             {"army": [{"card": "botanist", "id": "bo"}, {"card": "elvish_archer", "id": "ar"}]}, phase="attack")
    s = attack(s, ["e"], "F")
    assert ["bo", "e"] in head(s)["options"]


def test_card_falconer_saves_birds_and_gives_birds_in_hand_sudden() -> None:
    p1 = {"hand": [{"card": "kolibri", "id": "k"}], "army": []}
    s = make(p1=p1, active=1)
    raises(lambda: do(s, 1, {"play": {"card": "k", "to": "army"}}), IllegalOrder, "M15")
    s = make(p1={**p1, "army": [{"card": "falconer", "id": "fa"}]}, active=1)
    s = cast(s, 1, card="k", to="army")
    assert zone(s, "k") == "army"
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"army": [{"card": "falconer", "id": "fa"}, {"card": "nightingale", "id": "n"}], "piles": {"Gaian": 2}})
    s = settle(do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["n"]}}), kinds=("stack",))
    s = settle(do(s, 1, {"ability": {"card": "fa", "targets": ["n"]}}))
    assert zone(s, "n") == "army" and card(s, "n")["marked"]


def test_card_farmland_level_2_makes_a_crop_token_and_level_4_buffs_flowers_and_trees() -> None:
    s = make(p1={"cities": [{"card": "farmland", "id": "F", "residents": [
        {"card": "poison_ivy", "id": "iv"}, {"card": "nourished_flower", "id": "nf"}]}]}, active=1, phase="tactics")
    s = do(s, 1, {"devote": {"card": "iv"}})
    s = do(s, 1, {"devote": {"card": "nf"}})
    s = do(s, 1, {"pass": {}})
    toks = [c for c in card(s, "F")["residents"] if s.data["cards"][c]["k"] == "crop_token"]
    assert len(toks) == 1 and not card(s, toks[0])["marked"]
    assert card(s, toks[0])["attack"] == 1 and card(s, toks[0])["defense"] == 4
    assert card(s, "iv")["attack"] == 2 and card(s, "iv")["defense"] == 4


def test_card_grassroots_x_counters_mark_and_costly_unmarking() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]}, {"hand": [{"card": "grassroots", "id": "gr"}]}, active=1)
    raises(lambda: do(s, 1, {"play": {"card": "gr", "x": 1, "targets": ["m"]}}), IllegalOrder, "M32")
    s = cast(s, 1, card="gr", x=3, targets=["m"])
    assert card(s, "m")["marked"] and s.data["cards"]["m"]["gr"] == 3
    s.data["active"] = 0
    g = core.G(s.data)
    core.op_unmark(g, {})
    core.run(g)
    assert s.data["todo"][0]["kind"] == "unmark_pay"
    s = choose(s, True)  # pays 3
    assert not card(s, "m")["marked"]
    assert sum(1 for c in s.data["seats"][0]["piles"]["The Empire"] if s.data["cards"][c]["m"]) == 3
    g = core.G(s.data)
    core.mark(g, "m")
    assert s.data["cards"]["m"]["gr"] == 4


def test_card_kolibri_produces_1_or_2_with_a_flower() -> None:
    s = make(p1={"army": [{"card": "kolibri", "id": "k"}]}, active=1)
    assert do(s, 1, {"ability": {"card": "k"}}).data["seats"][1]["temp"] == {"Gaian": 1}
    s = make(p1={"army": [{"card": "kolibri", "id": "k"}, {"card": "crop_token", "id": "ct"}]}, active=1)
    assert do(s, 1, {"ability": {"card": "k"}}).data["seats"][1]["temp"] == {"Gaian": 2}


def test_card_majestic_griffin_is_a_veteran_flyer() -> None:
    s = make({"army": [{"card": "footsoldier", "id": "f"}]}, {"army": [{"card": "majestic_griffin", "id": "g"}]},
             active=1, phase="attack")
    s = attack(s, ["g"], "A", seat=1)
    assert not card(s, "g")["marked"]
    assert head(s)["op"] != "decide"  # the footsoldier cannot intercept a flyer


def test_card_natures_outrage_lets_peaceful_trees_and_flowers_attack_this_turn() -> None:
    p1 = {"army": [{"card": "poison_ivy", "id": "iv"}, {"card": "botanist", "id": "bo"}],
          "hand": [{"card": "natures_outrage", "id": "no"}]}
    s = make(p1=p1, active=1)
    s = cast(s, 1, card="no")
    s = do(s, 1, {"pass": {}})
    raises(lambda: do(s, 1, {"attack": {"attackers": ["bo"], "city": "A"}}), IllegalOrder, "M18")
    s = attack(s, ["iv"], "A", seat=1)
    assert s.data["combat"]["attackers"] == ["iv"]


def test_card_nightingale_marks_a_target_when_devoted_which_skips_an_unmark() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]},
             {"cities": [{"card": "farmland", "id": "F", "residents": [{"card": "nightingale", "id": "n"}]}]},
             active=1, phase="tactics")
    raises(lambda: do(s, 1, {"devote": {"card": "n"}}), IllegalOrder, "M52")
    s = do(s, 1, {"devote": {"card": "n", "target": "m"}})
    assert card(s, "m")["marked"]
    _through_unmark(s, 0)
    assert card(s, "m")["marked"]
    _through_unmark(s, 0)
    assert not card(s, "m")["marked"]


def test_card_nourished_flower_grows_each_time_its_controller_plays_a_gaian_card() -> None:
    s = make(p1={"army": [{"card": "nourished_flower", "id": "nf"}],
                 "hand": [{"card": "kolibri", "id": "k"}, {"card": "early_spring", "id": "es"}]}, active=1)
    s = cast(s, 1, card="k", to="F")
    assert card(s, "nf")["attack"] == 2 and card(s, "nf")["defense"] == 2
    assert "peaceful" in card(s, "nf")["keywords"]


def test_card_poison_ivy_makes_damaged_creatures_unmark_only_with_a_counter() -> None:
    s = make({"army": [{"card": "mentor", "id": "m"}]}, {"army": [{"card": "poison_ivy", "id": "iv"}]},
             phase="attack")
    s = attack(s, ["m"], "F")
    s = fight(block(s, [("iv", "m")]))
    assert s.data["cards"]["m"]["ivy"] == 1
    s.data["active"] = 0
    g = core.G(s.data)
    core.op_unmark(g, {})
    core.run(g)
    assert s.data["todo"][0]["kind"] == "unmark_pay"
    s = choose(s, True)
    assert not card(s, "m")["marked"] and card(s, "m")["attack"] == 1 and card(s, "m")["defense"] == 2


def test_card_sanctuary_levels_give_sanctuary_against_opponents_targets() -> None:
    s = make({"hand": [{"card": "dimensional_pocket", "id": "p"}]},
             {"cities": [{"card": "sanctuary", "id": "SA", "residents": [{"card": "nightingale", "id": "n"}]},
                         {"card": "farmland", "id": "F", "residents": [{"card": "kolibri", "id": "k"}]}],
              "army": [{"card": "botanist", "id": "bo"}]},
             advantages=[{"p": 1, "city": "SA", "a": "sanctuary3"}])
    raises(lambda: do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["n"]}}), IllegalOrder, "M50")
    do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["k"]}})
    s.data["adv"].append({"p": 1, "city": "SA", "a": "sanctuary5"})
    raises(lambda: do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["k"]}}), IllegalOrder, "M50")
    do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["bo"]}})
    s.data["adv"].append({"p": 1, "city": "SA", "a": "sanctuary7"})
    raises(lambda: do(s, 0, {"play": {"card": "p", "mode": "creature", "targets": ["bo"]}}), IllegalOrder, "M50")


def test_card_sequoia_saplings_grows_with_gaian_neighbours_and_gets_ranged_at_5() -> None:
    s = make(p1={"army": [{"card": "sequoia_saplings", "id": "sq"}, {"card": "kolibri", "id": "k1"},
                          {"card": "kolibri", "id": "k2"}, {"card": "crop_token", "id": "ct"}]})
    assert card(s, "sq")["defense"] == 4 and "ranged" not in card(s, "sq")["keywords"]
    s = make(p1={"army": [{"card": "sequoia_saplings", "id": "sq"}, {"card": "kolibri", "id": "k1"},
                          {"card": "kolibri", "id": "k2"}, {"card": "crop_token", "id": "ct"},
                          {"card": "botanist", "id": "bo"}]})
    assert card(s, "sq")["defense"] == 5 and "ranged" in card(s, "sq")["keywords"]


def test_card_spirit_tree_returns_a_creature_from_the_graveyard_for_a_turn_or_for_good() -> None:
    p1 = {"cities": [{"card": "spirit_tree", "id": "ST", "residents": [{"card": "nightingale", "id": "n"}]}],
          "grave": [{"card": "majestic_griffin", "id": "g"}], "deck": ["kolibri"] * 5}
    s = make({"army": [{"card": "mentor", "id": "m"}]}, p1, active=1, phase="tactics")
    s = do(s, 1, {"devote": {"card": "n", "target": "m"}})
    s = do(s, 1, {"pass": {}})
    assert pending_kind(s) == "spirit3"
    s = choose(s, "g")
    assert zone(s, "g") == "army" and not card(s, "g")["marked"]
    s.data["active"] = 1
    g = core.G(s.data)
    s.data["todo"] = [{"op": "begin"}]
    core.run(g)
    assert zone(s, "g") == "removed"
