"""An HTTP agent that keeps conversations by a session id: :func:`from_http_conversation`.

Each conversation gets a fresh random session id, sent in every turn's JSON body under
``session_field`` (the service keeps the history per id); each turn is one request made by
:func:`~agentverity_props.adapters.from_http` (same options: headers, response and verdict
paths, timeouts, spans). The service's state cannot be copied, so every replay of a
conversation starts from its first turn with a new id.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidArgument
from ..observation import Observation

__all__ = ["HttpConversation", "from_http_conversation"]


class _HttpSession:
    forkable = False  # the history lives in the service

    def __init__(self, owner: HttpConversation) -> None:
        self._owner = owner
        self.session_id = uuid.uuid4().hex
        self._adapter: Any = None

    async def send(self, message: str) -> Observation:
        if self._adapter is None:
            from ..adapters import from_http
            o = self._owner
            body = {**o.body, o.session_field: self.session_id}
            self._adapter = from_http(o.url, body=body, identity=o.identity, **o.http_kwargs)
        obs: Observation = await self._adapter.ainvoke(message)
        return obs

    def fork(self) -> None:
        return None

    def close(self) -> None:
        self._adapter = None


class HttpConversation:
    """Conversations with an HTTP agent keyed by a session id (see
    :func:`from_http_conversation`)."""

    def __init__(self, url: str, *, body: Mapping[str, Any], session_field: str,
                 identity: str, http_kwargs: Mapping[str, Any]) -> None:
        self.url, self.body, self.session_field = url, dict(body), session_field
        self.identity, self.http_kwargs = identity, dict(http_kwargs)

    def open(self) -> _HttpSession:
        return _HttpSession(self)

    def __repr__(self) -> str:
        return f"from_http_conversation({self.identity})"


def from_http_conversation(url: str, *, session_field: str = "session_id",
                           body: Mapping[str, Any] | None = None, identity: str | None = None,
                           **http_kwargs: Any) -> HttpConversation:
    """Conversations with the HTTP agent at ``url``, kept by the service under a session id.

    Args:
        url: the endpoint (as for ``from_http``).
        session_field: the JSON body key carrying the conversation's id.
        body: the JSON body template (a mapping; ``{prompt}`` marks the user turn); default
            ``{"prompt": "{prompt}"}``.
        identity: stable agent name (default ``http-conversation:<url>``).
        http_kwargs: any other ``from_http`` option (``verdict_path``, ``headers``...).

    Raises:
        InvalidArgument: a body that is not a JSON object, or already holds
            ``session_field``; any argument ``from_http`` refuses.
    """
    from ..adapters import from_http

    tmpl = {"prompt": "{prompt}"} if body is None else body
    if not isinstance(tmpl, Mapping):
        raise InvalidArgument("from_http_conversation: body must be a JSON object template "
                              "(the session id is added to it)")
    if session_field in tmpl:
        raise InvalidArgument(f"from_http_conversation: body already has {session_field!r}; "
                              "the session id goes there — remove it or choose session_field=")
    probe = from_http(url, body={**tmpl, session_field: "-"}, **http_kwargs)  # validates
    return HttpConversation(url, body=tmpl, session_field=session_field,
                            identity=identity or "http-conversation:" + probe.identity
                            .removeprefix("http:"), http_kwargs=http_kwargs)
