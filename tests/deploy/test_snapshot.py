"""deploy/grafana/snapshot.py: the dashboard's queries evaluated over hand-made scrapes, and drawn (no cluster)."""

from __future__ import annotations

import importlib
import math
import re
from typing import Any

import pytest

#: imported by name, not statically: mypy checks deploy/grafana/snapshot.py as a file of its own (deploy/ is
#: no package), and a static import would name the same file twice
snap: Any = importlib.import_module("deploy.grafana.snapshot")

TARGET = {"namespace": "local", "job": "archipelago-gateway", "pod": "gateway-1", "instance": "127.0.0.1:8080"}
VARIABLES = {"namespace": "local", "job": "archipelago-gateway", "__rate_interval": "12s"}


def scrapes_of(texts: list[str], every: float = 3.0) -> list[Any]:
    return [snap.parse_scrape(text, 1000.0 + i * every, TARGET) for i, text in enumerate(texts)]


def at_last(expr: str, scrapes: list[Any]) -> dict[tuple[tuple[str, str], ...], float]:
    vector: dict[tuple[tuple[str, str], ...], float] = snap.evaluate(
        snap.parse(snap.substitute(expr, VARIABLES)), scrapes, len(scrapes) - 1)
    return vector


def counter_text(i: int) -> str:
    """Three series of a counter: grpc SubmitOrders +10/s, grpc GetView +2/s, http SubmitOrders +1/s."""
    t = i * 3
    return ("# TYPE archipelago_requests counter\n"
            f'archipelago_requests_total{{door="grpc",method="SubmitOrders",code="OK"}} {10 * t}\n'
            f'archipelago_requests_total{{door="grpc",method="GetView",code="OK"}} {2 * t}\n'
            f'archipelago_requests_total{{door="http",method="SubmitOrders",code="ABORTED"}} {t}\n'
            "# TYPE archipelago_shard_games gauge\n"
            f'archipelago_shard_games{{shard="shard-0"}} {4 + i}\n'
            f'archipelago_shard_games{{shard="shard-1"}} {8 + i}\n')


def test_a_counter_rising_10_a_second_has_rate_10() -> None:
    scrapes = scrapes_of([counter_text(i) for i in range(6)])
    v = at_last('sum(rate(archipelago_requests_total{job=~"$job", method="SubmitOrders", door="grpc"}'
                "[$__rate_interval]))", scrapes)
    assert v == {(): pytest.approx(10.0)}
    # the first scrape has no rate (one sample in its window)
    assert snap.series(snap.parse("sum(rate(archipelago_requests_total[12s]))"), scrapes)[()][0] is None


def test_a_counter_reset_is_not_a_negative_rate() -> None:
    texts = [f"# TYPE x counter\nx_total {v}\n" for v in (0, 30, 60, 15, 45)]  # restarted between 60 and 15
    # the window (t - 12 s, t] holds the last four scrapes: 30 -> 60 -> (restart) 15 -> 45 over 9 s
    assert at_last("sum(rate(x_total[12s]))", scrapes_of(texts)) == {(): pytest.approx((30 + 15 + 30) / 9)}


def test_sum_by_groups_and_drops_the_other_labels() -> None:
    scrapes = scrapes_of([counter_text(i) for i in range(5)])
    v = at_last("sum by (door) (rate(archipelago_requests_total[$__rate_interval]))", scrapes)
    assert v == {(("door", "grpc"),): pytest.approx(12.0), (("door", "http"),): pytest.approx(1.0)}
    errors = at_last('sum by (method, code) (rate(archipelago_requests_total{code!="OK"}[$__rate_interval]))',
                     scrapes)
    assert errors == {(("code", "ABORTED"), ("method", "SubmitOrders")): pytest.approx(1.0)}
    # gauges: max by shard, then sum / count / avg, and a ratio
    # the last scrape (i = 4): shard-0 holds 8 games, shard-1 12
    assert at_last("sum(max by (shard) (archipelago_shard_games))", scrapes) == {(): 8.0 + 12.0}
    assert at_last("count(max by (shard) (archipelago_shard_games))", scrapes) == {(): 2.0}
    ratio = at_last("max(max by (shard) (archipelago_shard_games)) / clamp_min(avg(max by (shard) "
                    "(archipelago_shard_games)), 1)", scrapes)
    assert ratio == {(): pytest.approx(12 / 10)}
    # the target's labels are there to match (the dashboard selects namespace and job), and up is 1
    assert at_last('sum(up{namespace=~"$namespace", job=~"$job"})', scrapes) == {(): 1.0}
    assert at_last('sum(up{job="other"})', scrapes) == {}


