"""The delivery workers: every gateway process runs one :class:`Sender` (``ARCHIPELAGO_NOTIFY_SENDERS=0``
turns it off), and together they deliver the outbox at least once.

- **Reading**: one consumer per process (name: host, pid and a random part) of the outbox stream's
  group; an entry read by a gateway that died is taken over by another after ``claim_after_s``
  (XAUTOCLAIM) — never one a live gateway is still working on (it renews its entries' idle time a few
  times per ``claim_after_s``). Entries go to ``workers`` lanes by player, so one player's notifications leave in
  the order they were queued (the start before round 1's "your turn").
- **Delivering**: per channel the player wants the kind on (each web push device, the webhook, a
  confirmed email address), one :class:`~services.notify.channels.Delivery` whose id is stable; a
  ``sent`` marker per delivery id (set after the channel took it) keeps a taken-over entry from
  sending again what was sent before the crash. A transient failure waits in the retry set
  (attempt n after ``backoff_s * 2**(n-1)``, at most ``attempts``); ``disable_after`` failed attempts
  in a row disable the channel, with the reason the player sees. A push service's 404/410 forgets
  that device. The entry leaves the stream once each channel delivered, failed or is waiting in the
  retry set.
- **Bounds**: the stream (``max_queue``, enforced when queuing), an entry's age (``max_age_s``; a
  deadline warning past its deadline is dropped too), retries, the lanes (bounded queues), the
  consumers of gone gateways (pruned after an idle hour with nothing pending), sent markers (1 day).
- **Metrics** (this process's registry, never a player or an address in a label):
  ``archipelago_notifications_sent_total{channel}``, ``…_failed_total{channel, reason}``,
  ``…_latency_seconds{channel}`` (from the event to the channel's answer), ``…_stale_total{reason}``,
  ``archipelago_notification_outbox{state}`` (queued, retrying) read every 5 s.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import secrets
import socket
import zlib
from collections.abc import Callable
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from services.notify import kinds as nk
from services.notify.channels import Channels, Delivery, Outcome, new_vapid_private_pem
from services.notify.config import NotifyConfig
from services.notify.outbox import Outbox, now_ms

log = logging.getLogger(__name__)

SENT = Counter("archipelago_notifications_sent_total", "Notifications a channel accepted", ["channel"])
FAILED = Counter("archipelago_notifications_failed_total", "Notification attempts that failed, by channel and "
                 "what happened (retry: will be tried again; failed: given up; gone: the device is gone)",
                 ["channel", "outcome"])
STALE = Counter("archipelago_notifications_stale_total", "Queued notifications not delivered: too old, or a "
                "deadline warning past its deadline", ["reason"])
LATENCY = Histogram("archipelago_notification_latency_seconds", "From the game event to the channel's answer",
                    ["channel"], buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800))
OUTBOX = Gauge("archipelago_notification_outbox", "Notifications waiting: in the outbox (queued) and for a retry "
               "(retrying), as this gateway last read them (every few seconds)", ["state"])
for _ch in nk.CHANNELS:  # every series from 0
    SENT.labels(_ch)
    LATENCY.labels(_ch)
    for _outcome in ("retry", "failed", "gone"):
        FAILED.labels(_ch, _outcome)
for _reason in ("age", "deadline_passed"):
    STALE.labels(_reason)
for _state in ("queued", "retrying"):
    OUTBOX.labels(_state)

SENT_MARK_TTL_S = 24 * 3600
RETRY_LEASE_MS = 120_000  # a claimed retry comes back after this if its gateway died meanwhile
STOP_S = 10.0  # the longest a stop waits for its tasks to end
LANE_DEPTH = 64
PRUNE_EVERY_S = 600.0
GAUGE_EVERY_S = 5.0
CONSUMER_IDLE_MS = 3600_000


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def game_url(public_url: str, game_id: str) -> str:
    return f"{public_url}/game/{game_id}"


class Sender:
    """One process's delivery workers (see the module docstring)."""

    def __init__(self, outbox: Outbox, config: NotifyConfig, *, public_url: str,
                 unsubscribe_url: Callable[[str, int, str], str]) -> None:
        """``unsubscribe_url(game, seat, address)``: the one-click link every mail carries."""
        self.outbox = outbox
        self.config = config
        self.public_url = config.public_url or public_url
        self.unsubscribe_url = unsubscribe_url
        self.consumer = consumer_name()
        self.channels: Channels | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._lanes: list[asyncio.Queue[tuple[str, dict[str, Any], bool]]] = []
        self._inflight: set[str] = set()  # entry ids read or claimed here and not done yet

    async def vapid_pem(self) -> str:
        """The VAPID private key: the configured file's, else the one every gateway shares in Redis."""
        if self.config.vapid_private_key_file:
            with open(self.config.vapid_private_key_file) as f:
                return f.read()
        key = self.outbox.store.key("notify", "vapid")
        await self.outbox.redis.set(key, new_vapid_private_pem(), nx=True)
        return str(await self.outbox.redis.get(key))

    async def prepare(self) -> Channels:
        """The channels (the VAPID key), without the workers (a gateway that sends nothing still
        answers the settings with the public key)."""
        if self.channels is None:
            channels = Channels(self.config, await self.vapid_pem())
            await channels.start()
            self.channels = channels
        return self.channels

    async def start(self) -> None:
        await self.prepare()
        await self.outbox.ensure_group()
        workers = max(1, self.config.workers)
        self._lanes = [asyncio.Queue(LANE_DEPTH) for _ in range(workers)]
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._lane(q)) for q in self._lanes]
        self._tasks += [loop.create_task(self._reader()), loop.create_task(self._retrier()),
                        loop.create_task(self._janitor())]

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        if self._tasks:  # bounded: a task that does not end on its cancel must not hold up a gateway's stop
            _, stuck = await asyncio.wait(self._tasks, timeout=STOP_S)
            if stuck:
                log.warning("notifications: %d task(s) still running %g s after their cancel: %s", len(stuck),
                            STOP_S, "; ".join(repr(t.get_stack(limit=1)) for t in stuck))
        self._tasks = []
        if self.channels is not None:
            await self.channels.close()
            self.channels = None

    # ------------------------------------------------------------------ loops
    async def _loop(self, name: str, body: Callable[[], Any], pause_s: float) -> None:
        while True:
            try:
                await body()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis down, …: say so once a pause, never die
                log.warning("notifications %s: %r", name, exc)
                await asyncio.sleep(pause_s)

    async def _reader(self) -> None:
        last_claim = 0.0

        async def once() -> None:
            nonlocal last_claim
            loop = asyncio.get_running_loop()
            rows: list[tuple[str, dict[str, Any], bool]] = []  # (id, entry, read for the first time)
            if loop.time() - last_claim >= max(1.0, self.config.claim_after_s / 4):
                last_claim = loop.time()
                claimed = await self.outbox.claim_stale(self.consumer, int(self.config.claim_after_s * 1000), 100)
                rows += [(i, e, False) for i, e in claimed if i not in self._inflight]
            rows += [(i, e, True) for i, e in await self.outbox.read(self.consumer, count=100, block_ms=1000)]
            for entry_id, entry, fresh in rows:
                self._inflight.add(entry_id)
                lane = zlib.crc32(f"{entry.get('game_id')}:{entry.get('seat')}".encode()) % len(self._lanes)
                await self._lanes[lane].put((entry_id, entry, fresh))  # (waits while that lane is full)

        await self._loop("reader", once, 1.0)

    async def _lane(self, queue: asyncio.Queue[tuple[str, dict[str, Any], bool]]) -> None:
        while True:
            entry_id, entry, fresh = await queue.get()
            try:
                await self._entry(entry_id, entry, fresh)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # left pending: another read (or gateway) takes it over later
                log.warning("notification entry failed, left for a retry: %r", exc)
            finally:
                self._inflight.discard(entry_id)

    async def _retrier(self) -> None:
        pause = max(0.05, min(1.0, self.config.backoff_s / 4))

        async def once() -> None:
            jobs = await self.outbox.claim_retries(RETRY_LEASE_MS, 100)
            for member, job in jobs:
                await self._retry(member, job)
            if not jobs:
                await asyncio.sleep(pause)

        await self._loop("retrier", once, 1.0)

    async def _janitor(self) -> None:
        last_prune = asyncio.get_running_loop().time()

        every = max(0.2, min(GAUGE_EVERY_S, self.config.claim_after_s / 3))

        async def once() -> None:
            nonlocal last_prune
            await self.outbox.keep(self.consumer, list(self._inflight))  # (ours while this gateway lives)
            queued, retrying = await self.outbox.depth()
            OUTBOX.labels("queued").set(queued)
            OUTBOX.labels("retrying").set(retrying)
            await asyncio.sleep(every)
            if asyncio.get_running_loop().time() - last_prune >= PRUNE_EVERY_S:
                last_prune = asyncio.get_running_loop().time()
                await self.outbox.prune_consumers(CONSUMER_IDLE_MS)

        await self._loop("janitor", once, 1.0)

    # ------------------------------------------------------------------ one entry
    def _stale(self, entry: dict[str, Any]) -> str:
        now = now_ms()
        if now - int(entry.get("at", now)) > self.config.max_age_s * 1000:
            return "age"
        if entry.get("kind") == nk.DEADLINE and int(entry.get("deadline_ms") or 0) and now > int(entry["deadline_ms"]):
            return "deadline_passed"
        return ""

    async def _entry(self, entry_id: str, entry: dict[str, Any], fresh: bool = False) -> None:
        """Deliver one outbox entry on every channel that wants it: its player's settings read once; the
        sent markers checked only for an entry taken over from another gateway (a fresh one was never
        tried); the entry leaves the stream at the end."""
        stale = self._stale(entry)
        if stale:
            STALE.labels(stale).inc()
        else:
            settings = await self._settings(entry)
            for job in self._jobs(entry_id, entry, settings):
                await self._attempt(job, member=None, settings=settings, check_sent=not fresh)
        await self.outbox.done([entry_id])

    async def _settings(self, entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        return await self.outbox.settings(str(entry["game_id"]), int(entry["seat"]))

    def _jobs(self, entry_id: str, entry: dict[str, Any],
              settings: tuple[dict[str, Any], dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """One job per target that wants this entry's kind now."""
        kind = str(entry["kind"])
        base = {"entry": entry, "attempt": 1}
        if kind == nk.EMAIL_CONFIRM:  # (the address to confirm: in the entry, not yet in the settings)
            return [{**base, "id": f"{entry_id}.mail", "channel": nk.EMAIL, "target_id": ""}]
        cfg, status = settings
        jobs = []
        for channel in nk.CHANNELS:
            ch = cfg.get(channel)
            if not ch or status.get(channel, {}).get("disabled") or kind not in (ch.get("kinds")
                                                                                  or nk.DEFAULT_KINDS[channel]):
                continue
            if channel == nk.WEB_PUSH:
                jobs += [{**base, "id": f"{entry_id}.push.{d['id']}", "channel": channel, "target_id": d["id"]}
                         for d in ch.get("devices") or []]
            elif channel == nk.WEBHOOK:
                jobs.append({**base, "id": f"{entry_id}.hook", "channel": channel, "target_id": ""})
            elif ch.get("confirmed"):
                jobs.append({**base, "id": f"{entry_id}.mail", "channel": channel, "target_id": ""})
        return jobs

    def _target(self, job: dict[str, Any], settings: tuple[dict[str, Any], dict[str, dict[str, Any]]]
                ) -> tuple[dict[str, Any] | None, str]:
        """The job's target as ``settings`` have it (None: removed or disabled) and the language."""
        entry = job["entry"]
        game_id, seat = str(entry["game_id"]), int(entry["seat"])
        cfg, status = settings
        language = str(cfg.get("language") or entry.get("language") or "en")
        channel = job["channel"]
        if entry["kind"] == nk.EMAIL_CONFIRM:
            return {"address": entry["address"], "unsubscribe_url": ""}, language
        ch = cfg.get(channel)
        if not ch or status.get(channel, {}).get("disabled"):
            return None, language
        if channel == nk.WEB_PUSH:
            dev = next((d for d in ch.get("devices") or [] if d["id"] == job["target_id"]), None)
            if dev is None:
                return None, language
            return {"endpoint": dev["endpoint"], "p256dh": dev["p256dh"], "auth": dev["auth"]}, language
        if channel == nk.WEBHOOK:
            return {"url": ch["url"], "secret": ch["secret"]}, language
        if not ch.get("confirmed"):
            return None, language
        unsubscribe = f"{self.unsubscribe_url(game_id, seat, ch['address'])}?lang={language}"
        return {"address": ch["address"], "unsubscribe_url": unsubscribe}, language

    def _payload(self, job: dict[str, Any], language: str) -> dict[str, Any]:
        e = job["entry"]
        url = e.get("url") or game_url(self.public_url, str(e["game_id"]))
        return nk.payload(delivery_id=job["id"], kind=str(e["kind"]), game_id=str(e["game_id"]), game=str(e["game"]),
                          round_=int(e.get("round") or 0), url=url, deadline_ms=int(e.get("deadline_ms") or 0),
                          at_ms=int(e.get("at") or 0), language=language, who=str(e.get("who") or ""))

    def _sent_key(self, delivery_id: str) -> str:
        return str(self.outbox.store.key("notify", "sent", hashlib.sha256(delivery_id.encode()).hexdigest()[:32]))

    async def _attempt(self, job: dict[str, Any], member: str | None,
                       settings: tuple[dict[str, Any], dict[str, dict[str, Any]]] | None = None,
                       check_sent: bool = True) -> None:
        """One attempt of one job (``settings``: the player's, just read; a retry reads them again);
        then its next step (done, retry later, given up)."""
        assert self.channels is not None
        channel, entry = job["channel"], job["entry"]
        if settings is None:
            settings = await self._settings(entry)
        target, language = self._target(job, settings)
        if target is None or (check_sent and await self.outbox.redis.exists(self._sent_key(job["id"]))):
            if member is not None:
                await self.outbox.retry_done(member)
            return  # (the channel was removed or disabled meanwhile; or it was sent before a crash)
        outcome = await self.channels.send(Delivery(job["id"], channel, self._payload(job, language), target))
        if outcome.ok:
            SENT.labels(channel).inc()
            LATENCY.labels(channel).observe(max(0, now_ms() - int(entry.get("at") or now_ms())) / 1000.0)
            pipe = self.outbox.redis.pipeline(transaction=False)
            pipe.set(self._sent_key(job["id"]), 1, ex=SENT_MARK_TTL_S)
            if member is not None:
                pipe.zrem(self.outbox.retry_key, member)
            self._record_success(pipe, job, settings[1])
            await pipe.execute()
            if settings[1].get(channel, {}).get("failures"):  # (it had failed before: the operators' list too)
                await self.outbox.set_status(str(entry["game_id"]), int(entry["seat"]), channel,
                                             {**settings[1][channel], "failures": 0, "reason": "",
                                              "last_sent": now_ms()})
            return
        if outcome.gone:
            FAILED.labels(channel, "gone").inc()
            await self._forget_device(job)
        elif outcome.retry and job["attempt"] < self.config.attempts and not self._stale(entry):
            FAILED.labels(channel, "retry").inc()
            nxt = {**job, "attempt": job["attempt"] + 1}
            wait_ms = int(self.config.backoff_s * 1000 * 2 ** (job["attempt"] - 1))
            await self.outbox.schedule_retry(nxt, now_ms() + wait_ms)
        else:
            FAILED.labels(channel, "failed").inc()
        if member is not None:
            await self.outbox.retry_done(member)
        if not outcome.gone:
            await self._record(job, outcome)

    def _record_success(self, pipe: Any, job: dict[str, Any], status: dict[str, dict[str, Any]]) -> None:
        """A success of a channel that had not failed: its ``last_sent``, at most once a minute (one HSET in
        the pipeline of the sent marker; the kind flags do not change)."""
        entry, channel = job["entry"], job["channel"]
        if entry["kind"] == nk.EMAIL_CONFIRM:
            return
        st = status.get(channel) or {}
        now = now_ms()
        if st.get("failures") or now - int(st.get("last_sent", 0)) < 60_000:
            return
        st = {**st, "last_sent": now}
        status[channel] = st
        pipe.hset(self.outbox.settings_key(str(entry["game_id"]), int(entry["seat"])), f"st:{channel}",
                  json.dumps(st, separators=(",", ":")))

    async def _retry(self, member: str, job: dict[str, Any]) -> None:
        try:
            await self._attempt(job, member)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # (the lease brings it back)
            log.warning("notification retry failed, leased for later: %r", exc)

    async def _record(self, job: dict[str, Any], outcome: Outcome) -> None:
        """The channel's state after a failed attempt: ``disable_after`` failures in a row disable it
        (the confirmation mail of an address is not the channel's)."""
        entry = job["entry"]
        if entry["kind"] == nk.EMAIL_CONFIRM:
            return
        game_id, seat, channel = str(entry["game_id"]), int(entry["seat"]), job["channel"]
        _, status = await self.outbox.settings(game_id, seat)
        st = dict(status.get(channel) or {})
        now = now_ms()
        st["failures"] = int(st.get("failures", 0)) + 1
        st["last_failure"] = now
        st["reason"] = outcome.reason
        if st["failures"] >= self.config.disable_after:
            st["disabled"] = True
            st["reason"] = f"disabled after {st['failures']} failed attempts in a row: {outcome.reason}"
            log.warning("notify %s channel disabled after %d failures", channel, st["failures"])
        await self.outbox.set_status(game_id, seat, channel, st)

    async def _forget_device(self, job: dict[str, Any]) -> None:
        entry = job["entry"]
        game_id, seat = str(entry["game_id"]), int(entry["seat"])
        cfg, _ = await self.outbox.settings(game_id, seat)
        ch = cfg.get(nk.WEB_PUSH)
        if not ch:
            return
        ch["devices"] = [d for d in ch.get("devices") or [] if d["id"] != job["target_id"]]
        if not ch["devices"]:
            cfg.pop(nk.WEB_PUSH)
        await self.outbox.put_settings(game_id, seat, cfg, {})


def unsubscribe_token(key: bytes, game_id: str, seat: int, address: str) -> str:
    """A stateless one-click unsubscribe token: the player, and a MAC over it and the address."""
    mac = hmac.new(key, f"unsub\0{game_id}\0{seat}\0{address.lower()}".encode(), hashlib.sha256).hexdigest()[:32]
    return f"{game_id}.{seat}.{mac}"


def parse_unsubscribe_token(token: str) -> tuple[str, int, str] | None:
    """(game, seat, mac) of a token, None if it is not one (check the mac with :func:`unsubscribe_token`)."""
    try:
        game_id, seat_s, mac = token.rsplit(".", 2)
        return game_id, int(seat_s), mac
    except ValueError:
        return None
