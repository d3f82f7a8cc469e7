"""Read a case file: YAML with line numbers, ``${VAR}`` expansion, strict validation.

Every problem is a one-line :class:`~agentverity_props.errors.BadInput` naming the file,
the place (``cases[2].required_tools``) and its line. ``${NAME}`` is expanded anywhere in a
string (revefi-agent-test only expands whole values); ``${prompt}`` is left for the HTTP
body template and ``$${`` writes a literal ``${``. An unset or empty variable is a
configuration error whose message names the variable and never a value. Every expanded
value is remembered as a secret and redacted from all output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._internal.jsonpath import format_path
from .._internal.schema_errors import schema_error
from .._internal.yaml import YamlDocument, parse_yaml, read_yaml
from ..errors import BadInput
from ._model import Case, SuiteConfig, ToolsSuite

__all__ = ["LoadedSuite", "expand_env", "load_suite", "parse_suite"]

_VAR = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RESERVED = frozenset({"prompt"})
_SENSITIVE = re.compile(r"auth|api[-_]?key|token|secret|password|cookie", re.I)
#: a ``${NAME}`` whose name says it holds a secret
_SECRET_NAME = re.compile(r"auth|key|token|secret|passw|pwd|cookie|credential|session|"
                          r"signature|private|cert", re.I)
#: text right before a ``${NAME}`` that makes its value a secret whatever the name: a
#: ``token=``-style query or header value, or a URL's password (``//user:${PW}@``)
_SECRET_CONTEXT = re.compile(r"(?:(?:auth|key|token|secret|passw|pwd|sig|signature)"
                             r"[A-Za-z0-9_-]*\s*[=:]\s*(?:bearer\s+|basic\s+)?|bearer\s+|"
                             r"basic\s+)$", re.I)
_URL_PASSWORD = re.compile(r"//[^/@\s]*:$")


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite plus the strings that must never be printed."""

    suite: ToolsSuite
    secrets: frozenset[str]
    path: str




def expand_env(data: Any, *, env: Mapping[str, str] | None = None,
               loc: tuple[Any, ...] = ()) -> tuple[Any, set[str]]:
    """Expand ``${NAME}`` in every string of ``data``; returns (expanded, secret values).

    A value is a secret (redacted wherever it would be printed or stored) when the variable's
    name says so (``AGENT_API_KEY``, ``DB_PASSWORD``, ``SESSION_TOKEN``), when the key it
    sits under does (``api_key:``, ``headers: {X-Auth-Token: ...}``) or when the text right
    before it does (``?token=${T}``, ``Bearer ${T}``, ``https://user:${PW}@host``); any other
    value (a URL, a port, a team name) is configuration and printed as it is.

    >>> _, secrets = expand_env({"url": "${AGENT_URL}", "api_key": "${K}",
    ...                          "h": "Bearer ${TOK}", "q": "http://x/?sig=${S}"},
    ...                         env={"AGENT_URL": "http://127.0.0.1:8080/ask", "K": "k-123456",
    ...                              "TOK": "t-123456", "S": "s-123456"})
    >>> sorted(secrets)
    ['k-123456', 's-123456', 't-123456']
    """
    env = os.environ if env is None else env
    secrets: set[str] = set()

    def sub(text: str, here: tuple[Any, ...]) -> str:
        def repl(m: re.Match[str]) -> str:
            name = m.group(1)
            if name is None:  # "$${" escape
                return "${"
            if name in _RESERVED:
                return m.group(0)
            value = env.get(name)
            if not value:
                state = "is empty" if value == "" else "is not set"
                raise BadInput(f"{format_path(here)} references ${{{name}}} but environment "
                               f"variable {name} {state}",
                               f"export {name} before running (its value is never printed)")
            key = next((str(k) for k in reversed(here) if isinstance(k, str)), "")
            before = text[max(0, m.start() - 48):m.start()]
            if (_SECRET_NAME.search(name) or _SENSITIVE.search(key)
                    or _SECRET_CONTEXT.search(before)
                    or (_URL_PASSWORD.search(before)
                        and re.match(r"[^/\s]*@", text[m.end():]))):
                secrets.add(value)
            return value
        return _VAR.sub(repl, text)

    def walk(node: Any, here: tuple[Any, ...]) -> Any:
        if isinstance(node, str):
            return sub(node, here)
        if isinstance(node, dict):
            return {k: walk(v, (*here, k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, (*here, i)) for i, v in enumerate(node)]
        return node

    return walk(data, loc), secrets


def parse_suite(text: str, *, path: str = "<string>",
                env: Mapping[str, str] | None = None) -> LoadedSuite:
    """Parse and validate case-file text (see :func:`load_suite`)."""
    return _suite(parse_yaml(text, source=path), env)


def _suite(doc: YamlDocument, env: Mapping[str, str] | None) -> LoadedSuite:
    from pydantic import ValidationError

    data, secrets = expand_env(doc.require_mapping(
        "case file", "start with config: and cases: (see docs/tools.md)"), env=env)
    try:
        suite = ToolsSuite.model_validate(data)
    except ValidationError as exc:
        from ..adapters import redact
        err = schema_error(exc, YamlDocument(doc.source, data, doc.root, doc.style), ToolsSuite,
                           fix="fix the case file (schema: docs/schemas/tools-cases.schema.json)")
        raise BadInput(redact(err.problem, secrets), redact(err.fix or "", secrets)) from None
    # literal keys and sensitive headers are secrets too, expanded or not
    holders: list[SuiteConfig | Case] = [suite.config, *suite.cases]
    for holder in holders:
        key = holder.api_key
        if key:
            secrets.add(key)
        for name, value in holder.headers.items():
            if _SENSITIVE.search(name) and value:
                secrets.add(value)
    return LoadedSuite(suite=suite, secrets=frozenset(secrets), path=doc.source)


def load_suite(path: str | os.PathLike[str], *,
               env: Mapping[str, str] | None = None) -> LoadedSuite:
    """Read, expand and validate the case file at ``path``.

    Raises:
        BadInput: unreadable file, malformed YAML (with its line), an unset variable, or
            a schema violation (with its place and line).
    """
    return _suite(read_yaml(path, what="case file"), env)
