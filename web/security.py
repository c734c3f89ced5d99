"""The admin PIN and protection against cross-site request forgery.

PIN: only a salted PBKDF2-SHA256 hash is kept (never the PIN, never in a page); comparison is
constant-time; after ``max_failures`` wrong PINs in a row from one client that client's PIN
checks are refused for ``lockout_s`` seconds, doubling with each further lockout (so a PIN
cannot be guessed by trying, and one client cannot lock out another: see :class:`PinGuard`).
A change is authorised by the PIN itself (``X-Admin-PIN`` header) or by an *admin session*:
a correct PIN opens one for ``ttl_s`` seconds, remembered server-side under a random id in the
signed session cookie, so locking (or changing the PIN) ends it at once and an old cookie
cannot revive it.

CSRF: every state-changing request (POST/PUT/PATCH/DELETE) must carry the session's CSRF token
in ``X-CSRF-Token`` (the page reads it from a meta tag), and when the browser sends ``Origin``
or ``Referer`` it must be this server's own origin.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from functools import wraps
from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask import current_app, g, request, session

from web.errors import ApiError

PIN_HEADER = "X-Admin-PIN"
CSRF_HEADER = "X-CSRF-Token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
F = TypeVar("F")


class PinError(ValueError):
    """A PIN that is not acceptable as the table's admin PIN."""


def _possible_pin(pin: Any) -> bool:
    """The PIN format; a lone surrogate (not UTF-8 encodable) is not printable, so it fails."""
    return isinstance(pin, str) and 4 <= len(pin) <= 64 and pin.isprintable() and pin == pin.strip()


def check_pin_format(pin: Any) -> str:
    """4 to 64 printable characters (digits are fine; a passphrase is better)."""
    if not _possible_pin(pin):
        raise PinError("the admin PIN must be 4 to 64 printable characters, without surrounding spaces")
    return pin


def random_pin() -> str:
    """A fresh default PIN: 8 random digits (10^8 candidates; with the per-client back-off one
    address gets a few dozen guesses a day)."""
    return f"{secrets.randbelow(10**8):08d}"


@dataclass
class _Client:
    """One client's wrong-PIN record: failures in a row, checks in flight, lockouts so far."""

    failures: int = 0
    in_flight: int = 0
    strikes: int = 0
    locked_until: float = 0.0
    last_failure: float = 0.0


class PinGuard:
    """The table's admin PIN (as a salted hash), wrong-PIN throttling and admin sessions.

    Throttling is per client (its address): after ``max_failures`` wrong PINs in a row that
    client's PIN checks are refused for ``lockout_s``, doubling with each further lockout up to
    ``max_lockout_s``; a correct PIN, or ``max_lockout_s`` without a wrong one, forgets it. Other
    clients are not affected, so nobody can lock the table's own admin out. A check reserves its
    place under the lock before the (slow) hash is computed, so concurrent requests cannot get
    more than ``max_failures`` PINs checked between lockouts.
    """

    def __init__(
        self,
        pin: str,
        iterations: int = 200_000,
        max_failures: int = 5,
        lockout_s: float = 30.0,
        ttl_s: float = 600.0,
        max_lockout_s: float = 3600.0,
        max_clients: int = 10_000,
    ) -> None:
        self.iterations = iterations
        self.max_failures = max_failures
        self.lockout_s = lockout_s
        self.max_lockout_s = max(max_lockout_s, lockout_s)
        self.max_clients = max_clients
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._clients: dict[str, _Client] = {}
        self._sessions: dict[str, float] = {}
        self._salt, self._hash = self._derive(check_pin_format(pin))

    def _derive(self, pin: str, salt: bytes | None = None) -> tuple[bytes, bytes]:
        salt = salt if salt is not None else secrets.token_bytes(16)
        return salt, hashlib.pbkdf2_hmac("sha256", pin.encode("utf-8"), salt, self.iterations)

    def retry_after(self, client: str) -> float:
        """Seconds until ``client``'s PINs are checked again (0 when it is not locked out)."""
        with self._lock:
            rec = self._clients.get(client)
            return max(0.0, rec.locked_until - time.monotonic()) if rec is not None else 0.0

    def _client(self, client: str, now: float) -> _Client:
        """``client``'s record (created on first use; forgotten after a quiet ``max_lockout_s``)."""
        rec = self._clients.get(client)
        if rec is not None and rec.in_flight == 0 and now - rec.last_failure > self.max_lockout_s:
            rec = None  # quiet for long enough: back-off starts again
        if rec is None:
            if len(self._clients) >= self.max_clients:
                self._forget_idle(now)
            rec = self._clients[client] = _Client()
        return rec

    def _forget_idle(self, now: float) -> None:
        """Drop records that no longer hold anything back (bounded memory under many clients)."""
        self._clients = {
            k: r
            for k, r in self._clients.items()
            if r.in_flight or r.locked_until > now or now - r.last_failure <= self.max_lockout_s
        }

    def check(self, pin: str, client: str = "") -> bool:
        """Whether ``pin`` is the admin PIN; raises :class:`ApiError` 429 while ``client`` is
        locked out (or already has ``max_failures`` checks in flight)."""
        now = time.monotonic()
        with self._lock:
            rec = self._client(client, now)
            wait = rec.locked_until - now
            if wait <= 0 and rec.failures + rec.in_flight >= self.max_failures:
                wait = self.lockout_s  # checks in flight will decide; refuse more meanwhile
            if wait > 0:
                raise ApiError(
                    429,
                    f"too many wrong PINs from this client: try again in {wait:.0f} s",
                    headers={"Retry-After": str(int(wait) + 1)},
                )
            rec.in_flight += 1
        ok = False
        try:
            # A string that is not a possible PIN (e.g. a lone surrogate) is simply wrong.
            if _possible_pin(pin):
                _, digest = self._derive(pin, self._salt)
                ok = hmac.compare_digest(digest, self._hash)
        finally:
            with self._lock:
                rec.in_flight -= 1
                if ok:
                    rec.failures = rec.strikes = 0
                    rec.locked_until = 0.0
                else:
                    rec.failures += 1
                    rec.last_failure = time.monotonic()
                    if rec.failures >= self.max_failures:
                        rec.failures = 0
                        rec.strikes += 1
                        hold = min(self.max_lockout_s, self.lockout_s * 2 ** (rec.strikes - 1))
                        rec.locked_until = rec.last_failure + hold
        return ok

    def change(self, new_pin: str) -> None:
        """Set a new PIN; every admin session ends."""
        salt, digest = self._derive(check_pin_format(new_pin))
        with self._lock:
            self._salt, self._hash = salt, digest
            self._sessions.clear()

    def open_session(self) -> tuple[str, float] | None:
        """A new admin session id and its expiry (wall clock), or None when sessions are off."""
        if self.ttl_s <= 0:
            return None
        sid = secrets.token_urlsafe(24)
        with self._lock:
            now = time.time()
            self._sessions = {k: t for k, t in self._sessions.items() if t > now}
            self._sessions[sid] = now + self.ttl_s
        return sid, now + self.ttl_s

    def session_until(self, sid: Any) -> float | None:
        """When the admin session ``sid`` ends, or None if it is not open."""
        if not isinstance(sid, str):
            return None
        with self._lock:
            until = self._sessions.get(sid)
        return until if until is not None and until > time.time() else None

    def close_session(self, sid: Any) -> None:
        with self._lock:
            if isinstance(sid, str):
                self._sessions.pop(sid, None)


