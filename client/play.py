"""`archipelago play CODE`: a human plays Salvo in the terminal.

Shows the player's own grid (ships ``#``, hits ``X``, enemy misses ``o``), the enemy waters with the
player's shots marked by the round they were fired in (S8; in classic mode ``X``/``o``), the per-round
reports (S6), and the time left before the round's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any

from archipelago.v1 import game_pb2, lobby_pb2, salvo_pb2
from client import views
from client.base import BaseClient as Client
from client.errors import ApiError

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
    lines = [f"{'your fleet':<24}  enemy waters", f"{head}   {head}"]
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
    return "\n".join(lines)


def parse_placement(text: str) -> salvo_pb2.SalvoOrders:
    """'random', or 'battleship A1 h, cruiser C3 v, ...'."""
    if text.strip().lower() in ("", "random", "r"):
        return salvo_pb2.SalvoOrders(random_placement=True)
    orders = salvo_pb2.SalvoOrders()
    for part in text.split(","):
        words = part.split()
        if len(words) != 3:
            raise ValueError(f"expected '<ship> <bow square> h|v', got {part.strip()!r}")
        orders.placement.add(ship=words[0].lower(), bow=words[1].upper(), vertical=words[2].lower() == "v")
    return orders


async def _ask(prompt: str) -> str:
    return await asyncio.get_running_loop().run_in_executor(None, input, prompt)


async def play(client: Client, game_id: str) -> int:
    while True:
        view = await client.view(game_id)
        print("\n" + render(view))
        if view.status == lobby_pb2.GAME_STATUS_OVER:
            from client.bot import describe_outcome

            print(describe_outcome(view))
            return 0
        if view.status == lobby_pb2.GAME_STATUS_LOBBY:
            print(f"waiting in the lobby: {len(view.players)}/{view.seats} players (code {view.code})")
            if view.you == 0 and len(view.players) == view.seats:
                await client.start(game_id)
                continue
            await _wait_update(client, game_id, view.seq)
            continue
        left = max(0, int(view.deadline_unix_ms / 1000 - time.time()))
        if not view.expected or view.submitted:
            print(f"round {view.round}: waiting for the others (deadline in {left} s)")
            await _wait_update(client, game_id, view.seq)
            continue
        sv = view.salvo
        try:
            if sv.phase == "placement":
                text = await _ask(f"[{left} s left] place your fleet ('random' or 'battleship A1 h, ...'): ")
                orders = parse_placement(text)
            else:
                text = await _ask(f"[{left} s left] round {view.round}: up to {sv.shots_allowed} shots "
                                  "(e.g. A1 B2): ")
                orders = salvo_pb2.SalvoOrders(shots=[w.upper() for w in text.replace(",", " ").split()])
            await client.submit(game_id, view.version, key=f"play-{view.round}-{time.time_ns()}", salvo=orders)
        except ValueError as exc:
            print(f"error: {exc}")
        except ApiError as err:
            print(f"refused: {err.message}")
        except EOFError:
            return 1


async def _wait_update(client: Client, game_id: str, version: int) -> None:
    with contextlib.suppress(TimeoutError, ApiError):
        async with asyncio.timeout(30):
            async for update in client.watch(game_id, version):  # TODO(defect 7)
                if update.kind in ("round_closed", "started", "game_over", "joined"):
                    return


if __name__ == "__main__":
    sys.exit("use: archipelago play CODE")
