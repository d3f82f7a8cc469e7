"""Input fingerprints: how reports and stores identify a prompt without keeping it.

SHA-256 of the UTF-8 text by default; HMAC-SHA-256 keyed with ``AGENTVERITY_PROPS_SALT``
when that variable is set, so a fingerprint cannot be reversed by hashing guessed prompts.
"""

from __future__ import annotations

import hashlib
import hmac
import os

SALT_ENV = "AGENTVERITY_PROPS_SALT"


def salt_from_env() -> bytes | None:
    value = os.environ.get(SALT_ENV)
    return value.encode("utf-8") if value else None


def fingerprint(text: str, salt: bytes | None = None) -> str:
    """``sha256:<hex>`` (or ``hmac-sha256:<hex>`` with a salt) of ``text``.

    >>> fingerprint("hi")[:18]
    'sha256:8f434346648'
    """
    data = text.encode("utf-8", "surrogatepass")
    if salt:
        return "hmac-sha256:" + hmac.new(salt, data, hashlib.sha256).hexdigest()
    return "sha256:" + hashlib.sha256(data).hexdigest()


def short(fp: str, n: int = 12) -> str:
    """A short display form of a fingerprint."""
    return fp.split(":", 1)[-1][:n]
