"""Calls per second of the HTTP adapter against a local HTTP agent, and write the table.

Run from the repository root::

    python benchmarks/http_calls.py            # full run, rewrites the http-calls section
    python benchmarks/http_calls.py --quick    # smaller N, prints only

What is measured: N engine draws (distinct probes, ``asyncio.gather``, no store) of a
``from_http`` agent whose server (``ThreadingHTTPServer``, HTTP/1.1 keep-alive, on
127.0.0.1) answers ``{"text": "ok"}`` at once, at max_workers 1 and 8; median calls/s of the
repeats, each mode measured alternately. *Per call* is how the adapter worked before: a new
``httpx.AsyncClient`` opened and closed around every request (a fresh TCP connection each
time, and on a real https endpoint a TLS handshake each time); it is the same adapter with
its client method replaced by one that does exactly that. *Pooled* is the adapter as it is:
one client per adapter and event loop, connections reused. The server counts the TCP
connections it accepted, so the table shows the reuse, not only its effect on speed.

The table goes between the ``<!-- http-calls:start -->`` / ``<!-- http-calls:end -->``
markers of docs/benchmarks.md; the rest of that file is left as it is.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _docs import replace_section  # noqa: E402

from agentverity_props.adapters import from_http  # noqa: E402
from agentverity_props.engine import Engine, EngineConfig, Probe  # noqa: E402

SECTION = "http-calls"


class _Server:
    """A keep-alive HTTP agent on loopback that counts the connections it accepted."""

    def __init__(self, tls: Any = None) -> None:
        outer = self
        self.connections = 0
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # one send per response, no Nagle: a headers-then-body pair of small writes
            # would otherwise wait out the client's delayed ACK (~40 ms) on a kept-alive
            # connection, which measures the stdlib server, not the adapter
            wbufsize = -1
            disable_nagle_algorithm = True

            def setup(self) -> None:
                with outer._lock:
                    outer.connections += 1
                super().setup()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = b'{"text": "ok"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "http"
        if tls is not None:  # the handshake runs in the handler's thread, not in accept()
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True,
                                                do_handshake_on_connect=False)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}/ask"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _tls(folder: Path) -> tuple[Any, Any]:
    """A self-signed certificate for 127.0.0.1: (server context, client context trusting
    only it). ``openssl`` makes it; nothing is installed anywhere."""
    import ssl
    import subprocess

    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True,
                   capture_output=True)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    return server, client


def _trusting(agent: Any, client_tls: Any) -> Any:
    """The benchmark's own certificate trusted by ``agent`` (both modes alike)."""
    options = agent._client_options

    def with_ca() -> dict[str, Any]:
        return {**options(), "verify": client_tls}

    agent._client_options = with_ca
    return agent


def _per_call(agent: Any) -> Any:
    """The adapter as it was: a client opened and closed around every request."""
    import httpx

    async def fetch(url: str, kwargs: dict[str, Any]) -> Any:
        async with httpx.AsyncClient(**agent._client_options()) as client:
            return await agent._stream(client, url, kwargs)

    agent._fetch = fetch
    return agent


def _measure(server: _Server, mode: str, workers: int, n: int, rep: int,
             client_tls: Any = None) -> tuple[float, int]:
    agent = from_http(server.url)
    if client_tls is not None:
        _trusting(agent, client_tls)
    if mode == "per call":
        _per_call(agent)
    probes = [Probe.make(f"question {rep}-{i}") for i in range(n)]
    before = server.connections

    async def go() -> float:
        with Engine(agent, EngineConfig(max_workers=workers, retries=0)) as eng:
            t0 = time.perf_counter()
            await asyncio.gather(*(eng.draw(p) for p in probes))
            elapsed = time.perf_counter() - t0
            assert eng.ledger.calls == n, eng.ledger
            assert eng.ledger.failures == 0, eng.ledger
            await agent.aclose()
            return elapsed

    elapsed = asyncio.run(go())
    return n / elapsed, server.connections - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small N, print only")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    n = 100 if args.quick else 500
    repeats = 2 if args.quick else args.repeats
    load0 = os.getloadavg()[0]
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server_tls, client_tls = _tls(Path(tmp))
        for scheme, tls in (("http", None), ("https", server_tls)):
            server = _Server(tls)
            try:
                for workers in (1, 8):
                    got: dict[str, list[tuple[float, int]]] = {"per call": [], "pooled": []}
                    for rep in range(repeats):
                        for mode in ("per call", "pooled"):
                            got[mode].append(_measure(server, mode, workers, n, rep,
                                                      client_tls if tls else None))
                    row: dict[str, Any] = {"scheme": scheme, "workers": workers}
                    for mode, runs in got.items():
                        row[mode] = statistics.median(r for r, _ in runs)
                        row[mode + " best"] = max(r for r, _ in runs)
                        row[mode + " conns"] = statistics.median(c for _, c in runs)
                    rows.append(row)
            finally:
                server.close()
    load1 = os.getloadavg()[0]
    lines = [
        "## HTTP adapter: calls per second, a client per call vs one pooled client", "",
        f"Measured by `python benchmarks/http_calls.py` on {os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()} ({platform.python_implementation()}, {platform.system()} "
        f"{platform.machine()}); N = {n} draws per repeat, median of {repeats} repeats (best "
        f"in brackets); 1-minute load average {load0:.2f} at the start, {load1:.2f} at the "
        "end. A local keep-alive HTTP agent on 127.0.0.1 answering at once, so the figures "
        "are the adapter's own cost per call; *per call* is the previous adapter (a new "
        "`httpx.AsyncClient` per request), *pooled* the current one (one client per adapter "
        "and event loop). Connections: TCP connections the server accepted per repeat "
        "(median). *https*: the same server behind TLS with a self-signed certificate "
        "(RSA 2048, made by `openssl` for the run and trusted only by the benchmark's "
        "client), so each new connection pays a full TLS handshake, as a real endpoint "
        "does (without its network round trips, which make the per-call cost larger).", "",
        "| scheme | max_workers | per call: calls/s | connections | pooled: calls/s | "
        "connections | speed-up |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scheme']} | {r['workers']} | {r['per call']:.0f} ({r['per call best']:.0f}) | "
            f"{r['per call conns']:.0f} | {r['pooled']:.0f} ({r['pooled best']:.0f}) | "
            f"{r['pooled conns']:.0f} | **{r['pooled'] / r['per call']:.2f}x** |")
    table = "\n".join(lines)
    print(table)
    if not args.quick:
        doc = ROOT / "docs" / "benchmarks.md"
        doc.write_text(replace_section(doc.read_text(encoding="utf-8"), SECTION, table),
                       encoding="utf-8")
        print(f"wrote {doc.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
