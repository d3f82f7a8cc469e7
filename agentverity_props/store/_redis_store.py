"""The networked store for many CI runners: Redis (extra ``redis``).

Why Redis: one small server (one Debian package, no initdb, no roles) that every runner
reaches over TCP, and an atomic script per write, so "the first stored draw wins, except
that a success replaces a failure" holds across machines exactly as in SQLite. Keep its
data on disk (``appendonly yes``) if the recordings must outlive the server.

Layout under the prefix ``avp:<namespace>:`` (``?namespace=`` of the URL, a team's key
space; default ``default``): ``meta`` (a hash: format and version), ``groups`` (a hash:
group id -> ``[agent, fp, extractor]``) and one hash per probe, ``g:<group id>``, whose
fields are ``<index>@<runner>`` and values ``<ok flag><observation JSON>``. The key space
also holds the quota its runners share (``quota:slots``, ``quota:pause``: see
:mod:`._redis_quota`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._internal.settings import setting
from ..errors import BadInput
from ..observation import Observation
from ._namespace import check_namespace, runner_namespace
from ._store import ClosesOnce, StoreRow, encode

__all__ = ["RedisStore"]

FORMAT = "agentverity-props-store"
VERSION = 1
def _fix() -> str:
    return f"start it, or check the host, port and password of the {setting('store', 'URL')}"

# KEYS: group hash, groups hash; ARGV: field, value, overwrite, group id, group JSON
_PUT = """
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and ARGV[3] ~= '1' and not (string.sub(cur, 1, 1) == '0'
                                   and string.sub(ARGV[2], 1, 1) == '1') then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[2], ARGV[4], ARGV[5])
