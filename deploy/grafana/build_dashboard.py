"""Writes ``archipelago.json`` (next to this file), the Grafana dashboard of the cluster, from ROWS below.

    python deploy/grafana/build_dashboard.py           # rewrite archipelago.json
    python deploy/grafana/build_dashboard.py --check   # exit 1 if archipelago.json differs from ROWS

To show a new metric, add a ``Panel`` to a row (or a new ``Row``) and run it. Only metrics the code
exposes may be named: tests/deploy/test_dashboard.py imports the gateway and services, collects the
names their registries expose and compares, and checks that this file and archipelago.json agree.

The metrics come from the gateway's ``/metrics`` (a PodMonitor per gateway pod): its own
(``archipelago_requests_total`` …) and every shard's, labelled ``shard`` (gateway/metrics.py). Every
gateway reports every shard, so a shard series comes once per gateway: shard expressions first take
``max by (shard, …)`` over the gateways (``shard_rate`` and ``shard_quantile`` below), then aggregate.

Ray's own series (``ray_*``, row "Ray") come from every Ray node's metrics port, a scrape job of their own
(the PodMonitor archipelago-ray; outside Kubernetes the embedded node's ARCHIPELAGO_RAY_METRICS_PORT):
they keep to the namespace only. The ones the dashboard may name are listed, with their labels, in
``ray_metrics.txt`` (recorded from a real scrape; tests/e2e/test_prometheus_e2e.py checks they have data).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("archipelago.json")
UID = "archipelago-cluster"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
#: every expression keeps to the chosen namespace and scrape job (the gateway's PodMonitor)
SEL = 'namespace=~"$namespace", job=~"$job"'
RATE = "$__rate_interval"
#: gRPC status names (the ``status`` label of archipelago_requests_total, every door) that are the
#: server's fault, not the client's
SERVER_CODES = "INTERNAL|UNAVAILABLE|UNKNOWN|DEADLINE_EXCEEDED|DATA_LOSS"
SERVER_ERRORS = f'status=~"{SERVER_CODES}"'
NOT_OK = 'status!="OK"'
GRPC_DOOR = 'door="grpc"'
EARLY = 'how="early"'
#: the Redis families hold the gateways' own series (no shard label) and every shard's (shard="shard-N")
GATEWAY_OWN = 'shard=""'
SHARDS_OWN = 'shard!=""'


#: Ray's series: every job of the namespace (only Ray's exporter has ray_* names)
RAY_SEL = 'namespace=~"$namespace"'
#: ray_actors as the GCS counts them (each worker also reports its own actors' states: ALIVE_IDLE, …)
GCS_COUNT = 'Source="gcs"'


def sel(extra: str = "") -> str:
    """A label matcher: the dashboard's selection, and ``extra`` matchers."""
    return "{" + SEL + (", " + extra if extra else "") + "}"


def ray(metric: str, extra: str = "") -> str:
    """A selector of one of Ray's series (ray_metrics.txt)."""
    return f"{metric}{{{RAY_SEL}{', ' + extra if extra else ''}}}"


def rate(metric: str, extra: str = "") -> str:
    return f"rate({metric}{sel(extra)}[{RATE}])"


def shard_rate(metric: str, labels: str = "", extra: str = "") -> str:
    """Per-shard rate of a shard counter or bucket, once per shard (not once per gateway)."""
    by = ", ".join(x for x in ("shard", labels) if x)
    return f"max by ({by}) ({rate(metric, extra)})"


def zero(expr: str) -> str:
    """``expr``, or 0 when it has no series (a counter family with no child yet, every shard silent)."""
    return f"({expr} or vector(0))"


def idle_zero(quantile_expr: str, count_rate: str, by: str) -> str:
    """A quantile that is 0, not NaN, for a series with no observations in the window (an idle method):
    the quantile where it is a number, else 0 for each group the histogram has."""
    return f"({quantile_expr} >= 0) or (0 * sum{f' by ({by})' if by else ''} ({count_rate}))"


