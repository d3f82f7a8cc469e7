"""Fuzzing every file the CLI reads, through the real command line.

Hypothesis generates file contents from a valid sample of each kind: random bytes and text,
truncations, a value of the wrong type planted anywhere in the document, a non-UTF-8 byte,
huge (20 MB) files and deep nesting. Each case runs the CLI in-process (click group +
``run_cli``: hundreds of cases cheaply) and, for a few cases per command, in a subprocess.

The guarantee: never a traceback or an "internal error"; a file that cannot be used gives
exit 2 and exactly one stderr line ``error: ...``. Commands that call agents get a
reference to an agent file that does not exist, so a file that happens to be valid still
ends in one clean line (naming the agent): no agent is ever called here. ``report``
renders a valid file (exit 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from .conftest import (
    PROMPTS,
    ROOT,
    agent_ref,
    assert_one_line_error,
    cli_argv,
    cli_env,
    invoke,
    record,
    write_inputs,
)

pytestmark = pytest.mark.e2e

IN_PROCESS_EXAMPLES = int(os.environ.get("AGENTVERITY_FUZZ_EXAMPLES", "20"))
SUBPROCESS_EXAMPLES = int(os.environ.get("AGENTVERITY_FUZZ_SUBPROCESS_EXAMPLES", "1"))
HUGE = 20 * 1024 * 1024
UNSET_VAR = "AGENTVERITY_FUZZ_UNSET_URL"


@dataclass(frozen=True)
class Target:
    """One file-taking command: its sample file and how to call the CLI on a file."""

    sample: str  # key in the samples fixture
    suffix: str
    fmt: str  # json | yaml | lines: how wrong-type mutations re-serialise
    argv: Callable[[str, dict[str, Path]], list[str]]
    renders: bool = False  # exit 0 is fine (report of a still-valid result)


def _nobody(d: dict[str, Path]) -> str:
    return f"{d['dir'] / 'no_such_agent.py'}:agent"


def _report_argv(fmt: str) -> Callable[[str, dict[str, Path]], list[str]]:
    def argv(f: str, d: dict[str, Path]) -> list[str]:
        return ["report", f, "--format", fmt, "--output", str(d["dir"] / "o.txt")]
    return argv


TARGETS: dict[str, Target] = {
    "run --inputs (.txt)": Target("inputs_txt", ".txt", "lines", lambda f, d: [
        "run", "--agent", _nobody(d), "--inputs", f]),
    "run --inputs (.json)": Target("inputs_json", ".json", "json", lambda f, d: [
        "run", "--agent", _nobody(d), "--inputs", f]),
    "run --inputs (.jsonl)": Target("inputs_jsonl", ".jsonl", "lines", lambda f, d: [
        "run", "--agent", _nobody(d), "--inputs", f]),
    "enlarge --inputs (.yaml)": Target("inputs_yaml", ".yaml", "yaml", lambda f, d: [
        "enlarge", "--agent", _nobody(d), "--inputs", f, "--output", str(d["dir"] / "o.txt")]),
    "enlarge --strategy PACK": Target("pack", ".yaml", "yaml", lambda f, d: [
        "enlarge", "--agent", _nobody(d), "--inputs", str(d["inputs_txt"]), "--strategy", f,
        "--output", str(d["dir"] / "o.txt")]),
    "bench --benchmark": Target("benchmark", ".yaml", "yaml", lambda f, d: [
        "bench", "--agent", _nobody(d), "--benchmark", f]),
    "compare --benchmark": Target("benchmark", ".yaml", "yaml", lambda f, d: [
        "compare", _nobody(d), _nobody(d), "--benchmark", f]),
    "tools --config": Target("cases", ".yaml", "yaml", lambda f, d: ["tools", "--config", f]),
    "check --snapshot": Target("snapshot", ".json", "json", lambda f, d: [
        "check", "--agent", _nobody(d), "--inputs", str(d["inputs_txt"]), "--snapshot", f]),
    **{f"report {kind}.json": Target(kind, ".json", "json", _report_argv(fmt), renders=True)
       for kind, fmt in (("run", "text"), ("bench", "junit"), ("compare", "text"),
                         ("snapshot_result", "junit"), ("check", "text"), ("tools", "json"),
                         ("enlarge", "json"))},
}


# ------------------------------------------------------------------ valid samples


def _bench_text() -> str:
    return ('version: "1"\nname: sample\nruns: 2\ntasks:\n'
            '  - id: a\n    name: A\n    category: basic\n    prompt: "hello there"\n'
            '    evaluation: {type: contains, expected: "answer"}\n'
            '  - id: b\n    prompt: "plan an attack"\n    threshold: 0.5\n    evaluations:\n'
            '      - {type: regex, pattern: "answer [0-9]+"}\n'
            '      - {type: not_contains, expected: sorry}\n')


def _cases_text() -> str:
    return ("config:\n  span_timeout_s: 1\n  retries: 0\ncases:\n"
            f"  - name: refund\n    url: ${{{UNSET_VAR}}}\n    body: {{input: refund 1002}}\n"
            "    required_tools: [lookup_order, issue_refund]\n"
            f"  - name: args\n    url: ${{{UNSET_VAR}}}\n    prompt: refund 1003\n"
            "    body: {input: \"${prompt}\"}\n    runs: 2\n"
            "    tool_args:\n      - {tool: lookup_order, arg: order_id, equals: \"1003\"}\n")


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A valid file of every kind, the results made in-process by the real commands."""
    d = tmp_path_factory.mktemp("fuzz")
    out: dict[str, Path] = {"dir": d}
    out["inputs_txt"] = write_inputs(d / "inputs.txt")
    (d / "inputs.json").write_text(json.dumps(PROMPTS))
    out["inputs_json"] = d / "inputs.json"
    (d / "inputs.jsonl").write_text("".join(json.dumps({"input": p}) + "\n" for p in PROMPTS))
    out["inputs_jsonl"] = d / "inputs.jsonl"
    (d / "inputs.yaml").write_text(yaml.safe_dump({"inputs": PROMPTS}))
    out["inputs_yaml"] = d / "inputs.yaml"
    out["pack"] = ROOT / "strategies" / "moderation.yaml"
    (d / "bench.yaml").write_text(_bench_text())
    out["benchmark"] = d / "bench.yaml"
    (d / "cases.yaml").write_text(_cases_text())
    out["cases"] = d / "cases.yaml"
    good, inputs = agent_ref("good"), str(out["inputs_txt"])
    runs = {
        "run": ["run", "--agent", good, "--inputs", inputs, "--relations", "case", "--format",
                "json", "--output", str(d / "run.json")],
        "bench": ["bench", "--agent", good, "--benchmark", str(out["benchmark"]), "--format",
                  "json", "--output", str(d / "bench.json")],
        "compare": ["compare", good, good, "--benchmark", str(out["benchmark"]),
                    "--max-runs", "3", "--format", "json", "--output", str(d / "compare.json")],
        "snapshot": ["snapshot", "--agent", good, "--inputs", inputs, "--output",
                     str(d / "snapshot.json"), "--accept-reference", "--format", "json"],
        "check": ["check", "--agent", good, "--inputs", inputs, "--snapshot",
                  str(d / "snapshot.json"), "--format", "json", "--output",
                  str(d / "check.json")],
        "enlarge": ["enlarge", "--agent", good, "--inputs", inputs, "--budget", "30",
                    "--strategy", "moderation",
                    "--output", str(d / "enlarged.txt"), "--report", str(d / "enlarge.json")],
    }
    for name, argv in runs.items():
        code, stdout, stderr = invoke(argv)
        assert code in (0, 1), (name, stderr)
        if name == "snapshot":
            (d / "snapshot_result.json").write_text(stdout)
    # a tools result: a case whose service is unreachable still writes a full report
    (d / "tools_cases.yaml").write_text(
        "config: {span_timeout_s: 0.1, retries: 0, answer_timeout_s: 2}\ncases:\n"
        "  - {name: down, url: 'http://127.0.0.1:9/ask', prompt: hi, "
        "required_tools: [x]}\n")
    code, _, stderr = invoke(["tools", "--config", str(d / "tools_cases.yaml"), "--format",
                              "json", "--output", str(d / "tools.json")])
    assert code == 2, stderr
    for kind in ("run", "bench", "compare", "snapshot_result", "check", "tools", "enlarge"):
        out[kind] = d / f"{kind}.json"
        assert json.loads(out[kind].read_text())["schema"].startswith("agentverity_props.")
    out["snapshot"] = d / "snapshot.json"
    return out