def guard() -> PinGuard:
    return current_app.extensions["gizmos_pin"]


def client_id() -> str:
    """Who is trying PINs: the peer address (the dashboard has no trusted proxy, so
    ``X-Forwarded-For`` would be the attacker's choice and is ignored)."""
    return request.remote_addr or ""


def csrf_token() -> str:
    """This session's CSRF token (created on first use)."""
    token = session.get("csrf")
    if not isinstance(token, str):
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def _same_origin(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme == request.scheme and parts.netloc == request.host


def check_csrf() -> None:
    """Refuse a state-changing request that another site could have forged (403)."""
    if request.method not in UNSAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if origin is not None and not _same_origin(origin):
        raise ApiError(403, f"forged request refused: Origin {origin!r} is not this server")
    referer = request.headers.get("Referer")
    if origin is None and referer is not None and not _same_origin(referer):
        raise ApiError(403, "forged request refused: it comes from another site's page")
    expected = session.get("csrf")
    supplied = request.headers.get(CSRF_HEADER) or request.form.get("csrf_token")
    if not isinstance(expected, str) or not supplied:
        raise ApiError(
            403,
            f"forged request refused: missing CSRF token (send the {CSRF_HEADER} header "
            "from GET /api/session with the same session cookie)",
        )
    if not hmac.compare_digest(expected.encode(), supplied.encode()):
        raise ApiError(403, "forged request refused: the CSRF token does not match this session")


def admin_state() -> dict[str, Any]:
    """Whether this browser holds an open admin session, and until when."""
    until = guard().session_until(session.get("admin"))
    return {"admin": until is not None, "admin_until": until}


def unlock(pin: Any) -> dict[str, Any]:
    """Check a PIN and open an admin session for this browser."""
    if not isinstance(pin, str) or not pin:
        raise ApiError(401, "admin PIN required", headers={"WWW-Authenticate": PIN_HEADER})
    pg = guard()
    if not pg.check(pin, client_id()):
        raise ApiError(403, "wrong admin PIN")
    opened = pg.open_session()
    if opened is not None:
        session["admin"] = opened[0]
    return admin_state()


def require_admin(view: F) -> F:
    """The view changes the game or the settings: it needs the PIN or an open admin session."""

    @wraps(view)  # type: ignore[arg-type]
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        pin = request.headers.get(PIN_HEADER)
        if pin is not None:
            unlock(pin)
        elif admin_state()["admin"] is False:
            raise ApiError(
                401,
                f"admin PIN required: send it in the {PIN_HEADER} header, "
                "or unlock with POST /api/session/unlock",
                headers={"WWW-Authenticate": PIN_HEADER},
            )
        g.who = "admin"
        return view(*args, **kwargs)  # type: ignore[operator]

    wrapped.needs_admin = True  # type: ignore[attr-defined]  # the OpenAPI document reads it
    return wrapped  # type: ignore[return-value]