def test_label_matchers() -> None:
    text = ("# TYPE r histogram\n"
            'r_seconds_count{command="GET"} 1\n'
            'r_seconds_count{command="GET",shard="shard-0"} 2\n'
            'r_seconds_count{command="SET",shard="shard-1"} 4\n')
    scrapes = scrapes_of([text])
    assert at_last('sum(r_seconds_count{shard=""})', scrapes) == {(): 1.0}  # an absent label is empty
    assert at_last('sum(r_seconds_count{shard!=""})', scrapes) == {(): 6.0}
    assert at_last('sum(r_seconds_count{shard=~"shard-.*", command!~"S.*"})', scrapes) == {(): 2.0}


def histogram_text(i: int) -> str:
    """A histogram: door grpc observes 10/s (1/s at most 0.01 s, 4/s in (0.01, 0.1], 5/s in (0.1, 1]); http
    a tenth of that, in the same shares."""
    t = i * 3
    cumulative = {"0.01": 1 * t, "0.1": 5 * t, "1.0": 10 * t, "+Inf": 10 * t}
    lines = [f'lat_seconds_bucket{{door="grpc",le="{le}"}} {n}' for le, n in cumulative.items()]
    lines += [f'lat_seconds_bucket{{door="http",le="{le}"}} {n / 10}' for le, n in cumulative.items()]
    return "# TYPE lat_seconds histogram\n" + "\n".join(lines) + "\n"


def test_histogram_quantile_over_summed_bucket_rates() -> None:
    scrapes = scrapes_of([histogram_text(i) for i in range(5)])
    p50 = at_last("histogram_quantile(0.5, sum by (le) (rate(lat_seconds_bucket[$__rate_interval])))", scrapes)
    # 11/s in all, 5.5/s at most 0.1 s: the median is 0.1
    assert p50 == {(): pytest.approx(0.1)}
    p99 = at_last("histogram_quantile(0.99, sum by (le, door) (rate(lat_seconds_bucket[$__rate_interval])))",
                  scrapes)
    assert p99[(("door", "grpc"),)] == pytest.approx(0.1 + 0.9 * (9.9 - 5) / 5)
    assert set(p99) == {(("door", "grpc"),), (("door", "http"),)}
    # max by (shard, le) first (a shard's buckets once), as the shard panels do
    assert at_last("histogram_quantile(0.2, sum by (le) (max by (shard, le) (rate(lat_seconds_bucket"
                   "[$__rate_interval]))))", scrapes) == {(): pytest.approx(0.01 + 0.09 * (2 - 1) / 4)}


def test_bucket_quantile_edges() -> None:
    assert snap.bucket_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]) is not None
    assert math.isnan(snap.bucket_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]))  # no observations: no value
    assert math.isnan(snap.bucket_quantile(0.5, [(0.1, 1.0), (1.0, 2.0)]))  # no +Inf bucket
    assert snap.bucket_quantile(0.99, [(0.1, 1.0), (1.0, 2.0), (math.inf, 10.0)]) == 1.0  # in +Inf: the last bound
    assert snap.bucket_quantile(0.5, [(0.1, 4.0), (math.inf, 4.0)]) == pytest.approx(0.05)


def test_every_query_of_the_dashboard_is_a_supported_shape() -> None:
    board = snap.load_dashboard()
    parsed = snap.queries(board, VARIABLES)
    expected = sum(len(p["targets"]) for p in board["panels"] if p["type"] != "row")
    assert len(parsed) == expected > 40
    for panel, target, node in parsed:
        assert isinstance(node, snap.Selector | snap.Rate | snap.Aggregate | snap.Quantile | snap.ClampMin
                          | snap.Divide | snap.Or | snap.AtLeast | snap.Times), (panel["title"], target["expr"])


