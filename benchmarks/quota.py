"""One provider quota across runner processes on a real Redis server, and write the table.

Run from the repository root (needs ``redis-server`` on the PATH, or
``AGENTVERITY_TEST_REDIS_URL`` naming a running server)::

    python benchmarks/quota.py            # full run, rewrites the quota section
    python benchmarks/quota.py --quick    # fewer calls and kills, prints only

What is measured:

* **In flight.** P runner processes (separate ``python`` processes, each one engine with
  ``max_workers`` 4 recording into one Redis namespace) draw C distinct probes each from a
  loopback HTTP provider that works 50 ms on each request and counts the requests it holds
  at once. Per limit (``max_calls_in_flight``: none, 3, 6): the most requests the provider
  held at once, the agent calls made, the wall time of the slowest runner, and the wall time
  a perfect scheduler would need (calls x 50 ms / the limit, or / (P x 4) without one): the
  gap is the cost of polling for a free slot (2 ms to 50 ms, jittered) and of the Redis round
  trips.
* **A killed runner.** A process takes all 3 slots, is killed with SIGKILL at a random point
  of its renewal cycle, and another process polls (every 20 ms) until it gets a slot: the
  seconds from the kill to the first slot free, over K kills, against the stated lease
  (``LEASE_S``).

The table goes between the ``<!-- quota:start -->`` / ``<!-- quota:end -->`` markers of
docs/benchmarks.md; the rest of that file is left as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _docs import cpus, write_section  # noqa: E402

from agentverity_props.store import LEASE_S, RENEW_S, RedisStore  # noqa: E402

SECTION = "quota"
HOLD_S = 0.05
WORKERS = 4

RUNNER = """
import asyncio, json, os, sys, time, urllib.request
from agentverity_props.engine import Engine, EngineConfig, Probe
url, port, name, n, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), \\
    sys.argv[5]
def agent(prompt):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/", data=prompt.encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())["verdict"]
cfg = EngineConfig(max_workers=WORKERS, retries=0, store_path=url, store_mode="record",
                   store_runner=name, max_calls_in_flight=None if limit == "none" else int(limit))
async def main():
    async with Engine(agent, cfg) as eng:
        t0 = time.monotonic()
        await asyncio.gather(*(eng.draw(Probe.make(f"{name} question {i}")) for i in range(n)))
        print(json.dumps({"calls": eng.ledger.calls, "wall": time.monotonic() - t0}))
