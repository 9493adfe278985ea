"""The three delivery channels of a notification (notify.proto): Web Push, webhooks, email.

``Channels.send(delivery)`` makes one attempt at one target and says how it went (``Outcome``): the
sender decides about retries, backoff and disabling. It never raises for a delivery failure.

- Web Push (RFC 8030/8291/8292): the payload is encrypted with pywebpush's ``WebPusher.encode``
  (aes128gcm, http_ece) and POSTed with a VAPID ``Authorization: vapid t=<ES256 JWT>,k=<key>``
  (py_vapid) on our own bounded session. We do not call ``WebPusher.send_async``: it follows
  redirects and reads the whole answer body, unbounded; the push service's answer here is its
  status only.
- Webhooks: the JSON payload, signed ``Archipelago-Signature: t=<t>,v1=<hex HMAC-SHA256(secret,
  "<t>.<body>")>`` (``sign``), ``Archipelago-Delivery: <id>`` the same on every retry.
- Email: aiosmtplib to the operator's SMTP server; text/plain (and a simple text/html) in the
  payload's language, one-click unsubscribe (RFC 8058) in every mail but the address confirmation.

Bounded and private by construction: one aiohttp session per ``Channels`` with a connection limit,
a total timeout per request, no redirects followed, no cookies kept, no proxy from the environment;
TLS trusts the system CAs plus ``config.ca_file``. A target's host is resolved when it is sent to and
refused if any of its addresses is not public (unless ``config.allow_private``): a name that
resolved to a public address when it was set cannot be rebound into the private network. Targets
(endpoints, URLs, addresses, secrets) are never logged: log lines name the channel and a status.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import html
import ipaddress
import json
import logging
import math
import re
import socket
import ssl
import time
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import aiosmtplib
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid
from pywebpush import WebPusher

from engine.errors import InvalidOrder
from services.notify import kinds
from services.notify.config import NotifyConfig

log = logging.getLogger("archipelago.notify")

MAX_URL_LEN = 2048
MAX_EMAIL_LEN = 254
USER_AGENT = "archipelago-notify/1"
#: kinds a push service should deliver at once (RFC 8030 Urgency)
URGENT_KINDS = frozenset({kinds.YOUR_TURN, kinds.YOUR_DECISION, kinds.DEADLINE})
#: a VAPID JWT lives this long (RFC 8292: at most 24 h); it is signed again an hour before it ends
VAPID_EXP_S = 12 * 3600
_VAPID_RESIGN_S = 3600
_VAPID_CACHE_MAX = 1024


@dataclass(frozen=True)
class Delivery:
    """One attempt's input: one notification to one target of one channel."""

    id: str  # stable across retries of one notification to one target
    channel: str  # kinds.WEB_PUSH | kinds.WEBHOOK | kinds.EMAIL
    payload: dict[str, Any]  # kinds.payload(...) (EMAIL_CONFIRM: kind "email_confirm", url = the confirm link)
    # web_push: {"endpoint","p256dh","auth"}; webhook: {"url","secret"}; email: {"address","unsubscribe_url"}
    target: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """How one attempt went."""

    ok: bool
    retry: bool = False  # transient (timeout, refused, 408/429/5xx): try again later
    gone: bool = False  # the target is gone for good (push 404/410): forget it
    reason: str = ""  # words for the player, never secret data (no URL path, no address)


SENT = Outcome(ok=True)


# ---------------------------------------------------------------------------------------------
# Checks of what a player registers (also applied again at send time)


def _bad(field: str, reason: str) -> InvalidOrder:
    return InvalidOrder(reason, field=field, rule="")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def is_public_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether ``ip`` is a public unicast address (not private, loopback, link-local, shared,
    reserved, multicast or unspecified, nor an IPv6 form of such an IPv4 address)."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None and not is_public_ip(inner):
            return False
    return ip.is_global and not ip.is_multicast


def _literal_ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


# a host of digits, dots and hex that is no canonical address ("2130706433", "0x7f.1", "127.1"):
# getaddrinfo would map it onto an address
_NUMERIC_HOST = re.compile(r"(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]*))*\.?", re.IGNORECASE)


