"""Cache-busting nonces: a fresh value on every agent call.

A response cache keyed on the request (an LLM gateway, a framework cache) answers a repeat
of a prompt from the stored answer, so the draws of one input are no longer independent and
every error rate the tool states is void (docs/statistics.md §2b). A nonce that changes on
every call — in a header, a JSON field such as ``seed``, or a keyword of a callable — makes
every request distinct, so such a cache never hits. Values come from :mod:`secrets`, never
from a seeded generator: two runs must not send the same nonce either.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidArgument

#: Nonces are integers in [0, NONCE_LIMIT): valid as an OpenAI-style ``seed`` everywhere.
NONCE_LIMIT = 2 ** 31


def fresh_nonce() -> int:
    """A new nonce for one call."""
    return secrets.randbelow(NONCE_LIMIT)


def nonce_field_parts(path: str, *, where: str) -> tuple[str, ...]:
    """``path`` (``seed``, ``metadata.nonce``) as keys of nested JSON objects; an
    InvalidArgument naming ``where`` when it is not one."""
    if not isinstance(path, str) or not path or any(not p for p in path.split(".")):
        raise InvalidArgument(f"{where}: nonce_field must be a dotted path of JSON object "
                              f"keys such as 'seed' or 'metadata.nonce', got {path!r}")
    return tuple(path.split("."))


def with_nonce(body: Any, parts: tuple[str, ...], nonce: int) -> Any:
    """A copy of the JSON ``body`` with ``nonce`` at ``parts`` (objects made on the way;
    the body itself is never changed).

    >>> with_nonce({"model": "m", "metadata": {"a": 1}}, ("metadata", "nonce"), 7)
    {'model': 'm', 'metadata': {'a': 1, 'nonce': 7}}
    """
    if not parts:
        return nonce
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise InvalidArgument(f"nonce_field: {'.'.join(parts)!r} needs a JSON object at "
                              f"that place of the body, found {type(body).__name__}")
    out = dict(body)
    out[parts[0]] = with_nonce(out.get(parts[0]), parts[1:], nonce)
    return out