def quantile(q: float, metric: str, by: str = "", extra: str = "") -> str:
    """A quantile of a gateway histogram, over every gateway (0 where idle)."""
    inner = rate(metric + "_bucket", extra)
    exact = f"histogram_quantile({q}, sum by ({', '.join(x for x in ('le', by) if x)}) ({inner}))"
    return idle_zero(exact, rate(metric + "_count", extra), by)


def shard_quantile(q: float, metric: str, by: str = "", extra: str = "") -> str:
    """A quantile of a shard histogram: every shard's buckets once, summed (``by`` "shard": per shard);
    0 where idle."""
    inner = shard_rate(metric + "_bucket", ", ".join(x for x in ("le", by) if x and x != "shard"), extra)
    exact = f"histogram_quantile({q}, sum by ({', '.join(x for x in ('le', by) if x)}) ({inner}))"
    counted = shard_rate(metric + "_count", by if by != "shard" else "", extra)
    return idle_zero(exact, counted, by)


@dataclass(frozen=True)
class Target:
    expr: str
    legend: str = ""


@dataclass(frozen=True)
class Panel:
    title: str
    targets: tuple[Target, ...]
    description: str
    unit: str = "short"
    kind: str = "timeseries"  # timeseries, stat or bargauge
    width: int = 12
    height: int = 8
    stack: bool = False

    @classmethod
    def of(cls, title: str, expr: str, description: str, legend: str = "", **kw: Any) -> Panel:
        return cls(title, (Target(expr, legend),), description, **kw)


@dataclass(frozen=True)
class Row:
    title: str
    panels: list[Panel] = field(default_factory=list)


def stat(title: str, expr: str, description: str, unit: str = "short") -> Panel:
    return Panel.of(title, expr, description, kind="stat", unit=unit, width=6, height=4)


GAMES_BY_SHARD = f"max by (shard) (archipelago_shard_games{sel()})"
GAMES_BY_PHASE = f"max by (shard, kind, phase) (archipelago_games{sel()})"
#: 1 per shard that answered (any gateway's latest refresh), 0 per silent one; removed shards have no series
SHARDS_UP = f"max by (shard) (archipelago_shard_up{sel()})"

