"""Agent references: turn ``"module:attr"`` or ``"path/file.py[:attr]"`` into an Adapter.

Accepted forms:

* ``package.module:attr`` — imported with the current folder on ``sys.path``;
* ``path/to/file.py:attr`` — loaded from the file (relative to ``cwd``) under a private module
  name, with the file's folder on ``sys.path`` while it loads, so sibling imports work;
* ``path/to/file.py`` — the first of ``agent``, ``make_agent``, ``run_agent`` the file defines
  (``run_agent(task) -> str`` is the agentverdict convention).

What ``attr`` may be, checked in this order:

1. an adapter (``identity``, ``is_async``, ``invoke``, ``ainvoke``) — used as is;
2. a ``strands.Agent`` instance — refused: one Agent keeps its history, expose a factory;
   a compiled LangGraph graph — :func:`~agentverity_props.adapters.from_langgraph` (a fresh
   ``thread_id`` per call);
   an OpenAI Agents SDK ``agents.Agent`` —
   :func:`~agentverity_props.adapters.from_openai_agents` (a configuration: reused);
   a ``pydantic_ai.Agent`` — :func:`~agentverity_props.adapters.from_pydantic_ai` (no history
   between runs: reused);
3. a zero-argument factory — called once: an adapter it returns is used as is; a
   ``strands.Agent`` makes the *factory* go through
   :func:`~agentverity_props.adapters.from_strands`, a compiled LangGraph graph through
   :func:`~agentverity_props.adapters.from_langgraph`, an ``agents.Agent`` through
   :func:`~agentverity_props.adapters.from_openai_agents`, a ``pydantic_ai.Agent`` through
   :func:`~agentverity_props.adapters.from_pydantic_ai` (called once per call); a callable
   taking the prompt goes through :func:`~agentverity_props.adapters.from_callable`;
4. a callable taking the prompt — :func:`~agentverity_props.adapters.from_callable`.

A callable whose parameters all have defaults counts as a factory, unless its first
parameter is named like a prompt (``prompt``, ``task``, ``text``, ``input``, ``query``...).

Every failure raises :class:`~agentverity_props.errors.BadInput`: one line saying what is
wrong and how to fix it, the original exception kept as ``__cause__`` (shown by ``--debug``).
A file that fails to load is removed from ``sys.modules`` again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import BadInput
from ._base import Adapter
from ._errors import describe
from ._registry import framework_of

__all__ = ["BARE_FILE_ATTRS", "load_agent"]

BARE_FILE_ATTRS = ("agent", "make_agent", "run_agent")
_PROMPT_NAMES = frozenset({"prompt", "task", "text", "input", "query", "message", "question",
                           "user_input", "request"})
_IDENT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_EXAMPLE = "e.g. examples/moderation_gate.py:agent or mypkg.agents:make_agent"
_KINDS = ("an adapter, a compiled LangGraph graph, an agents.Agent, a pydantic_ai.Agent, a "
          "zero-argument factory returning a strands.Agent, or a function taking the prompt")


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(exc: BaseException) -> str:
    return describe(exc, limit=240)


def load_agent(ref: str, *, cwd: Path | None = None) -> Adapter:
    """Resolve an agent reference to an :class:`~agentverity_props.adapters.Adapter`.

    Args:
        ref: ``package.module:attr``, ``path/file.py:attr`` or ``path/file.py``.
        cwd: folder that relative file paths (and module imports) start from; default: the
            current working directory.

    Raises:
        BadInput: the reference is malformed; the file or module is missing or fails to
            import; the attribute is missing or is not an agent; a factory failed.

    Example:
        >>> load_agent("agentverity_props.examples.plain:gate").identity
        'callable:agentverity_props.examples.plain.gate'
    """
    if not isinstance(ref, str) or not ref.strip():
        raise BadInput("empty agent reference", f"pass module:attr or file.py[:attr], {_EXAMPLE}")
    ref = ref.strip()
    base = Path(cwd) if cwd is not None else Path.cwd()
    target, attr = _split(ref)
    # "agent.txt:x" parses as a dotted module name: an existing file wins
    if target.endswith(".py") or "/" in target or "\\" in target or (base / target).is_file():
        path = Path(target)
        return _from_file(ref, path if path.is_absolute() else base / path, attr, base)
    if attr is None:
        raise BadInput(f"agent reference {ref!r} is neither module:attr nor a .py file",
                       f"name the attribute, {_EXAMPLE}")
    if not _IDENT_PATH.fullmatch(target):
        raise BadInput(f"agent reference {ref!r}: {target!r} is not a module name",
                       f"use dotted.module:attr or path/to/file.py:attr, {_EXAMPLE}")
    return _from_module(ref, target, attr, base)


def _split(ref: str) -> tuple[str, str | None]:
    """``(module or file, attribute or None)``; a Windows drive colon is not a separator."""
    if ref.endswith(".py"):
        return ref, None
    head, sep, tail = ref.rpartition(":")
    if not sep:
        return ref, None
    if not head:
        raise BadInput(f"agent reference {ref!r} has nothing before ':'",
                       f"put a module or a .py file before the colon, {_EXAMPLE}")
    if not tail:
        raise BadInput(f"agent reference {ref!r} ends with ':'",
                       f"name the attribute after the colon, {_EXAMPLE}")
    if _IDENT_PATH.fullmatch(tail):
        return head, tail
    if re.fullmatch(r"[A-Za-z]", head):  # "C:\agents\x" — a drive letter, no attribute
        return ref, None
    raise BadInput(f"agent reference {ref!r}: {tail!r} is not an attribute name",
                   f"use module:attr or file.py:attr with a Python identifier, {_EXAMPLE}")


@contextlib.contextmanager
def _on_sys_path(folder: Path) -> Iterator[None]:
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)


# ------------------------------------------------------------------ loading


def _import_failure(what: str, name: str, exc: BaseException) -> BadInput:
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename or what} line {exc.lineno}"
        return BadInput(f"{where}: SyntaxError: {_one_line(exc.msg or '')}",
                        "fix the syntax error and run again")
    if isinstance(exc, ModuleNotFoundError):
        missing = exc.name or "?"
        return BadInput(f"importing {what} failed: {_describe(exc)}",
                        f"install {missing.split('.')[0]!r} in this environment or fix the "
                        f"import in {name}")
    if isinstance(exc, SystemExit):
        return BadInput(f"importing {what} called sys.exit({exc.code!r})",
                        "put script code under if __name__ == '__main__':")
    return BadInput(f"importing {what} raised {_describe(exc)}",
                    f"fix the error in {name}; rerun with --debug for the traceback")


def _from_file(ref: str, path: Path, attr: str | None, base: Path,
               resolve: Any = None) -> Any:
    if not path.exists():
        raise BadInput(f"agent file {path} not found",
                       f"check the path in {ref!r} (relative paths start at {base})")
    if path.is_dir():
        raise BadInput(f"{path} is a folder, not a Python file",
                       f"reference a .py file inside it, {_EXAMPLE}")
    if path.suffix != ".py":
        raise BadInput(f"{path} is not a .py file",
                       f"reference a Python file or a module, {_EXAMPLE}")
    resolved = path.resolve()
    stem = re.sub(r"\W", "_", path.stem) or "agent"
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    modname = f"_agentverity_ref_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(modname, resolved)
    if spec is None or spec.loader is None:
        raise BadInput(f"cannot load {path} as a Python module",
                       f"reference a regular .py file, {_EXAMPLE}")
    module = importlib.util.module_from_spec(spec)
    # registered before running it, as a normal import would (dataclasses, pickling need it)
    sys.modules[modname] = module
    try:
        with _on_sys_path(resolved.parent):
            try:
                spec.loader.exec_module(module)
            except (Exception, SystemExit) as exc:
                raise _import_failure(str(path), path.name, exc) from exc
            return (resolve or _resolve)(module, attr, ref=ref, where=str(path), id_base=stem)
    except BaseException:
        if sys.modules.get(modname) is module:
            del sys.modules[modname]
        raise


def _from_module(ref: str, modname: str, attr: str, base: Path, resolve: Any = None) -> Any:
    with _on_sys_path(base):
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            sys.modules.pop(modname, None)
            if exc.name and (modname == exc.name or modname.startswith(exc.name + ".")):
                raise BadInput(
                    f"module {modname!r} not found",
                    f"check the spelling, install it, or run from the folder that contains "
                    f"it ({base} is searched); a file path needs .py, {_EXAMPLE}") from exc
            raise _import_failure(modname, modname, exc) from exc
        except (Exception, SystemExit) as exc:
            sys.modules.pop(modname, None)  # the import system already did; be sure
            raise _import_failure(modname, modname, exc) from exc
        return (resolve or _resolve)(module, attr, ref=ref, where=modname, id_base=modname)


def load_object(ref: str, *, what: str = "object", cwd: Path | None = None) -> Any:
    """Any attribute named by ``module:attr`` or ``file.py:attr`` (relations, evaluators...).

    Same import rules and one-line errors as :func:`load_agent`; the attribute is returned
    as is.
    """
    if not isinstance(ref, str) or ":" not in ref.strip().rstrip(":"):
        raise BadInput(f"{what} reference {ref!r} is not module:attr or file.py:attr",
                       "name the attribute after a colon, e.g. my_relations.py:RELATIONS")
    base = Path(cwd) if cwd is not None else Path.cwd()
    target, attr = _split(ref.strip())
    if attr is None:
        raise BadInput(f"{what} reference {ref!r} names no attribute",
                       "add :NAME, e.g. my_relations.py:RELATIONS")

    def resolve(module: ModuleType, attr: str | None, *, ref: str, where: str,
                id_base: str) -> Any:
        obj: Any = module
        for part in (attr or "").split("."):
            if not hasattr(obj, part):
                raise BadInput(f"{where} has no attribute {attr!r}", _found_names(module))
            obj = getattr(obj, part)
        return obj

    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        return _from_file(ref, path if path.is_absolute() else base / path, attr, base,
                          resolve)
    if not _IDENT_PATH.fullmatch(target):
        raise BadInput(f"{what} reference {ref!r}: {target!r} is not a module name",
                       "use dotted.module:attr or path/to/file.py:attr")
    return _from_module(ref, target, attr, base, resolve)


# ------------------------------------------------------------------ resolving the attribute


def _public_callables(module: ModuleType) -> list[str]:
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, ModuleType):
            continue
        if isinstance(value, type) and value.__module__ != module.__name__:
            continue  # imported classes are not the user's agents
        if callable(value) or isinstance(value, Adapter):
            names.append(name)
    return sorted(names)


def _found(module: ModuleType) -> str:
    names = _public_callables(module)
    if not names:
        return "it defines no public callables"
    shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
    return f"public callables found: {shown}"


def _found_names(module: ModuleType) -> str:
    """The public names an object reference could mean (lists and constants too, not only
    callables: ``RELATIONS = [...]`` is what ``--relations file.py:RELATIONS`` names)."""
    names = sorted(name for name, value in vars(module).items()
                   if not name.startswith("_") and not isinstance(value, ModuleType)
                   and getattr(value, "__module__", module.__name__) in (module.__name__, None)
                   and name not in ("annotations",))
    if not names:
        return "it defines no public names"
    shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
    return f"public names found: {shown}"


def _resolve(module: ModuleType, attr: str | None, *, ref: str, where: str,
             id_base: str) -> Adapter:
    if attr is None:
        attr = next((a for a in BARE_FILE_ATTRS if hasattr(module, a)), None)
        if attr is None:
            raise BadInput(f"{where} defines none of {', '.join(BARE_FILE_ATTRS)}",
                           f"add :NAME to the reference ({_found(module)}) or define "
                           "run_agent(task) -> str")
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise BadInput(f"{where} has no attribute {attr!r}",
                           f"{_found(module)}; reference one as {ref.rsplit(':', 1)[0]}:NAME")
        obj = getattr(obj, part)
    return _coerce(obj, label=f"{where}:{attr}", id_base=f"{id_base}.{attr}")


def _call_kind(fn: Any) -> tuple[str, int]:
    """``("factory", 0)``, ``("prompt", 1)`` or ``("bad", number of required arguments)``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "prompt", 1  # no signature to read (builtins): assume fn(prompt)
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    required_kw = [p for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    if required_kw:
        return "bad", len(required) + len(required_kw)
    if not required:
        if positional and positional[0].name.lower() in _PROMPT_NAMES:
            return "prompt", 1
        if not positional and any(p.kind == p.VAR_POSITIONAL for p in params):
            return "prompt", 1
        return "factory", 0
    if len(required) == 1:
        return "prompt", 1
    return "bad", len(required)


def _coerce(obj: Any, *, label: str, id_base: str) -> Adapter:
    from ._callable import from_callable

    if isinstance(obj, Adapter) and not isinstance(obj, type):
        return obj
    framework = framework_of(obj)
    if framework is not None and not framework.reusable:
        raise BadInput(f"{label} is a {framework.kind} instance, but one Agent keeps its "
                       "history and refuses concurrent calls",
                       "expose a zero-argument factory instead (def make_agent(): return "
                       "Agent(...)) and reference it")
    if framework is not None:  # a configuration (a graph, an SDK Agent): each run starts empty
        return framework.wrap(obj, identity=f"{framework.name}:{id_base}")
    if type(obj).__name__ == "StateGraph" and type(obj).__module__.startswith("langgraph."):
        raise BadInput(f"{label} is an uncompiled StateGraph",
                       "reference the compiled graph (graph = builder.compile()) or a "
                       "factory returning it")
    if not callable(obj):
        raise BadInput(f"{label} is a {type(obj).__name__}, not an agent", f"reference {_KINDS}")
    kind, n_required = _call_kind(obj)
    if kind == "prompt":
        return from_callable(obj, identity=f"callable:{id_base}")
    if kind == "bad":
        raise BadInput(f"{label} takes {n_required} required arguments",
                       "expose a function taking only the prompt, or a zero-argument factory")
    try:
        made = obj()
    except Exception as exc:
        raise BadInput(f"calling factory {label} raised {_describe(exc)}",
                       "fix the factory; rerun with --debug for the traceback") from exc
    if isinstance(made, Adapter) and not isinstance(made, type):
        return made
    framework = framework_of(made)
    if framework is not None:  # the factory builds the framework's agent: one per call
        return framework.wrap(obj, identity=f"{framework.name}:{id_base}")
    if callable(made) and _call_kind(made)[0] == "prompt":
        return from_callable(made, identity=f"callable:{id_base}")
    raise BadInput(f"factory {label} returned {type(made).__name__}, not an agent",
                   "return a strands.Agent, a compiled LangGraph graph, an agents.Agent, a "
                   "pydantic_ai.Agent or an adapter (from_strands, from_langgraph, "
                   "from_openai_agents, from_pydantic_ai, from_callable, from_http) from it, "
                   "or make it take the prompt")
