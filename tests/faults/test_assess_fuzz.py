"""assess on damaged evidence files: a value of the wrong type planted anywhere in a valid
promptfoo export or JSONL line never gives a traceback or an internal error; a file that
cannot be used is one ``error:`` line and exit 2 (in process: click group + run_cli)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
WRONG = st.sampled_from([None, 1, -5, 2.5, True, "x", "", [], {}, [1], {"a": 1}, "{",
                         10**30])


def _small_export() -> dict[str, Any]:
    """The example export cut to 4 draws per input (fast: the meter runs out at once)."""
    data = json.loads((ROOT / "examples/recorded/promptfoo_support.json").read_text())
    res = sorted(data["results"]["results"], key=lambda r: r["testIdx"])
    data["results"]["results"] = [r for r in res if r["testIdx"] % 26 < 4]
    return data


BASE = _small_export()


def _paths(o: Any, p: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [p]
    if isinstance(o, dict):
        for k, v in o.items():
            out += _paths(v, (*p, k))
    elif isinstance(o, list):
        for i, v in enumerate(o[:2]):
            out += _paths(v, (*p, i))
    return out


PATHS = _paths(BASE)[1:]


def _cli(args: list[str]) -> tuple[int, str]:
    from agentverity_props.cli._main import main

    err, out = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, err.getvalue()


def _check(code: int, err: str) -> None:
    assert "Traceback" not in err
    assert "internal error" not in err, err
    if code == 2 and err.strip():
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("error: ")
    else:
        assert code in (0, 1, 2)


@settings(max_examples=12, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=WRONG)
def test_a_wrong_value_anywhere_in_a_promptfoo_export(tmp_path: Path, path: tuple[Any, ...],
                                                      value: Any) -> None:
    doc = copy.deepcopy(BASE)
    cur = doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    f = tmp_path / "e.json"
    f.write_text(json.dumps(doc))
    _check(*_cli(["assess", "--promptfoo", str(f), "--verdict-key", "route", "--format",
                  "json", "-o", str(tmp_path / "o.json")]))


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 11), key=st.sampled_from(["input", "output", "verdict", "error",
                                                      "tools", "order", "other"]),
       value=WRONG)
def test_a_wrong_value_in_a_jsonl_line(tmp_path: Path, line: int, key: str,
                                       value: Any) -> None:
    rows = [{"input": f"message {k % 3}", "output": json.dumps({"route": "faq"}), "order": k}
            for k in range(12)]
    rows[line][key] = value
    f = tmp_path / "e.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _check(*_cli(["assess", "--jsonl", str(f), "--verdict-key", "route", "--format", "json",
                  "-o", str(tmp_path / "o.json")]))
