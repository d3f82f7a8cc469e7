"""Privacy sentinels: a secret and a raw prompt planted where agents and services echo them
must reach no report (JSON, HTML, JUnit, text), no stderr and no store, unless the user opts
in; fingerprints are keyed when a salt is set; the OTLP receiver listens on loopback only
and refuses oversized or malformed payloads.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import hmac
import http.client
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    PROMPTS,
    agent_ref,
    cli,
    cli_many,
    fault_service,
    load_json,
    read_store,
    record,
    write_inputs,
)

pytestmark = pytest.mark.e2e

PROMPT = "zqxj-prompt-sentinel-7731"
SECRET = "sk-sentinel-secret-4b9e1f2a"
SENTINEL_PROMPTS = [*PROMPTS, f"please review the file {PROMPT} today"]


class Outputs:
    """Everything a command left behind: streams and files, searched as bytes."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def add(self, name: str, data: str | bytes) -> None:
        self.blobs[name] = data.encode("utf-8", "replace") if isinstance(data, str) else data

    def add_proc(self, name: str, proc: Any) -> None:
        self.add(f"{name} stdout", proc.stdout)
        self.add(f"{name} stderr", proc.stderr)

    def add_files(self, folder: Path, *patterns: str) -> None:
        for pattern in patterns:
            for p in sorted(folder.glob(pattern)):
                self.add(p.name, p.read_bytes())

    def leaks(self, needle: str) -> list[str]:
        return [k for k, v in self.blobs.items() if needle.encode() in v]


def _echo_plan(n: int, body: dict[str, Any]) -> Any:
    """A service that echoes its credentials and the prompt in errors and answers."""
    auth = body["_headers"].get("Authorization", "")
    prompt = str(body.get("prompt", body.get("input", "")))
    if n in (2, 5, 9):
        return ("status", 500, {}, json.dumps({"error": f"denied {auth} for {prompt}"}))
    verdict = "block" if "attack" in prompt else "allow"
    return ("status", 200, {}, json.dumps({"text": f"ok, {auth} says {verdict}",
                                           "verdict": verdict}))


def _report_renderings(out: Outputs, tmp: Path, result: Path, name: str,
                       fmt: str = "text") -> None:
    html, text = tmp / f"{name}.html", tmp / f"{name}.rendered"
    proc = cli("report", str(result), "--html", str(html), "--format", fmt, "--output",
               str(text))
    assert proc.returncode == 0, proc.stderr
    out.add_proc(f"report {name}", proc)
    out.add(f"{name}.html", html.read_bytes())
    out.add(f"{name} re-rendered", text.read_bytes())


