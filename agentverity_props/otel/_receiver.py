"""A minimal OTLP/HTTP trace receiver on 127.0.0.1 (``POST /v1/traces``).

It accepts what OpenTelemetry exporters send: ``application/x-protobuf`` (an
``ExportTraceServiceRequest``) and the OTLP JSON encoding (hex trace/span ids), either one
optionally gzip-compressed. Bodies over ``max_bytes`` get 413 before being read; bodies that
do not decode get 400. Only ``opentelemetry-proto`` is needed (extra ``otel``).
"""

from __future__ import annotations

import base64
import json
import threading
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import InvalidArgument
from ._records import SpanCollector, SpanEvent, SpanRecord

__all__ = ["DEFAULT_MAX_BYTES", "OTLPReceiver", "ReceiverStats", "decode_json", "decode_protobuf"]

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
# gzip can expand a small body enormously: cap what decompression may produce too
_INFLATE_FACTOR = 16
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET",
           "STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}


class PayloadError(ValueError):
    """A request body that cannot be decoded as OTLP traces."""


# ------------------------------------------------------------------ decoding


def _pb_value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return tuple(_pb_value(x) for x in v.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind)


def _pb_attrs(attrs: Iterable[Any]) -> dict[str, Any]:
    return {kv.key: _pb_value(kv.value) for kv in attrs}