ROWS: list[Row] = [
    Row("Health", [
        stat("Gateways up", f"sum(up{sel()})",
             "Gateway pods Prometheus scrapes successfully (the PodMonitor archipelago-gateway)."),
        stat("Shards up", f"sum({SHARDS_UP})",
             "Shards of the cluster's set that answered the gateways' latest metrics refresh "
             "(archipelago_shard_up). A silent shard counts 0 and its figures leave the panels after one more "
             "refresh; a removed shard (admin remove) leaves at the next scrape."),
        stat("Server errors", zero(f"sum({rate('archipelago_requests_total', SERVER_ERRORS)})")
             + f" / clamp_min({zero('sum(' + rate('archipelago_requests_total') + ')')}, 1e-9)",
             "Share of requests answered with a server-side status (INTERNAL, UNAVAILABLE, …), every door; "
             "0 when there is none.", unit="percentunit"),
        stat("Requests/s", zero(f"sum({rate('archipelago_requests_total')})"),
             "Requests a second, every door (gRPC, JSON + WebSocket, MCP tools, admin) and gateway.",
             unit="reqps"),
        Panel.of("gRPC answers by status", f"sum by (status) ({rate('archipelago_requests_total', GRPC_DOOR)})",
                 "gRPC door: requests a second by status (OK and every error).", legend="{{status}}",
                 unit="reqps", width=24, stack=True),
    ]),
    Row("Load", [
        Panel.of("Requests/s by method and door", f"sum by (door, method) ({rate('archipelago_requests_total')})",
                 "Requests a second, by rpc, tool or admin action and by door (grpc; http = JSON + WebSocket; "
                 "mcp = tool calls; admin). method unknown: a path or name that is no rpc.",
                 legend="{{door}} {{method}}", unit="reqps"),
        Panel.of("Requests/s by gateway", f"sum by (pod) ({rate('archipelago_requests_total')})",
                 "How the load spreads over the gateway pods.", legend="{{pod}}", unit="reqps"),
    ]),
    Row("Latency", [
        Panel("Call latency p50 / p99 by door", (
            Target(quantile(0.5, "archipelago_request_latency_seconds", "door"), "p50 {{door}}"),
            Target(quantile(0.99, "archipelago_request_latency_seconds", "door"), "p99 {{door}}"),
        ), "Unary player API calls, gateway side (Watch streams are not timed).", unit="s"),
        Panel.of("Call latency p99 by method", quantile(0.99, "archipelago_request_latency_seconds", "method"),
                 "The slowest rpcs, every door.", legend="{{method}}", unit="s"),
        Panel("Round resolution p50 / p99", (
            Target(shard_quantile(0.5, "archipelago_round_resolution_seconds"), "p50"),
            Target(shard_quantile(0.99, "archipelago_round_resolution_seconds"), "p99"),
        ), "Time the engine takes to resolve a round, every shard.", unit="s", width=8),
        Panel("Journal write p50 / p99", (
            Target(shard_quantile(0.5, "archipelago_journal_write_seconds"), "p50"),
            Target(shard_quantile(0.99, "archipelago_journal_write_seconds"), "p99"),
        ), "Time to journal an entry in Redis (every change is journaled before it is answered).",
            unit="s", width=8),
        Panel("Autopilot p50 / p99", (
            Target(shard_quantile(0.5, "archipelago_autopilot_seconds"), "p50"),
            Target(shard_quantile(0.99, "archipelago_autopilot_seconds"), "p99"),
        ), "Time the autopilot takes to play one absent player.", unit="s", width=8),
    ]),
    Row("Games", [
        stat("Games in memory", zero(f"sum({GAMES_BY_SHARD})"),
             "Games the shards hold in memory (idle ones are evicted and reload from their journal)."),
        stat("Rounds closed/s", f"sum({shard_rate('archipelago_rounds_closed_total', 'how')})",
             "Rounds closed a second, every shard.", unit="ops"),
        stat("Rounds closed early", f"sum({shard_rate('archipelago_rounds_closed_total', 'how', EARLY)})"
             f" / clamp_min(sum({shard_rate('archipelago_rounds_closed_total', 'how')}), 1e-9)",
             "Share of rounds closed because every connected player was done (A17), not at the deadline.",
             unit="percentunit"),
        Panel.of("Games in memory by shard", GAMES_BY_SHARD, "Games each shard holds in memory.",
                 legend="{{shard}}", width=24, stack=True),
        Panel.of("Rounds closed/s by how", f"sum by (how) ({shard_rate('archipelago_rounds_closed_total', 'how')})",
                 "early: every connected player was done; deadline: the round's time ran out.",
                 legend="{{how}}", unit="ops", stack=True),
        Panel("Deadline lateness p50 / p99", (
            Target(shard_quantile(0.5, "archipelago_deadline_lateness_seconds"), "p50"),
            Target(shard_quantile(0.99, "archipelago_deadline_lateness_seconds"), "p99"),
        ), "How long after its deadline a round was closed (journaled), every shard.", unit="s"),
        Panel.of("Games by kind and phase", f"sum by (kind, phase) ({GAMES_BY_PHASE})",
                 "Games the shards hold in memory, by kind (salvo, archipelago) and phase (lobby, running, over). "
                 "Idle games leave memory and are not counted until they reload.",
                 legend="{{kind}} {{phase}}", stack=True),
        Panel.of("Actions/s by kind", f"sum by (kind) ({shard_rate('archipelago_actions_total', 'kind')})",
                 "Immediate actions journaled a second (the Act rpc: chat, bank, trade offers and answers; and "
                 "the automatic trades of standing orders), every shard.", legend="{{kind}}", unit="ops",
                 stack=True),
    ]),
    Row("Players", [
        stat("Open Watch streams", f"sum(archipelago_watch_streams{sel()})",
             "Open Watch streams (players with a game open), every door and gateway."),
        Panel.of("Open Watch streams by gateway", f"sum by (pod) (archipelago_watch_streams{sel()})",
                 "Watch streams each gateway pod holds.", legend="{{pod}}", width=18, stack=True),
        stat("Connected players", f"sum(archipelago_connected_players{sel()})",
             "Players connected (A17): a Watch stream open, or their AI agent's presence, summed over the "
             "gateways (a player with streams on two gateways counts on each)."),
        Panel.of("Open Watch streams by door", f"sum by (door) (archipelago_watch_streams{sel()})",
                 "grpc; http: the WebSocket of the JSON door; mcp: AI agents waiting for the next round.",
                 legend="{{door}}", width=9, stack=True),
        Panel.of("Connected players by gateway", f"sum by (pod) (archipelago_connected_players{sel()})",
                 "Distinct players (game and seat) each gateway pod holds a stream or an agent's presence for.",
                 legend="{{pod}}", width=9, stack=True),
        Panel("Watch fan-out p50 / p99", (
            Target(quantile(0.5, "archipelago_watch_fanout_seconds", "door"), "p50 {{door}}"),
            Target(quantile(0.99, "archipelago_watch_fanout_seconds", "door"), "p99 {{door}}"),
        ), "From a journal entry's append on its shard to a Watch stream having written the update it made "
           "(archipelago_watch_fanout_seconds: Redis pub/sub, the gateway's read from the shard, the write), by "
           "door. The shard's and the gateway's clocks: hosts must be NTP-synchronised.", unit="s", width=24),
    ]),
    Row("Errors", [
        Panel.of("Errors/s by status", f"sum by (status) ({rate('archipelago_requests_total', NOT_OK)})",
                 "Requests answered with an error, by gRPC status (the JSON door reports the same statuses).",
                 legend="{{status}}", unit="reqps", stack=True),
        Panel.of("Errors/s by code", f"sum by (code) ({rate('archipelago_requests_total', NOT_OK)})",
                 "Requests answered with an error, by the error table's code (order/illegal, order/invalid, "
                 "request/key_reused … tell apart what one gRPC status groups).", legend="{{code}}",
                 unit="reqps", stack=True),
        Panel.of("Errors/s by method", f"sum by (door, method, code) ({rate('archipelago_requests_total', NOT_OK)})",
                 "Which rpcs, tools and admin actions fail, and how.", legend="{{door}} {{method}} {{code}}",
                 unit="reqps"),
        Panel.of("Throttled/s by limit", f"sum by (limit) ({rate('archipelago_throttled_total')})",
                 "Requests refused by a per-address limit (client/throttled): lobby calls, failed "
                 "authentications, open lobby games. Behind a proxy every client shares its address.",
                 legend="{{limit}}", unit="reqps"),
    ]),
    Row("Shard balance", [
        Panel.of("Shard liveness", SHARDS_UP, "1: the shard answered the gateways' latest metrics refresh; 0: it "
                 "did not (dead, restarting or hung). A shard taken out of the set has no line.",
                 legend="{{shard}}", width=24, height=6),
        Panel.of("Games per shard", GAMES_BY_SHARD, "Rendezvous hashing spreads games evenly over shards.",
                 legend="{{shard}}", kind="bargauge", width=8),
        Panel.of("Busiest shard / mean", f"max({GAMES_BY_SHARD}) / clamp_min(avg({GAMES_BY_SHARD}), 1)",
                 "Games of the busiest shard over the mean: 1 is even.", width=8),
        Panel.of("Rounds closed/s by shard",
                 f"sum by (shard) ({shard_rate('archipelago_rounds_closed_total', 'how')})",
                 "Work per shard.", legend="{{shard}}", unit="ops", width=8),
        Panel.of("Journal write p99 by shard",
                 shard_quantile(0.99, "archipelago_journal_write_seconds", "shard"),
                 "A shard slower than the others to journal.", legend="{{shard}}", unit="s"),
        Panel("Placements and moves/s", (
            Target(f"sum({rate('archipelago_placements_total')})", "placed"),
            Target(f"sum({rate('archipelago_placement_moves_total')})", "moved"),
        ), "New games placed on a shard, and games moved to another shard (draining a shard moves its games).",
            unit="ops"),
    ]),
    Row("Game lifecycle", [
        Panel.of("Games started/min by kind",
                 f"60 * sum by (kind) ({shard_rate('archipelago_games_started_total', 'kind')})",
                 "Games whose play began a minute (archipelago_games_started_total), by kind, every shard. A game "
                 "reloaded after a shard restart is not counted again.", legend="{{kind}}", unit="short",
                 stack=True),
        Panel.of("Games finished/min by kind and outcome",
                 f"60 * sum by (kind, outcome) ({shard_rate('archipelago_games_finished_total', 'kind, outcome')})",
                 "Games that ended a minute (archipelago_games_finished_total): won (a winner, or a win shared by "
                 "a tie), draw, ended (by an operator: admin end), abandoned (a lobby nobody started before it "
                 "expired).", legend="{{kind}} {{outcome}}", unit="short", stack=True),
        Panel("Game duration p50 / p99 by kind", (
            Target(shard_quantile(0.5, "archipelago_game_duration_seconds", "kind"), "p50 {{kind}}"),
            Target(shard_quantile(0.99, "archipelago_game_duration_seconds", "kind"), "p99 {{kind}}"),
        ), "From a game's start to its end, games that ended in the window (archipelago_game_duration_seconds); "
           "a lobby ended or expired before its start has none.", unit="s"),
        Panel("Lobby wait p50 / p99 by kind", (
            Target(shard_quantile(0.5, "archipelago_lobby_wait_seconds", "kind"), "p50 {{kind}}"),
            Target(shard_quantile(0.99, "archipelago_lobby_wait_seconds", "kind"), "p99 {{kind}}"),
        ), "From a game's creation to its start, games started in the window (archipelago_lobby_wait_seconds).",
            unit="s"),
    ]),
    Row("Gateway → shard", [
        Panel("Shard call round trip p50 / p99", (
            Target(quantile(0.5, "archipelago_hop_batch_seconds"), "p50"),
            Target(quantile(0.99, "archipelago_hop_batch_seconds"), "p99"),
        ), "Round trip of a batch of shard calls from the gateways (archipelago_hop_batch_seconds: the shard's "
           "stream, or a Ray call), the shard's work included, and the retries while a shard restarts.",
            unit="s", width=8),
        Panel("Calls per batch p50 / p99", (
            Target(quantile(0.5, "archipelago_hop_batch_calls"), "p50"),
            Target(quantile(0.99, "archipelago_hop_batch_calls"), "p99"),
        ), "Calls a batch to a shard carries (archipelago_hop_batch_calls): 1 when idle; under load the calls "
           "that arrive while a batch is out leave together (at most 256).", width=8),
        Panel.of("Calls queued by gateway", f"sum by (pod) (archipelago_hop_queued_calls{sel()})",
                 "Shard calls waiting in each gateway's per-shard queues for a batch to leave "
                 "(archipelago_hop_queued_calls): growing, the shards answer slower than calls come.",
                 legend="{{pod}}", width=8),
    ]),
    Row("Redis", [
        Panel("Redis round trip p50 / p99", (
            Target(quantile(0.5, "archipelago_redis_command_seconds", extra=GATEWAY_OWN), "p50 gateways"),
            Target(quantile(0.99, "archipelago_redis_command_seconds", extra=GATEWAY_OWN), "p99 gateways"),
            Target(shard_quantile(0.5, "archipelago_redis_command_seconds", extra=SHARDS_OWN), "p50 shards"),
            Target(shard_quantile(0.99, "archipelago_redis_command_seconds", extra=SHARDS_OWN), "p99 shards"),
        ), "Every Redis command, and every pipeline once (the journal's appends), from asking to the answer, a "
           "wait for a pooled connection included.", unit="s"),
        Panel("Redis p99 by command", (
            Target(quantile(0.99, "archipelago_redis_command_seconds", "command", GATEWAY_OWN),
                   "gateways {{command}}"),
            Target(shard_quantile(0.99, "archipelago_redis_command_seconds", "command", SHARDS_OWN),
                   "shards {{command}}"),
        ), "PIPELINE and MULTI: a pipeline's round trip (the shards' journal appends are PIPELINE).", unit="s"),
        Panel("Redis commands/s", (
            Target(f"sum({rate('archipelago_redis_command_seconds_count', GATEWAY_OWN)})", "gateways"),
            Target(f"sum({shard_rate('archipelago_redis_command_seconds_count', 'command', SHARDS_OWN)})",
                   "shards"),
        ), "Round trips to Redis a second (a pipeline is one).", unit="ops"),
        Panel("Redis errors/s by kind", (
            Target(f"sum by (kind) ({rate('archipelago_redis_errors_total', GATEWAY_OWN)})", "gateways {{kind}}"),
            Target(f"sum by (kind) ({shard_rate('archipelago_redis_errors_total', 'kind', SHARDS_OWN)})",
                   "shards {{kind}}"),
        ), "Redis commands that failed after the client's retries: outage (Redis does not answer; clients get "
           "server/unavailable) or other.", unit="ops", stack=True),
    ]),
    Row("Notifications", [
        Panel.of("Notifications sent/s by channel",
                 f"sum by (channel) ({rate('archipelago_notifications_sent_total')})",
                 "Notifications a channel accepted a second (web_push, webhook, email), every gateway.",
                 legend="{{channel}}", unit="ops", stack=True),
        Panel.of("Failed attempts/s", f"sum by (channel, outcome) ({rate('archipelago_notifications_failed_total')})",
                 "Attempts that failed: retry (tried again later), failed (given up), gone (a push device "
                 "that no longer exists). `archipelago admin notifications` lists the channels.",
                 legend="{{channel}} {{outcome}}", unit="ops", stack=True),
        Panel("Delivery latency p50 / p99", (
            Target(quantile(0.5, "archipelago_notification_latency_seconds", "channel"), "p50 {{channel}}"),
            Target(quantile(0.99, "archipelago_notification_latency_seconds", "channel"), "p99 {{channel}}"),
        ), "From the game event (journaled) to the channel's answer.", unit="s", width=8),
        Panel.of("Outbox", f"max by (state) (archipelago_notification_outbox{sel()})",
                 "Notifications waiting in Redis: queued (not yet read) and retrying (waiting for their next "
                 "attempt). Bounded by ARCHIPELAGO_NOTIFY_MAX_QUEUE.", legend="{{state}}", width=8),
        Panel("Queued and dropped/s", (
            Target(f"sum by (kind) ({shard_rate('archipelago_notifications_queued_total', 'kind')})", "{{kind}}"),
            Target(f"sum({shard_rate('archipelago_notifications_dropped_total')})", "dropped (outbox full)"),
            Target(f"sum by (reason) ({rate('archipelago_notifications_stale_total')})", "stale {{reason}}"),
        ), "Notifications the shards queued, by kind; dropped because the outbox was full; dropped as too "
           "old by the gateways.", unit="ops", width=8),
    ]),
    Row("Gateway processes", [
        Panel("Collector pauses p99", (
            Target(quantile(0.99, "archipelago_gc_pause_seconds", "generation", GATEWAY_OWN),
                   "gateways gen {{generation}}"),
            Target(shard_quantile(0.99, "archipelago_gc_pause_seconds", "generation", SHARDS_OWN),
                   "shards gen {{generation}}"),
        ), "How long the garbage collector stopped a process, by generation (archipelago_gc_pause_seconds): every "
           "call and stream of that process waits meanwhile; a long full (gen 2) collection shows as a latency "
           "spike.", unit="s"),
        Panel("Collector pauses/s", (
            Target(f"sum by (generation) ({rate('archipelago_gc_pause_seconds_count', GATEWAY_OWN)})",
                   "gateways gen {{generation}}"),
            Target("sum by (generation) "
                   f"({shard_rate('archipelago_gc_pause_seconds_count', 'generation', SHARDS_OWN)})",
                   "shards gen {{generation}}"),
        ), "Garbage collections a second, by generation, gateways and shards.", unit="ops"),
        Panel("Event-loop lag p99", (
            Target(quantile(0.99, "archipelago_event_loop_lag_seconds", extra=GATEWAY_OWN), "gateways"),
            Target(shard_quantile(0.99, "archipelago_event_loop_lag_seconds", "shard", SHARDS_OWN), "{{shard}}"),
        ), "How late each process's event loop runs a timer (archipelago_event_loop_lag_seconds, measured every "
           "0.5 s): every call and stream of that process waits as much. A shard's lag with its CPU near 1 is a "
           "shard with too much to do.", unit="s"),
        Panel("Redis pool", (
            Target(f"sum by (state) (archipelago_redis_pool_connections{sel(GATEWAY_OWN)})", "gateways {{state}}"),
            Target(f"sum(archipelago_redis_pool_waiting{sel(GATEWAY_OWN)})", "gateways waiting"),
            Target("sum by (state) (max by (shard, state) "
                   f"(archipelago_redis_pool_connections{sel(SHARDS_OWN)}))", "shards {{state}}"),
            Target(f"sum(max by (shard) (archipelago_redis_pool_waiting{sel(SHARDS_OWN)}))", "shards waiting"),
        ), "Redis connections of the processes' pools, read at each scrape: in use (lent to a command), idle, and "
           "calls waiting for one (a pool at its max_connections: they wait up to its timeout, then fail).",
           unit="short"),
        Panel.of("Gateway memory", f"sum by (pod) (process_resident_memory_bytes{sel(GATEWAY_OWN)})",
                 "Resident memory of each gateway process (its Ray node beside it is not counted).",
                 legend="{{pod}}", unit="bytes"),
        Panel.of("Gateway CPU", f"sum by (pod) ({rate('process_cpu_seconds_total', GATEWAY_OWN)})",
                 "CPU seconds a second of each gateway process (the HorizontalPodAutoscaler's signal is "
                 "the pod's).", legend="{{pod}}", unit="percentunit"),
    ]),
    Row("Shard processes", [
        Panel.of("Shard CPU", shard_rate("process_cpu_seconds_total", extra=SHARDS_OWN),
                 "CPU seconds a second of each shard process (process_cpu_seconds_total with a shard label, "
                 "through the gateways). A shard runs one event loop: near 1 it is saturated.",
                 legend="{{shard}}", unit="percentunit"),
        Panel.of("Shard memory", f"max by (shard) (process_resident_memory_bytes{sel(SHARDS_OWN)})",
                 "Resident memory of each shard process (its games in memory, their journals' updates kept for "
                 "Watch resumption).", legend="{{shard}}", unit="bytes"),
    ]),
    Row("Ray", [
        Panel.of("Ray actors by state", f"sum by (Name, State) ({ray('ray_actors', GCS_COUNT)})",
                 "Ray's actors by class and state, as Ray's GCS counts them (ray_actors; Ray's own metrics, "
                 "scraped from its metrics port): the GameShards ALIVE; RESTARTING or DEAD ones are shards "
                 "that died.", legend="{{Name}} {{State}}", width=6, stack=True),
        Panel.of("Ray node CPU", f"0.01 * max by (ip) ({ray('ray_node_cpu_utilization')})",
                 "CPU in use on each Ray node, all its CPUs (ray_node_cpu_utilization): the shards, the raylet, "
                 "Ray's agents.", legend="{{ip}}", unit="percentunit", width=6),
        Panel("Ray node memory", (
            Target(f"max by (ip) ({ray('ray_node_mem_used')})", "used {{ip}}"),
            Target(f"max by (ip) ({ray('ray_node_mem_total')})", "total {{ip}}"),
        ), "Memory in use on each Ray node (ray_node_mem_used) and its total: Ray kills workers near the total.",
            unit="bytes", width=6),
        Panel("Ray object store", (
            Target(f"sum by (NodeAddress) ({ray('ray_object_store_used_memory')})", "used {{NodeAddress}}"),
            Target(f"sum by (NodeAddress) ({ray('ray_object_store_available_memory')})",
                   "available {{NodeAddress}}"),
        ), "Ray's shared-memory object store on each node: the shards keep nothing there, so 'used' stays "
           "near 0; growing, something stores Ray objects.", unit="bytes", width=6),
    ]),
]


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name, "label": label, "type": "query", "datasource": DATASOURCE,
        "query": {"query": query, "refId": f"{name}-query"}, "definition": query,
        "refresh": 2, "includeAll": True, "multi": True, "sort": 1,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "options": [], "hide": 0, "regex": "", "skipUrlSync": False,
    }


