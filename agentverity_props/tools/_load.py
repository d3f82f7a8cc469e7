"""Read a case file: YAML with line numbers, ``${VAR}`` expansion, strict validation.

Every problem is a one-line :class:`~agentverity_props.errors.BadInput` naming the file,
the place (``cases[2].required_tools``) and its line. ``${NAME}`` is expanded anywhere in a
string (revefi-agent-test only expands whole values); ``${prompt}`` is left for the HTTP
body template and ``$${`` writes a literal ``${``. An unset or empty variable is a
configuration error whose message names the variable and never a value. Every expanded
value is remembered as a secret and redacted from all output.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.yamlpos import line_of as _line_of
from .._internal.yamlpos import parse_yaml
from .._internal.yamlpos import where as _where
from ..errors import BadInput
from ._model import Case, SuiteConfig, ToolsSuite

__all__ = ["LoadedSuite", "expand_env", "load_suite", "parse_suite"]

_VAR = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RESERVED = frozenset({"prompt"})
_SENSITIVE = re.compile(r"auth|api[-_]?key|token|secret|password|cookie", re.I)


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite plus the strings that must never be printed."""

    suite: ToolsSuite
    secrets: frozenset[str]
    path: str




def expand_env(data: Any, *, env: Mapping[str, str] | None = None,
               loc: tuple[Any, ...] = ()) -> tuple[Any, set[str]]:
    """Expand ``${NAME}`` in every string of ``data``; returns (expanded, secret values)."""
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
                raise BadInput(f"{_where(here)} references ${{{name}}} but environment "
                               f"variable {name} {state}",
                               f"export {name} before running (its value is never printed)")
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




def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    from ._model import ArgPredicate
    parent = [p for p in loc[:-1] if not isinstance(p, int)]
    if not parent:
        model: Any = ToolsSuite
    elif parent[-1] == "config":
        model = SuiteConfig
    elif parent[-1] == "cases":
        model = Case
    elif parent[-1] == "tool_args":
        model = ArgPredicate
    else:
        return []
    return sorted(model.model_fields)


def _describe(err: Mapping[str, Any], root: Any, path: str) -> str:
    loc = tuple(err.get("loc", ()))
    # pydantic adds the union member ("str", "list[str]") to the location: drop it
    loc = tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or p in
                                                                ("str", "int", "float"))))
    line = _line_of(root, loc)
    at = f"{path}:{line}" if line else path
    if err.get("type") == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        allowed = _allowed_keys(loc)
        hint = difflib.get_close_matches(key, allowed, n=1)
        sugg = f"; did you mean {hint[0]!r}?" if hint else ""
        return (f"{at}: unknown key {key!r} in {_where(loc[:-1])}{sugg} "
                f"(allowed: {', '.join(allowed)})")
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{at}: {_where(loc)}: {msg}"


def parse_suite(text: str, *, path: str = "<string>",
                env: Mapping[str, str] | None = None) -> LoadedSuite:
    """Parse and validate case-file text (see :func:`load_suite`)."""
    from pydantic import ValidationError

    root, data = parse_yaml(text, path)
    if data is None:
        raise BadInput(f"{path}: the case file is empty", "add config: and cases:")
    if not isinstance(data, dict):
        raise BadInput(f"{path}: the top level must be a mapping with config: and cases:, "
                       f"got {type(data).__name__}", "see docs/tools.md")
    data, secrets = expand_env(data, env=env)
    try:
        suite = ToolsSuite.model_validate(data)
    except ValidationError as exc:
        errs = exc.errors()
        first = "; ".join(_describe(e, root, path) for e in errs[:3])
        more = f" (and {len(errs) - 3} more)" if len(errs) > 3 else ""
        from ..adapters import redact
        raise BadInput(redact(first + more, secrets), "fix the case file (schema: docs/schemas/"
                                     "tools-cases.schema.json)") from None
    # literal keys and sensitive headers are secrets too, expanded or not
    holders: list[SuiteConfig | Case] = [suite.config, *suite.cases]
    for holder in holders:
        key = holder.api_key
        if key:
            secrets.add(key)
        for name, value in holder.headers.items():
            if _SENSITIVE.search(name) and value:
                secrets.add(value)
    return LoadedSuite(suite=suite, secrets=frozenset(secrets), path=path)


def load_suite(path: str | os.PathLike[str], *,
               env: Mapping[str, str] | None = None) -> LoadedSuite:
    """Read, expand and validate the case file at ``path``.

    Raises:
        BadInput: unreadable file, malformed YAML (with its line), an unset variable, or
            a schema violation (with its place and line).
    """
    p = Path(path)
    try:
        from .._internal.inputs import check_yaml_size
        check_yaml_size(p, p.stat().st_size, what="case file")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"case file {str(p)!r} not found", "check the --config path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read case file {str(p)!r}: {type(exc).__name__}",
                       "check the file's permissions and encoding (UTF-8)") from None
    return parse_suite(text, path=str(p), env=env)