return 1
"""


class RedisStore(ClosesOnce):
    """Draws in a Redis server, shared by every runner that reaches it.

    Args:
        url: ``redis://[:password@]host:port/db?namespace=team`` (``rediss://`` for TLS);
            ``namespace`` is the team's key space, ``runner`` may name the runner.
        runner: the runner namespace (default: ``?runner=``, else
            :func:`~agentverity_props.store.runner_namespace`).
        must_exist: refuse a key space nothing was recorded into (replay).
    """

    read_only = False

    def __init__(self, url: str, *, runner: str | None = None,
                 must_exist: bool = False) -> None:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        space = check_namespace(query.pop("namespace", "default") or "default", "namespace")
        if runner is None and "runner" in query:
            runner = query["runner"]
        query.pop("runner", None)
        self.namespace = runner_namespace(runner, networked=True)
        self.space = space
        host = parts.hostname or ""
        netloc = host if parts.port is None else f"{host}:{parts.port}"
        # the location names the server, never its password
        self.location = urlunsplit((parts.scheme, netloc, parts.path,
                                    urlencode({"namespace": space}), ""))
        self._prefix = f"avp:{space}:"
        super().__init__()
        try:
            import redis
        except ImportError:
            raise BadInput(f"store {self.location} needs the redis client",
                           "pip install 'agentverity-props[redis]'") from None
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        clean = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
        try:
            self._r = redis.Redis.from_url(clean, socket_timeout=30, socket_connect_timeout=10,
                                           health_check_interval=30)
        except (ValueError, *self._errors) as exc:
            raise BadInput(f"store {self.location} is not a usable Redis URL ({exc})",
                           "write it as redis://host:port/db?namespace=team") from None
        self._put = self._call(lambda: self._r.register_script(_PUT))
        meta = self._call(lambda: self._r.hgetall(self._prefix + "meta"))
        if not meta:
            if must_exist:
                self.close()
                raise BadInput(f"store {self.location} holds no recording",
                               f"record first with {setting('record')} or use {setting('auto')}")
            self._call(lambda: self._r.hset(self._prefix + "meta", mapping={
                "format": FORMAT, "version": str(VERSION)}))
        elif meta.get(b"format") != FORMAT.encode():
            self.close()
            raise BadInput(f"store {self.location}: the key space is not an agentverity-props "
                           "store", "pick another ?namespace= or Redis database")
        elif int(meta.get(b"version", b"0")) > VERSION:
            self.close()
            raise BadInput(f"store {self.location} has version {meta[b'version'].decode()}, "
                           f"newer than this agentverity-props understands ({VERSION})",
                           "upgrade agentverity-props")

    def _call(self, fn: Any) -> Any:
        try:
            return fn()
        except self._errors as exc:
            raise BadInput(f"store {self.location} cannot be reached "
                           f"({type(exc).__name__}: {str(exc)[:120]})", _fix()) from None

    @staticmethod
    def _group(agent: str, fp: str, extractor: str) -> tuple[str, str]:
        doc = json.dumps([agent, fp, extractor], separators=(",", ":"))
        return hashlib.sha256(doc.encode()).hexdigest()[:32], doc

    def get(self, key: tuple[str, str, str, int], *,
            namespace: str | None = None) -> Observation | None:
        ns = self.namespace if namespace is None else namespace
        gid, _ = self._group(*key[:3])
        value = self._call(lambda: self._r.hget(f"{self._prefix}g:{gid}", f"{key[3]}@{ns}"))
        if value is None:
            return None
        return Observation.from_dict(json.loads(value[1:]))

    def put(self, key: tuple[str, str, str, int], obs: Observation, *,
            overwrite: bool = False, namespace: str | None = None) -> bool:
        ns = self.namespace if namespace is None else namespace
        gid, doc = self._group(*key[:3])
        value = ("0" if obs.error is not None else "1") + encode(obs)
        wrote = self._call(lambda: self._put(
            keys=[f"{self._prefix}g:{gid}", self._prefix + "groups"],
            args=[f"{key[3]}@{ns}", value, "1" if overwrite else "0", gid, doc]))
        return bool(wrote)

    def indices(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        gid, _ = self._group(agent, fp, extractor)
        fields = self._call(lambda: self._r.hkeys(f"{self._prefix}g:{gid}"))
        return sorted(_field(f)[::-1] for f in fields)

    def rows(self) -> Iterator[StoreRow]:
        groups = self._call(lambda: self._r.hgetall(self._prefix + "groups"))
        out: list[StoreRow] = []
        for gid, doc in groups.items():
            agent, fp, extractor = json.loads(doc)
            values = self._call(lambda g=gid: self._r.hgetall(
                f"{self._prefix}g:{g.decode()}"))
            for f, v in values.items():
                idx, ns = _field(f)
                out.append(StoreRow(agent, fp, extractor, idx, v[:1] == b"1",
                                    Observation.from_dict(json.loads(v[1:])), ns))
        out.sort(key=lambda r: (r.agent, r.fp, r.extractor, r.namespace, r.draw_index))
        return iter(out)

    def count(self) -> int:
        groups = self._call(lambda: self._r.hkeys(self._prefix + "groups"))
        pipe = self._r.pipeline(transaction=False)
        for gid in groups:
            pipe.hlen(f"{self._prefix}g:{gid.decode()}")
        return sum(self._call(pipe.execute)) if groups else 0

    def call_slots(self, size: int) -> Any:
        """At most ``size`` agent calls in flight across every process on this key space
        (:class:`~agentverity_props.store.RedisSlots`, leases of ``LEASE_S`` seconds)."""
        from ._redis_quota import RedisSlots
        return RedisSlots(self._r, self._prefix, size, location=self.location,
                          errors=self._errors)

    def shared_pause(self) -> Any:
        """The 429 pause of every process on this key space
        (:class:`~agentverity_props.store.RedisPause`)."""
        from ._redis_quota import RedisPause
        return RedisPause(self._r, self._prefix, errors=self._errors)

    def _release(self) -> None:
        self._r.close()

    def __repr__(self) -> str:
        return f"RedisStore({self.location!r})"


def _field(raw: bytes) -> tuple[int, str]:
    idx, _, ns = raw.decode().partition("@")
    return int(idx), ns
