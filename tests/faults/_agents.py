"""Faulty agents for the fault-injection tests, referenced from the CLI as
``tests/faults/_agents.py:NAME``.

Every agent answers ``{"verdict": ..., "text": "answer <n>"}`` when it behaves: the verdict is
deterministic (``block`` for prompts with "attack", else ``allow``) and the text carries the
call's sequence number, so each stored row can be traced back to the call that made it.
Faults are planted by call number, read from environment variables:

* ``FAULT_LOG``: a file that gets one line ``ok <n>`` per well-formed answer *returned*
  (written with O_APPEND before returning, so it never misses a returned call);
* ``FAULT_EVERY``: the fault hits calls ``n % FAULT_EVERY == 0`` (default 3);
* ``FAULT_AT``: ``returns_huge`` answers 10 MB on that call only;
* ``FAULT_KILL_AFTER``: ``suicide`` SIGKILLs its own process at the start of the call after
  that many answers;
* ``FAULT_SLEEP``: seconds ``slow`` sleeps per call;
* ``FAULT_URL`` / ``FAULT_HTTP_TIMEOUT``: where the HTTP agent sends prompts.

No global ``random``: nothing here is random at all.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Any

_lock = threading.Lock()
_calls = 0
_answers = 0


def _next() -> int:
    global _calls
    with _lock:
        _calls += 1
        return _calls


def _every() -> int:
    return int(os.environ.get("FAULT_EVERY", "3"))


def _answer(prompt: str, n: int) -> dict[str, Any]:
    global _answers
    out = {"verdict": "block" if "attack" in prompt else "allow", "text": f"answer {n}"}
    log = os.environ.get("FAULT_LOG")
    if log:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"ok {n}\n".encode())
        finally:
            os.close(fd)
    with _lock:
        _answers += 1
    return out


def good(prompt: str) -> dict[str, Any]:
    return _answer(prompt, _next())


def raises(prompt: str) -> dict[str, Any]:
    n = _next()
    if n % _every() == 0:
        raise RuntimeError(f"planted failure in call {n}")
    return _answer(prompt, n)


def echoes_prompt_in_errors(prompt: str) -> dict[str, Any]:
    """Fails every FAULT_EVERY-th call with an error message quoting the prompt."""
    n = _next()
    if n % _every() == 0:
        raise ValueError(f"cannot handle this request: {prompt}")
    return _answer(prompt, n)


def returns_none(prompt: str) -> Any:
    n = _next()
    return None if n % _every() == 0 else _answer(prompt, n)


def returns_bytes(prompt: str) -> Any:
    n = _next()
    return b"allow" if n % _every() == 0 else _answer(prompt, n)


def returns_huge(prompt: str) -> Any:
    """A 10 MB answer on call FAULT_AT only (default: every FAULT_EVERY-th call)."""
    n = _next()
    at = int(os.environ.get("FAULT_AT", "0"))
    if n == at if at else n % _every() == 0:
        return "x" * (10 * 1024 * 1024)
    return "VERDICT: block" if "attack" in prompt else "VERDICT: allow"


def unknown_label(prompt: str) -> Any:
    n = _next()
    if n % _every() == 0:
        return "VERDICT: perhaps"
    return "VERDICT: block" if "attack" in prompt else "VERDICT: allow"


def hangs_then_answers(prompt: str) -> dict[str, Any]:
    """A sync agent whose faulty calls take 1 s: past a short --timeout, but they return."""
    n = _next()
    if n % _every() == 0:
        time.sleep(1.0)
    return _answer(prompt, n)


async def hangs_forever_async(prompt: str) -> dict[str, Any]:
    """An async agent whose faulty calls never return (cancellable)."""
    n = _next()
    if n % _every() == 0:
        await asyncio.sleep(3600)
    return _answer(prompt, n)


def hangs_forever_sync(prompt: str) -> dict[str, Any]:
    """A sync agent that never returns on "attack" prompts (a thread cannot be cancelled)."""
    n = _next()
    if "attack" in prompt:
        log = os.environ.get("FAULT_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"hang {n}\n")
        time.sleep(3600)
    return _answer(prompt, n)


def suicide(prompt: str) -> dict[str, Any]:
    """SIGKILL the whole process at the start of the call after FAULT_KILL_AFTER answers."""
    n = _next()
    with _lock:
        done = _answers
    if done >= int(os.environ["FAULT_KILL_AFTER"]):
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)  # pragma: no cover - the signal arrives first
    return _answer(prompt, n)


def slow(prompt: str) -> dict[str, Any]:
    n = _next()
    time.sleep(float(os.environ.get("FAULT_SLEEP", "0.05")))
    return _answer(prompt, n)


def slow_allow(prompt: str) -> dict[str, Any]:
    """Slow, and 'allow' whatever the prompt: a probe set it sees is always blind."""
    n = _next()
    time.sleep(float(os.environ.get("FAULT_SLEEP", "0.05")))
    out = _answer(prompt, n)
    out["verdict"] = "allow"
    return out


def http() -> Any:
    """A factory: the HTTP agent at FAULT_URL (JSON ``{"text", "verdict"}`` answers)."""
    from agentverity_props.adapters import from_http

    headers = {}
    if os.environ.get("FAULT_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['FAULT_API_KEY']}"
    return from_http(os.environ["FAULT_URL"], response_path="text", verdict_path="verdict",
                     timeout_s=float(os.environ.get("FAULT_HTTP_TIMEOUT", "5")),
                     headers=headers, identity="http:fault-service")


#: what a hostile model may emit: rich markup, a chat-template token, a hyperlink, a
#: terminal title escape, NUL and a bidi override (see test_hostile.py)
HOSTILE_VERDICTS = ("[/INST]", "[/]", "[link=https://evil.example/x]billing[/link]",
                    "[red]general", "general", "\x1b]0;pwned\x07title", "nul\x00byte",
                    "\u202eevil")


def hostile_markup(prompt: str) -> dict[str, Any]:
    """Answers one of HOSTILE_VERDICTS, chosen by the call number (deterministic)."""
    n = _next()
    out = _answer(prompt, n)
    out["verdict"] = HOSTILE_VERDICTS[n % len(HOSTILE_VERDICTS)]
    out["text"] = f"{out['verdict']} answer {n}"
    return out
