"""The notification settings of a deployment, from the environment (README: "Notifications").

Every value has a default that works on one machine; an operator sets the public URL (the links in
notifications), SMTP (email) and, for a fleet of gateways, nothing else: the VAPID key pair is made
once and kept in Redis for every gateway unless ``ARCHIPELAGO_VAPID_PRIVATE_KEY`` names a PEM file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


def _f(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "")
    return float(raw) if raw else default


def _i(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "")
    return int(raw) if raw else default


@dataclass(frozen=True)
class WarnPolicy:
    """When the deadline warning comes (kind ``deadline``): ``slow_s`` before a step of at least
    ``slow_from_s``, ``fast_s`` before a step of at least ``fast_from_s``, never for a shorter one."""

    slow_s: float = 3600.0
    slow_from_s: float = 2 * 3600.0
    fast_s: float = 15.0
    fast_from_s: float = 30.0

    def before(self, step_s: float) -> float | None:
        """Seconds before the deadline to warn, for a step ``step_s`` long (None: no warning)."""
        if step_s >= self.slow_from_s:
            return self.slow_s
        if step_s >= self.fast_from_s and self.fast_s < step_s:
            return self.fast_s
        return None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WarnPolicy:
        env = os.environ if env is None else env
        return cls(slow_s=_f(env, "ARCHIPELAGO_NOTIFY_WARN_SLOW_S", cls.slow_s),
                   slow_from_s=_f(env, "ARCHIPELAGO_NOTIFY_SLOW_FROM_S", cls.slow_from_s),
                   fast_s=_f(env, "ARCHIPELAGO_NOTIFY_WARN_FAST_S", cls.fast_s),
                   fast_from_s=_f(env, "ARCHIPELAGO_NOTIFY_FAST_FROM_S", cls.fast_from_s))


@dataclass(frozen=True)
class NotifyConfig:
    """The delivery side (gateways)."""

    public_url: str = ""  # the web client's base URL for links ("" -> the gateway's own HTTP address)
    vapid_private_key_file: str = ""  # PEM; "" -> one key pair kept in Redis for every gateway
    vapid_subject: str = "mailto:operator@localhost"  # VAPID "sub" claim: how a push service reaches you
    smtp_host: str = ""  # "" -> no email channel
    smtp_port: int = 587
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_from: str = "archipelago@localhost"
    smtp_starttls: bool = True
    smtp_tls: bool = False  # implicit TLS (port 465)
    http_timeout_s: float = 10.0  # one webhook or push request
    ca_file: str = ""  # extra CA bundle trusted for webhooks (a private CA; the tests' receiver)
    allow_private: bool = False  # webhooks and push endpoints may be http:// or private addresses (tests)
    workers: int = 16  # deliveries in flight per gateway
    attempts: int = 6  # per notification and channel
    backoff_s: float = 5.0  # attempt n waits backoff_s * 2**(n-1)
    disable_after: int = 10  # failed attempts in a row that disable a channel
    claim_after_s: float = 30.0  # an entry a dead gateway was delivering is taken over after this
    max_queue: int = 200_000  # outbox entries at most (beyond: new ones dropped, counted)
    max_age_s: float = 6 * 3600.0  # an entry older than this is dropped, not delivered
    warn: WarnPolicy = WarnPolicy()

    @property
    def email_available(self) -> bool:
        return bool(self.smtp_host)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> NotifyConfig:
        env = os.environ if env is None else env
        d = cls()
        return cls(
            public_url=env.get("ARCHIPELAGO_PUBLIC_URL", "").rstrip("/"),
            vapid_private_key_file=env.get("ARCHIPELAGO_VAPID_PRIVATE_KEY", ""),
            vapid_subject=env.get("ARCHIPELAGO_VAPID_SUBJECT", "") or d.vapid_subject,
            smtp_host=env.get("ARCHIPELAGO_SMTP_HOST", ""),
            smtp_port=_i(env, "ARCHIPELAGO_SMTP_PORT", d.smtp_port),
            smtp_user=env.get("ARCHIPELAGO_SMTP_USER", ""),
            smtp_password=env.get("ARCHIPELAGO_SMTP_PASSWORD", ""),
            smtp_from=env.get("ARCHIPELAGO_SMTP_FROM", "") or d.smtp_from,
            smtp_starttls=env.get("ARCHIPELAGO_SMTP_STARTTLS", "1") not in ("0", "false", "no"),
            smtp_tls=env.get("ARCHIPELAGO_SMTP_TLS", "0") in ("1", "true", "yes"),
            http_timeout_s=_f(env, "ARCHIPELAGO_NOTIFY_HTTP_TIMEOUT_S", d.http_timeout_s),
            ca_file=env.get("ARCHIPELAGO_NOTIFY_CA_FILE", ""),
            allow_private=env.get("ARCHIPELAGO_NOTIFY_ALLOW_PRIVATE", "0") in ("1", "true", "yes"),
            workers=_i(env, "ARCHIPELAGO_NOTIFY_WORKERS", d.workers),
            attempts=_i(env, "ARCHIPELAGO_NOTIFY_ATTEMPTS", d.attempts),
            backoff_s=_f(env, "ARCHIPELAGO_NOTIFY_BACKOFF_S", d.backoff_s),
            disable_after=_i(env, "ARCHIPELAGO_NOTIFY_DISABLE_AFTER", d.disable_after),
            claim_after_s=_f(env, "ARCHIPELAGO_NOTIFY_CLAIM_S", d.claim_after_s),
            max_queue=_i(env, "ARCHIPELAGO_NOTIFY_MAX_QUEUE", d.max_queue),
            max_age_s=_f(env, "ARCHIPELAGO_NOTIFY_MAX_AGE_S", d.max_age_s),
            warn=WarnPolicy.from_env(env),
        )