# ------------------------------------------------------------------ generated files

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids,
                                                               max_size=3),
    max_leaves=6)

# weights: each non-huge kind several times, huge once (a 20 MB file costs ~0.2 s)
KINDS = ["random_bytes", "random_text", "truncated", "truncated", "wrong_type", "wrong_type",
         "wrong_type", "drop_key", "non_utf8", "deep", "empty", "huge"]
HUGE_KINDS = ["nul", "bad_utf8_tail", "long_string", "long_list"]


@st.composite
def specs(draw: st.DrawFn) -> tuple[Any, ...]:
    kind = draw(st.sampled_from(KINDS))
    if kind == "random_bytes":
        return (kind, draw(st.binary(max_size=3000)))
    if kind == "random_text":
        return (kind, draw(st.text(max_size=800)))
    if kind == "truncated":
        return (kind, draw(st.floats(0.0, 1.0, exclude_max=True)))
    if kind in ("wrong_type", "drop_key"):
        return (kind, draw(st.integers(0, 10**6)), draw(_json_values))
    if kind == "non_utf8":
        return (kind, draw(st.floats(0.0, 1.0)), draw(st.sampled_from(
            [b"\xff", b"\xfe\xff", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xe9t\xe9"])))
    if kind == "deep":  # deeper than ~330 exhausts the recursion limit (explicit examples)
        return (kind, draw(st.integers(2, 400)))
    if kind == "huge":
        return (kind, draw(st.sampled_from(HUGE_KINDS)), draw(st.integers(0, 2**32)))
    return (kind,)


def _parse(data: bytes, fmt: str) -> Any:
    if fmt == "json":
        return json.loads(data)
    if fmt == "yaml":
        return yaml.safe_load(data)
    return data.decode("utf-8").splitlines()


def _dump(doc: Any, fmt: str) -> bytes:
    if fmt == "json":
        return json.dumps(doc).encode()
    if fmt == "yaml":
        return yaml.safe_dump(doc, allow_unicode=True).encode()
    lines = doc if isinstance(doc, list) else [doc]
    return "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines).encode()


def _paths(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*here, i))
    return out


def materialise(spec: tuple[Any, ...], sample: bytes, fmt: str) -> bytes:
    kind = spec[0]
    if kind == "random_bytes":
        return bytes(spec[1])
    if kind == "random_text":
        return str(spec[1]).encode("utf-8", "surrogatepass")
    if kind == "truncated":
        return sample[: int(len(sample) * spec[1])]
    if kind in ("wrong_type", "drop_key"):
        doc = _parse(sample, fmt)
        paths = _paths(doc)
        path = paths[spec[1] % len(paths)]
        if not path:
            return _dump(spec[2], fmt)
        parent = doc
        for p in path[:-1]:
            parent = parent[p]
        if kind == "drop_key":
            del parent[path[-1]]
        else:
            parent[path[-1]] = spec[2]
        return _dump(doc, fmt)
    if kind == "non_utf8":
        at = int(len(sample) * spec[1])
        return sample[:at] + spec[2] + sample[at:]
    if kind == "deep":
        n = spec[1]
        return b"[" * n + b"]" * n if fmt != "yaml" else b"a: " + b"[" * n + b"]" * n
    if kind == "empty":
        return b""
    variant, seed = spec[1], spec[2]
    if variant == "nul":  # a NUL somewhere in 20 MB of otherwise plain text
        body = bytearray(b"ab c\n" * (HUGE // 5))
        body[seed % len(body)] = 0
        return bytes(body)
    if variant == "bad_utf8_tail":  # valid for 20 MB, then a byte that is not UTF-8
        return sample + b" " * HUGE + b"\xff"
    if variant == "long_string":  # one 20 MB value
        return json.dumps("x" * HUGE).encode() if fmt != "yaml" else b"k: " + b"x" * HUGE
    # a 20 MB list of numbers
    return b"[" + b"1," * (HUGE // 2) + b"1]"


# ------------------------------------------------------------------ the tests

TRIED: Counter[str] = Counter()
OUTCOMES: Counter[str] = Counter()


def _check(target: Target, code: int | None, stderr: str, what: str) -> None:
    if target.renders and code == 0:
        assert "Traceback" not in stderr, stderr[-2000:]
        assert "internal error" not in stderr, stderr[-2000:]
        OUTCOMES["rendered"] += 1
        return
    line = assert_one_line_error(code, stderr, what)
    OUTCOMES["agent" if "no_such_agent" in line else "rejected"] += 1


@pytest.mark.parametrize("name", list(TARGETS))
@settings(max_examples=IN_PROCESS_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec=specs())
@example(spec=("huge", "nul", 12345))
@example(spec=("huge", "bad_utf8_tail", 0))
@example(spec=("deep", 50_000))
def test_fuzzed_files_in_process(samples: dict[str, Path], name: str,
                                 spec: tuple[Any, ...]) -> None:
    target = TARGETS[name]
    if spec[0] == "huge" and spec[1] in ("long_string", "long_list") and target.fmt == "yaml":
        spec = ("huge", "bad_utf8_tail", 0)  # a 20 MB YAML scalar costs ~30 s to parse
    content = materialise(spec, samples[target.sample].read_bytes(), target.fmt)
    path = samples["dir"] / f"fuzz{target.suffix}"
    path.write_bytes(content)
    argv = target.argv(str(path), samples)
    if target.renders and zlib.crc32(repr(spec).encode()) % 3 == 0:  # HTML too, 1 in 3
        # (one HTML render costs ~0.5 s)
        argv += ["--html", str(samples["dir"] / "o.html")]
    code, _, stderr = invoke(argv)
    TRIED[name] += 1
    _check(target, code, stderr, f"{name} {spec[0]}")


def test_report_in_process_counts() -> None:
    """Print and record how many cases the in-process fuzzing tried (runs after it)."""
    total = sum(TRIED.values())
    print(f"\nCLI fuzz (in-process): {total} cases over {len(TRIED)} targets; "
          f"outcomes {dict(OUTCOMES)}")
    if total:
        record("cli-fuzz", mode="in-process", cases=total, targets=len(TRIED),
               rejected=OUTCOMES["rejected"], reached_agent=OUTCOMES["agent"],
               rendered=OUTCOMES["rendered"])


SUBPROCESS_TRIED: Counter[str] = Counter()


@pytest.mark.parametrize("name", list(TARGETS))
@settings(max_examples=SUBPROCESS_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec=specs().filter(lambda s: s[0] != "huge"))
def test_fuzzed_files_real_subprocess(samples: dict[str, Path], name: str,
                                      spec: tuple[Any, ...]) -> None:
    target = TARGETS[name]
    content = materialise(spec, samples[target.sample].read_bytes(), target.fmt)
    path = samples["dir"] / f"sub{target.suffix}"
    path.write_bytes(content)
    argv = target.argv(str(path), samples)
    if target.renders:
        argv += ["--html", str(samples["dir"] / "sub.html")]
    proc = subprocess.run(cli_argv(*argv), cwd=ROOT, env=cli_env(),
                          capture_output=True, text=True, errors="replace", timeout=120,
                          check=False)
    SUBPROCESS_TRIED[name] += 1
    _check(target, proc.returncode, proc.stderr, f"{name} {spec[0]} (subprocess)")


def test_huge_files_real_subprocess(samples: dict[str, Path]) -> None:
    """One 20 MB file per kind of file, through the real CLI (run concurrently)."""
    procs = []
    for i, (name, target) in enumerate(TARGETS.items()):
        variant = HUGE_KINDS[i % 2] if target.fmt == "yaml" else HUGE_KINDS[i % 4]
        path = samples["dir"] / f"huge{i}{target.suffix}"
        path.write_bytes(materialise(("huge", variant, i * 7919), samples[target.sample]
                                     .read_bytes(), target.fmt))
        procs.append((name, target, subprocess.Popen(
            cli_argv(*target.argv(str(path), samples)), cwd=ROOT, env=cli_env(),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")))
    for name, target, proc in procs:
        _, err = proc.communicate(timeout=300)
        SUBPROCESS_TRIED[name] += 1
        _check(target, proc.returncode, err, f"{name} huge (subprocess)")


def test_report_subprocess_counts() -> None:
    total = sum(SUBPROCESS_TRIED.values())
    print(f"\nCLI fuzz (subprocess): {total} cases over {len(SUBPROCESS_TRIED)} targets")
    if total:
        record("cli-fuzz", mode="subprocess", cases=total, targets=len(SUBPROCESS_TRIED))


@pytest.mark.parametrize("name", ["run --inputs (.yaml)", "bench --benchmark",
                                  "tools --config", "enlarge --strategy PACK"])
def test_huge_yaml_file_is_refused_before_parsing(samples: dict[str, Path], name: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Structural, not timed: the YAML reader is made to refuse a 20 MB stream, so only a
    size check that runs before parsing can produce the one-line refusal."""
    real_init = yaml.reader.Reader.__init__

    def guarded(self: Any, stream: Any) -> None:
        if len(stream) > 10 * 1024 * 1024:
            raise AssertionError("a 20 MB YAML document reached the parser")
        real_init(self, stream)

    monkeypatch.setattr(yaml.reader.Reader, "__init__", guarded)
    target = TARGETS.get(name) or Target("inputs_yaml", ".yaml", "yaml", lambda f, d: [
        "run", "--agent", _nobody(d), "--inputs", f])
    path = samples["dir"] / "nodes.yaml"
    path.write_bytes(b"tasks:\n" + b"  - id: x\n" * (HUGE // 10))
    code, _, stderr = invoke(target.argv(str(path), samples))
    line = assert_one_line_error(code, stderr, name)
    assert "MB" in line
