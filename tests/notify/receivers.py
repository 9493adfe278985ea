"""Real receivers of notifications for the tests: a Web Push service, an HTTPS webhook receiver and an
SMTP server, each on 127.0.0.1 on a free port, served by a background thread with its own event loop.

Each is a context manager (``with PushService() as push: ...``) and has a pytest fixture below
(``push_service``, ``webhook_receiver``, ``smtp_server``). They record what they receive (thread-safe)
before answering, so a sender that got its answer finds the delivery recorded; a test waits for the
n-th delivery with ``wait_for(n, timeout=...)`` (a ``threading.Condition``), never by sleeping. A
served cluster in another process can deliver to them: ``env()`` gives the environment it needs.

- ``PushService``: ``subscription()`` makes a browser-like PushSubscription (a P-256 key pair and a
  16-byte auth secret kept here); a POST to its endpoint has its VAPID ``Authorization`` verified
  (ES256 JWT: aud = the endpoint's origin, exp in the future and within 24 h, sub present; ``k`` =
  the applicationServerKey the subscription was made with, if given) and its aes128gcm body decrypted
  with the subscription's private key and auth secret (http_ece).
- ``WebhookReceiver``: HTTPS with a self-signed certificate made here (``ca_file``: SAN IP 127.0.0.1
  and DNS localhost); checks ``Archipelago-Signature`` by the documented recipe (``verify_signature``,
  written from notify.proto, not from the server's code) and rejects a stale ``t``.
- ``SmtpServer``: aiosmtpd, recording each mail as an ``email.message.EmailMessage``.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import email
import email.policy
import hashlib
import hmac
import ipaddress
import json
import re
import shutil
import ssl
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import http_ece
import pytest
from aiohttp import web
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

T = TypeVar("T")
HANG = "hang"  # a scripted answer: say nothing until the client gives up (past its timeout)
DEFAULT_WAIT_S = 10.0


class Recorder(Generic[T]):
    """What a receiver got, in arrival order; waits with a Condition (timeout: AssertionError)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._cond = threading.Condition()
        self._items: list[T] = []

    def add(self, item: T) -> None:
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()

    def items(self) -> list[T]:
        with self._cond:
            return list(self._items)

    def __len__(self) -> int:
        with self._cond:
            return len(self._items)

    def wait_until(self, predicate: Callable[[list[T]], bool], timeout: float = DEFAULT_WAIT_S,
                   what: str = "") -> list[T]:
        """All items once ``predicate(items)`` holds (AssertionError after ``timeout`` seconds)."""
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self._items), timeout):
                raise AssertionError(f"{self._what}: {what or 'condition'} not met within {timeout:g} s; "
                                     f"got {len(self._items)}, the last: {self._items[-2:]!r}")
            return list(self._items)

    def wait_for(self, n: int, timeout: float = DEFAULT_WAIT_S,
                 where: Callable[[T], bool] | None = None) -> list[T]:
        """The items (those matching ``where``, if given) once there are at least ``n`` of them."""
        def matching(items: list[T]) -> list[T]:
            return [i for i in items if where is None or where(i)]

        return matching(self.wait_until(lambda items: len(matching(items)) >= n, timeout,
                                        f"{n} deliveries"))

    def nth(self, n: int, timeout: float = DEFAULT_WAIT_S, where: Callable[[T], bool] | None = None) -> T:
        """The ``n``-th item (1-based; of those matching ``where``), waiting for it."""
        return self.wait_for(n, timeout, where)[n - 1]


class _ServerThread:
    """An aiohttp application served on 127.0.0.1:<free port> by a thread with its own loop."""

    def __init__(self, app: web.Application, ssl_context: ssl.SSLContext | None = None) -> None:
        self._app = app
        self._ssl = ssl_context
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closing: asyncio.Event | None = None  # set (in the loop) when stopping: hanging answers end
        self.port = 0

    def start(self) -> int:
        self._thread = threading.Thread(target=self._run, name="test-receiver", daemon=True)
        self._thread.start()
        if not self._ready.wait(10.0):
            raise AssertionError("the receiver did not start within 10 s")
        if self._error is not None:
            raise self._error
        return self.port

    def _run(self) -> None:
        loop = self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(self._app, handle_signals=False, access_log=None, shutdown_timeout=2.0)
        try:
            self.closing = asyncio.Event()
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self._ssl)
            loop.run_until_complete(site.start())
            self.port = int(runner.addresses[0][1])
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    def stop(self) -> None:
        loop, thread = self.loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return

        def _stop() -> None:
            assert self.closing is not None
            self.closing.set()
            loop.stop()

        loop.call_soon_threadsafe(_stop)
        thread.join(15.0)