def _field_config(panel: Panel) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "unit": panel.unit,
        "color": {"mode": "palette-classic" if panel.kind == "timeseries" else "thresholds"},
        "thresholds": {"mode": "absolute", "steps": [{"color": "green", "value": None}]},
    }
    if panel.kind == "timeseries":
        defaults["custom"] = {
            "drawStyle": "line", "lineWidth": 1, "fillOpacity": 20 if panel.stack else 0,
            "showPoints": "never", "spanNulls": False,
            "stacking": {"mode": "normal" if panel.stack else "none", "group": "A"},
        }
    return {"defaults": defaults, "overrides": []}


def _options(panel: Panel) -> dict[str, Any]:
    if panel.kind == "timeseries":
        return {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                "tooltip": {"mode": "multi", "sort": "desc"}}
    reduce = {"calcs": ["lastNotNull"], "fields": "", "values": False}
    if panel.kind == "stat":
        return {"reduceOptions": reduce, "colorMode": "value", "graphMode": "area", "justifyMode": "auto",
                "orientation": "auto", "textMode": "auto"}
    return {"reduceOptions": reduce, "displayMode": "gradient", "orientation": "horizontal",
            "showUnfilled": True, "valueMode": "color"}


def _panel(panel: Panel, pid: int, x: int, y: int) -> dict[str, Any]:
    instant = panel.kind == "bargauge"
    return {
        "id": pid, "type": panel.kind, "title": panel.title, "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": panel.height, "w": panel.width, "x": x, "y": y},
        "fieldConfig": _field_config(panel), "options": _options(panel),
        "targets": [
            {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": t.expr,
             "legendFormat": t.legend or "__auto", "range": not instant, "instant": instant,
             "editorMode": "code"}
            for i, t in enumerate(panel.targets)
        ],
    }


