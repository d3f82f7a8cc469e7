"""Agents behind HTTP (extra ``http``: httpx, async).

One ``ainvoke`` is one request. Failures are typed for the engine's retry policy: 429 (with
its ``Retry-After``), 5xx, connection errors and timeouts are retryable; other 4xx and
unparseable answers are not. No header value, API key or expanded secret ever appears in an
error message.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from .._internal.jsonpath import MISSING, lookup, parse_path
from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation
from ._base import AsyncAdapter
from ._nonce import fresh_nonce, nonce_field_parts, with_nonce

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "HTTPAdapter", "from_http", "parse_retry_after",
           "redact", "redact_message", "snippet"]

_PROMPT_MARKS = ("${prompt}", "{prompt}")
_SENSITIVE = re.compile(r"auth|api[-_]?key|token|secret|password|cookie|session", re.I)
_AUTO_KEYS = ("text", "answer", "output", "response", "content", "message", "result")
_MISSING = object()


#: shortest secret tail (or head) removed where a cut left only part of a secret
_MIN_FRAGMENT = 4
#: credentials recognised by their shape, whoever sent them: bearer tokens, ``sk-`` keys,
#: and the value after an Authorization/api_key/token/secret/password name
_SHAPES = (
    (re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=:-]{6,}"), r"\1\2***"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{6,}"), "sk-***"),
    (re.compile(r"(?i)((?:authorization|api[-_]?key|x-api-key|token|secret|password)"
                r"[\"']?\s*[:=]\s*[\"']?)(?!\*\*\*)(?!(?:bearer|basic|token)\s)"
                r"[^\s\"',;&]{6,}"), r"\1***"),
)
#: a fixed cap on messages kept from a service's body (error snippets), applied after redaction
SNIPPET_CHARS = 200
_WINDOW_MARGIN = 8192
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret (longest first) with ``***``.

    Values shorter than 6 characters are left alone: they are not credentials, and
    replacing them would corrupt ids and numbers in reports. Redact before cutting: a cut
    secret no longer matches itself (:func:`snippet` does it in that order).
    """
    for s in sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True):
        text = text.replace(s, "***")
    return text


def redact_message(text: str, secrets: Iterable[str]) -> str:
    """:func:`redact` for messages and errors (never for answer texts, whose content is the
    agent's own): credentials recognised by shape go too, and so does a fragment left where
    someone else cut a secret (a message that ends with a secret's beginning or starts with
    its end)."""
    text = redact(text, secrets)
    for rx, repl in _SHAPES:
        text = rx.sub(repl, text)
    for s in {s for s in secrets if s and len(s) >= 6}:
        for k in range(len(s) - 1, _MIN_FRAGMENT - 1, -1):
            if text.endswith(s[:k]):
                text = text[:-k] + "***"
                break
        for k in range(len(s) - 1, _MIN_FRAGMENT - 1, -1):
            if text.startswith(s[-k:]):
                text = "***" + text[k:]
                break
    return text


def snippet(text: str, secrets: Iterable[str], limit: int = SNIPPET_CHARS) -> str:
    """The first ``limit`` characters of a service's body on one line, redacted *before*
    the cut (only a window is redacted: a secret that starts inside the snippet ends inside
    the window)."""
    window = text[: limit + _WINDOW_MARGIN]
    return " ".join(redact_message(window, secrets).split())[:limit]


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = datetime.fromtimestamp(now if now is not None else time.time(), timezone.utc)
    return max(0.0, (when - current).total_seconds())


def _substitute(template: Any, prompt: str) -> Any:
    if isinstance(template, str):
        if template in _PROMPT_MARKS:
            return prompt
        for mark in _PROMPT_MARKS:
            template = template.replace(mark, prompt)
        return template
    if isinstance(template, Mapping):
        return {k: _substitute(v, prompt) for k, v in template.items()}
    if isinstance(template, (list, tuple)):
        return [_substitute(v, prompt) for v in template]
    return template


_ssl_context: Any = None


async def _hold_client(options: dict[str, Any],
                       forget: Callable[[], object]) -> AsyncIterator[Any]:
    """Yield one httpx client and close it when this generator is closed: the loop's
    async-generator shutdown then closes a client nobody closed by hand."""
    import httpx

    client = httpx.AsyncClient(**options)
    try:
        yield client
    finally:
        forget()
        await client.aclose()