def test_zero_instead_of_no_data_and_of_nan() -> None:
    """``x or vector(0)`` is 0 where x has no series; ``(quantile >= 0) or (0 * sum by (g) (rate(count)))`` is
    0, not NaN, for a group with no observations, and the quantile where there are some."""
    scrapes = [snap.parse_scrape(
        "# TYPE lat_seconds histogram\n"
        + "".join(f'lat_seconds_bucket{{method="{m}",le="{le}"}} {n * t}\n'
                  for m, n in (("Busy", 1), ("Idle", 0)) for le in ("0.1", "+Inf"))
        + "".join(f'lat_seconds_count{{method="{m}"}} {n * t}\n' for m, n in (("Busy", 1), ("Idle", 0))),
        3.0 * t, {}) for t in range(5)]
    assert at_last('sum(rate(nothing_total[$__rate_interval])) or vector(0)', scrapes) == {(): 0.0}
    assert at_last('sum(rate(lat_seconds_count[$__rate_interval])) or vector(0)', scrapes) == {
        (): pytest.approx(1 / 3)}
    idle_zero = ("(histogram_quantile(0.5, sum by (le, method) (rate(lat_seconds_bucket[$__rate_interval]))) >= 0)"
                 " or (0 * sum by (method) (rate(lat_seconds_count[$__rate_interval])))")
    assert at_last(idle_zero, scrapes) == {(("method", "Busy"),): pytest.approx(0.05), (("method", "Idle"),): 0.0}


@pytest.mark.parametrize("expr", [
    "sum(rate(x[5m])) * sum(y)", "x >= y", "increase(x[1m])", "sum(x) by (a)", "topk(3, x)", "x offset 5m", "x + 1",
    "sum without (a) (x)", "rate(x)", "abs(x)", 'x{a=~"b"', "sum(x[$oops])",
])
def test_an_unsupported_shape_fails_loudly(expr: str) -> None:
    with pytest.raises(snap.Unsupported):
        snap.parse(snap.substitute(expr, VARIABLES))


def test_an_unsupported_panel_fails_loudly() -> None:
    board = snap.load_dashboard()
    board["panels"][1]["targets"][0]["expr"] = "sum(irate(up[1m]))"
    with pytest.raises(snap.Unsupported, match="Gateways up"):
        snap.queries(board, VARIABLES)
    board = snap.load_dashboard()
    board["panels"][1]["fieldConfig"]["defaults"]["unit"] = "dtdurationms"
    with pytest.raises(snap.Unsupported, match="unit"):
        snap.queries(board, VARIABLES)


def test_units() -> None:
    assert snap.fmt(0.0123, "s") == "12.3 ms"
    assert snap.fmt(0.0000456, "s") == "45.6 µs"
    assert snap.fmt(2.5, "s") == "2.5 s"
    assert snap.fmt(0.125, "percentunit") == "12.5%"
    assert snap.fmt(1234, "reqps") == "1.23 K req/s"
    assert snap.fmt(12, "ops") == "12 ops/s"
    assert snap.fmt(180 * (1 << 20), "bytes") == "180 MiB"
    assert snap.nice_ticks(0, 9.3, 4) == [0, 2.5, 5, 7.5, 10]
    assert [snap.fmt(t, "bytes") for t in snap.nice_ticks(0, 190 * (1 << 20), 4, "bytes")] == [
        "0 B", "50 MiB", "100 MiB", "150 MiB", "200 MiB"]


def test_every_panel_is_drawn_with_one_svg() -> None:
    board = snap.load_dashboard()
    scrapes = scrapes_of([counter_text(i) + histogram_text(i) for i in range(8)])
    panels = snap.panel_data(board, scrapes, VARIABLES)
    drawn = [p for p in panels if p.panel["type"] != "row"]
    requests = next(p for p in drawn if p.panel["title"] == "Requests/s by method and door")
    assert [line.name for line in requests.lines] == ["grpc GetView", "grpc SubmitOrders", "http SubmitOrders"]
    assert requests.lines[1].values[-1] == pytest.approx(10.0)
    page = snap.render_html(board, panels, [s.t for s in scrapes], 1600, "test", VARIABLES)
    assert page.count("<svg") == len(drawn) == page.count('<section class="panel"')
    assert page.count('class="row"') == len(panels) - len(drawn)
    for p in drawn:
        assert f"<h2>{snap.html.escape(p.panel['title'])}</h2>" in page
    assert "grpc SubmitOrders" in page and "req/s" in page  # a legend, a unit
    assert "No data" in page  # panels of metrics the hand-made scrapes lack
    assert not re.search(r"\b(nan|inf)\b", page)
