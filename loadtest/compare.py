"""The two doors side by side (issue 24): from a locust run's ``--csv PREFIX`` statistics, each rpc
both kinds of player made — a ``grpc`` row (``GrpcPlayer``) and a ``POST`` row named
``Service/Rpc`` (``WebPlayer``) — with its count, median and 95th percentile on each door and the
ratio of the medians (gRPC / JSON). Run as::

    python -m loadtest.compare var/load          # reads var/load_stats.csv

It imports nothing of locust (the tests read it in the pytest process, which must not be patched by
gevent)."""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Door:
    """One door's row of one rpc: request count and response times (ms, as locust rounds them)."""

    count: int
    median_ms: float
    p95_ms: float


@dataclass(frozen=True)
class Pair:
    rpc: str
    grpc: Door
    json: Door

    @property
    def ratio(self) -> float:
        """gRPC's median over JSON's (a median of 0 ms counts as 1 ms)."""
        return max(self.grpc.median_ms, 1.0) / max(self.json.median_ms, 1.0)


def pairs(stats_csv: Path) -> list[Pair]:
    """The rpcs with a row on both doors in ``stats_csv`` (a ``*_stats.csv``), by name."""
    grpc_rows: dict[str, Door] = {}
    json_rows: dict[str, Door] = {}
    with open(stats_csv, newline="") as f:
        for row in csv.DictReader(f):
            door = Door(int(row["Request Count"]), float(row["50%"] or 0), float(row["95%"] or 0))
            if row["Type"] == "grpc":
                grpc_rows[row["Name"]] = door
            elif row["Type"] == "POST" and "/" in row["Name"]:
                json_rows[row["Name"].split("/", 1)[1]] = door
    return [Pair(rpc, grpc_rows[rpc], json_rows[rpc]) for rpc in sorted(grpc_rows.keys() & json_rows.keys())]


def table(found: list[Pair]) -> str:
    lines = [f"{'rpc':<14}{'gRPC n':>8}{'p50':>8}{'p95':>8}{'JSON n':>9}{'p50':>8}{'p95':>8}{'p50 ratio':>11}"]
    for p in found:
        lines.append(f"{p.rpc:<14}{p.grpc.count:>8}{p.grpc.median_ms:>8.0f}{p.grpc.p95_ms:>8.0f}"
                     f"{p.json.count:>9}{p.json.median_ms:>8.0f}{p.json.p95_ms:>8.0f}{p.ratio:>11.2f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m loadtest.compare PREFIX   (the --csv PREFIX of a locust run)", file=sys.stderr)
        return 2
    print(table(pairs(Path(f"{argv[0]}_stats.csv"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