def _limits(max_connections: int) -> Any:
    import httpx

    return httpx.Limits(max_connections=max_connections,
                        max_keepalive_connections=max_connections)


def _verify() -> Any:
    """One default SSL context per process: building it costs ~40 ms per client."""
    global _ssl_context
    if _ssl_context is None:
        import ssl
        _ssl_context = ssl.create_default_context()
    return _ssl_context


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class _Response:
    """What is kept of a response: status, headers and a size-checked body."""

    __slots__ = ("content", "encoding", "headers", "status_code")

    def __init__(self, status_code: int, headers: Any, content: bytes, encoding: str) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.encoding = encoding

    @property
    def text(self) -> str:
        try:
            return self.content.decode(self.encoding, errors="replace")
        except LookupError:  # an unknown charset named by the service
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        from .._internal.files import bounded_int
        try:
            return json.loads(self.content, parse_int=bounded_int)
        except RecursionError:
            raise ValueError("nested too deeply") from None


class HTTPAdapter(AsyncAdapter):
    """An agent behind an HTTP endpoint. Build it with :func:`from_http`."""


    def __init__(self, url: str, *, method: str, body: Any, headers: Mapping[str, str],
                 response_path: str | None, verdict_path: str | None, timeout_s: float,
                 span_source: Any, span_timeout_s: float, baggage: Mapping[str, str],
                 call_id_header: str | None, secrets: Iterable[str], identity: str | None,
                 exclude_tools: Iterable[str],
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 proxy: str | None = None, trust_env: bool = False,
                 max_connections: int = 100, nonce_header: str | None = None,
                 nonce_field: str | None = None) -> None:
        self.url = url
        self.nonce_header = nonce_header
        self.nonce_field = nonce_field
        self._nonce_parts = (nonce_field_parts(nonce_field, where="from_http")
                             if nonce_field is not None else None)
        self.max_response_bytes = max_response_bytes
        self.method = method
        self.body = body
        self.headers = dict(headers)
        self.response_path = response_path
        self.verdict_path = verdict_path
        self.timeout_s = timeout_s
        self.span_source = span_source
        self.span_timeout_s = span_timeout_s
        self.baggage = dict(baggage)
        self.call_id_header = call_id_header
        self.exclude_tools = tuple(exclude_tools)
        self._secrets = {str(s) for s in secrets if s}
        for k, v in self.headers.items():
            if _SENSITIVE.search(k) and v:
                self._secrets.add(v)
                if " " in v.strip():  # "Bearer abc": the token alone is a secret too
                    self._secrets.add(v.strip().split(" ", 1)[1])
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = host if parts.port is None else f"{host}:{parts.port}"
        # no query string or credentials in the identity: they may hold keys
        safe = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
        self.identity = identity or f"http:{method} {self.redact(safe)}"
        #: the trace id of the most recent call (for reports); None before any call
        self.last_trace_id: str | None = None
        self.proxy = proxy
        if proxy is not None and urlsplit(proxy).password:
            self._secrets.add(str(urlsplit(proxy).password))
        self.trust_env = trust_env
        self.max_connections = max_connections
        # one (holder, client) per event loop; a loop that ends takes its client with it
        self._clients: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = \
            weakref.WeakKeyDictionary()

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _error(self, message: str, **kw: Any) -> AgentCallError:
        return AgentCallError(redact_message(message, self._secrets), **kw)

    async def _client(self) -> Any:
        """The connection pool of this adapter on the running event loop.

        An httpx client belongs to the loop that opened its connections, so there is one per
        (adapter, loop), reused by every call on that loop: one TLS handshake per connection,
        not per call. It is closed by :meth:`aclose`, or when its loop ends
        (``asyncio.run`` and the engine's loop thread close pending async generators, and
        the client lives inside one).
        """
        loop = asyncio.get_running_loop()
        held = self._clients.get(loop)
        if held is None:
            # a client references its loop, so the weak key alone would never let go: an
            # entry leaves when its client closes, and a loop closed without closing its
            # generators is dropped here
            for old in [lp for lp in self._clients if lp.is_closed()]:
                del self._clients[old]
            holder = _hold_client(self._client_options(),
                                  lambda: self._clients.pop(loop, None))
            held = (holder, await holder.__anext__())
            self._clients[loop] = held
        return held[1]

    def _client_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "timeout": self.timeout_s, "follow_redirects": False, "verify": _verify(),
            # proxies are opt-in: a proxy named here, or HTTP(S)_PROXY with trust_env
            "trust_env": self.trust_env,
            "limits": _limits(self.max_connections)}
        if self.proxy is not None:
            options["proxy"] = self.proxy
        return options

    async def aclose(self) -> None:
        """Close this adapter's client on the running loop (idempotent)."""
        held = self._clients.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[0].aclose()

    async def _fetch(self, url: str, kwargs: dict[str, Any]) -> _Response:
        """One request, its body streamed and refused past ``max_response_bytes``: an
        endless (chunked) body is never buffered."""
        return await self._stream(await self._client(), url, kwargs)

    async def _stream(self, client: Any, url: str, kwargs: dict[str, Any]) -> _Response:
        async with client.stream(self.method, url, **kwargs) as resp:
            declared = resp.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > self.max_response_bytes:
                raise self._too_large(f"{int(declared):,} bytes announced")
            chunks: list[bytes] = []
            size = 0
            async for chunk in resp.aiter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    raise self._too_large("more bytes kept coming")
                chunks.append(chunk)
            return _Response(resp.status_code, resp.headers, b"".join(chunks),
                             resp.encoding or "utf-8")

    def _cut(self, resp: _Response) -> str:
        return snippet(resp.text, self._secrets)

    def _too_large(self, detail: str) -> AgentCallError:
        return self._error(f"{self.identity}: the answer is over the "
                           f"{self.max_response_bytes:,}-byte limit ({detail})",
                           kind="too_large")


    async def ainvoke(self, prompt: str) -> Observation:
        import httpx

        from ..otel import NoSpansArrived, new_trace_context

        trace = new_trace_context(self.baggage)
        self.last_trace_id = trace.trace_id
        headers = {"Accept": "application/json", **self.headers, **trace.headers()}
        if self.call_id_header:
            headers[self.call_id_header] = uuid.uuid4().hex
        nonce = fresh_nonce() if self.nonce_header or self._nonce_parts else None
        if self.nonce_header:
            headers[self.nonce_header] = str(nonce)
        url = self.url.replace("{prompt}", quote(prompt, safe="")) if "{prompt}" in self.url \
            else self.url
        kwargs: dict[str, Any] = {"headers": headers}
        if self.method not in ("GET", "HEAD", "DELETE"):
            kwargs["json"] = _substitute(self.body, prompt) if self.body is not None \
                else {"prompt": prompt}
            if self._nonce_parts is not None and nonce is not None:
                kwargs["json"] = with_nonce(kwargs["json"], self._nonce_parts, nonce)
        t0 = time.perf_counter()
        try:
            # the whole exchange within timeout_s: httpx times each read, so a body that
            # drips a byte at a time would otherwise never time out
            resp = await asyncio.wait_for(self._fetch(url, kwargs), timeout=self.timeout_s)
        except (httpx.TimeoutException, asyncio.TimeoutError):
            raise self._error(f"{self.identity}: no answer within {self.timeout_s:g}s",
                              kind="timeout", retryable=True) from None
        except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError,
                httpx.WriteError) as exc:
            raise self._error(f"{self.identity}: cannot reach the agent "
                              f"({type(exc).__name__}: {exc})", kind="connect",
                              retryable=True) from None
        except httpx.HTTPError as exc:
            raise self._error(f"{self.identity}: request failed ({type(exc).__name__}: {exc})",
                              kind="error") from None
        latency = time.perf_counter() - t0
        obs = self._parse(resp)
        obs = replace(obs, latency_s=latency)
        if self.span_source is not None:
            spans = await self.span_source.wait_for(trace.trace_id, timeout_s=self.span_timeout_s,
                                                    root_span_id=trace.span_id)
            if not spans:
                raise NoSpansArrived(trace.trace_id, self.span_timeout_s,
                                     self.span_source.describe())
            from ..otel import spans_to_tool_calls
            obs = replace(obs, tools=spans_to_tool_calls(spans, exclude=self.exclude_tools))
        return obs

    def _parse(self, resp: _Response) -> Observation:
        code = resp.status_code
        if code == 429:
            raise self._error(f"{self.identity}: HTTP 429 Too Many Requests",
                              kind="rate_limit", retryable=True,
                              retry_after_s=parse_retry_after(resp.headers.get("Retry-After")))
        if code >= 500:
            raise self._error(f"{self.identity}: HTTP {code}: {self._cut(resp)}", kind="http_5xx",
                              retryable=True,
                              retry_after_s=parse_retry_after(resp.headers.get("Retry-After")))
        if code >= 400:
            raise self._error(f"{self.identity}: HTTP {code}: {self._cut(resp)}",
                              kind=f"http_{code}")
        if code >= 300:
            raise self._error(f"{self.identity}: HTTP {code} redirect (not followed)",
                              kind=f"http_{code}")
        doc: Any = _MISSING
        try:
            doc = resp.json()
        except ValueError:
            if self.response_path is not None or self.verdict_path is not None:
                raise self._error(f"{self.identity}: the answer is not JSON: {self._cut(resp)}",
                                  kind="bad_output") from None
        if self.response_path is None:  # auto: a usual key of a JSON object, else the body
            text = resp.text
            if isinstance(doc, Mapping):
                for key in _AUTO_KEYS:
                    if isinstance(doc.get(key), str):
                        text = doc[key]
                        break
        else:
            value = lookup(doc, self.response_path)
            if value is MISSING or value is None:
                raise self._error(f"{self.identity}: the answer has no {self.response_path!r} "
                                  "field", kind="bad_output")
            text = _as_text(value)
        verdict = None
        if self.verdict_path is not None:
            v = lookup(doc, self.verdict_path)
            verdict = None if v is MISSING or v is None else self.redact(_as_text(v))
        # raw is kept in the record/replay store: a service echoing a credential must not
        # put it there, so it is redacted like the text
        raw = self._scrub(doc) if doc is not _MISSING else None
        return Observation(text=self.redact(text), verdict=verdict, raw=raw)

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        if isinstance(value, Mapping):
            return {self._scrub(k): self._scrub(v) for k, v in value.items()}
        return value

    def __repr__(self) -> str:
        return f"from_http({self.identity.removeprefix('http:')!r})"


