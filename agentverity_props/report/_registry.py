"""The registry of result kinds: one entry per kind, used by every command and ``report``.

This is the one table of kinds. An entry holds everything that goes with a kind: its model
(the schema name written today, the older versions its migrations read, the published JSON
Schema; named here by the name :mod:`agentverity_props.results` exports it under and
imported when first used, so importing ``report`` loads no pydantic), the text, JUnit,
Markdown and HTML renderers, its CI annotations, the meaning of each exit code (and, for a
kind whose results record none, how the exit code is derived from a result) and the title
reports show.
``load_result``, ``check_result``, ``render``, ``render_markdown`` and ``findings``
(``_kinds``), ``derived_exit`` (``_kinds``), ``document_for``, the validation of every written
result (``_json``), the HTML page's header and the schema files (``python -m
agentverity_props.report``) all read it;
they look an entry up when called, so nothing keeps a copy of the table. Adding a result
kind is one model in ``results/`` and one :class:`ResultKind` here (docs/architecture.md
lists every file).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from . import (
    _annotations,
    _bench,
    _conversation,
    _html_bench,
    _html_conversation,
    _html_kinds,
    _junit,
    _markdown,
    _markdown_kinds,
    _plan,
    _snapshot,
    _text,
    _tools,
)
from ._annotations import Finding

if TYPE_CHECKING:
    from ..results import Document

__all__ = ["RESULT_KINDS", "ResultKind", "document_for", "kind_for", "kind_named"]

Renderer = Callable[..., str]
Context = Callable[[dict[str, Any]], dict[str, Any]]
Lines = Callable[..., list[str]]
Findings = Callable[[dict[str, Any]], list[Finding]]
Exit = Callable[[dict[str, Any]], int]


@dataclass(frozen=True)
class ResultKind:
    """What goes with one kind of result file.

    Attributes:
        model_name: the name :mod:`agentverity_props.results` exports the kind's model
            under (``"RunDocument"``); :attr:`model` is the class.
        title: how reports name the kind.
        exit_meanings: what each exit code of the command that writes it means.
        text, junit: renderers ``fn(result_dict, **options) -> str`` (None: no such view).
        markdown: the body of the Markdown view ``fn(result_dict, labels=...) -> lines``
            (``--format markdown``: a CI job summary or a pull-request comment; framed by
            ``render_markdown``); None: no such view.
        findings: the CI annotations of a result ``fn(result_dict) -> [Finding]`` (None:
            none).
        html: the HTML view's context builder (None: the generic tree of the JSON).
        derive_exit: the exit code of the command that wrote a result, derived from the
            result ``fn(result_dict) -> int``, for a kind whose results record no
            ``exit_code`` (None: they record it).
        legacy: older versions read as written, with no migration (rendered by the same
            renderers, checked only for being a JSON object with this schema name).
    """

    model_name: str
    title: str
    exit_meanings: Mapping[int, str]
    text: Renderer | None = None
    junit: Renderer | None = None
    html: Context | None = None
    markdown: Lines | None = None
    findings: Findings | None = None
    derive_exit: Exit | None = None
    legacy: tuple[str, ...] = ()

    @property
    def model(self) -> type[Document]:
        """The kind's model (a :class:`~agentverity_props.results.Document`), imported on
        first use: its ``SCHEMA`` is the version written today, its ``MIGRATIONS`` the older
        ones read, its ``KIND`` the short name, its ``FILE`` the published schema's name."""
        from .. import results
        return cast("type[Document]", getattr(results, self.model_name))

    @property
    def kind(self) -> str:
        """The short name (``run``; the part of ``schema`` before the version)."""
        return self.model.KIND

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
    ResultKind("RunDocument", "run", _text.EXIT_MEANING, text=_text.render_run_text,
               junit=_junit.render_junit, html=_html_kinds.run_context,
               markdown=_markdown.run_lines, findings=_annotations.run_findings),
    ResultKind("CounterexampleDocument", "counterexample", _html_kinds.CX_EXIT,
               html=_html_kinds.counterexample_context,
               markdown=_markdown_kinds.counterexample_lines,
               findings=_annotations.tests_findings, derive_exit=_html_kinds.tests_exit),
    ResultKind("ConversationDocument", "conversation tests",
               _html_conversation.CONVERSATION_EXIT,
               text=_conversation.render_conversation_text,
               junit=_conversation.render_conversation_junit,
               html=_html_conversation.conversation_context,
               markdown=_markdown_kinds.conversation_lines,
               findings=_annotations.tests_findings, derive_exit=_html_kinds.tests_exit),
    ResultKind("BenchDocument", "benchmark", _bench.BENCH_EXIT,
               text=_bench.render_bench_text, junit=_bench.render_bench_junit,
               html=_html_bench.bench_context, markdown=_markdown.bench_lines,
               findings=_annotations.bench_findings),
    ResultKind("CompareDocument", "A/B comparison", _bench.COMPARE_EXIT,
               text=_bench.render_compare_text, junit=_bench.render_compare_junit,
               html=_html_bench.compare_context, markdown=_markdown.compare_lines,
               findings=_annotations.compare_findings),
    ResultKind("SnapshotDocument", "snapshot", _snapshot.SNAPSHOT_EXIT,
               text=_snapshot.render_snapshot_text, junit=_snapshot.render_snapshot_junit,
               markdown=_markdown.snapshot_lines, findings=_annotations.snapshot_findings,
               derive_exit=_snapshot.snapshot_exit),
    ResultKind("CheckDocument", "check", _snapshot.CHECK_EXIT,
               text=_snapshot.render_check_text, junit=_snapshot.render_check_junit,
               html=_html_kinds.check_context, markdown=_markdown.check_lines,
               findings=_annotations.check_findings,
               legacy=("agentverity_props.check/1",)),
    ResultKind("PlanDocument", "plan", _plan.PLAN_EXIT, text=_plan.render_plan_text,
               markdown=_markdown_kinds.plan_lines, derive_exit=_plan.plan_exit),
    ResultKind("ToolsDocument", "tool-call cases", _tools.TOOLS_EXIT,
               text=_tools.render_tools_text, junit=_tools.render_tools_junit,
               html=_html_kinds.tools_context, markdown=_markdown_kinds.tools_lines,
               findings=_annotations.tools_findings),
    ResultKind("EnlargeDocument", "enlarged probe set", _html_kinds.ENLARGE_EXIT,
               html=_html_kinds.enlarge_context, markdown=_markdown_kinds.enlarge_lines,
               findings=_annotations.enlarge_findings, derive_exit=_html_kinds.enlarge_exit),
    ResultKind("BoundaryDocument", "boundary location", _markdown_kinds.BOUNDARY_EXIT,
               markdown=_markdown_kinds.boundary_lines,
               findings=_annotations.boundary_findings,
               derive_exit=_markdown_kinds.boundary_exit),
)


def kind_for(schema: str) -> ResultKind | None:
    """The entry reading ``schema`` (an older version it migrates included), or None."""
    return next((k for k in RESULT_KINDS if schema in k.schemas), None) \
        if isinstance(schema, str) else None


def kind_named(schema: str) -> ResultKind | None:
    """The entry of the kind ``schema`` names, whichever its version (``...run/99`` -> the
    run entry), or None."""
    if not isinstance(schema, str) or not schema.startswith("agentverity_props."):
        return None
    name = schema.removeprefix("agentverity_props.").split("/")[0]
    return next((k for k in RESULT_KINDS if k.kind == name), None)


def document_for(schema: str) -> type[Document] | None:
    """The model that reads files of ``schema`` (its current version, or an older one its
    migrations turn into the current one); None for a name no model reads (a legacy version
    read as written has none)."""
    entry = kind_for(schema)
    return None if entry is None or schema in entry.legacy else entry.model
