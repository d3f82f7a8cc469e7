"""The registry of result kinds: one entry per kind, used by every command and ``report``.

An entry names what goes with a kind's JSON: the model that is its file format (in
``agentverity_props.results``: the published schema, the migrations of older versions), the
text, JUnit and HTML renderers, the meaning of each exit code and the title reports show.
Adding a result kind is one model there and one :class:`ResultKind` here (docs/architecture.md
shows the diff); ``load_result``, ``report``, ``render`` and the schema files follow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BadInput
from . import (
    _bench,
    _conversation,
    _html_bench,
    _html_conversation,
    _html_kinds,
    _junit,
    _plan,
    _snapshot,
    _text,
    _tools,
)
from ._json import dumps, read_json
from ._markdown import render_markdown

if TYPE_CHECKING:
    from ..results import Document

__all__ = ["RESULT_KINDS", "ResultKind", "check_result", "kind_for", "load_result", "render"]

Renderer = Callable[..., str]
Context = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ResultKind:
    """What goes with one kind of result file.

    Attributes:
        kind: the short name (``run``; the part of ``schema`` before the version).
        document: the model's name in :mod:`agentverity_props.results` (its ``SCHEMA`` is the
            version written today; its ``MIGRATIONS`` the older ones read).
        title: how reports name the kind.
        exit_meanings: what each exit code of the command that writes it means.
        text, junit: renderers ``fn(result_dict, **options) -> str`` (None: no such view).
        markdown: the Markdown renderer (``--format markdown``: a CI job summary or a
            pull-request comment); every kind has one.
        html: the HTML view's context builder (None: the generic tree of the JSON).
        legacy: older versions read as written, with no migration (rendered by the same
            renderers, checked only for being a JSON object with this schema name).
    """

    kind: str
    document: str
    title: str
    exit_meanings: Mapping[int, str]
    text: Renderer | None = None
    junit: Renderer | None = None
    html: Context | None = None
    markdown: Renderer | None = render_markdown
    legacy: tuple[str, ...] = ()

    @property
    def model(self) -> type[Document]:
        from .. import results
        model: type[Document] = getattr(results, self.document)
        return model

    @property
    def schema(self) -> str:
        """The version written today."""
        return self.model.SCHEMA

    @property
    def schemas(self) -> tuple[str, ...]:
        """Every schema name read: today's, the migrated ones, the legacy ones."""
        return (self.schema, *self.model.MIGRATIONS, *self.legacy)

    def required_keys(self) -> tuple[str, ...]:
        """Top-level keys every file of today's version has (the schema's ``required``)."""
        return self.model.required_keys()


RESULT_KINDS: tuple[ResultKind, ...] = (
    ResultKind("run", "RunDocument", "run", _text.EXIT_MEANING, text=_text.render_run_text,
               junit=_junit.render_junit, html=_html_kinds.run_context),
    ResultKind("counterexample", "CounterexampleDocument", "counterexample",
               _html_kinds.CX_EXIT, html=_html_kinds.counterexample_context),
    ResultKind("conversation", "ConversationDocument", "conversation tests",
               _html_conversation.CONVERSATION_EXIT,
               text=_conversation.render_conversation_text,
               junit=_conversation.render_conversation_junit,
               html=_html_conversation.conversation_context),
    ResultKind("bench", "BenchDocument", "benchmark", _bench.BENCH_EXIT,
               text=_bench.render_bench_text, junit=_bench.render_bench_junit,
               html=_html_bench.bench_context),
    ResultKind("compare", "CompareDocument", "A/B comparison", _bench.COMPARE_EXIT,
               text=_bench.render_compare_text, junit=_bench.render_compare_junit,
               html=_html_bench.compare_context),
    ResultKind("snapshot", "SnapshotDocument", "snapshot", _snapshot.SNAPSHOT_EXIT,
               text=_snapshot.render_snapshot_text, junit=_snapshot.render_snapshot_junit),
    ResultKind("check", "CheckDocument", "check", _snapshot.CHECK_EXIT,
               text=_snapshot.render_check_text, junit=_snapshot.render_check_junit,
               legacy=("agentverity_props.check/1",)),
    ResultKind("plan", "PlanDocument", "plan", _plan.PLAN_EXIT, text=_plan.render_plan_text),
    ResultKind("tools", "ToolsDocument", "tool-call cases", _tools.TOOLS_EXIT,
               text=_tools.render_tools_text, junit=_tools.render_tools_junit,
               html=_html_kinds.tools_context),
    ResultKind("enlarge", "EnlargeDocument", "enlarged probe set", _html_kinds.ENLARGE_EXIT,
               html=_html_kinds.enlarge_context),
)

_BY_KIND = {k.kind: k for k in RESULT_KINDS}


def kind_for(schema: str) -> ResultKind | None:
    """The entry reading ``schema`` (``agentverity_props.run/2`` -> the run entry), or None."""
    if not isinstance(schema, str) or not schema.startswith("agentverity_props."):
        return None
    entry = _BY_KIND.get(schema.removeprefix("agentverity_props.").split("/")[0])
    return entry if entry is not None and schema in entry.schemas else None


def render(result: dict[str, Any], fmt: str, **options: Any) -> str:
    """``result`` (a current-version dict) as ``fmt`` — ``json``, ``text``, ``junit`` or
    ``markdown`` — through its kind's renderer; ``options`` go to a text renderer
    (``color``, ``width``, a kind's own) or to the Markdown one (``html``, ``base``,
    ``labels``). :class:`BadInput` when the kind has no such view."""
    if fmt == "json":
        return dumps(result)
    schema = str(result.get("schema"))
    entry = kind_for(schema)
    fn = None if entry is None else {"text": entry.text, "junit": entry.junit,
                                     "markdown": entry.markdown}.get(fmt)
    if fn is None:
        raise BadInput(f"no {fmt} renderer for {schema} results",
                       "use --html OUT.html or --format json")
    if fmt == "markdown":
        return fn(result, **{k: v for k, v in options.items()
                             if k in ("html", "base", "labels")})
    return fn(result, **options) if fmt == "text" else fn(result)


def load_result(path: str | Path) -> dict[str, Any]:
    """Read a saved result as its kind's current version (:func:`check_result`); a one-line
    BadInput for anything that is not one."""
    return check_result(read_json(path), where=str(Path(path)))


def check_result(data: Any, *, where: str = "result") -> dict[str, Any]:
    """A loaded result as its kind's current version, validated by its model: older versions
    are migrated, and a file that is not one gets one :class:`BadInput` line naming the first
    field that is wrong."""
    schema = data.get("schema") if isinstance(data, dict) else None
    entry = kind_for(schema) if isinstance(schema, str) else None
    if entry is None:
        got = schema if isinstance(data, dict) else type(data).__name__
        known = _BY_KIND.get(schema.removeprefix("agentverity_props.").split("/")[0]) \
            if isinstance(schema, str) and schema.startswith("agentverity_props.") else None
        if known is not None:  # a kind this version knows, in a version it does not
            raise BadInput(f"{where} is a {known.kind} result of format {got!r}, which this "
                           f"version of agentverity-props does not read (it reads "
                           f"{', '.join(sorted(known.schemas))})",
                           "render it with the agentverity-props version that wrote it, or "
                           "upgrade")
        raise BadInput(f"{where} is not an agentverity-props result (schema {got!r})",
                       "pass a file written with --format json")
    if schema in entry.legacy:
        return data  # an old version read as written: its renderers know its shape
    return entry.model.check(data, where=where,
                             fix="pass an unedited file written by agentverity-props "
                                 "--format json")
