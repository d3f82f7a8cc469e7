"""Which framework exception becomes which AgentCallError kind, per adapter.

Pins each adapter's classification (kind, retryable, Retry-After and message) over one set of
exceptions built offline by class name and module, the way the adapters match them: the
frameworks themselves are not needed. Every adapter sees every case, so a rule one framework
has and another lacks shows up as a difference in the tables below.
"""

from __future__ import annotations

import importlib
import itertools
from typing import Any

import pytest

ADAPTERS = {
    "langgraph": "agentverity_props.adapters._langgraph",
    "pydantic_ai": "agentverity_props.adapters._pydantic_ai",
    "strands": "agentverity_props.adapters._strands",
    "openai_agents": "agentverity_props.adapters._openai_agents",
}


class _Response:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


def _cls(name: str, module: str = "fwk", base: type[BaseException] = Exception) -> type:
    return type(name, (base,), {"__module__": module})


def build(spec: Any) -> BaseException:
    """An exception from ``spec``: ``(name, module, base, message, attrs)`` or a list of them,
    outermost first, chained through ``__cause__``."""
    if isinstance(spec, list):
        errs = [build(s) for s in spec]
        for outer, inner in itertools.pairwise(errs):
            outer.__cause__ = inner
        return errs[0]
    name, module, base, message, attrs = spec
    exc = _cls(name, module, base)(message)
    for key, value in attrs.items():
        setattr(exc, key, value)
    return exc


def _e(name: str, module: str = "fwk", base: type[BaseException] = Exception,
       message: str = "boom", **attrs: Any) -> tuple[Any, ...]:
    return (name, module, base, message, attrs)


CASES: list[tuple[str, Any]] = [
    ("plain", _e("ValueError", "builtins", ValueError)),
    ("timeout", _e("TimeoutError", "builtins", TimeoutError, "slow")),
    ("throttle_hint", _e("ThrottlingException", "botocore")),
    ("ratelimit_hint", _e("RateLimitExceeded", "somelib")),
    ("openai_ratelimit", _e("RateLimitError", "openai", message="429",
                            response=_Response({"retry-after": "7"}))),
    ("openai_ratelimit_noheaders", _e("RateLimitError", "openai", message="429")),
    ("openai_timeout", _e("APITimeoutError", "openai")),
    ("openai_5xx", _e("InternalServerError", "openai")),
    ("openai_connection", _e("APIConnectionError", "openai")),
    ("openai_timeout_is_connection", _e("APITimeoutError", "openai",
                                        _cls("APIConnectionError", "openai"))),
    ("not_openai_5xx", _e("InternalServerError", "elsewhere")),
    ("status_429", _e("ModelHTTPError", "pydantic_ai", status_code=429)),
    ("status_503", _e("ModelHTTPError", "pydantic_ai", status_code=503)),
    ("status_400", _e("ModelHTTPError", "pydantic_ai", status_code=400)),
    ("model_ratelimit", _e("ModelRateLimitError", "pydantic_ai")),
    ("model_timeout", _e("ModelTimeoutError", "pydantic_ai")),
    ("model_request_timeout", _e("ModelRequestTimeout", "pydantic_ai")),
    ("model_server", _e("ModelServerError", "pydantic_ai")),
    ("model_unavailable", _e("ModelUnavailableError", "pydantic_ai")),
    ("model_connection", _e("ModelConnectionError", "pydantic_ai")),
    ("model_server_400", _e("ModelServerError", "pydantic_ai", status_code=400)),
    ("unexpected_behavior", _e("UnexpectedModelBehavior", "pydantic_ai")),
    ("recursion", _e("GraphRecursionError", "langgraph", message="limit 25")),
    ("structured_output", _e("StructuredOutputException", "strands")),
    ("model_behavior", _e("ModelBehaviorError", "agents")),
    ("guardrail", _e("InputGuardrailTripwireTriggered", "agents")),
    ("long_message", _e("RuntimeError", "builtins", RuntimeError, "x" * 400)),
    ("wrapped_timeout", [_e("EventLoopException", "strands", message="loop"),
                         _e("TimeoutError", "builtins", TimeoutError, "slow")]),
    ("wrapped_plain", [_e("EventLoopException", "strands", message="loop"),
                       _e("KeyError", "builtins", KeyError, "k")]),
    ("timeout_over_throttle", [_e("TimeoutError", "builtins", TimeoutError, "slow"),
                               _e("ThrottlingException", "botocore", message="slow down")]),
    ("wrapped_model_behavior", [_e("RuntimeError", "builtins", RuntimeError, "outer"),
                                _e("ModelBehaviorError", "agents", message="inner")]),
    ("wrapped_recursion", [_e("RuntimeError", "builtins", RuntimeError, "outer"),
                           _e("GraphRecursionError", "langgraph", message="limit")]),
    ("recursion_subclass", _e("MyRecursion", "app", _cls("GraphRecursionError", "langgraph"))),
    ("implicit_context_only", _e("RuntimeError", "builtins", RuntimeError, "outer",
                                 __context__=TimeoutError("hidden"))),
]
_LOOPED = (" (the graph looped; raise recursion_limit through "
           "from_langgraph(config={'recursion_limit': N}) or fix the loop)")

