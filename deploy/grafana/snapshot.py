"""A screenshot of the Grafana dashboard (archipelago.json) drawn from a real local run's metrics.

    python -m deploy.grafana.snapshot                   # serve + ~90 s of load, scrape, render, screenshot
    python -m deploy.grafana.snapshot --seconds 60 --users 50
    python -m deploy.grafana.snapshot --metrics-url http://127.0.0.1:8080/metrics --grpc-address 127.0.0.1:50051
    python -m deploy.grafana.snapshot --metrics-url http://127.0.0.1:8080/metrics --no-load
    python -m deploy.grafana.snapshot --samples /tmp/…/samples.json   # render the samples of an earlier run again

No Grafana or Prometheus is needed. The run:

1. starts ``archipelago serve`` on free ports (``ARCHIPELAGO_RATE_LIMITS=off``, a data directory in a temporary
   directory), or uses the gateway of ``--metrics-url``; drives a mixed load through it — locust players
   (``loadtest/locustfile.py``: both doors, Watch streams, Salvo and Archipelago games, chat, reconnects),
   ``bench.loadgen --mode deadlines`` (games nobody plays: rounds closed at their deadline by the autopilot) and
   ``bench.loadgen --mode watch`` (a few hundred Watch streams held for a while) — and scrapes ``/metrics``
   every ``--interval`` seconds, keeping every sample with the time of its scrape (Prometheus' text format,
   read with ``prometheus_client.parser``). Each scrape is given the labels Prometheus would add for its
   target (``namespace``, ``job``, ``pod``, ``instance``) and an ``up`` series.
2. evaluates every query of archipelago.json at every scrape, with the few PromQL shapes the dashboard uses
   (:func:`parse`): a selector with label matchers, ``rate(selector[range])``, ``sum`` / ``max`` / ``avg`` /
   ``count`` with an optional ``by (labels)``, ``histogram_quantile(q, …)``, ``clamp_min(…, n)``, ``a / b``,
   ``n * a``, ``a >= n`` (a filter), ``a or b``, ``vector(n)`` and parentheses.
   Anything else raises :class:`Unsupported`, so a new panel is never silently blank (tests/deploy/
   test_snapshot.py parses every query of the dashboard). ``$__rate_interval`` is four scrape intervals
   (Grafana's rule), ``$namespace`` and ``$job`` the target's labels. ``rate`` is the increase between the
   first and last samples of its window (counter resets handled) over the time between them, without
   Prometheus' extrapolation to the window's edges.
3. draws the dashboard's layout (rows, panels at their grid positions, titles, units, legends) as one HTML
   page with an inline SVG per panel (no script), and screenshots it with Playwright and Debian's Chromium
   (``ARCHIPELAGO_CHROMIUM``, default /usr/bin/chromium; never a downloaded browser) into ``--out``
   (docs/img/dashboard.png). The HTML, the samples (JSON) and the load processes' logs stay in a temporary
   directory, printed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import itertools
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = Path(__file__).with_name("archipelago.json")
OUT = ROOT / "docs" / "img" / "dashboard.png"
CHROMIUM = os.environ.get("ARCHIPELAGO_CHROMIUM", "/usr/bin/chromium")

#: labels of a series, sorted by name, without empty values (PromQL: an empty label is an absent one)
Labels = tuple[tuple[str, str], ...]
Vector = dict[Labels, float]
#: a query's result over the run: labels -> one value (or None) per scrape
Series = dict[Labels, list[float | None]]


class Unsupported(ValueError):
    """A query (or unit, or panel type) of the dashboard this renderer does not know."""


def key(labels: dict[str, str]) -> Labels:
    return tuple(sorted((k, v) for k, v in labels.items() if v != ""))


# ---------------------------------------------------------------------------------------------- samples
@dataclass(frozen=True)
class Scrape:
    """One scrape: its time (Unix s) and every sample, by sample name (``x_total``, ``x_bucket`` …)."""

    t: float
    series: dict[str, Vector]


def parse_scrape(text: str, t: float, target: dict[str, str]) -> Scrape:
    """A scrape of Prometheus' text format, each sample given the target's labels, and ``up`` = 1."""
    series: dict[str, Vector] = defaultdict(dict)
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            series[s.name][key({**s.labels, **target})] = float(s.value)
    series["up"][key(target)] = 1.0
    return Scrape(t, dict(series))


def save_samples(path: Path, scrapes: Sequence[Scrape]) -> None:
    data = [{"t": s.t, "series": {n: [[list(map(list, labels)), v] for labels, v in vec.items()]
                                  for n, vec in s.series.items()}} for s in scrapes]
    path.write_text(json.dumps(data), encoding="utf-8")


def load_samples(path: Path) -> list[Scrape]:
    out = []
    for s in json.loads(path.read_text(encoding="utf-8")):
        series = {n: {tuple((k, v) for k, v in labels): float(value) for labels, value in rows}
                  for n, rows in s["series"].items()}
        out.append(Scrape(float(s["t"]), series))
    return out


# ---------------------------------------------------------------------------------------------- queries
@dataclass(frozen=True)
class Matcher:
    label: str
    op: str  # = != =~ !~
    value: str

    def __call__(self, labels: dict[str, str]) -> bool:
        v = labels.get(self.label, "")
        if self.op == "=":
            return v == self.value
        if self.op == "!=":
            return v != self.value
        found = re.fullmatch(self.value, v) is not None
        return found if self.op == "=~" else not found


@dataclass(frozen=True)
class Selector:
    metric: str
    matchers: tuple[Matcher, ...] = ()

    def select(self, scrape: Scrape) -> Vector:
        return {labels: v for labels, v in scrape.series.get(self.metric, {}).items()
                if all(m(dict(labels)) for m in self.matchers)}


@dataclass(frozen=True)
class Rate:
    selector: Selector
    range_s: float


@dataclass(frozen=True)
class Aggregate:
    op: str  # sum max avg count
    by: tuple[str, ...] | None
    arg: Node


@dataclass(frozen=True)
class Quantile:
    q: float
    arg: Node


@dataclass(frozen=True)
class ClampMin:
    arg: Node
    minimum: float


@dataclass(frozen=True)
class Divide:
    left: Node
    right: Node


@dataclass(frozen=True)
class Number:
    """A number literal (a scalar): ``0`` of ``0 * x``, ``1e-9``."""

    value: float


@dataclass(frozen=True)
class VectorOf:
    """``vector(n)``: one series without labels."""

    value: float


@dataclass(frozen=True)
class Times:
    """``n * x`` or ``x * n`` (a scalar and a vector)."""

    factor: float
    arg: Node


@dataclass(frozen=True)
class AtLeast:
    """``x >= n``: the series of ``x`` whose value is at least ``n`` (a filter; NaN is dropped)."""

    arg: Node
    minimum: float


@dataclass(frozen=True)
class Or:
    """``a or b``: every series of ``a``, and those of ``b`` whose labels ``a`` has not."""

    left: Node
    right: Node


Node = Selector | Rate | Aggregate | Quantile | ClampMin | Divide | Number | VectorOf | Times | AtLeast | Or
AGGREGATIONS: dict[str, Callable[[list[float]], float]] = {
    "sum": sum, "max": max, "avg": lambda xs: sum(xs) / len(xs), "count": lambda xs: float(len(xs)),
}
DURATION = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
TOKEN = re.compile(r"""\s*(?:
    (?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?P<unit>ms|s|m|h|d)?(?![\w.])
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<op>=~|!~|!=|>=|=|[(){}\[\],/*])
)""", re.VERBOSE)


def substitute(expr: str, variables: dict[str, str]) -> str:
    """Grafana's variables (``$name``, ``${name}``) replaced; an unknown one is Unsupported."""
    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in variables:
            raise Unsupported(f"unknown variable ${name} in {expr!r}")
        return variables[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


class _Parser:
    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.tokens: list[tuple[str, str, str]] = []  # (kind, text, duration unit)
        pos = 0
        while pos < len(expr.rstrip()):
            m = TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                raise Unsupported(f"cannot read {expr[pos:pos + 30]!r} in {expr!r}")
            kind = next(k for k in ("num", "ident", "str", "op") if m.group(k) is not None)
            self.tokens.append((kind, m.group(kind), m.group("unit") or ""))
            pos = m.end()
        self.i = 0

    def fail(self, what: str) -> Unsupported:
        at = " ".join(t[1] + t[2] for t in self.tokens[self.i:self.i + 4]) or "the end"
        return Unsupported(f"{what} at {at!r} in {self.expr!r}")

    def peek(self) -> tuple[str, str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "", "")

    def take(self, kind: str, text: str | None = None) -> tuple[str, str, str]:
        tok = self.peek()
        if tok[0] != kind or (text is not None and tok[1] != text):
            raise self.fail(f"expected {text or kind}")
        self.i += 1
        return tok

    def number(self) -> float:
        tok = self.take("num")
        if tok[2]:
            raise self.fail("a duration where a number belongs")
        return float(tok[1])

    def parse(self) -> Node:
        node = self.expression()
        if self.peek()[0] != "end":
            raise self.fail("unsupported operator or trailing text")
        return node

    def expression(self) -> Node:
        """``or`` binds loosest, then ``>=``, then ``*`` and ``/`` (PromQL's order)."""
        node = self.comparison()
        while self.peek()[:2] == ("ident", "or"):
            self.i += 1
            node = Or(node, self.comparison())
        return node

    def comparison(self) -> Node:
        node = self.product()
        if self.peek()[:2] == ("op", ">="):
            self.i += 1
            node = AtLeast(node, self.number())
        return node

    def product(self) -> Node:
        node = self.term()
        while self.peek()[:2] in (("op", "/"), ("op", "*")):
            op = self.take("op")[1]
            right = self.term()
            if op == "/":
                node = Divide(node, right)
            elif isinstance(node, Number) != isinstance(right, Number):
                scalar, vector = (node, right) if isinstance(node, Number) else (right, node)
                assert isinstance(scalar, Number)
                node = Times(scalar.value, vector)
            else:
                raise self.fail("* takes a number and a vector")
        return node

    def term(self) -> Node:
        if self.peek()[:2] == ("op", "("):
            self.i += 1
            inner = self.expression()
            self.take("op", ")")
            return inner
        if self.peek()[0] == "num":
            return Number(self.number())
        name = self.take("ident")[1]
        if self.peek()[:2] != ("op", "(") and name not in AGGREGATIONS:
            return self.selector(name)
        if name in AGGREGATIONS:
            by: tuple[str, ...] | None = None
            if self.peek()[:2] == ("ident", "by"):
                self.i += 1
                by = self.labels()
            self.take("op", "(")
            arg = self.expression()
            self.take("op", ")")
            return Aggregate(name, by, arg)
        self.take("op", "(")
        node: Node
        if name == "rate":
            sel = self.selector(self.take("ident")[1])
            self.take("op", "[")
            _, value, unit = self.take("num")
            if not unit:
                raise self.fail("a range needs a unit")
            self.take("op", "]")
            node = Rate(sel, float(value) * DURATION[unit])
        elif name == "histogram_quantile":
            q = self.number()
            self.take("op", ",")
            node = Quantile(q, self.expression())
        elif name == "clamp_min":
            arg = self.expression()
            self.take("op", ",")
            node = ClampMin(arg, self.number())
        elif name == "vector":
            node = VectorOf(self.number())
        else:
            self.i -= 2
            raise self.fail(f"unsupported function {name}()")
        self.take("op", ")")
        return node

    def labels(self) -> tuple[str, ...]:
        self.take("op", "(")
        out = [self.take("ident")[1]]
        while self.peek()[:2] == ("op", ","):
            self.i += 1
            out.append(self.take("ident")[1])
        self.take("op", ")")
        return tuple(out)

    def selector(self, metric: str) -> Selector:
        matchers: list[Matcher] = []
        if self.peek()[:2] == ("op", "{"):
            self.i += 1
            while True:
                label = self.take("ident")[1]
                op = self.take("op")[1]
                if op not in ("=", "!=", "=~", "!~"):
                    raise self.fail(f"matcher operator {op}")
                matchers.append(Matcher(label, op, json.loads(self.take("str")[1])))
                if self.peek()[:2] == ("op", ","):
                    self.i += 1
                    continue
                self.take("op", "}")
                break
        return Selector(metric, tuple(matchers))


def parse(expr: str) -> Node:
    """A query of the dashboard (variables already substituted) as a tree; Unsupported if it is not one of
    the shapes above."""
    return _Parser(expr).parse()


def _rate(sel: Selector, range_s: float, scrapes: Sequence[Scrape], i: int) -> Vector:
    t = scrapes[i].t
    points: dict[Labels, list[tuple[float, float]]] = defaultdict(list)
    for s in scrapes[:i + 1]:
        if s.t > t - range_s:
            for labels, v in sel.select(s).items():
                points[labels].append((s.t, v))
    out: Vector = {}
    for labels, pts in points.items():
        if len(pts) < 2:
            continue
        increase = sum(b - a if b >= a else b for (_, a), (_, b) in itertools.pairwise(pts))
        out[labels] = increase / (pts[-1][0] - pts[0][0])
    return out


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus' histogram_quantile over (upper bound, cumulative count) buckets; NaN when it has none."""
    buckets = sorted(buckets)
    if len(buckets) < 2 or buckets[-1][0] != math.inf:
        return math.nan
    counts = [c for _, c in buckets]
    for j in range(1, len(counts)):  # rates of cumulative counts can come out a hair non-monotonic
        counts[j] = max(counts[j], counts[j - 1])
    total = counts[-1]
    if total <= 0:
        return math.nan
    if q < 0 or q > 1:
        return -math.inf if q < 0 else math.inf
    rank = q * total
    b = next(j for j, c in enumerate(counts) if c >= rank)
    if b == len(buckets) - 1:
        return buckets[-2][0]
    if b == 0 and buckets[0][0] <= 0:
        return buckets[0][0]
    start, end, count = 0.0, buckets[b][0], counts[b]
    if b > 0:
        start, count, rank = buckets[b - 1][0], count - counts[b - 1], rank - counts[b - 1]
    return start + (end - start) * (rank / count) if count else start


def evaluate(node: Node, scrapes: Sequence[Scrape], i: int) -> Vector:
    """The instant vector of ``node`` at the time of scrape ``i`` (metric names dropped: no panel shows them)."""
    if isinstance(node, Selector):
        return node.select(scrapes[i])
    if isinstance(node, Rate):
        return _rate(node.selector, node.range_s, scrapes, i)
    if isinstance(node, Aggregate):
        groups: dict[Labels, list[float]] = defaultdict(list)
        for labels, v in evaluate(node.arg, scrapes, i).items():
            d = dict(labels)
            group = tuple((k, d[k]) for k in sorted(node.by) if d.get(k)) if node.by is not None else ()
            groups[group].append(v)
        return {g: AGGREGATIONS[node.op](vs) for g, vs in groups.items()}
    if isinstance(node, Quantile):
        hist: dict[Labels, list[tuple[float, float]]] = defaultdict(list)
        for labels, v in evaluate(node.arg, scrapes, i).items():
            d = dict(labels)
            if "le" in d:
                hist[key({k: x for k, x in d.items() if k != "le"})].append((float(d["le"]), v))
        return {g: x for g, b in hist.items() if not math.isnan(x := bucket_quantile(node.q, b))}
    if isinstance(node, ClampMin):
        return {g: max(v, node.minimum) for g, v in evaluate(node.arg, scrapes, i).items()}
    if isinstance(node, VectorOf):
        return {(): node.value}
    if isinstance(node, Number):
        raise Unsupported(f"a bare number {node.value} where a vector belongs")
    if isinstance(node, Times):
        return {g: node.factor * v for g, v in evaluate(node.arg, scrapes, i).items()}
    if isinstance(node, AtLeast):
        return {g: v for g, v in evaluate(node.arg, scrapes, i).items() if v >= node.minimum}
    if isinstance(node, Or):
        left = evaluate(node.left, scrapes, i)
        return {**{g: v for g, v in evaluate(node.right, scrapes, i).items() if g not in left}, **left}
    left, right = evaluate(node.left, scrapes, i), evaluate(node.right, scrapes, i)
    return {g: (v / right[g] if right[g] else math.copysign(math.inf, v) if v else math.nan)
            for g, v in left.items() if g in right}


def series(node: Node, scrapes: Sequence[Scrape]) -> Series:
    """``node`` at every scrape: labels -> one value per scrape (None where absent or not finite)."""
    out: Series = {}
    for i in range(len(scrapes)):
        for labels, v in evaluate(node, scrapes, i).items():
            out.setdefault(labels, [None] * len(scrapes))[i] = v if math.isfinite(v) else None
    return out


# ---------------------------------------------------------------------------------------------- the dashboard
UNITS = ("short", "reqps", "ops", "s", "percentunit", "bytes")
PANEL_TYPES = ("row", "timeseries", "stat", "bargauge")


@dataclass
class Line:
    name: str
    values: list[float | None]


@dataclass
class PanelData:
    panel: dict[str, Any]
    lines: list[Line] = field(default_factory=list)

    @property
    def unit(self) -> str:
        return str(self.panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short"))

    @property
    def stacked(self) -> bool:
        custom = self.panel.get("fieldConfig", {}).get("defaults", {}).get("custom", {})
        return bool(custom.get("stacking", {}).get("mode", "none") != "none")


def load_dashboard(path: Path = DASHBOARD) -> dict[str, Any]:
    board: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return board


def queries(board: dict[str, Any], variables: dict[str, str]) -> list[tuple[dict[str, Any], dict[str, Any], Node]]:
    """(panel, target, parsed query) of every query; Unsupported for a shape, unit or panel type not known."""
    out = []
    for panel in board["panels"]:
        if panel["type"] not in PANEL_TYPES:
            raise Unsupported(f"panel {panel['title']!r}: type {panel['type']}")
        if panel["type"] == "row":
            continue
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
        if unit not in UNITS:
            raise Unsupported(f"panel {panel['title']!r}: unit {unit}")
        for target in panel["targets"]:
            try:
                out.append((panel, target, parse(substitute(target["expr"], variables))))
            except Unsupported as err:
                raise Unsupported(f"panel {panel['title']!r}: {err}") from None
    return out


def legend(fmt: str, labels: Labels, title: str) -> str:
    if not fmt or fmt == "__auto":
        return "{" + ", ".join(f'{k}="{v}"' for k, v in labels) + "}" if labels else title
    d = dict(labels)
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: d.get(m.group(1), ""), fmt).strip()


def panel_data(board: dict[str, Any], scrapes: Sequence[Scrape], variables: dict[str, str]) -> list[PanelData]:
    """Every panel (rows included, with no lines) with the lines its queries give over the scrapes."""
    parsed = {(id(p), t["refId"]): node for p, t, node in queries(board, variables)}
    out = []
    for panel in board["panels"]:
        data = PanelData(panel)
        for target in panel.get("targets", []) if panel["type"] != "row" else []:
            result = series(parsed[(id(panel), target["refId"])], scrapes)
            for labels in sorted(result):
                data.lines.append(Line(legend(target.get("legendFormat", ""), labels, panel["title"]),
                                       result[labels]))
        out.append(data)
    return out


# ---------------------------------------------------------------------------------------------- rendering
PALETTE = ("#73BF69", "#F2CC0C", "#5794F2", "#FF9830", "#F2495C", "#B877D9", "#70DBED", "#FADE2A", "#8AB8FF",
           "#FFB357", "#FF7383", "#CA95E5", "#96D98D", "#FFEE52", "#C0D8FF", "#FFCB7D", "#56A64B", "#E0B400")
CELL_H, GAP, PAD, HEADER_H = 30, 8, 8, 64
TITLE_H, LEGEND_ROW_H, CHAR_W = 30, 18, 6.8
CSS = """
body { margin: 0; background: #111217; color: #ccccdc; font: 12px/1.3 Inter, "DejaVu Sans", Helvetica, Arial,
       sans-serif; }
header { height: HEADER_Hpx; padding: 12px 16px 0; box-sizing: border-box; }
header h1 { font-size: 20px; font-weight: 500; margin: 0 0 6px; color: #d8d9da; }
header .sub { color: #8e8e9e; }
header .var { display: inline-block; border: 1px solid #2c3235; border-radius: 2px; padding: 1px 6px;
              margin-right: 8px; background: #181b1f; color: #ccccdc; }
main { position: relative; }
.row { position: absolute; font-size: 15px; font-weight: 500; color: #d8d9da; padding-top: 6px; }
.panel { position: absolute; background: #181b1f; border: 1px solid #25282d; border-radius: 2px;
         box-sizing: border-box; overflow: hidden; }
.panel h2 { font-size: 13px; font-weight: 500; margin: 0; padding: 0 8px; height: TITLE_Hpx;
            line-height: TITLE_Hpx; color: #ccccdc; white-space: nowrap; overflow: hidden; }
.panel svg { display: block; }
.legend { padding: 0 8px; display: flex; flex-wrap: wrap; gap: 0 16px; overflow: hidden; }
.legend span { height: LEGEND_Hpx; line-height: LEGEND_Hpx; white-space: nowrap; color: #ccccdc; }
.legend i { display: inline-block; width: 14px; height: 4px; border-radius: 2px; margin: 0 6px 2px 0;
            vertical-align: middle; }
.legend .more { color: #8e8e9e; }
""".replace("HEADER_H", str(HEADER_H)).replace("TITLE_H", str(TITLE_H)).replace("LEGEND_H", str(LEGEND_ROW_H))


def _plain(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits, no exponent, no trailing zeros."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _scaled(x: float, steps: Sequence[tuple[float, str]]) -> str:
    """``x`` in the largest of ``steps`` (factor, suffix) it reaches."""
    for factor, suffix in steps:
        if abs(x) >= factor or factor == steps[-1][0]:
            return f"{_plain(x / factor)}{suffix}"
    raise AssertionError("unreachable")


def fmt(x: float, unit: str) -> str:
    """A value as Grafana shows it in ``unit``."""
    if unit not in UNITS:
        raise Unsupported(f"unit {unit}")
    if x == 0:
        return {"s": "0 s", "percentunit": "0%", "bytes": "0 B"}.get(unit, "0")
    if unit == "s":
        return _scaled(x, ((3600, " h"), (60, " min"), (1, " s"), (1e-3, " ms"), (1e-6, " µs"), (1e-9, " ns")))
    if unit == "percentunit":
        return f"{_plain(x * 100)}%"
    if unit == "bytes":
        return _scaled(x, ((1 << 40, " TiB"), (1 << 30, " GiB"), (1 << 20, " MiB"), (1 << 10, " KiB"), (1, " B")))
    short = _scaled(x, ((1e12, " T"), (1e9, " B"), (1e6, " Mil"), (1e3, " K"), (1, "")))
    return {"reqps": f"{short} req/s", "ops": f"{short} ops/s"}.get(unit, short)


def nice_ticks(lo: float, hi: float, n: int, unit: str = "short") -> list[float]:
    """About ``n`` round ticks covering [lo, hi] (bytes: round in the binary multiple ``fmt`` shows)."""
    if unit == "bytes" and max(abs(lo), abs(hi)) >= 1024:
        scale = 1024.0 ** math.floor(math.log(max(abs(lo), abs(hi)), 1024))
        return [t * scale for t in nice_ticks(lo / scale, hi / scale, n)]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks = [first + k * step for k in range(math.ceil((hi - first) / step - 1e-9) + 1)]
    return [round(t, 12) for t in ticks]


def _legend_rows(names: Sequence[str], width: float) -> int:
    rows, x = 1, 0.0
    for name in names:
        w = 20 + len(name) * CHAR_W + 16
        if x and x + w > width:
            rows, x = rows + 1, 0.0
        x += w
    return rows


def _chart(data: PanelData, times: Sequence[float], w: float, h: float) -> str:
    """A time series panel's plot: axes, grid, one line per series (stacked when the panel stacks)."""
    n = len(times)
    values = [line.values for line in data.lines]
    if data.stacked:  # each series on top of the ones before it (a missing value counts as 0 beneath)
        base = [0.0] * n
        tops, bottoms = [], []
        for vs in values:
            bottoms.append(list(base))
            summed = [None if v is None else base[i] + v for i, v in enumerate(vs)]
            base = [t if t is not None else b for t, b in zip(summed, base, strict=True)]
            tops.append(summed)
    else:
        tops, bottoms = values, [[0.0] * n for _ in values]
    present = [v for vs in tops for v in vs if v is not None]
    if not present or n < 2:
        return (f'<svg width="{w:.0f}" height="{h:.0f}"><text x="{w / 2:.0f}" y="{h / 2:.0f}" fill="#8e8e9e" '
                f'font-size="14" text-anchor="middle">No data</text></svg>')
    lo, hi = min(0.0, min(present)), max(present)
    ticks = nice_ticks(lo, hi, max(2, int(h / 45)), data.unit)
    lo, hi = ticks[0], ticks[-1]
    labels = [fmt(t, data.unit) for t in ticks]
    left = 10 + max(len(s) for s in labels) * CHAR_W
    right, top, bottom = 10, 6, 20
    pw, ph = w - left - right, h - top - bottom
    t0, t1 = times[0], times[-1]

    def px(i: int) -> float:
        return left + (times[i] - t0) / (t1 - t0) * pw

    def py(v: float) -> float:
        return top + ph - (v - lo) / (hi - lo) * ph

    out = [f'<svg width="{w:.0f}" height="{h:.0f}" font-size="11" fill="#8e8e9e">']
    for t, label in zip(ticks, labels, strict=True):
        y = py(t)
        out.append(f'<line x1="{left:.1f}" x2="{left + pw:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ccccdc" '
                   f'stroke-opacity="0.1"/><text x="{left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
    span = t1 - t0
    step = next((s for s in (5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600) if span / s <= pw / 90), 7200)
    tick = math.ceil(t0 / step) * step
    while tick <= t1:
        x = left + (tick - t0) / span * pw
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + ph:.1f}" stroke="#ccccdc" '
                   f'stroke-opacity="0.1"/><text x="{x:.1f}" y="{h - 5:.1f}" text-anchor="middle">'
                   f'{time.strftime("%H:%M:%S", time.localtime(tick))}</text>')
        tick += step
    for k, (ups, downs) in enumerate(zip(tops, bottoms, strict=True)):
        color = PALETTE[k % len(PALETTE)]
        for run in _runs(ups):
            line = " ".join(f"{px(i):.1f},{py(ups[i] or 0.0):.1f}" for i in run)
            if data.stacked:
                back = " ".join(f"{px(i):.1f},{py(downs[i] or 0.0):.1f}" for i in reversed(run))
                out.append(f'<polygon points="{line} {back}" fill="{color}" fill-opacity="0.2" stroke="none"/>')
            if len(run) == 1:
                out.append(f'<circle cx="{px(run[0]):.1f}" cy="{py(ups[run[0]] or 0.0):.1f}" r="1.5" '
                           f'fill="{color}"/>')
            out.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="1.5" '
                       f'stroke-linejoin="round"/>')
    out.append("</svg>")
    return "".join(out)


def _runs(values: Sequence[float | None]) -> Iterator[list[int]]:
    """The index ranges of consecutive present values."""
    run: list[int] = []
    for i, v in enumerate(values):
        if v is None:
            if run:
                yield run
            run = []
        else:
            run.append(i)
    if run:
        yield run


def _last(values: Sequence[float | None]) -> float | None:
    return next((v for v in reversed(values) if v is not None), None)


def _stat(data: PanelData, times: Sequence[float], w: float, h: float) -> str:
    """A stat panel: the last value, large, over a sparkline of the series."""
    line = data.lines[0] if data.lines else None
    value = _last(line.values) if line else None
    out = [f'<svg width="{w:.0f}" height="{h:.0f}">']
    present = [v for v in line.values if v is not None] if line else []
    if line and len(present) > 1 and len(times) > 1:
        lo, hi = min(0.0, min(present)), max(present) or 1.0
        t0, span = times[0], (times[-1] - times[0]) or 1.0
        for run in _runs(line.values):
            pts = [(i, line.values[i] or 0.0) for i in run]
            xy = " ".join(f"{(times[i] - t0) / span * w:.1f},{h - 2 - (v - lo) / (hi - lo or 1) * (h * 0.45):.1f}"
                          for i, v in pts)
            x0, x1 = (times[run[0]] - t0) / span * w, (times[run[-1]] - t0) / span * w
            out.append(f'<polygon points="{x0:.1f},{h} {xy} {x1:.1f},{h}" fill="#73BF69" fill-opacity="0.15"/>'
                       f'<polyline points="{xy}" fill="none" stroke="#73BF69" stroke-width="1.5"/>')
    text, color = (fmt(value, data.unit), "#73BF69") if value is not None else ("No data", "#8e8e9e")
    size = min(h * 0.42, w / max(4, len(text)) * 1.6)
    out.append(f'<text x="{w / 2:.0f}" y="{h * 0.42 + size / 3:.0f}" font-size="{size:.0f}" font-weight="500" '
               f'fill="{color}" text-anchor="middle">{html.escape(text)}</text></svg>')
    return "".join(out)


def _bars(data: PanelData, w: float, h: float) -> str:
    """A horizontal bar gauge: each series' last value."""
    rows = [(line.name, v) for line in data.lines if (v := _last(line.values)) is not None]
    if not rows:
        return (f'<svg width="{w:.0f}" height="{h:.0f}"><text x="{w / 2:.0f}" y="{h / 2:.0f}" fill="#8e8e9e" '
                f'font-size="14" text-anchor="middle">No data</text></svg>')
    hi = max(v for _, v in rows) or 1.0
    slot = min(60.0, (h - 8) / len(rows))
    out = [f'<svg width="{w:.0f}" height="{h:.0f}"><defs><linearGradient id="g{data.panel["id"]}">'
           '<stop offset="0" stop-color="#37872D"/><stop offset="1" stop-color="#73BF69"/></linearGradient></defs>']
    for k, (name, v) in enumerate(rows):
        y = 4 + k * slot
        bar_w = (w - 90) * v / hi
        out.append(f'<text x="8" y="{y + 14:.1f}" font-size="12" fill="#ccccdc">{html.escape(name)}</text>'
                   f'<rect x="8" y="{y + 20:.1f}" width="{w - 100:.1f}" height="{slot - 28:.1f}" fill="#ccccdc" '
                   f'fill-opacity="0.05"/><rect x="8" y="{y + 20:.1f}" width="{max(2.0, bar_w - 10):.1f}" '
                   f'height="{slot - 28:.1f}" fill="url(#g{data.panel["id"]})"/>'
                   f'<text x="{w - 8:.1f}" y="{y + 20 + (slot - 28) / 2 + 6:.1f}" font-size="18" fill="#73BF69" '
                   f'text-anchor="end">{html.escape(fmt(v, data.unit))}</text>')
    out.append("</svg>")
    return "".join(out)


def render_html(board: dict[str, Any], panels: Sequence[PanelData], times: Sequence[float], width: int = 1600,
                subtitle: str = "", variables: dict[str, str] | None = None) -> str:
    """The dashboard as one HTML page: every panel at its grid position with one inline SVG."""
    col = (width - 2 * PAD + GAP) / 24
    bottom = max((p.panel["gridPos"]["y"] + p.panel["gridPos"]["h"] for p in panels), default=0)
    body = []
    for data in panels:
        p, pos = data.panel, data.panel["gridPos"]
        x, y = PAD + pos["x"] * col, pos["y"] * (CELL_H + GAP)
        w, h = pos["w"] * col - GAP, pos["h"] * (CELL_H + GAP) - GAP
        style = f"left:{x:.0f}px;top:{y:.0f}px;width:{w:.0f}px;height:{h:.0f}px"
        title = html.escape(p["title"])
        if p["type"] == "row":
            body.append(f'<div class="row" style="{style}">{title}</div>')
            continue
        inner_w = w - 2
        legend_html, legend_h = "", 0.0
        if p["type"] == "timeseries" and data.lines:
            names = [line.name for line in data.lines]
            max_rows = max(1, int((h - TITLE_H) * 0.35 // LEGEND_ROW_H))
            rows = _legend_rows(names, inner_w - 16)
            shown = names
            if rows > max_rows:  # keep what fits, and say how many more
                while len(shown) > 1 and _legend_rows([*shown, "+99 more"], inner_w - 16) > max_rows:
                    shown = shown[:-1]
                rows = max_rows
            items = [f'<span><i style="background:{PALETTE[k % len(PALETTE)]}"></i>{html.escape(name)}</span>'
                     for k, name in enumerate(shown)]
            if len(shown) < len(names):
                items.append(f'<span class="more">+{len(names) - len(shown)} more</span>')
            legend_h = rows * LEGEND_ROW_H + 4
            legend_html = f'<div class="legend" style="height:{legend_h:.0f}px">{"".join(items)}</div>'
        plot_h = h - 2 - TITLE_H - legend_h
        if p["type"] == "timeseries":
            svg = _chart(data, times, inner_w, plot_h)
        elif p["type"] == "stat":
            svg = _stat(data, times, inner_w, plot_h)
        else:
            svg = _bars(data, inner_w, plot_h)
        body.append(f'<section class="panel" style="{style}" title="{html.escape(p.get("description", ""))}">'
                    f"<h2>{title}</h2>{svg}{legend_html}</section>")
    chips = "".join(f'<span class="var">{html.escape(k)} = {html.escape(v)}</span>'
                    for k, v in (variables or {}).items() if not k.startswith("__"))
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(board["title"])}</title>'
            f"<style>{CSS}</style></head><body><header><h1>{html.escape(board['title'])}</h1>"
            f'<div class="sub">{chips}{html.escape(subtitle)}</div></header>'
            f'<main style="height:{bottom * (CELL_H + GAP):.0f}px">{"".join(body)}</main></body></html>')


def screenshot(html_path: Path, png: Path, width: int) -> None:
    from playwright.sync_api import sync_playwright

    png.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(html_path.resolve().as_uri())
            page.screenshot(path=str(png), full_page=True)
        finally:
            browser.close()


# ---------------------------------------------------------------------------------------------- the run
class Live:
    """A live ``\\r`` line on stderr."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream

    def __call__(self, text: str) -> None:
        print(f"\r  {text:<118}", end="", file=self.stream, flush=True)

    def done(self, text: str = "") -> None:
        if text:
            self(text)
        print(file=self.stream, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, timeout: float = 10.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return int(r.status), r.read().decode("utf-8")
    except urllib.error.HTTPError as err:
        return err.code, ""


@dataclass
class Job:
    """A load process started at ``at`` seconds into the run."""

    name: str
    argv: list[str]
    at: float
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def state(self) -> str:
        if self.proc is None:
            return "waiting"
        code = self.proc.poll()
        return "running" if code is None else ("done" if code == 0 else f"exit {code}")


def load_jobs(grpc_address: str, http_url: str, seconds: float, users: int) -> list[Job]:
    """The mixed load: locust players all along, games left to their deadlines, then a block of Watch streams.
    Each would run past ``seconds``: the run stops them after its last scrape, so the last values are under load."""
    py = sys.executable
    return [
        Job("locust", [py, "-m", "locust", "-f", str(ROOT / "loadtest" / "locustfile.py"), "--headless",
                       "-u", str(users), "-r", str(max(1, users // 10)), "-t", f"{seconds + 60:.0f}s",
                       "--host", http_url, "--grpc-address", grpc_address, "--deadline", "15", "--only-summary",
                       "--stop-timeout", "5", "--loglevel", "WARNING"], at=0.0),
        Job("deadlines", [py, "-m", "bench.loadgen", "--address", grpc_address, "--mode", "deadlines",
                          "--games", "120", "--sample", "40", "--lead", "15", "--window", f"{seconds * 0.6:.0f}",
                          "--jobs", "4"], at=5.0),
        Job("watch", [py, "-m", "bench.loadgen", "--address", grpc_address, "--mode", "watch", "--streams", "300",
                      "--fanout-rate", "20", "--seconds", f"{seconds * 0.35:.0f}", "--channels", "4", "--jobs", "8"],
            at=seconds * 0.3),
    ]


def stop(proc: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def serving(workdir: Path, live: Live) -> Iterator[tuple[str, str]]:
    """``archipelago serve`` on free ports with its data in ``workdir``: (gRPC address, HTTP URL) once healthy."""
    grpc_port, http_port = free_port(), free_port()
    exe = shutil.which("archipelago", path=str(Path(sys.executable).parent)) or shutil.which("archipelago")
    if exe is None:
        raise SystemExit("no archipelago command: run `make run` (or pip install -e .) first")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RAY_ADDRESS")}
    ray_tmp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths are bounded
    env.update(ARCHIPELAGO_RATE_LIMITS="off", ARCHIPELAGO_DRAIN_S="0", RAY_TMPDIR=ray_tmp)
    log = (workdir / "serve.log").open("wb")
    proc = subprocess.Popen([exe, "serve", "--grpc-port", str(grpc_port), "--http-port", str(http_port),
                             "--data-dir", "var"], cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{http_port}"
    try:
        t0 = time.monotonic()
        while True:
            live(f"starting archipelago serve (gRPC :{grpc_port}, HTTP :{http_port}) … {time.monotonic() - t0:.0f} s")
            if proc.poll() is not None:
                raise SystemExit(f"archipelago serve exited with {proc.returncode}; see {workdir / 'serve.log'}")
            with contextlib.suppress(OSError):
                if http_get(url + "/healthz", timeout=3.0)[0] == 200:
                    break
            if time.monotonic() - t0 > 120:
                raise SystemExit(f"archipelago serve not healthy within 120 s; see {workdir / 'serve.log'}")
            time.sleep(1.0)
        live.done(f"archipelago serve healthy in {time.monotonic() - t0:.0f} s (gRPC :{grpc_port}, HTTP :{http_port})")
        yield f"127.0.0.1:{grpc_port}", url
    finally:
        live(f"stopping archipelago serve (pid {proc.pid}) …")
        stop(proc)
        log.close()
        shutil.rmtree(ray_tmp, ignore_errors=True)
        live.done(f"archipelago serve stopped (exit {proc.returncode})")


def scrape_run(metrics_url: str, jobs: list[Job], seconds: float, interval: float, workdir: Path,
               live: Live) -> list[Scrape]:
    """Scrape ``metrics_url`` every ``interval`` s: two scrapes before the load ``jobs`` start, then ``seconds``
    under load; the jobs are stopped after the last scrape."""
    pod = "gateway"  # the label a PodMonitor would add: here the gateway process that answers /healthz
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        health = json.loads(http_get(metrics_url.rsplit("/metrics", 1)[0] + "/healthz", timeout=5.0)[1])
        pod = f"gateway-{health['gateway']['pid']}"
    target = {"namespace": "local", "job": "archipelago-gateway", "instance": metrics_url.split("/")[2], "pod": pod}
    rates = {"__rate_interval": f"{4 * interval:g}s"}
    probes = {name: parse(substitute(expr, rates))  # the live line's figures, by the same evaluator
              for name, expr in (("req/s", "sum(rate(archipelago_requests_total[$__rate_interval]))"),
                                 ("streams", "sum(archipelago_watch_streams)"),
                                 ("games", "sum(max by (shard) (archipelago_shard_games))"),
                                 ("rounds/s", "sum(max by (shard, how) (rate(archipelago_rounds_closed_total"
                                              "[$__rate_interval])))"))}
    scrapes: list[Scrape] = []
    lead = 2 * interval
    t0 = time.monotonic()
    next_at = t0
    try:
        while True:
            el = time.monotonic() - t0
            for job in jobs:
                if job.proc is None and el >= lead + job.at:
                    job.log = workdir / f"{job.name}.log"
                    with job.log.open("wb") as log:
                        job.proc = subprocess.Popen(job.argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            started = time.time()
            try:
                status, text = http_get(metrics_url)
                if status != 200:
                    raise OSError(f"HTTP {status}")
                scrapes.append(parse_scrape(text, time.time(), target))
            except OSError:
                scrapes.append(Scrape(started, {"up": {key(target): 0.0}}))
            figures = "  ".join(f"{name} {_plain(sum(evaluate(node, scrapes, len(scrapes) - 1).values()))}"
                                for name, node in probes.items())
            states = " ".join(f"{j.name}:{j.state}" for j in jobs)
            live(f"{el:5.0f}/{seconds + lead:.0f} s  {len(scrapes)} scrapes  {figures}  {states}")
            if el >= seconds + lead:
                break
            next_at += interval
            time.sleep(max(0.0, next_at - time.monotonic()))
    finally:
        live.done()
        for job in jobs:
            if job.proc is not None:
                live(f"stopping {job.name} (pid {job.proc.pid}) …")
                stop(job.proc, timeout=15)
        live.done("load stopped" if jobs else "")
    return scrapes


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m deploy.grafana.snapshot", description=(__doc__ or "").split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--metrics-url", help="scrape this gateway's /metrics instead of starting archipelago serve")
    ap.add_argument("--grpc-address", help="with --metrics-url: the gateway's gRPC HOST:PORT (for the load)")
    ap.add_argument("--no-load", action="store_true", help="with --metrics-url: only scrape, drive no load")
    ap.add_argument("--samples", type=Path, help="render the samples an earlier run saved (no run)")
    ap.add_argument("--seconds", type=float, default=90.0, help="load duration (default 90)")
    ap.add_argument("--interval", type=float, default=3.0, help="scrape interval in s (default 3)")
    ap.add_argument("--users", type=int, default=100, help="locust players (default 100)")
    ap.add_argument("--width", type=int, default=1600, help="page width in px (default 1600)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"the PNG (default {OUT.relative_to(ROOT)})")
    ap.add_argument("--dashboard", type=Path, default=DASHBOARD)
    a = ap.parse_args(argv)
    if a.metrics_url and not (a.grpc_address or a.no_load):
        ap.error("--metrics-url needs --grpc-address (for the load) or --no-load")
    board = load_dashboard(a.dashboard)
    live = Live()
    workdir = Path(tempfile.mkdtemp(prefix="archipelago-snapshot-"))
    started = time.monotonic()
    if a.samples:
        scrapes = load_samples(a.samples)
        interval = (scrapes[-1].t - scrapes[0].t) / max(1, len(scrapes) - 1)
        source = f"samples of {a.samples}"
    else:
        interval = a.interval
        queries(board, {"namespace": "local", "job": ".*", "__rate_interval": "1s"})  # fail before the run
        if a.metrics_url:
            http_url = a.metrics_url.rsplit("/metrics", 1)[0]
            jobs = [] if a.no_load else load_jobs(a.grpc_address, http_url, a.seconds, a.users)
            scrapes = scrape_run(a.metrics_url, jobs, a.seconds, interval, workdir, live)
            source = a.metrics_url
        else:
            with serving(workdir, live) as (address, http_url):
                jobs = load_jobs(address, http_url, a.seconds, a.users)
                scrapes = scrape_run(http_url + "/metrics", jobs, a.seconds, interval, workdir, live)
            source = "a local archipelago serve"
        save_samples(workdir / "samples.json", scrapes)
    if len(scrapes) < 2:
        raise SystemExit("fewer than two scrapes: nothing to draw")
    up = next((dict(k) for s in scrapes for k in s.series.get("up", {})), {})
    variables = {"namespace": up.get("namespace", "local"), "job": up.get("job", "archipelago-gateway"),
                 "__rate_interval": f"{4 * interval:g}s"}
    panels = panel_data(board, scrapes, variables)
    times = [s.t for s in scrapes]
    span = (f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(times[0]))} – "
            f"{time.strftime('%H:%M:%S', time.localtime(times[-1]))}")
    subtitle = (f"{span} · {len(scrapes)} scrapes of {source} every {interval:.0f} s · rate interval "
                f"{4 * interval:g} s · drawn by deploy/grafana/snapshot.py from archipelago.json")
    page = workdir / "dashboard.html"
    page.write_text(render_html(board, panels, times, a.width, subtitle, variables), encoding="utf-8")
    live("screenshot with Chromium …")
    screenshot(page, a.out, a.width)
    live.done(f"screenshot written: {a.out}")
    empty = [p.panel["title"] for p in panels
             if p.panel["type"] != "row" and not any(v is not None for line in p.lines for v in line.values)]
    print(f"{a.out}  ({a.out.stat().st_size // 1024} KiB; {len(panels) - sum(p.panel['type'] == 'row' for p in panels)}"
          f" panels, {len(empty)} without data{': ' + ', '.join(empty) if empty else ''})")
    print(f"HTML, samples and logs: {workdir}   ({time.monotonic() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