def decode_protobuf(data: bytes) -> list[SpanRecord]:
    """Decode an ``ExportTraceServiceRequest`` into span records."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(data)
    except DecodeError as exc:
        raise PayloadError(f"not an OTLP protobuf ExportTraceServiceRequest: {exc}") from None
    out: list[SpanRecord] = []
    for rs in req.resource_spans:
        service = _pb_attrs(rs.resource.attributes).get("service.name")
        for ss in rs.scope_spans:
            for sp in ss.spans:
                if len(sp.trace_id) != 16 or len(sp.span_id) != 8:
                    raise PayloadError("span with a malformed trace_id or span_id")
                out.append(SpanRecord(
                    trace_id=sp.trace_id.hex(), span_id=sp.span_id.hex(), name=sp.name,
                    parent_span_id=sp.parent_span_id.hex() or None,
                    start_ns=sp.start_time_unix_nano, end_ns=sp.end_time_unix_nano,
                    attributes=_pb_attrs(sp.attributes),
                    events=tuple(SpanEvent(e.name, _pb_attrs(e.attributes), e.time_unix_nano)
                                 for e in sp.events),
                    status=_STATUS.get(sp.status.code, "UNSET"),
                    service=str(service) if service is not None else None))
    return out


def _js_value(v: Any) -> Any:
    if not isinstance(v, Mapping) or not v:
        return None
    key, val = next(iter(v.items()))
    if key == "intValue":
        return int(val)
    if key == "doubleValue":
        return float(val)
    if key == "bytesValue":
        return base64.b64decode(val)
    if key == "arrayValue":
        return tuple(_js_value(x) for x in (val or {}).get("values", ()))
    if key == "kvlistValue":
        return _js_attrs((val or {}).get("values", ()))
    return val


def _js_attrs(attrs: Any) -> dict[str, Any]:
    if not isinstance(attrs, list):
        raise PayloadError("attributes must be a list of {key, value}")
    return {str(kv["key"]): _js_value(kv.get("value")) for kv in attrs}


def _js_id(value: Any, width: int, what: str) -> str:
    text = str(value or "").lower()
    if len(text) != width or any(c not in "0123456789abcdef" for c in text):
        raise PayloadError(f"{what} must be {width} hex digits in OTLP JSON")
    return text


def decode_json(data: bytes) -> list[SpanRecord]:
    """Decode the OTLP JSON encoding (ids in hex, 64-bit integers possibly as strings)."""
    try:
        doc = json.loads(data)
        out: list[SpanRecord] = []
        for rs in doc.get("resourceSpans", ()):
            service = _js_attrs((rs.get("resource") or {}).get("attributes", [])).get(
                "service.name")
            for ss in rs.get("scopeSpans", ()):
                for sp in ss.get("spans", ()):
                    parent = sp.get("parentSpanId") or None
                    out.append(SpanRecord(
                        trace_id=_js_id(sp.get("traceId"), 32, "traceId"),
                        span_id=_js_id(sp.get("spanId"), 16, "spanId"),
                        name=str(sp.get("name", "")),
                        parent_span_id=_js_id(parent, 16, "parentSpanId") if parent else None,
                        start_ns=int(sp.get("startTimeUnixNano") or 0),
                        end_ns=int(sp.get("endTimeUnixNano") or 0),
                        attributes=_js_attrs(sp.get("attributes", [])),
                        events=tuple(SpanEvent(str(e.get("name", "")),
                                               _js_attrs(e.get("attributes", [])),
                                               int(e.get("timeUnixNano") or 0))
                                     for e in sp.get("events", ())),
                        status=_STATUS.get((sp.get("status") or {}).get("code", 0), "UNSET"),
                        service=str(service) if service is not None else None))
        return out
    except PayloadError:
        raise
    except RecursionError:  # json's nesting bound is the interpreter's recursion limit
        raise PayloadError("not OTLP JSON traces: nested too deeply") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise PayloadError(f"not OTLP JSON traces: {type(exc).__name__}: {exc}") from None


def _gunzip(data: bytes, limit: int) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as exc:
        raise PayloadError(f"bad gzip body: {exc}") from None
    if len(out) > limit or d.unconsumed_tail:
        raise OverflowError
    if not d.eof:  # the stream stops before its end marker and CRC: a cut body
        raise PayloadError("truncated gzip body (no end of stream)")
    return out


# ------------------------------------------------------------------ server


@dataclass(frozen=True)
class ReceiverStats:
    """What the receiver has seen: tells "nothing was sent" apart from "sent elsewhere"."""

    requests: int
    accepted: int
    spans: int
    rejected_too_large: int
    rejected_malformed: int
    last_error: str | None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # rebind over TIME_WAIT; Linux still refuses a second listener
    receiver: OTLPReceiver

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that resets or a handler bug must not print a traceback on the terminal
        # of the command that opened the receiver; the request is counted as malformed
        self.receiver._count("rejected_malformed", "connection error while serving")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # stay quiet: it's a test harness
        return None

    def _reply(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        # one request per connection: an exporter's idle keep-alive connection would hold
        # the port in FIN-WAIT-2 after the receiver stops, and block the next run's bind
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._reply(405, b'{"error": "POST OTLP traces to /v1/traces"}')

    def do_POST(self) -> None:
        rec = self.server.receiver
        rec._count("requests")
        if self.path.split("?", 1)[0].rstrip("/") != "/v1/traces":
            self._reply(404, b'{"error": "only /v1/traces is served"}')
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            rec._count("rejected_malformed", "missing Content-Length")
            self._reply(411, b'{"error": "Content-Length required"}')
            return
        if length > rec.max_bytes:
            rec._count("rejected_too_large", f"payload of {length} bytes > {rec.max_bytes}")
            # the body is left unread: close the connection rather than drain it
            self._reply(413, b'{"error": "payload too large"}')
            return
        data = self.rfile.read(length)
        ctype = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        try:
            if (self.headers.get("Content-Encoding") or "").strip().lower() == "gzip":
                data = _gunzip(data, rec.max_bytes * _INFLATE_FACTOR)
            if ctype == "application/json":
                spans = decode_json(data)
                body, out_type = b"{}", "application/json"
            elif ctype in ("application/x-protobuf", "application/protobuf"):
                spans = decode_protobuf(data)
                body, out_type = b"", "application/x-protobuf"
            else:
                raise PayloadError(f"unsupported Content-Type {ctype!r}; send "
                                   "application/x-protobuf or application/json")
        except OverflowError:
            rec._count("rejected_too_large", "gzip body inflates past the limit")
            self._reply(413, b'{"error": "payload too large once decompressed"}')
            return
        except PayloadError as exc:
            rec._count("rejected_malformed", str(exc)[:200])
            self._reply(400, json.dumps({"error": str(exc)[:200]}).encode())
            return
        except Exception as exc:  # anything else a hostile body provokes: 400, no traceback
            why = f"cannot decode the body ({type(exc).__name__})"
            rec._count("rejected_malformed", why)
            self._reply(400, json.dumps({"error": why}).encode())
            return
        rec.collector.add(spans)
        rec._count("accepted", spans=len(spans))
        self._reply(200, body, out_type)


class OTLPReceiver:
    """An OTLP/HTTP trace receiver bound to 127.0.0.1.

    Args:
        port: TCP port; 0 picks a free ephemeral port (read it back from ``.port``).
        max_bytes: largest accepted request body (compressed size); larger ones get 413.
        collector: where spans go; a fresh :class:`SpanCollector` by default.

    Example:
        >>> with OTLPReceiver(port=0) as rx:
        ...     rx.endpoint.startswith("http://127.0.0.1:")
        True
    """

    host = "127.0.0.1"

    def __init__(self, *, port: int = 0, max_bytes: int = DEFAULT_MAX_BYTES,
                 collector: SpanCollector | None = None) -> None:
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise InvalidArgument(f"port must be an int in 0..65535, got {port!r}")
        if not isinstance(max_bytes, int) or max_bytes < 1024:
            raise InvalidArgument(f"max_bytes must be an int >= 1024, got {max_bytes!r}")
        self.max_bytes = max_bytes
        self.collector = collector or SpanCollector()
        self._requested_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stats = {"requests": 0, "accepted": 0, "spans": 0, "rejected_too_large": 0,
                       "rejected_malformed": 0}
        self._last_error: str | None = None

    def _count(self, key: str, error: str | None = None, *, spans: int = 0) -> None:
        with self._lock:
            self._stats[key] += 1
            self._stats["spans"] += spans
            if error:
                self._last_error = error

    @property
    def stats(self) -> ReceiverStats:
        with self._lock:
            return ReceiverStats(last_error=self._last_error, **self._stats)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the receiver is not started")
        return int(self._server.server_address[1])

    @property
    def endpoint(self) -> str:
        """The URL to give an exporter (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)."""
        return f"http://{self.host}:{self.port}/v1/traces"

    def start(self) -> OTLPReceiver:
        """Bind and serve in a daemon thread (idempotent)."""
        if self._server is not None:
            return self
        server = _Server((self.host, self._requested_port), _Handler)
        server.receiver = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="agentverity-otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