async def _hang(server: _ServerThread, seconds: float) -> None:
    """Sleep ``seconds`` (past the client's timeout) or until the receiver stops."""
    assert server.closing is not None
    try:
        await asyncio.wait_for(server.closing.wait(), seconds)
    except TimeoutError:
        pass


def _b64url_decode(value: str) -> bytes:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# ---------------------------------------------------------------------------------------------
# Web Push


@dataclass(frozen=True)
class BrowserSubscription:
    """A PushSubscription as a browser makes it, with the private half only a browser knows."""

    id: str
    endpoint: str
    p256dh: str  # base64url uncompressed P-256 point
    auth: str  # base64url 16 bytes
    private_key: ec.EllipticCurvePrivateKey = field(repr=False)
    auth_secret: bytes = field(repr=False)
    application_server_key: str = ""  # the VAPID key it was subscribed with ("" any)

    def target(self) -> dict[str, str]:
        """``Delivery.target`` of the web_push channel."""
        return {"endpoint": self.endpoint, "p256dh": self.p256dh, "auth": self.auth}

    def to_json(self) -> dict[str, Any]:
        """The browser's ``PushSubscription.toJSON()``."""
        return {"endpoint": self.endpoint, "expirationTime": None, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


@dataclass(frozen=True)
class PushDelivery:
    subscription_id: str
    headers: dict[str, str]  # lower-case names
    body: bytes  # as received (encrypted)
    payload: Any  # the decrypted JSON (None if it could not be decrypted)
    vapid_claims: dict[str, Any]
    vapid_key: str  # the k= of the Authorization header
    vapid_error: str  # "" when the VAPID header is valid
    decrypt_error: str  # "" when the body decrypted to JSON
    status: int  # what the push service answered


def verify_vapid(authorization: str, *, audience: str, now: float | None = None,
                 expected_key: str = "") -> tuple[dict[str, Any], str, str]:
    """(claims, k, error) of a ``vapid t=<jwt>,k=<key>`` header (RFC 8292); error "" if valid."""
    now = time.time() if now is None else now
    m = re.fullmatch(r"vapid\s+(.+)", authorization.strip(), re.IGNORECASE)
    if m is None:
        return {}, "", "no vapid Authorization"
    params = dict(part.strip().split("=", 1) for part in m.group(1).split(",") if "=" in part)
    token, key = params.get("t", ""), params.get("k", "")
    try:
        head_b64, claims_b64, sig_b64 = token.split(".")
        head = json.loads(_b64url_decode(head_b64))
        claims = json.loads(_b64url_decode(claims_b64))
        sig = _b64url_decode(sig_b64)
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), _b64url_decode(key))
    except ValueError as exc:
        return {}, key, f"malformed: {exc}"
    if head.get("alg") != "ES256" or len(sig) != 64:
        return claims, key, "not ES256"
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    try:
        public.verify(der, f"{head_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return claims, key, "bad signature"
    if claims.get("aud") != audience:
        return claims, key, f"aud {claims.get('aud')!r} is not {audience!r}"
    exp = claims.get("exp")
    if not isinstance(exp, int) or exp <= now or exp > now + 24 * 3600:
        return claims, key, f"exp {exp!r} not within the next 24 h"
    if not isinstance(claims.get("sub"), str) or not re.match(r"(mailto:|https:)", claims["sub"]):
        return claims, key, "no sub"
    if expected_key and key != expected_key:
        return claims, key, "k is not the applicationServerKey of the subscription"
    return claims, key, ""


class PushService:
    """A local Web Push service (RFC 8030) that decrypts what it receives."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: dict[str, BrowserSubscription] = {}
        self._status: dict[str, int] = {}
        self._scripted: dict[str, deque[int]] = {}
        self.received: Recorder[PushDelivery] = Recorder("push service")
        app = web.Application()
        app.router.add_post("/push/{sid}", self._handle)
        self._server = _ServerThread(app)

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    def env(self) -> dict[str, str]:
        """What a gateway needs to deliver here (an http endpoint on loopback)."""
        return {"ARCHIPELAGO_NOTIFY_ALLOW_PRIVATE": "1"}

    def subscription(self, application_server_key: str = "", status: int = 201) -> BrowserSubscription:
        """A new subscription; its pushes are answered ``status`` (e.g. 410, 500) unless scripted."""
        key = ec.generate_private_key(ec.SECP256R1())
        point = key.public_key().public_bytes(serialization.Encoding.X962,
                                              serialization.PublicFormat.UncompressedPoint)
        secret = uuid.uuid4().bytes  # 16 random bytes, as a browser's auth secret
        sid = uuid.uuid4().hex
        sub = BrowserSubscription(id=sid, endpoint=f"{self.origin}/push/{sid}", p256dh=_b64url(point),
                                  auth=_b64url(secret), private_key=key, auth_secret=secret,
                                  application_server_key=application_server_key)
        with self._lock:
            self._subs[sid] = sub
            self._status[sid] = status
        return sub

    def set_status(self, sub: BrowserSubscription | str, status: int) -> None:
        """Answer every later push to ``sub`` with ``status``."""
        with self._lock:
            self._status[sub if isinstance(sub, str) else sub.id] = status

    def answer(self, sub: BrowserSubscription | str, *statuses: int) -> None:
        """Answer the next pushes to ``sub`` with these statuses, in order (then its status)."""
        with self._lock:
            self._scripted.setdefault(sub if isinstance(sub, str) else sub.id, deque()).extend(statuses)

    def wait_for(self, n: int, timeout: float = DEFAULT_WAIT_S, subscription: BrowserSubscription | None = None
                 ) -> list[PushDelivery]:
        return self.received.wait_for(n, timeout, None if subscription is None else
                                      (lambda d: d.subscription_id == subscription.id))

    def _next_status(self, sid: str) -> int:
        with self._lock:
            queue = self._scripted.get(sid)
            return queue.popleft() if queue else self._status.get(sid, 404)

    async def _handle(self, request: web.Request) -> web.Response:
        sid = request.match_info["sid"]
        body = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            sub = self._subs.get(sid)
        if sub is None:
            self.received.add(PushDelivery(sid, headers, body, None, {}, "", "", "unknown subscription", 404))
            return web.Response(status=404)
        claims, key, vapid_error = verify_vapid(headers.get("authorization", ""), audience=self.origin,
                                                expected_key=sub.application_server_key)
        payload: Any = None
        decrypt_error = ""
        if headers.get("content-encoding") != "aes128gcm":
            decrypt_error = f"content-encoding {headers.get('content-encoding')!r}"
        else:
            try:
                plain = http_ece.decrypt(body, private_key=sub.private_key, auth_secret=sub.auth_secret,
                                         version="aes128gcm")
                payload = json.loads(plain)
            except Exception as exc:  # anything wrong with the body: recorded, answered 400
                decrypt_error = f"{type(exc).__name__}: {exc}"
        if vapid_error:
            status = 403
        elif decrypt_error:
            status = 400
        else:
            status = self._next_status(sid)
        self.received.add(PushDelivery(sid, headers, body, payload, claims, key, vapid_error, decrypt_error,
                                       status))
        extra = {"Location": f"{self.origin}/message/{uuid.uuid4().hex}"} if status == 201 else {}
        return web.Response(status=status, headers=extra)


# ---------------------------------------------------------------------------------------------
# Webhooks


def verify_signature(secret: str, header: str, raw: bytes, *, now: float | None = None,
                     tolerance_s: float = 300.0) -> str:
    """The documented recipe (notify.proto): ``t=<unix s>,v1=<hex HMAC-SHA256(secret, "<t>." + raw
    body)>``, ``t`` within ``tolerance_s`` of the clock. Returns "" if valid, else why not."""
    now = time.time() if now is None else now
    parts = [p.split("=", 1) for p in header.split(",") if "=" in p]
    ts = [v for k, v in parts if k.strip() == "t"]
    sigs = [v.strip() for k, v in parts if k.strip() == "v1"]
    if len(ts) != 1 or not ts[0].strip().isdigit() or not sigs:
        return "malformed signature header"
    t = int(ts[0])
    expected = hmac.new(secret.encode(), ts[0].strip().encode() + b"." + raw, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, s) for s in sigs):
        return "signature mismatch"
    if abs(now - t) > tolerance_s:
        return f"stale timestamp ({now - t:+.0f} s)"
    return ""


@dataclass(frozen=True)
class Redirect:
    """A scripted answer: 3xx with a Location."""

    location: str
    status: int = 302


Answer = int | str | Redirect  # a status, HANG or a Redirect


@dataclass(frozen=True)
class WebhookDelivery:
    name: str  # the hook's name: the last part of its URL's path
    delivery_id: str  # Archipelago-Delivery
    headers: dict[str, str]  # lower-case names
    raw: bytes
    body: Any  # parsed JSON (None if not JSON)
    signature: str  # Archipelago-Signature as received
    signature_ok: bool | None  # None: no secret known to check it with
    signature_error: str
    answered: int | str  # the status, or HANG
    at: float  # time.time() of arrival

    def verify(self, secret: str, *, now: float | None = None, tolerance_s: float = 300.0) -> str:
        """``verify_signature`` of this delivery ("" valid), e.g. once the secret is known."""
        return verify_signature(secret, self.signature, self.raw, now=self.at if now is None else now,
                                tolerance_s=tolerance_s)


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate (its own CA) for 127.0.0.1 and localhost: (cert PEM, key PEM)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "archipelago test receiver")])
    now = datetime.datetime.now(datetime.UTC)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                    x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "ca.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class WebhookReceiver:
    """A local HTTPS webhook receiver. Hooks are named: ``url("alice")`` is ``https://127.0.0.1:<port>
    /hook/alice``; each may have its own secret (``set_secret``) and scripted answers (``answer``)."""

    def __init__(self, secret: str = "", *, tolerance_s: float = 300.0, hang_s: float = 30.0,
                 default_status: int = 200, reject_invalid: bool = True) -> None:
        self.secret = secret  # for hooks without their own
        self.tolerance_s = tolerance_s
        self.hang_s = hang_s
        self.default_status = default_status
        self.reject_invalid = reject_invalid  # answer 401 to a delivery whose signature is checked and bad
        self._lock = threading.Lock()
        self._secrets: dict[str, str] = {}
        self._scripted: dict[str, deque[Answer]] = {}
        self.received: Recorder[WebhookDelivery] = Recorder("webhook receiver")
        self._dir = Path(tempfile.mkdtemp(prefix="arch-hook-"))
        cert, key = make_certificate(self._dir)
        self.ca_file = str(cert)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        app = web.Application()
        app.router.add_route("*", "/hook/{name}", self._handle)
        self._server = _ServerThread(app, ctx)

    def __enter__(self) -> Self:
        try:
            self._server.start()
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.stop()
        shutil.rmtree(self._dir, ignore_errors=True)

    @property
    def port(self) -> int:
        return self._server.port

    def url(self, name: str = "hook") -> str:
        return f"https://127.0.0.1:{self.port}/hook/{name}"

    def localhost_url(self, name: str = "hook") -> str:
        """The same hook by a host name (``localhost``) rather than a literal address."""
        return f"https://localhost:{self.port}/hook/{name}"

    def env(self) -> dict[str, str]:
        """What a gateway needs to deliver here: trust this certificate, allow loopback."""
        return {"ARCHIPELAGO_NOTIFY_CA_FILE": self.ca_file, "ARCHIPELAGO_NOTIFY_ALLOW_PRIVATE": "1"}

    def set_secret(self, name: str, secret: str) -> None:
        with self._lock:
            self._secrets[name] = secret

    def answer(self, name: str, *answers: Answer) -> None:
        """Answer the next deliveries to hook ``name`` so, in order: a status, ``HANG`` (no answer for
        ``hang_s`` seconds) or a ``Redirect``; then ``default_status``."""
        with self._lock:
            self._scripted.setdefault(name, deque()).extend(answers)

    def wait_for(self, n: int, timeout: float = DEFAULT_WAIT_S, name: str | None = None) -> list[WebhookDelivery]:
        return self.received.wait_for(n, timeout, None if name is None else (lambda d: d.name == name))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        raw = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            secret = self._secrets.get(name, self.secret)
            queue = self._scripted.get(name)
            scripted: Answer = queue.popleft() if queue else self.default_status
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        header = headers.get("archipelago-signature", "")
        error = verify_signature(secret, header, raw, tolerance_s=self.tolerance_s) if secret else ""
        ok = (error == "") if secret else None
        if request.method != "POST":
            scripted = 405
        elif ok is False and self.reject_invalid:
            scripted = 401
        answered: int | str = scripted if isinstance(scripted, int | str) else scripted.status
        self.received.add(WebhookDelivery(name, headers.get("archipelago-delivery", ""), headers, raw, body,
                                          header, ok, error, answered, time.time()))
        if scripted == HANG:
            await _hang(self._server, self.hang_s)
            return web.Response(status=200)
        if isinstance(scripted, Redirect):
            return web.Response(status=scripted.status, headers={"Location": scripted.location})
        assert isinstance(scripted, int)
        return web.Response(status=scripted)


# ---------------------------------------------------------------------------------------------
# SMTP


@dataclass(frozen=True)
class ReceivedMail:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage
    raw: bytes
    answered: str  # the SMTP reply to DATA

    def text(self) -> str:
        """The text/plain part, decoded."""
        part = self.message.get_body(preferencelist=("plain",))
        assert isinstance(part, EmailMessage), "the mail has no text/plain part"
        return str(part.get_content())

    def html(self) -> str:
        part = self.message.get_body(preferencelist=("html",))
        assert isinstance(part, EmailMessage), "the mail has no text/html part"
        return str(part.get_content())


class _FreePortController(Controller):
    """aiosmtpd's Controller on port 0: the bound port is read back before its self-test connects."""

    def _trigger_server(self) -> None:
        assert isinstance(self.server, asyncio.Server)
        self.port = int(self.server.sockets[0].getsockname()[1])
        super()._trigger_server()  # type: ignore[no-untyped-call]  # (aiosmtpd's Controller: untyped)


class SmtpServer:
    """A local SMTP server (aiosmtpd, no TLS, no AUTH) recording every mail."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripted: deque[str] = deque()
        self.received: Recorder[ReceivedMail] = Recorder("smtp server")
        self._controller = _FreePortController(self, hostname="127.0.0.1", port=0)
        self.host = "127.0.0.1"

    def __enter__(self) -> Self:
        self._controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._controller.stop()

    @property
    def port(self) -> int:
        return int(self._controller.port)

    def env(self) -> dict[str, str]:
        """What a gateway needs to send its mail here (plain SMTP, no STARTTLS)."""
        return {"ARCHIPELAGO_SMTP_HOST": self.host, "ARCHIPELAGO_SMTP_PORT": str(self.port),
                "ARCHIPELAGO_SMTP_STARTTLS": "0"}

    def answer(self, *replies: str) -> None:
        """Reply to the next mails' DATA so, in order (e.g. "451 4.3.0 try later", "550 5.1.1 no such
        user"); then "250 OK". A refused mail is recorded all the same."""
        with self._lock:
            self._scripted.extend(replies)

    def wait_for(self, n: int, timeout: float = DEFAULT_WAIT_S, to: str | None = None) -> list[ReceivedMail]:
        return self.received.wait_for(n, timeout, None if to is None else (lambda m: to in m.rcpt_tos))

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or (envelope.content if isinstance(envelope.content, bytes) else b"")
        with self._lock:
            reply = self._scripted.popleft() if self._scripted else "250 OK"
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.received.add(ReceivedMail(str(envelope.mail_from), list(envelope.rcpt_tos), message, raw, reply))
        return reply


# ---------------------------------------------------------------------------------------------
# Fixtures (import them into a test module or conftest to use them)


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with PushService() as push:
        yield push


@pytest.fixture
def webhook_receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def smtp_server() -> Iterator[SmtpServer]:
    with SmtpServer() as smtp:
        yield smtp
