"""Reading probe sets from files: one prompt per line (.txt), JSON lists, JSONL, YAML lists."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import BadInput, InvalidArgument
from .files import bounded_int, read_file_bytes


def read_text_file(path: str | Path, *, what: str = "inputs file") -> str:
    """UTF-8 text of ``path`` or a one-line BadInput naming the problem and the fix."""
    p = Path(path)
    raw = read_file_bytes(p, what=what)
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise BadInput(f"{what} {p} is binary, not text (a NUL byte at byte {nul})",
                       "pass a UTF-8 text file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} {p} is not UTF-8 (byte {exc.start})",
                       "re-save it as UTF-8") from None
    return text


def load_inputs(path: str | Path) -> list[str]:
    """Prompts from ``path``.

    - ``.json``: a list of strings (or of objects with ``input``/``prompt``);
    - ``.jsonl``: one JSON string or object per line;
    - ``.yaml``/``.yml``: a list of strings, or ``{inputs: [...]}``;
    - anything else: one prompt per non-blank line (lines starting with ``#`` are comments).

    Empty files and duplicate prompts are errors: a duplicate would silently weight one
    input twice in every estimate.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    items: list[Any]
    if suffix in (".yaml", ".yml"):
        from .yaml import read_yaml
        items = _list_of_prompts(p, read_yaml(p, what="inputs file").data, "YAML",
                                 "use a list of prompts, or inputs: [...]")
        return _prompts(p, items)
    text = read_text_file(p)
    if suffix == ".json":
        try:
            data = json.loads(text, parse_int=bounded_int)
        except json.JSONDecodeError as exc:
            raise BadInput(f"inputs file {p} is not valid JSON (line {exc.lineno}: {exc.msg})",
                           "fix the JSON or use one prompt per line in a .txt file") from None
        except (ValueError, RecursionError) as exc:
            raise BadInput(f"inputs file {p} is not usable JSON ({_why(exc)})",
                           "fix the JSON or use one prompt per line in a .txt file") from None
        items = _list_of_prompts(p, data, "JSON", 'use a list of prompts: ["...", "..."]')
    elif suffix == ".jsonl":
        items = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line, parse_int=bounded_int))
            except json.JSONDecodeError as exc:
                raise BadInput(f"inputs file {p} line {n} is not valid JSON ({exc.msg})",
                               "one JSON string or object per line") from None
            except (ValueError, RecursionError) as exc:
                raise BadInput(f"inputs file {p} line {n} is not usable JSON ({_why(exc)})",
                               "one JSON string or object per line") from None
    else:
        items = [ln.strip() for ln in text.splitlines()
                 if ln.strip() and not ln.lstrip().startswith("#")]
    return _prompts(p, items)


def _why(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def _list_of_prompts(p: Path, data: Any, fmt: str, fix: str) -> list[Any]:
    """A JSON/YAML document's list of prompts: the document itself or its ``inputs``."""
    if isinstance(data, dict) and "inputs" in data:
        data = data["inputs"]
    if not isinstance(data, list):
        raise BadInput(f"inputs file {p} holds a {fmt} {type(data).__name__}", fix)
    return data


def _prompts(p: Path, items: list[Any]) -> list[str]:
    prompts: list[str] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(items, 1):
        item = entry.get("input", entry.get("prompt")) if isinstance(entry, dict) else entry
        if not isinstance(item, str) or not item.strip():
            raise BadInput(f"inputs file {p}: entry {i} is not a non-empty string",
                           "every input must be a prompt string")
        if item in seen:
            raise BadInput(f"inputs file {p}: entry {i} duplicates entry {seen[item]}",
                           "remove duplicate prompts (they would weight one input twice)")
        seen[item] = i
        prompts.append(item)
    if not prompts:
        raise BadInput(f"inputs file {p} has no prompts", "put one prompt per line")
    return prompts


def clean_inputs(inputs: Iterable[str], *, what: str = "inputs") -> list[str]:
    """Validate a probe set: non-empty strings, no duplicates (duplicates skew every estimate)."""
    if isinstance(inputs, str):
        raise InvalidArgument(
            f"{what} must be a list of prompts, not one string; wrap it: [prompt]")
    out: list[str] = []
    seen: set[str] = set()
    for i, text in enumerate(inputs):
        if not isinstance(text, str):
            raise InvalidArgument(f"{what}[{i}] is {type(text).__name__}; every input must be str")
        if not text.strip():
            raise InvalidArgument(f"{what}[{i}] is empty; remove blank inputs")
        if text in seen:
            raise InvalidArgument(f"{what}[{i}] duplicates an earlier input; remove duplicates")
        seen.add(text)
        out.append(text)
    if not out:
        raise InvalidArgument(f"{what} is empty; give at least one prompt")
    return out
