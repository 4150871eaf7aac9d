"""Users' sign-in passwords, kept as scrypt hashes (the standard library's ``hashlib.scrypt``).

A hash reads ``scrypt$<n>$<r>$<p>$<salt>$<key>`` (salt and key URL-safe base64), so the cost can rise
later without breaking stored ones. :func:`verify` compares in constant time and costs the same for
a user with no password (or none at all) as for a wrong password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from .store import StoreError

N, R, P = 2**14, 8, 1
"""scrypt's cost: 16 MiB and ~50 ms a hash (the interactive-login figures of the scrypt paper)."""
MIN_LENGTH = 8
MAX_LENGTH = 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _key(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=256 * 1024 * 1024, dklen=32)


def check(password: str) -> str:
    """The password if it is acceptable, else StoreError naming the rule."""
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        raise StoreError(f"a password is {MIN_LENGTH}-{MAX_LENGTH} characters")
    return password


def make(password: str) -> str:
    salt = secrets.token_bytes(16)
    return f"scrypt${N}${R}${P}${_b64(salt)}${_b64(_key(check(password), salt, N, R, P))}"


_DUMMY = make("not-a-password-of-anyone")


def verify(password: str, stored: str | None) -> bool:
    """Whether ``password`` matches ``stored`` (None: no password set; still costs one hash)."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        kind, n, r, p, salt, key = (stored or _DUMMY).split("$")
        if kind != "scrypt":
            return False
        found = _key(password, _unb64(salt), int(n), int(r), int(p))
    except ValueError:
        return False
    return stored is not None and hmac.compare_digest(found, _unb64(key))