def test_run_keeps_no_prompt_or_secret(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt", SENTINEL_PROMPTS)
    out = Outputs()
    with fault_service(_echo_plan) as svc:
        env = {"FAULT_URL": svc.url, "FAULT_API_KEY": SECRET}
        base = ["run", "--agent", agent_ref("http"), "--inputs", str(inputs), "--retries", "0",
                "--relations", "case", "--store", str(tmp_path / "s.db")]
        proc = cli(*base, "--record", "--format", "json", "--output",
                   str(tmp_path / "run.json"), env=env)
        assert proc.returncode == 2, proc.stderr  # the planted 500s make it incomplete
        out.add_proc("run json", proc)
        rep = load_json(tmp_path / "run.json")
        assert rep["ledger"]["failure_kinds"]["http_5xx"] >= 1  # the echoing errors happened
        again = cli_many({  # the same draws again, from the store
            "run junit": ([*base, "--replay", "--format", "junit"], env),
            "run text": ([*base, "--replay", "--format", "text"], env),
            "opted in": ([*base, "--replay", "--format", "json", "--include-inputs"], env)})
        opted = again.pop("opted in")
        for name, p in again.items():
            out.add_proc(name, p)
    out.add_files(tmp_path, "run.json", "s.db*")
    _report_renderings(out, tmp_path, tmp_path / "run.json", "run")
    assert out.leaks(PROMPT) == []
    assert out.leaks(SECRET) == []
    # the opt-in keeps prompts (so this test can see a leak), never the secret
    assert PROMPT in opted.stdout
    assert SECRET not in opted.stdout + opted.stderr
    record("privacy", command="run", outputs_checked=len(out.blobs))


def test_tools_keeps_no_prompt_or_secret(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "config: {span_timeout_s: 0.1, retries: 0}\ncases:\n"
        "  - name: sentinel case\n    url: ${FAULT_URL}\n    api_key: ${SENTINEL_SECRET}\n"
        "    headers: {X-Api-Token: \"${SENTINEL_SECRET}\"}\n"
        f"    prompt: \"refund order {PROMPT}\"\n    body: {{input: \"${{prompt}}\"}}\n"
        "    runs: 4\n    required_tools: [lookup_order]\n", encoding="utf-8")
    out = Outputs()

    def plan(n: int, body: dict[str, Any]) -> Any:
        h = body["_headers"]
        return ("status", 500, {}, json.dumps({
            "error": f"denied {h.get('Authorization')} {h.get('X-Api-Token')} "
                     f"for {body.get('input')}"}))

    with fault_service(plan) as svc:
        env = {"FAULT_URL": svc.url, "SENTINEL_SECRET": SECRET}
        done = cli_many({fmt: (["tools", "--config", str(cases), "--format", fmt, "--output",
                                str(tmp_path / f"tools.{fmt}")], env)
                         for fmt in ("json", "junit", "text")})
        for fmt, proc in done.items():
            assert proc.returncode == 2, proc.stderr
            out.add_proc(f"tools {fmt}", proc)
        hits = len(svc.hits)
    assert hits >= 3
    out.add_files(tmp_path, "tools.*")
    _report_renderings(out, tmp_path, tmp_path / "tools.json", "tools", "json")
    assert out.leaks(SECRET) == []
    assert out.leaks(PROMPT) == []
    record("privacy", command="tools", outputs_checked=len(out.blobs))


def test_bench_compare_snapshot_check_keep_no_prompt(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt", SENTINEL_PROMPTS)
    bench = tmp_path / "b.yaml"
    bench.write_text('version: "1"\nname: sentinel\nruns: 2\ntasks:\n' + "".join(
        f'  - id: t{i}\n    prompt: "{p}"\n    evaluation: {{type: contains, expected: '
        f'"answer"}}\n' for i, p in enumerate(SENTINEL_PROMPTS)), encoding="utf-8")
    echo, good = agent_ref("echoes_prompt_in_errors"), agent_ref("good")
    out = Outputs()
    snap = cli("snapshot", "--agent", good, "--inputs", str(inputs), "--output",
               str(tmp_path / "snap.json"), "--accept-reference", "--format", "json")
    assert snap.returncode == 0, snap.stderr
    out.add_proc("snapshot json", snap)
    (tmp_path / "snapshot_result.json").write_text(snap.stdout)
    runs = {
        "bench": ["bench", "--agent", echo, "--benchmark", str(bench), "--retries", "0"],
        "compare": ["compare", good, echo, "--benchmark", str(bench), "--max-runs", "4",
                    "--retries", "0"],
        "check": ["check", "--agent", echo, "--inputs", str(inputs), "--snapshot",
                  str(tmp_path / "snap.json"), "--retries", "0"],
    }
    jobs: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "snapshot text": (["snapshot", "--agent", good, "--inputs", str(inputs), "--output",
                           str(tmp_path / "preview.json")], None),
        "bench opted in": ([*runs["bench"], "--format", "json", "--include-outputs"], None)}
    for name, argv in runs.items():
        jobs[f"{name} json"] = ([*argv, "--format", "json", "--output",
                                 str(tmp_path / f"{name}.json")], None)
        jobs[f"{name} text"] = ([*argv, "--format", "text"], None)
    done = cli_many(jobs)
    opted = done.pop("bench opted in")
    # snapshot's text report is printed (stdout), as run's and check's: it names the
    # references to review by their text, piped or not; the snapshot file keeps none
    review = done.pop("snapshot text")
    assert review.returncode == 2, review.stderr  # a preview: nothing approved, nothing written
    assert PROMPT in review.stdout
    assert not (tmp_path / "preview.json").exists()
    for name, proc in done.items():
        assert "Traceback" not in proc.stderr, proc.stderr
        out.add_proc(name, proc)
    for name in runs:
        text = (tmp_path / f"{name}.json").read_text()
        assert "cannot handle this request: <prompt>" in text  # the echoing errors happened
    out.add_files(tmp_path, "*.json")
    renders = {name: (["report", str(tmp_path / f"{name}.json"), "--format", "junit",
                       *(["--html", str(tmp_path / f"{name}.html")] if html else [])], None)
               for name, html in (("bench", True), ("compare", False), ("check", True),
                                  ("snapshot_result", False))}
    for name, proc in cli_many(renders).items():
        assert proc.returncode == 0, proc.stderr
        out.add_proc(f"report {name} (junit)", proc)
    out.add_files(tmp_path, "*.html")
    assert out.leaks(PROMPT) == []
    assert PROMPT in opted.stdout  # opted in: the prompt is there, so a leak would show
    record("privacy", command="bench/compare/snapshot/check", outputs_checked=len(out.blobs))


def _fps(rep: dict[str, Any]) -> set[str]:
    return {p["fp"] for p in rep["meter"]["per_input"]}


def test_fingerprints_are_keyed_when_a_salt_is_set(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    salt = "team-salt-ef01"
    reps, benches = {}, {}
    bench = tmp_path / "b.yaml"
    bench.write_text('version: "1"\nname: s\ntasks:\n  - {id: a, prompt: "hello there", '
                     'evaluation: {type: contains, expected: answer}}\n', encoding="utf-8")
    jobs: dict[str, tuple[list[str], dict[str, str] | None]] = {}
    for name, env in (("plain", {}), ("salted", {"AGENTVERITY_PROPS_SALT": salt})):
        jobs[f"run {name}"] = (["run", "--agent", agent_ref("good"), "--inputs", str(inputs),
                                "--no-relations", "--format", "json", "--store",
                                str(tmp_path / f"{name}.db")], env)
        jobs[f"bench {name}"] = (["bench", "--agent", agent_ref("good"), "--benchmark",
                                  str(bench), "--format", "json"], env)
    done = cli_many(jobs, parallel=2)
    for name in ("plain", "salted"):
        reps[name] = json.loads(done[f"run {name}"].stdout)
        benches[name] = json.loads(done[f"bench {name}"].stdout)
    keyed = {"hmac-sha256:" + hmac.new(salt.encode(), p.encode(), hashlib.sha256).hexdigest()
             for p in PROMPTS}
    plain = {"sha256:" + hashlib.sha256(p.encode()).hexdigest() for p in PROMPTS}
    assert _fps(reps["salted"]) == keyed
    assert _fps(reps["plain"]) == plain
    assert not keyed & plain
    assert {r[1] for r in read_store(tmp_path / "salted.db").rows} == keyed
    b_salted = benches["salted"]["tasks"][0]
    assert b_salted["prompt_fp"] == "hmac-sha256:" + hmac.new(
        salt.encode(), b"hello there", hashlib.sha256).hexdigest()
    assert all(a["output_fp"].startswith("hmac-sha256:") for a in b_salted["attempts"])
    record("privacy", command="salt", fingerprints=len(keyed) + 2)


# ---------------------------------------------------------------- the OTLP receiver


def _non_loopback_ipv4() -> str | None:
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 9))  # no packet is sent: it only picks a route
        ip = s.getsockname()[0]
        if not ip.startswith("127."):
            return str(ip)
    with contextlib.suppress(OSError):
        for ip in socket.gethostbyname_ex(socket.gethostname())[2]:
            if not ip.startswith("127."):
                return str(ip)
    return None