def from_http(url: str, *, method: str = "POST", body: Any = None,
              headers: Mapping[str, str] | None = None, response_path: str | None = "text",
              verdict_path: str | None = None, timeout_s: float = 60.0,
              span_source: Any = None, span_timeout_s: float = 10.0,
              baggage: Mapping[str, str] | None = None,
              call_id_header: str | None = "test-prompt-id",
              secrets: Iterable[str] = (), exclude_tools: Iterable[str] = (),
              identity: str | None = None,
              max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
              proxy: str | None = None, trust_env: bool = False,
              max_connections: int = 100, nonce_header: str | None = None,
              nonce_field: str | None = None) -> HTTPAdapter:
    """An adapter that sends each prompt to ``url`` and reads the answer from JSON.

    Args:
        url: ``http(s)://`` endpoint; ``{prompt}`` in it is replaced (URL-quoted).
        method: HTTP method; GET/HEAD/DELETE send no body.
        body: JSON template; every string equal to or containing ``{prompt}`` or
            ``${prompt}`` gets the prompt. ``None`` sends ``{"prompt": prompt}``.
        headers: extra request headers (values never appear in errors or reports).
        response_path: dotted path to the answer text in the JSON response
            (``choices.0.message.content``); ``None`` = the first of text/answer/output/...
            of a JSON object, else the raw body.
        verdict_path: optional dotted path to a categorical verdict.
        timeout_s: per-request timeout (retryable ``timeout`` failure).
        span_source: a :class:`~agentverity_props.otel.SpanSource`; when set, each call
            carries a fresh W3C ``traceparent`` and its ``tools`` come from the spans of that
            trace (a call whose spans never arrive fails with kind ``no_spans``).
        span_timeout_s: how long to wait for a call's spans.
        baggage: W3C baggage entries sent with every call (e.g. the case id).
        call_id_header: header carrying a fresh id per call (revefi-agent-test's
            ``test-prompt-id``); ``None`` sends none.
        secrets: extra strings to redact from every message (e.g. expanded ``${VAR}`` values).
        exclude_tools: tool names never counted (structured-output tools).
        identity: stable agent name for record/replay keys; derived from the URL by default.
        max_response_bytes: largest answer body read (default 4 MiB); a larger or endless
            one is cut off while streaming and fails the call with kind ``too_large``.
        proxy: a proxy URL for every request (``http://proxy:3128``); none by default.
        trust_env: honour ``HTTP(S)_PROXY``/``NO_PROXY`` and ``SSL_CERT_FILE`` from the
            environment (off by default: a run is the same on every machine).
        max_connections: size of the connection pool; the adapter keeps one pool per event
            loop and reuses its connections from call to call.
        nonce_header: a header carrying a fresh cache-busting nonce (an integer) on every
            call, for a response cache that keys on it (docs/statistics.md §2b, "A way
            out"); ``None`` sends none.
        nonce_field: a dotted path in the JSON body (``seed``, ``metadata.nonce``) set to a
            fresh nonce on every call, for a cache that keys on the body (an OpenAI-style
            gateway: ``nonce_field="seed"``); not with GET, HEAD or DELETE.

    Example:
        >>> agent = from_http("http://127.0.0.1:8080/ask", body={"input": "${prompt}"})
        >>> agent.identity
        'http:POST http://127.0.0.1:8080/ask'
    """
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") \
            or not urlsplit(url).hostname:
        raise InvalidArgument(f"from_http needs an http(s):// URL, got {str(url)[:80]!r}")
    method = str(method).upper()
    if method not in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"):
        raise InvalidArgument(f"from_http: unsupported method {method!r}")
    if not (isinstance(timeout_s, (int, float)) and timeout_s > 0):
        raise InvalidArgument(f"from_http: timeout_s must be > 0, got {timeout_s!r}")
    if not (isinstance(max_response_bytes, int) and max_response_bytes >= 1024):
        raise InvalidArgument("from_http: max_response_bytes must be an int >= 1024, got "
                              f"{max_response_bytes!r}")
    if not (isinstance(span_timeout_s, (int, float)) and span_timeout_s >= 0):
        raise InvalidArgument(f"from_http: span_timeout_s must be >= 0, got {span_timeout_s!r}")
    if proxy is not None and (not isinstance(proxy, str)
                              or urlsplit(proxy).scheme not in ("http", "https", "socks5")):
        # the value is not shown: a proxy URL may carry a password
        raise InvalidArgument("from_http: proxy must be an http(s):// or socks5:// URL")
    if not (isinstance(max_connections, int) and not isinstance(max_connections, bool)
            and max_connections >= 1):
        raise InvalidArgument(f"from_http: max_connections must be an int >= 1, got "
                              f"{max_connections!r}")
    if span_source is not None and not callable(getattr(span_source, "wait_for", None)):
        raise InvalidArgument("from_http: span_source must implement wait_for(trace_id, ...)")
    try:
        json.dumps(body)
    except (TypeError, ValueError):
        raise InvalidArgument("from_http: body must be JSON-serialisable") from None
    for name, path in (("response_path", response_path), ("verdict_path", verdict_path)):
        try:
            if path is not None:
                parse_path(path)
        except ValueError as exc:
            raise InvalidArgument(f"from_http: {name}: {exc}") from None
    if nonce_header is not None and (not isinstance(nonce_header, str)
                                     or not nonce_header.strip()):
        raise InvalidArgument(f"from_http: nonce_header must be a header name such as "
                              f"'X-Cache-Nonce', got {nonce_header!r}")
    if nonce_field is not None:
        nonce_field_parts(nonce_field, where="from_http")
        if method in ("GET", "HEAD", "DELETE"):
            raise InvalidArgument(f"from_http: nonce_field needs a request body, and {method} "
                                  "sends none; use nonce_header, or method='POST'")
    return HTTPAdapter(url, method=method, body=body, headers=dict(headers or {}),
                       response_path=response_path, verdict_path=verdict_path,
                       timeout_s=float(timeout_s), span_source=span_source,
                       span_timeout_s=float(span_timeout_s), baggage=dict(baggage or {}),
                       call_id_header=call_id_header, secrets=secrets, identity=identity,
                       exclude_tools=exclude_tools, max_response_bytes=max_response_bytes,
                       proxy=proxy, trust_env=bool(trust_env),
                       max_connections=max_connections, nonce_header=nonce_header,
                       nonce_field=nonce_field)