asyncio.run(main())
""".replace("WORKERS", str(WORKERS))

HOLDER = """
import sys, time
from agentverity_props.store import RedisStore
s = RedisStore(sys.argv[1], runner="holder"); sl = s.call_slots(3)
held = [sl.try_acquire() for _ in range(3)]
print("held" if all(held) else "missed", flush=True)
time.sleep(600)
"""


class _Provider:
    """A loopback provider counting the requests it holds at once."""

    def __init__(self) -> None:
        outer = self
        self.lock = threading.Lock()
        self.now = self.most = self.total = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.now += 1
                    outer.total += 1
                    outer.most = max(outer.most, outer.now)
                time.sleep(HOLD_S)
                # answered: no longer held (counted before the reply leaves, so a client's
                # next request never overlaps this one in the count)
                with outer.lock:
                    outer.now -= 1
                body = b'{"verdict": "allow"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.now = self.most = self.total = 0

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _redis(folder: Path) -> tuple[str, subprocess.Popen[bytes] | None]:
    url = os.environ.get("AGENTVERITY_TEST_REDIS_URL")
    if url:
        return url, None
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server is not installed (apt-get install redis-server), or set "
                 "AGENTVERITY_TEST_REDIS_URL")
    port = _free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(200):
        try:
            redis.Redis.from_url(url).ping()
            return url, proc
        except redis.ConnectionError:
            time.sleep(0.05)
    sys.exit("redis-server did not start")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTVERITY_PROPS_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _in_flight(server: str, provider: _Provider, procs: int, calls: int,
               limit: str) -> dict[str, Any]:
    url = f"{server}?namespace=bench-{uuid.uuid4().hex[:10]}"
    provider.reset()
    runners = [subprocess.Popen([sys.executable, "-c", RUNNER, url, str(provider.port),
                                 f"r{k}", str(calls), limit], env=_env(),
                                stdout=subprocess.PIPE, text=True) for k in range(procs)]
    outs = []
    for p in runners:
        out, _ = p.communicate(timeout=600)
        if p.returncode != 0:
            sys.exit(f"a runner failed (exit {p.returncode})")
        outs.append(json.loads(out))
    total = sum(o["calls"] for o in outs)
    width = procs * WORKERS if limit == "none" else min(int(limit), procs * WORKERS)
    return {"limit": limit, "procs": procs, "calls": total, "most": provider.most,
            "seen": provider.total, "wall": max(o["wall"] for o in outs),
            "ideal": total * HOLD_S / width}


def _kill_times(server: str, kills: int, rng: random.Random) -> list[float]:
    out = []
    for _ in range(kills):
        url = f"{server}?namespace=kill-{uuid.uuid4().hex[:10]}"
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, url], env=_env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert holder.stdout is not None
        if holder.stdout.readline().strip() != "held":
            sys.exit("the holder did not get its slots")
        time.sleep(rng.uniform(0.2, RENEW_S + 0.2))  # a random point of the renewal cycle
        with RedisStore(url, runner="other") as store:
            slots = store.call_slots(3)
            if slots.try_acquire() is not None:
                sys.exit("a slot was free while the holder lived")
            holder.send_signal(signal.SIGKILL)
            holder.wait()
            t0 = time.monotonic()
            got = None
            while got is None:
                got = slots.try_acquire()
                if got is None:
                    time.sleep(0.02)
            out.append(time.monotonic() - t0)
            got.release()
        holder.stdout.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls and kills, print only")
    args = ap.parse_args()
    calls = 30 if args.quick else 120
    kills = 2 if args.quick else 8
    rng = random.Random(7)
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        server, proc = _redis(Path(tmp))
        provider = _Provider()
        try:
            rows = [_in_flight(server, provider, procs, calls, limit)
                    for procs in (2, 4) for limit in ("none", "3", "6")]
            freed = _kill_times(server, kills, rng)
        finally:
            provider.close()
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=10)
    load1 = os.getloadavg()[0]
    lines = [
        "## One quota across runners: calls in flight on a shared Redis, and a killed "
        "runner's slots", "",
        f"Measured by `python benchmarks/quota.py` on {cpus()} CPU(s), Python "
        f"{platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()} {platform.machine()}), a local `redis-server`; 1-minute load "
        f"average {load0:.2f} at the start, {load1:.2f} at the end. Each runner is a separate "
        f"process: one engine (`max_workers` {WORKERS}) recording {calls} distinct probes into "
        "one Redis namespace, calling a loopback provider that works "
        f"{HOLD_S * 1000:.0f} ms on each request and counts the requests it holds at once. "
        "*Wall time* is the slowest runner's, from its first draw to its last; "
        "*ideal* is the wall time of a perfect scheduler (calls x "
        f"{HOLD_S * 1000:.0f} ms / the limit, or / (runners x {WORKERS}) without one).", "",
        "| runners | --max-calls-in-flight | most in flight at the provider | calls | "
        "wall time | ideal |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['procs']} | {r['limit']} | **{r['most']}** | {r['calls']} | "
                     f"{r['wall']:.2f} s | {r['ideal']:.2f} s |")
    lines += [
        "", f"A runner holding all 3 slots killed with SIGKILL ({len(freed)} kills, each at a "
        f"random point of its {RENEW_S:g} s renewal cycle): the first slot was free again "
        f"after {min(freed):.2f} s at the fastest, {statistics.median(freed):.2f} s "
        f"(median), {max(freed):.2f} s at the slowest; the lease is {LEASE_S:g} s, so a dead "
        f"runner's slots are free within {LEASE_S:g} s of its last renewal."]
    table = "\n".join(lines)
    print(table)
    if not args.quick:
        write_section(ROOT / "docs" / "benchmarks.md", SECTION, table)
        print("wrote docs/benchmarks.md")


if __name__ == "__main__":
    main()