def check_target_url(url: str, *, allow_private: bool, field: str) -> str:
    """``url`` if it may be POSTed to: https (http too with ``allow_private``), a host, at most 2048
    characters, no credentials, no literal private / loopback / link-local address (unless
    ``allow_private``). Else ``InvalidOrder`` naming ``field`` (the message never repeats the URL)."""
    if not isinstance(url, str) or not url:
        raise _bad(field, "a URL is required")
    if len(url) > MAX_URL_LEN:
        raise _bad(field, f"a URL of at most {MAX_URL_LEN} characters is required")
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise _bad(field, "a URL has no spaces or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises ValueError for a bad port
    except ValueError:
        raise _bad(field, "not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme != "https" and not (allow_private and scheme == "http"):
        raise _bad(field, "an https URL is required")
    if not host:
        raise _bad(field, "the URL has no host")
    if "@" in parts.netloc:
        raise _bad(field, "the URL must not carry a user name or password")
    ip = _literal_ip(host)
    if ip is None and _NUMERIC_HOST.fullmatch(host):
        raise _bad(field, "the URL's host is not a valid address")
    if ip is not None and not allow_private and not is_public_ip(ip):
        raise _bad(field, "the URL points into a private network")
    return url


_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_EMAIL_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def check_email_address(address: str, field: str) -> str:
    """The address (its domain in lower case) if it is a plain ``local@domain.tld`` of at most 254
    characters, else ``InvalidOrder`` naming ``field``. Deliberately narrow: no display names,
    quoted local parts, comments or IP literals (nothing that could smuggle a header)."""
    if not isinstance(address, str) or not address:
        raise _bad(field, "an email address is required")
    if len(address) > MAX_EMAIL_LEN:
        raise _bad(field, f"an email address of at most {MAX_EMAIL_LEN} characters is required")
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        raise _bad(field, "an email address looks like name@example.com")
    if len(local) > 64 or not _EMAIL_LOCAL.fullmatch(local):
        raise _bad(field, "the part before @ is not a valid mailbox name")
    labels = domain.rstrip(".").split(".") if not domain.startswith(".") else [""]
    if len(labels) < 2 or not all(_EMAIL_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        raise _bad(field, "the part after @ is not a valid domain")
    return f"{local}@{domain.lower()}"


def mask_email(address: str) -> str:
    """``"alice@example.com"`` -> ``"a•••@example.com"`` (what the player is shown back)."""
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        return "•••"
    return f"{local[0]}•••@{domain}"


def sign(secret: str, body: bytes, t: int) -> str:
    """The ``Archipelago-Signature`` header value: ``t=<t>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>``."""
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def _b64url_decode(value: str) -> bytes:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def check_subscription(endpoint: str, p256dh: str, auth: str, *, allow_private: bool, field: str) -> None:
    """A browser PushSubscription (its endpoint and keys) that can be encrypted to, else
    ``InvalidOrder`` naming ``<field>.endpoint`` / ``.p256dh`` / ``.auth``."""
    check_target_url(endpoint, allow_private=allow_private, field=f"{field}.endpoint")
    try:
        point = _b64url_decode(p256dh)
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        if len(point) != 65:
            raise ValueError("not an uncompressed point")
    except (ValueError, TypeError, binascii.Error):
        raise _bad(f"{field}.p256dh", "a P-256 public key (base64url, uncompressed point) is required") from None
    try:
        secret = _b64url_decode(auth)
    except (ValueError, TypeError, binascii.Error):
        secret = b""
    if len(secret) != 16:
        raise _bad(f"{field}.auth", "a 16-byte authentication secret (base64url) is required")


def new_vapid_private_pem() -> str:
    """A new VAPID key pair's private key (P-256), PKCS#8 PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _load_vapid_key(pem: str) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError("the VAPID private key must be a P-256 (prime256v1) EC key")
    return key


# ---------------------------------------------------------------------------------------------
# The network side


class NotStartedError(RuntimeError):
    """``Channels.send`` before ``start()`` (or after ``close()``): the caller's bug."""


class PrivateAddressError(OSError):
    """A target's host resolved to an address that is not public (raised by the resolver)."""


class _PublicResolver(AbstractResolver):
    """Resolves like aiohttp's default, then refuses a host with any non-public address."""

    def __init__(self, allow_private: bool) -> None:
        self._inner = ThreadedResolver()
        self._allow_private = allow_private

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        infos = await self._inner.resolve(host, port, family)
        if not self._allow_private:
            for info in infos:
                ip = _literal_ip(info["host"])
                if ip is None or not is_public_ip(ip):
                    raise PrivateAddressError("the host resolves into a private network")
        return infos

    async def close(self) -> None:
        await self._inner.close()


def _ssl_context(ca_file: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if ca_file:
        ctx.load_verify_locations(cafile=ca_file)
    return ctx


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


_MESSAGE_ID_CHARS = re.compile(r"[^A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]")

MAIL_WORDS: dict[str, dict[str, str]] = {
    "en": {"open": "Open the game: {url}", "confirm": "Confirm your address: {url}",
           "not_you": "If you did not ask for this, ignore this mail.",
           "unsubscribe": "Stop these mails: {url}", "open_link": "Open the game",
           "confirm_link": "Confirm", "unsubscribe_link": "Stop these mails"},
    "he": {"open": "לפתיחת המשחק: {url}", "confirm": "לאישור הכתובת: {url}",
           "not_you": "אם לא ביקשתם זאת, התעלמו מהודעה זו.",
           "unsubscribe": "להפסקת ההודעות: {url}", "open_link": "לפתיחת המשחק",
           "confirm_link": "אישור", "unsubscribe_link": "להפסקת ההודעות"},
}


class Channels:
    """Sends deliveries over the three channels (one process, one event loop, one session)."""

    def __init__(self, config: NotifyConfig, vapid_private_pem: str) -> None:
        self.config = config
        self._vapid = Vapid(private_key=_load_vapid_key(vapid_private_pem))
        raw = self._vapid.public_key.public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.UncompressedPoint)
        self._vapid_public = _b64url(raw)
        self._vapid_headers: dict[str, tuple[float, str]] = {}  # origin -> (exp, Authorization)
        self._ssl = _ssl_context(config.ca_file)
        self._session: aiohttp.ClientSession | None = None
        self._timeout = aiohttp.ClientTimeout(total=config.http_timeout_s)

    def vapid_public_key(self) -> str:
        """The VAPID public key, base64url of the uncompressed P-256 point (applicationServerKey)."""
        return self._vapid_public

    async def start(self) -> None:
        if self._session is not None:
            return
        connector = aiohttp.TCPConnector(limit=max(1, self.config.workers), ssl=self._ssl,
                                         resolver=_PublicResolver(self.config.allow_private))
        self._session = aiohttp.ClientSession(connector=connector, timeout=self._timeout, trust_env=False,
                                              cookie_jar=aiohttp.DummyCookieJar(),
                                              headers={"User-Agent": USER_AGENT})

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def send(self, d: Delivery) -> Outcome:
        """One attempt; never raises for a delivery failure (``Outcome`` says what happened)."""
        try:
            if d.channel == kinds.WEB_PUSH:
                outcome = await self._web_push(d)
            elif d.channel == kinds.WEBHOOK:
                outcome = await self._webhook(d)
            elif d.channel == kinds.EMAIL:
                outcome = await self._email(d)
            else:
                outcome = Outcome(ok=False, reason="unknown channel")
        except NotStartedError:
            raise  # the caller's bug, not a delivery failure
        except Exception as exc:  # a bug of ours or a library's: count it as a transient failure
            log.warning("notify %s: unexpected %s", d.channel, type(exc).__name__)
            outcome = Outcome(ok=False, retry=True, reason="an internal error")
        if not outcome.ok:
            log.info("notify %s failed: %s (retry=%s gone=%s)", d.channel, outcome.reason, outcome.retry,
                     outcome.gone)
        return outcome

    # -- HTTP channels ------------------------------------------------------------------------

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise NotStartedError("Channels.start() was not awaited")
        return self._session

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> int | Outcome:
        """The status of one POST, or the Outcome of a failure to get one."""
        try:
            async with self._http().post(url, data=body, headers=headers, allow_redirects=False) as resp:
                return resp.status
        except aiohttp.InvalidURL:
            return Outcome(ok=False, reason="the URL is not valid")
        except aiohttp.ClientConnectorDNSError as exc:
            if isinstance(exc.os_error, PrivateAddressError):
                return Outcome(ok=False, reason="the URL points into a private network")
            return Outcome(ok=False, retry=True, reason="its host name could not be resolved")
        except aiohttp.ClientConnectorCertificateError:
            return Outcome(ok=False, reason="its TLS certificate is not trusted")
        except aiohttp.ClientSSLError:
            return Outcome(ok=False, retry=True, reason="the TLS connection failed")
        except TimeoutError:
            return Outcome(ok=False, retry=True, reason=f"no answer within {self.config.http_timeout_s:g} s")
        except aiohttp.ClientConnectorError:
            return Outcome(ok=False, retry=True, reason="the connection was refused")
        except (aiohttp.ClientError, OSError):
            return Outcome(ok=False, retry=True, reason="the connection failed")

    def _vapid_authorization(self, endpoint: str) -> str:
        aud = _origin(endpoint)
        now = time.time()
        cached = self._vapid_headers.get(aud)
        if cached is not None and cached[0] - now > _VAPID_RESIGN_S:
            return cached[1]
        exp = int(now) + VAPID_EXP_S
        header = str(self._vapid.sign({"aud": aud, "exp": exp, "sub": self.config.vapid_subject})["Authorization"])
        if len(self._vapid_headers) >= _VAPID_CACHE_MAX:
            self._vapid_headers.clear()
        self._vapid_headers[aud] = (exp, header)
        return header

    def _push_ttl(self, payload: dict[str, Any]) -> int:
        """Seconds the push service may keep the message for an offline device: until the deadline
        if there is one, else as long as the outbox keeps a notification."""
        deadline_ms = int(payload.get("deadline_unix_ms") or 0)
        if deadline_ms:
            return max(60, math.ceil(deadline_ms / 1000 - time.time()))
        return max(60, int(self.config.max_age_s))

    async def _web_push(self, d: Delivery) -> Outcome:
        endpoint = str(d.target.get("endpoint", ""))
        p256dh, auth = str(d.target.get("p256dh", "")), str(d.target.get("auth", ""))
        try:
            check_subscription(endpoint, p256dh, auth, allow_private=self.config.allow_private, field="subscription")
        except InvalidOrder as exc:
            return Outcome(ok=False, reason=f"the subscription is not valid ({exc.reason})")
        data = json.dumps(d.payload, ensure_ascii=False, separators=(",", ":")).encode()
        pusher = WebPusher({"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}})
        body = pusher.encode(data, "aes128gcm")["body"]
        urgent = d.payload.get("kind") in URGENT_KINDS
        headers = {"Authorization": self._vapid_authorization(endpoint), "Content-Encoding": "aes128gcm",
                   "Content-Type": "application/octet-stream", "TTL": str(self._push_ttl(d.payload)),
                   "Urgency": "high" if urgent else "normal"}
        status = await self._post(endpoint, body, headers)
        if isinstance(status, Outcome):
            return status
        if status in (200, 201, 202):
            return SENT
        said = f"the push service answered {status}"
        if status in (404, 410):
            return Outcome(ok=False, gone=True, reason=f"{said}: the subscription has expired")
        if status == 429 or status >= 500 or status == 408:
            return Outcome(ok=False, retry=True, reason=said)
        return Outcome(ok=False, reason=said)

    async def _webhook(self, d: Delivery) -> Outcome:
        url, secret = str(d.target.get("url", "")), str(d.target.get("secret", ""))
        try:
            check_target_url(url, allow_private=self.config.allow_private, field="webhook.url")
        except InvalidOrder as exc:
            return Outcome(ok=False, reason=exc.reason)
        if not secret:
            return Outcome(ok=False, reason="the webhook has no signing secret")
        body = json.dumps(d.payload, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                   "Archipelago-Signature": sign(secret, body, int(time.time())), "Archipelago-Delivery": d.id}
        status = await self._post(url, body, headers)
        if isinstance(status, Outcome):
            return status
        if 200 <= status < 300:
            return SENT
        said = f"the server answered {status}"
        if status in (408, 429) or status >= 500:
            return Outcome(ok=False, retry=True, reason=said)
        if 300 <= status < 400:
            return Outcome(ok=False, reason=f"{said} (redirects are not followed)")
        return Outcome(ok=False, reason=said)

    # -- email --------------------------------------------------------------------------------

    def email_message(self, d: Delivery) -> EmailMessage:
        """The mail of an email delivery (``target["address"]`` already checked)."""
        p = d.payload
        lang = p.get("language") if p.get("language") in kinds.LANGUAGES else "en"
        words = MAIL_WORDS[str(lang)]
        confirm = p.get("kind") == kinds.EMAIL_CONFIRM
        url, unsubscribe = str(p.get("url", "")), str(d.target.get("unsubscribe_url", ""))
        msg = EmailMessage()
        msg["From"] = self.config.smtp_from
        msg["To"] = str(d.target["address"])
        msg["Subject"] = str(p.get("title", ""))
        msg["Date"] = formatdate(usegmt=True)
        msg["Message-ID"] = f"<{_MESSAGE_ID_CHARS.sub('-', d.id)}@archipelago>"
        msg["Auto-Submitted"] = "auto-generated"
        lines = [str(p.get("body", "")), "", words["confirm" if confirm else "open"].format(url=url)]
        if confirm:
            lines += ["", words["not_you"]]
        elif unsubscribe:
            msg["List-Unsubscribe"] = f"<{unsubscribe}>"
            msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
            lines += ["", "--", words["unsubscribe"].format(url=unsubscribe)]
        msg.set_content("\n".join(lines) + "\n")
        e = html.escape
        direction = "rtl" if lang == "he" else "ltr"
        link = words["confirm_link" if confirm else "open_link"]
        parts = [f'<!doctype html><html lang="{lang}" dir="{direction}"><body>',
                 f"<h1>{e(str(p.get('title', '')))}</h1>", f"<p>{e(str(p.get('body', '')))}</p>",
                 f'<p><a href="{e(url)}">{e(link)}</a></p>']
        if confirm:
            parts.append(f"<p>{e(words['not_you'])}</p>")
        elif unsubscribe:
            parts.append(f'<hr><p><a href="{e(unsubscribe)}">{e(words["unsubscribe_link"])}</a></p>')
        msg.add_alternative("".join([*parts, "</body></html>"]), subtype="html")
        msg["Content-Language"] = str(lang)  # after add_alternative, which moves Content-* into the parts
        return msg

    async def _email(self, d: Delivery) -> Outcome:
        c = self.config
        if not c.email_available:
            return Outcome(ok=False, reason="email is not configured on this server")
        try:
            address = check_email_address(str(d.target.get("address", "")), "email.address")
        except InvalidOrder:
            return Outcome(ok=False, reason="the address is not valid")
        if d.payload.get("kind") != kinds.EMAIL_CONFIRM and not d.target.get("unsubscribe_url"):
            return Outcome(ok=False, reason="a mail without an unsubscribe link is not sent")
        msg = self.email_message(Delivery(d.id, d.channel, d.payload, {**d.target, "address": address}))
        try:
            await aiosmtplib.send(msg, hostname=c.smtp_host, port=c.smtp_port, username=c.smtp_user or None,
                                  password=c.smtp_password or None, use_tls=c.smtp_tls,
                                  start_tls=False if c.smtp_tls else c.smtp_starttls, tls_context=self._ssl,
                                  timeout=c.http_timeout_s)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [r.code for r in exc.recipients]
            if codes and all(code >= 500 for code in codes):
                return Outcome(ok=False, reason=f"the mail server refused the address ({codes[0]})")
            return Outcome(ok=False, retry=True, reason=f"the mail server deferred the address ({codes[0]})"
                           if codes else "the mail server deferred the address")
        except aiosmtplib.SMTPAuthenticationError as exc:  # the operator's problem: keep the players' channels
            return Outcome(ok=False, retry=True, reason=f"the mail server refused our login ({exc.code})")
        except aiosmtplib.SMTPResponseException as exc:
            if exc.code >= 500:
                return Outcome(ok=False, reason=f"the mail server answered {exc.code}")
            return Outcome(ok=False, retry=True, reason=f"the mail server answered {exc.code}")
        except aiosmtplib.SMTPTimeoutError:
            return Outcome(ok=False, retry=True, reason=f"no answer within {c.http_timeout_s:g} s")
        except (aiosmtplib.SMTPException, OSError):
            return Outcome(ok=False, retry=True, reason="the mail server could not be reached")
        return SENT