def build() -> dict[str, Any]:
    """The dashboard as Grafana's JSON model (schemaVersion 39)."""
    panels: list[dict[str, Any]] = []
    y = 0
    for row in ROWS:
        panels.append({"id": len(panels) + 1, "type": "row", "title": row.title, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        y += 1
        x, line_height = 0, 0
        for panel in row.panels:
            if x + panel.width > 24:
                x, y, line_height = 0, y + line_height, 0
            panels.append(_panel(panel, len(panels) + 1, x, y))
            x += panel.width
            line_height = max(line_height, panel.height)
        y += line_height
    return {
        "uid": UID,
        "title": "Archipelago cluster",
        "description": "Gateways, shards and games of the Archipelago cluster (deploy/grafana/build_dashboard.py).",
        "tags": ["archipelago"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "timezone": "browser",
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "links": [],
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
            "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts", "type": "dashboard",
        }]},
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0, "includeAll": False, "multi": False, "options": [], "refresh": 1,
             "regex": "", "skipUrlSync": False},
            _variable("namespace", "Namespace", "label_values(archipelago_requests_total, namespace)"),
            _variable("job", "Job", 'label_values(archipelago_requests_total{namespace=~"$namespace"}, job)'),
        ]},
        "panels": panels,
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python {Path(__file__).as_posix()}", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
