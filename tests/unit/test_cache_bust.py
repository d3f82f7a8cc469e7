"""Cache-busting nonces (issue 47, docs/statistics.md §2b "A way out"): ``from_http``'s
``nonce_header`` / ``nonce_field`` and ``from_callable``'s ``nonce_param`` send a fresh value
on every call, through a real HTTP server on 127.0.0.1 with a response cache in front of a
noisy agent: without the nonce the dependence check fires, with it the cache never hits."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentverity_props import from_callable, run
from agentverity_props.adapters import from_http
from agentverity_props.errors import InvalidArgument
from agentverity_props.runner import RunConfig

INPUTS = [f"request number {i} about account {i * 7}" for i in range(20)]
TTL = 30


class _CachedServer:
    """A noisy agent (15% of calls answer 'review' instead of 'allow') behind a gateway
    cache with a TTL of 30 calls, keyed on the request body and ``x-cache-nonce``."""

    def __init__(self, seed: int) -> None:
        self.requests: list[dict[str, Any]] = []
        self.hits = 0
        rng = random.Random(seed)
        lock = threading.Lock()
        filled: dict[str, tuple[int, str]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                key = json.dumps(body, sort_keys=True) + "|" + str(
                    self.headers.get("x-cache-nonce"))
                with lock:
                    now = len(outer.requests)
                    outer.requests.append({"json": body, "headers": dict(self.headers)})
                    hit = filled.get(key)
                    if hit is not None and now - hit[0] <= TTL:
                        outer.hits += 1
                        answer = hit[1]
                    else:
                        answer = "review" if rng.random() < 0.15 else "allow"
                        filled[key] = (now, answer)
                data = json.dumps({"text": answer}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/ask"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def cached() -> Iterator[_CachedServer]:
    server = _CachedServer(seed=3)
    yield server
    server.close()


def _run(agent: Any) -> Any:
    return run(agent, INPUTS, [], config=RunConfig(seed=1, max_workers=2, budget=2000))


def test_the_cache_is_detected_without_a_nonce(cached: _CachedServer) -> None:
    r = _run(from_http(cached.url, body={"input": "${prompt}"}))
    assert cached.hits > 0
    assert r.dependence.verdict == "detected"
    assert r.exit_code == 2


@pytest.mark.parametrize("option", [{"nonce_field": "seed"},
                                    {"nonce_field": "metadata.nonce"},
                                    {"nonce_header": "X-Cache-Nonce"}])
def test_a_nonce_on_every_call_keeps_the_cache_from_hitting(cached: _CachedServer,
                                                            option: dict[str, str]) -> None:
    r = _run(from_http(cached.url, body={"input": "${prompt}", "metadata": {"team": "a"}},
                       **option))
    assert cached.hits == 0
    assert not r.dependence.fired
    assert r.meter.call == "verdict-stochastic"  # the noise the cache hid is seen
    sent = [q["json"] for q in cached.requests]
    if "nonce_field" in option:
        *outer, last = option["nonce_field"].split(".")
        values = [(q[outer[0]] if outer else q)[last] for q in sent]
        assert all(isinstance(v, int) for v in values)
        assert sent[0]["metadata"].get("team") == "a"  # the rest of the body is kept
    else:
        values = [q["headers"]["X-Cache-Nonce"] for q in cached.requests]
    assert len(set(values)) == len(values)  # fresh on every call


def test_from_callable_passes_a_fresh_nonce_in_the_named_keyword() -> None:
    seen: list[int] = []

    def agent(prompt: str, *, seed: int) -> str:
        seen.append(seed)
        return "allow"

    a = from_callable(agent, nonce_param="seed")
    assert a.invoke("x").text == "allow"
    a.invoke("x")
    assert len(set(seen)) == 2
    assert all(isinstance(s, int) for s in seen)


def test_nonce_options_are_checked_eagerly() -> None:
    with pytest.raises(InvalidArgument, match="takes no keyword 'seed'"):
        from_callable(lambda p: "allow", nonce_param="seed")
    with pytest.raises(InvalidArgument, match="nonce_param must be a keyword name"):
        from_callable(lambda p, **kw: "allow", nonce_param="not a name")
    from_callable(lambda p, **kw: "allow", nonce_param="seed")  # **kwargs accepts it
    with pytest.raises(InvalidArgument, match="nonce_field needs a request body"):
        from_http("http://127.0.0.1:1/ask", method="GET", nonce_field="seed")
    with pytest.raises(InvalidArgument, match="dotted path"):
        from_http("http://127.0.0.1:1/ask", nonce_field="a..b")
    with pytest.raises(InvalidArgument, match="nonce_header must be a header name"):
        from_http("http://127.0.0.1:1/ask", nonce_header=" ")