def _post(port: int, body: bytes, *, ctype: str = "application/x-protobuf",
          length: int | None = None, encoding: str | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("POST", "/v1/traces")
        conn.putheader("Content-Type", ctype)
        conn.putheader("Content-Length", str(len(body) if length is None else length))
        if encoding:
            conn.putheader("Content-Encoding", encoding)
        conn.endheaders()
        if length is None:
            conn.send(body)
        return conn.getresponse().status
    finally:
        conn.close()


def _probe_receiver(port: int) -> dict[str, Any]:
    """What a stranger gets from the receiver at ``port``."""
    out: dict[str, Any] = {
        "oversized": _post(port, b"", length=64 * 1024 * 1024),
        "malformed protobuf": _post(port, b"\xff\x00 definitely not protobuf"),
        "malformed json": _post(port, b"{not json", ctype="application/json"),
        "gzip bomb": _post(port, gzip.compress(b"\x00" * (80 * 1024 * 1024)),
                           encoding="gzip"),
        "wrong content type": _post(port, b"hello", ctype="text/plain"),
    }
    ip = _non_loopback_ipv4()
    out["external address"] = ip
    if ip is not None:
        try:
            socket.create_connection((ip, port), timeout=5).close()
            out["external"] = "connected"
        except OSError as exc:
            out["external"] = type(exc).__name__
    return out


EXPECTED = {"oversized": 413, "malformed protobuf": 400, "malformed json": 400,
            "gzip bomb": 413, "wrong content type": 400}


def _check_probe(seen: dict[str, Any]) -> None:
    for k, code in EXPECTED.items():
        assert seen[k] == code, (k, seen)
    if seen["external address"] is not None:
        assert seen["external"] in ("ConnectionRefusedError", "TimeoutError"), seen


def test_otlp_receiver_binds_loopback_and_refuses_bad_payloads() -> None:
    pytest.importorskip("opentelemetry.proto")
    from agentverity_props.otel import OTLPReceiver

    with OTLPReceiver(port=0) as rx:
        server = rx._server
        assert server is not None
        assert server.socket.getsockname()[0] == "127.0.0.1"
        seen = _probe_receiver(rx.port)
        stats = rx.stats
    _check_probe(seen)
    assert stats.accepted == 0
    assert stats.spans == 0
    assert stats.rejected_too_large == 2
    assert stats.rejected_malformed == 3
    record("privacy", command="otlp receiver", payloads_refused=len(EXPECTED))


def tools_while_probing(tmp_path: Path, probe: Any) -> tuple[Any, dict[str, Any]]:
    """The real ``tools`` command on one case, its OTLP receiver probed with
    ``probe(port) -> dict`` while the command runs: (the finished process, what the probe
    returned)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    seen: dict[str, Any] = {}
    lock = threading.Lock()

    def plan(n: int, body: dict[str, Any]) -> Any:
        with lock:
            if not seen:
                seen.update(probe(port))
        return ("status", 200, {}, json.dumps({"text": "done"}))

    cases = tmp_path / "cases.yaml"
    cases.write_text("config: {span_timeout_s: 0.1, retries: 0}\ncases:\n"
                     "  - {name: probe, url: '${FAULT_URL}', prompt: hi, "
                     "required_tools: [lookup_order]}\n", encoding="utf-8")
    with fault_service(plan) as svc:
        proc = cli("tools", "--config", str(cases), "--otlp-port", str(port), "--format",
                   "json", env={"FAULT_URL": svc.url})
    return proc, seen


def test_otlp_receiver_of_the_tools_command(tmp_path: Path) -> None:
    """The receiver the real ``tools`` command opens, probed while the command runs."""
    pytest.importorskip("opentelemetry.proto")
    proc, seen = tools_while_probing(tmp_path, _probe_receiver)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr  # no spans arrived: incomplete, not a pass
    _check_probe(seen)
    record("privacy", command="tools OTLP receiver", payloads_refused=len(EXPECTED))