EXPECTED: dict[str, list[tuple[str, str, bool, float | None, str]]] = {
    'langgraph': [
        ('plain', 'error', False, None, 'ValueError: boom'),
        ('timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('throttle_hint', 'rate_limit', True, None, 'ThrottlingException: boom'),
        ('ratelimit_hint', 'rate_limit', True, None, 'RateLimitExceeded: boom'),
        ('openai_ratelimit', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_ratelimit_noheaders', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_timeout', 'error', False, None, 'APITimeoutError: boom'),
        ('openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('openai_connection', 'error', False, None, 'APIConnectionError: boom'),
        ('openai_timeout_is_connection', 'error', False, None, 'APITimeoutError: boom'),
        ('not_openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('status_429', 'error', False, None, 'ModelHTTPError: boom'),
        ('status_503', 'error', False, None, 'ModelHTTPError: boom'),
        ('status_400', 'error', False, None, 'ModelHTTPError: boom'),
        ('model_ratelimit', 'rate_limit', True, None, 'ModelRateLimitError: boom'),
        ('model_timeout', 'error', False, None, 'ModelTimeoutError: boom'),
        ('model_request_timeout', 'error', False, None, 'ModelRequestTimeout: boom'),
        ('model_server', 'error', False, None, 'ModelServerError: boom'),
        ('model_unavailable', 'error', False, None, 'ModelUnavailableError: boom'),
        ('model_connection', 'error', False, None, 'ModelConnectionError: boom'),
        ('model_server_400', 'error', False, None, 'ModelServerError: boom'),
        ('unexpected_behavior', 'error', False, None, 'UnexpectedModelBehavior: boom'),
        ('recursion', 'error', False, None,
         "GraphRecursionError: limit 25" + _LOOPED),
        ('structured_output', 'error', False, None, 'StructuredOutputException: boom'),
        ('model_behavior', 'error', False, None, 'ModelBehaviorError: boom'),
        ('guardrail', 'error', False, None, 'InputGuardrailTripwireTriggered: boom'),
        ('long_message', 'error', False, None, "RuntimeError: " + "x" * 305 + '…'),
        ('wrapped_timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('wrapped_plain', 'error', False, None, 'EventLoopException: loop'),
        ('timeout_over_throttle', 'rate_limit', True, None, 'ThrottlingException: slow down'),
        ('wrapped_model_behavior', 'error', False, None, 'RuntimeError: outer'),
        ('wrapped_recursion', 'error', False, None,
         "GraphRecursionError: limit" + _LOOPED),
        ('recursion_subclass', 'error', False, None, 'MyRecursion: boom'),
        ('implicit_context_only', 'error', False, None, 'RuntimeError: outer'),
    ],
    'pydantic_ai': [
        ('plain', 'error', False, None, 'ValueError: boom'),
        ('timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('throttle_hint', 'rate_limit', True, None, 'ThrottlingException: boom'),
        ('ratelimit_hint', 'rate_limit', True, None, 'RateLimitExceeded: boom'),
        ('openai_ratelimit', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_ratelimit_noheaders', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_timeout', 'error', False, None, 'APITimeoutError: boom'),
        ('openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('openai_connection', 'error', False, None, 'APIConnectionError: boom'),
        ('openai_timeout_is_connection', 'error', False, None, 'APITimeoutError: boom'),
        ('not_openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('status_429', 'rate_limit', True, None, 'ModelHTTPError: boom'),
        ('status_503', 'http_5xx', True, None, 'ModelHTTPError: boom'),
        ('status_400', 'error', False, None, 'ModelHTTPError: boom'),
        ('model_ratelimit', 'rate_limit', True, None, 'ModelRateLimitError: boom'),
        ('model_timeout', 'timeout', True, None, 'ModelTimeoutError: boom'),
        ('model_request_timeout', 'timeout', True, None, 'ModelRequestTimeout: boom'),
        ('model_server', 'unavailable', True, None, 'ModelServerError: boom'),
        ('model_unavailable', 'unavailable', True, None, 'ModelUnavailableError: boom'),
        ('model_connection', 'unavailable', True, None, 'ModelConnectionError: boom'),
        ('model_server_400', 'http_5xx', True, None, 'ModelServerError: boom'),
        ('unexpected_behavior', 'bad_output', False, None, 'UnexpectedModelBehavior: boom'),
        ('recursion', 'error', False, None, 'GraphRecursionError: limit 25'),
        ('structured_output', 'error', False, None, 'StructuredOutputException: boom'),
        ('model_behavior', 'error', False, None, 'ModelBehaviorError: boom'),
        ('guardrail', 'error', False, None, 'InputGuardrailTripwireTriggered: boom'),
        ('long_message', 'error', False, None, "RuntimeError: " + "x" * 400),
        ('wrapped_timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('wrapped_plain', 'error', False, None, 'EventLoopException: loop'),
        ('timeout_over_throttle', 'timeout', True, None, 'TimeoutError: slow'),
        ('wrapped_model_behavior', 'error', False, None, 'RuntimeError: outer'),
        ('wrapped_recursion', 'error', False, None, 'RuntimeError: outer'),
        ('recursion_subclass', 'error', False, None, 'MyRecursion: boom'),
        ('implicit_context_only', 'error', False, None, 'RuntimeError: outer'),
    ],
    'strands': [
        ('plain', 'error', False, None, 'ValueError: boom'),
        ('timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('throttle_hint', 'rate_limit', True, None, 'ThrottlingException: boom'),
        ('ratelimit_hint', 'rate_limit', True, None, 'RateLimitExceeded: boom'),
        ('openai_ratelimit', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_ratelimit_noheaders', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_timeout', 'error', False, None, 'APITimeoutError: boom'),
        ('openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('openai_connection', 'error', False, None, 'APIConnectionError: boom'),
        ('openai_timeout_is_connection', 'error', False, None, 'APITimeoutError: boom'),
        ('not_openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('status_429', 'error', False, None, 'ModelHTTPError: boom'),
        ('status_503', 'error', False, None, 'ModelHTTPError: boom'),
        ('status_400', 'error', False, None, 'ModelHTTPError: boom'),
        ('model_ratelimit', 'rate_limit', True, None, 'ModelRateLimitError: boom'),
        ('model_timeout', 'error', False, None, 'ModelTimeoutError: boom'),
        ('model_request_timeout', 'error', False, None, 'ModelRequestTimeout: boom'),
        ('model_server', 'error', False, None, 'ModelServerError: boom'),
        ('model_unavailable', 'error', False, None, 'ModelUnavailableError: boom'),
        ('model_connection', 'error', False, None, 'ModelConnectionError: boom'),
        ('model_server_400', 'error', False, None, 'ModelServerError: boom'),
        ('unexpected_behavior', 'error', False, None, 'UnexpectedModelBehavior: boom'),
        ('recursion', 'error', False, None, 'GraphRecursionError: limit 25'),
        ('structured_output', 'bad_output', False, None, 'StructuredOutputException: boom'),
        ('model_behavior', 'error', False, None, 'ModelBehaviorError: boom'),
        ('guardrail', 'error', False, None, 'InputGuardrailTripwireTriggered: boom'),
        ('long_message', 'error', False, None, "RuntimeError: " + "x" * 400),
        ('wrapped_timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('wrapped_plain', 'error', False, None, "KeyError: 'k'"),
        ('timeout_over_throttle', 'rate_limit', True, None, 'ThrottlingException: slow down'),
        ('wrapped_model_behavior', 'error', False, None, 'RuntimeError: outer'),
        ('wrapped_recursion', 'error', False, None, 'RuntimeError: outer'),
        ('recursion_subclass', 'error', False, None, 'MyRecursion: boom'),
        ('implicit_context_only', 'error', False, None, 'RuntimeError: outer'),
    ],
    'openai_agents': [
        ('plain', 'error', False, None, 'ValueError: boom'),
        ('timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('throttle_hint', 'error', False, None, 'ThrottlingException: boom'),
        ('ratelimit_hint', 'error', False, None, 'RateLimitExceeded: boom'),
        ('openai_ratelimit', 'rate_limit', True, 7.0, 'RateLimitError: 429'),
        ('openai_ratelimit_noheaders', 'rate_limit', True, None, 'RateLimitError: 429'),
        ('openai_timeout', 'timeout', True, None, 'APITimeoutError: boom'),
        ('openai_5xx', 'http_5xx', True, None, 'InternalServerError: boom'),
        ('openai_connection', 'connection', True, None, 'APIConnectionError: boom'),
        ('openai_timeout_is_connection', 'timeout', True, None, 'APITimeoutError: boom'),
        ('not_openai_5xx', 'error', False, None, 'InternalServerError: boom'),
        ('status_429', 'error', False, None, 'ModelHTTPError: boom'),
        ('status_503', 'error', False, None, 'ModelHTTPError: boom'),
        ('status_400', 'error', False, None, 'ModelHTTPError: boom'),
        ('model_ratelimit', 'error', False, None, 'ModelRateLimitError: boom'),
        ('model_timeout', 'error', False, None, 'ModelTimeoutError: boom'),
        ('model_request_timeout', 'error', False, None, 'ModelRequestTimeout: boom'),
        ('model_server', 'error', False, None, 'ModelServerError: boom'),
        ('model_unavailable', 'error', False, None, 'ModelUnavailableError: boom'),
        ('model_connection', 'error', False, None, 'ModelConnectionError: boom'),
        ('model_server_400', 'error', False, None, 'ModelServerError: boom'),
        ('unexpected_behavior', 'error', False, None, 'UnexpectedModelBehavior: boom'),
        ('recursion', 'error', False, None, 'GraphRecursionError: limit 25'),
        ('structured_output', 'error', False, None, 'StructuredOutputException: boom'),
        ('model_behavior', 'bad_output', False, None, 'ModelBehaviorError: boom'),
        ('guardrail', 'guardrail', False, None, 'InputGuardrailTripwireTriggered: boom'),
        ('long_message', 'error', False, None, "RuntimeError: " + "x" * 400),
        ('wrapped_timeout', 'timeout', True, None, 'TimeoutError: slow'),
        ('wrapped_plain', 'error', False, None, 'EventLoopException: loop'),
        ('timeout_over_throttle', 'timeout', True, None, 'TimeoutError: slow'),
        ('wrapped_model_behavior', 'error', False, None, 'RuntimeError: outer'),
        ('wrapped_recursion', 'error', False, None, 'RuntimeError: outer'),
        ('recursion_subclass', 'error', False, None, 'MyRecursion: boom'),
        ('implicit_context_only', 'error', False, None, 'RuntimeError: outer'),
    ],
}


def test_every_case_has_an_expectation_per_adapter() -> None:
    ids = [cid for cid, _ in CASES]
    assert len(set(ids)) == len(ids)
    for name in ADAPTERS:
        assert [row[0] for row in EXPECTED[name]] == ids, name


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_map_error_classifies_each_exception(adapter: str) -> None:
    mod = importlib.import_module(ADAPTERS[adapter])
    specs = dict(CASES)
    for cid, kind, retryable, retry_after, message in EXPECTED[adapter]:
        err = mod._map_error(build(specs[cid]))
        got = (err.kind, err.retryable, err.retry_after_s, str(err))
        assert got == (kind, retryable, retry_after, message), (adapter, cid)
