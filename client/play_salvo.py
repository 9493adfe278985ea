"""Salvo in the terminal (:class:`SalvoUI`): the player's own grid (ships ``#``, hits ``X``, enemy misses
``o``), the enemy waters with the player's shots marked by the round they were fired in (S8; in classic
mode ``X``/``o``), the per-round reports of its salvos (S6) and which of the player's own ships the
enemy hit or sank; the placement (S3) and firing (S5) prompts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from archipelago.v1 import game_pb2, salvo_pb2
from client import views
from client.errors import ApiError
from client.play_base import COMMON_HELP, MOVED_ON, SUBMITTED, EmptyLine, RoundUI, Seat, common_command

COLS = "ABCDEFGHIJ"


def _mark_round(r: int) -> str:
    return str(r) if r < 10 else chr(ord("a") + (r - 10) % 26)


def render(view: game_pb2.GetViewResponse) -> str:
    v: dict[str, Any] = views.view_dict(view)
    own: dict[str, str] = {}
    for ship in v.get("fleet", []):
        for sq in ship.get("squares", []):
            own[sq] = "#"
    for shot in v.get("incoming", []):
        own[shot["square"]] = "X" if shot.get("hit") else "o"
    enemy: dict[str, str] = {}
    for shot in v.get("shots", []):
        if "hit" in shot:
            enemy[shot["square"]] = "X" if shot["hit"] else "o"
        else:
            enemy[shot["square"]] = _mark_round(int(shot["round"]))
    for ship in v.get("enemy_fleet", []):
        for sq in ship.get("squares", []):
            enemy.setdefault(sq, "#")
    head = "   " + " ".join(COLS)
    title = f"Salvo · round {view.round} · you are seat {view.you}"
    if view.code:
        title += f" · game {view.code}"
    lines = [title, f"{'your fleet':<24}  enemy waters", f"{head}   {head}"]
    for row in range(1, 11):
        a = " ".join(own.get(f"{c}{row}", ".") for c in COLS)
        b = " ".join(enemy.get(f"{c}{row}", ".") for c in COLS)
        lines.append(f"{row:>2} {a}   {row:>2} {b}")
    for rep in v.get("reports", [])[-5:]:
        ships = ", ".join(f"{s['ship']} ×{s['count']}" for s in rep.get("ships", [])) or "nothing"
        sunk = f"; sunk: {', '.join(rep['sunk'])}" if rep.get("sunk") else ""
        lines.append(f"round {rep['round']}: {rep.get('hits', 0)} hit(s) — {ships}{sunk}")
    if v.get("enemy_sunk"):
        lines.append("enemy ships sunk: " + ", ".join(v["enemy_sunk"]))
    lines += own_damage(v)
    return "\n".join(lines)


def own_damage(v: dict[str, Any], last: int = 5) -> list[str]:
    """Which of the player's own ships the enemy hit or sank, by round (the latest ``last`` rounds
    with a hit), and the state of each damaged ship."""
    ship_of = {sq: s["name"] for s in v.get("fleet", []) for sq in s.get("squares", [])}
    by_round: dict[int, list[str]] = {}
    for shot in v.get("incoming", []):
        if shot.get("hit") and shot["square"] in ship_of:
            by_round.setdefault(int(shot.get("round", 0)), []).append(ship_of[shot["square"]])
    out = []
    for r in sorted(by_round)[-last:]:
        names = by_round[r]
        hit = ", ".join(f"{n} ×{names.count(n)}" if names.count(n) > 1 else n for n in dict.fromkeys(names))
        out.append(f"enemy round {r}: hit your {hit}")
    damaged = [s for s in v.get("fleet", []) if s.get("hits")]
    if damaged:
        out.append("your ships: " + ", ".join(
            f"{s['name']} sunk" if s.get("sunk") else f"{s['name']} hit {len(s['hits'])}/{s.get('size', 0)}"
            for s in damaged))
    return out


ORIENTATION = {"h": False, "horizontal": False, "v": True, "vertical": True}


def parse_placement(text: str) -> salvo_pb2.SalvoOrders:
    """S3: 'random' (or 'r'), or 'battleship A1 h, cruiser C3 v, ...' (h: rightwards, v: downwards).
    Raises EmptyLine for a blank line and ValueError naming the bad part otherwise."""
    if not text.strip():
        raise EmptyLine("nothing entered")
    if text.strip().lower() in ("random", "r"):
        return salvo_pb2.SalvoOrders(random_placement=True)
    orders = salvo_pb2.SalvoOrders()
    for part in text.split(","):
        words = part.split()
        if len(words) != 3:
            raise ValueError(f"expected '<ship> <bow square> h|v', got {part.strip()!r}")
        ship, bow, way = words
        if way.lower() not in ORIENTATION:
            raise ValueError(f"orientation must be h (rightwards) or v (downwards), got {way!r} in {part.strip()!r}")
        orders.placement.add(ship=ship.lower(), bow=bow.upper(), vertical=ORIENTATION[way.lower()])
    return orders


def parse_shots(text: str) -> salvo_pb2.SalvoOrders:
    """S5: the squares to fire at, separated by spaces or commas ('A1 b2, J10').  Raises EmptyLine for
    a blank line; the server checks the squares themselves (S5) and names the bad one."""
    squares = [w.upper() for w in text.replace(",", " ").split()]
    if not squares:
        raise EmptyLine("nothing entered")
    return salvo_pb2.SalvoOrders(shots=squares)


SALVO_WORDS = ("help", "quit", "chat", "random")


class SalvoUI(RoundUI):
    """Salvo: the two grids and the placement / firing prompts."""

    setup_default = "placed your fleet at random"

    def __init__(self) -> None:
        self.you = -1
        self.names: dict[int, str] = {}

    def render(self, view: game_pb2.GetViewResponse) -> str:
        self.you = view.you
        self.names = {p.seat: p.nickname for p in view.players}
        return render(view)

    def scores(self, view: game_pb2.GetViewResponse) -> dict[int, str]:
        sv = view.salvo
        if not sv.phase:
            return {}
        hits = sum(r.hits for r in sv.reports)
        taken = sum(1 for s in sv.incoming if s.hit)
        return {view.you: f"{hits} hit(s)", **{p.seat: f"{taken} hit(s)" for p in view.players if p.seat != view.you}}

    def words(self, view: game_pb2.GetViewResponse, before: Sequence[str]) -> Sequence[str]:
        if view.salvo.phase == "placement":
            if not before:
                return ["random", *[s.name for s in view.salvo.fleet_spec], "help", "quit"]
            return ["h", "v"] if len(before) % 3 == 2 else [s.name for s in view.salvo.fleet_spec]
        return list(SALVO_WORDS) if not before else []

    async def orders(self, seat: Seat, view: game_pb2.GetViewResponse) -> str:
        return await _salvo_orders(seat, view)

    def notice(self, update: game_pb2.Update) -> str | None:
        if update.kind == "chat" and update.chat.seat != self.you and update.chat.text:
            who = self.names.get(update.chat.seat) or update.chat.nickname or f"seat {update.chat.seat}"
            return f"[chat] {who}: {update.chat.text}"
        return None

    def autopilot_turn(self, turn: game_pb2.AutopilotTurn, view: game_pb2.GetViewResponse) -> str:
        o = turn.salvo
        if o.shots:
            return f"fired at {' '.join(o.shots)}"
        if o.placement or o.random_placement:
            return "placed your fleet" + (" at random" if o.random_placement else "")
        return "played"


SALVO_HELP = """\
Placement (round 0): 'random', or every ship with its bow square and h (rightwards) or v (downwards):
  battleship A1 h, cruiser C3 v, submarine E5 h, destroyer J1 v
Firing: the squares to fire at, separated by spaces or commas: A1 B2 J10
Also:
  chat <text>                  to everyone
""" + COMMON_HELP


async def _salvo_orders(seat: Seat, view: game_pb2.GetViewResponse) -> str:
    """Ask for this round's orders until they are in, the round closes (MOVED_ON); raises Leave."""
    sv = view.salvo
    placing = sv.phase == "placement"
    seat.mine = "not done"
    while True:
        if placing:
            ships = ", ".join(f"{s.name} {s.size}" for s in sv.fleet_spec)
            prompt = f"place your fleet ({ships}): random, or <ship> <bow> h|v, … (help)> "
        else:
            prompt = f"fire up to {sv.shots_allowed} shots (e.g. A1 B2): "
        text = await seat.read(view, prompt)
        if text is None:
            return MOVED_ON
        verb = text.split()[0].lower() if text.split() else ""
        if verb in ("help", "?", "quit", "exit", "leave", "chat", "say"):
            await common_command(seat, text, SALVO_HELP)
            continue
        try:
            orders = parse_placement(text) if placing else parse_shots(text)
        except EmptyLine:
            seat.say("nothing entered" + (" (type 'random' to let the server place your fleet)" if placing
                                          else " (type the squares to fire at, e.g. A1 B2)"))
            continue
        except ValueError as exc:
            seat.say(f"error: {exc}")
            continue
        try:
            await seat.client.submit(seat.game_id, view.version, key=seat.key(), salvo=orders)
        except ApiError as err:
            if err.status in ("ABORTED", "FAILED_PRECONDITION"):  # the round closed meanwhile
                seat.say(f"too late: {err.message}")
                return MOVED_ON
            seat.say(f"refused: {err.message}")
            continue
        seat.feed.mine.add(view.round)
        seat.mine = "done"
        seat.say(f"orders in for round {view.round}")
        return SUBMITTED
