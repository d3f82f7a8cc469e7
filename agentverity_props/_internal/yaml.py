"""The one YAML reader: plain data *and* the line of every node, duplicate keys refused.

Every YAML file the toolkit reads (strategy packs, benchmark files, tool case files, YAML
probe sets) goes through :func:`read_yaml` (or :func:`parse_yaml` for text in hand).

PyYAML's composer keeps a mark (line, column) on every node and its constructor throws them
away. We compose once, refuse duplicate keys (PyYAML silently keeps the last one), construct
from the same nodes, and keep the tree so that an error's key path maps back to the line
where that key is written (:meth:`YamlDocument.line_of`).

Every problem is one :class:`~agentverity_props.errors.BadInput` line naming the file, the
line and the fix. Two renderings of "file, line" exist because the docs show both:
``"compact"`` (``cases.yaml:7:``, editor-clickable; benchmark and case files, see
docs/regression.md and docs/tools.md) and ``"spelled"`` (``my.yaml: line 7:``; strategy
packs, see strategies/README.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from ..errors import BadInput
from .files import read_file_bytes

__all__ = ["Style", "YamlDocument", "parse_yaml", "read_yaml"]

Style = Literal["compact", "spelled"]

_SYNTAX_FIX = "check the indentation, and quote values that contain ': ', '#', '{' or '['"


def _at(source: str, style: Style, line: int, column: int | None = None) -> str:
    if style == "spelled":
        return f"{source}: line {line}"
    return f"{source}:{line}" + (f":{column}" if column is not None else "")


class YamlDocument:
    """Constructed data plus the node tree it came from (``root`` is None for an empty file)."""

    def __init__(self, source: str, data: Any, root: yaml.Node | None,
                 style: Style = "compact") -> None:
        self.source = source
        self.data = data
        self.root = root
        self.style: Style = style

    def at(self, line: int) -> str:
        """``"file:7"`` or ``"file: line 7"``: where a message points, in this file's style."""
        return _at(self.source, self.style, line)

    def line_of(self, path: Sequence[str | int], *, key: bool = False) -> int:
        """1-based line of the deepest node ``path`` reaches (1 for an empty file).

        For a mapping value, the line of its key (``templates:``), which is where a reader
        looks. With ``key=True`` the last element names a key (an unknown key, a bad key)
        and its own line is returned. A path that leaves the tree stops at the deepest
        node that exists: a missing key points at the mapping that should hold it.
        """
        node = self.root
        if node is None:
            return 1
        line = node.start_mark.line + 1
        for i, part in enumerate(path):
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                        line = k.start_mark.line + 1
                        node = v
                        break
                else:
                    return line
                if key and i == len(path) - 1:
                    return line
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if not -len(node.value) <= part < len(node.value):
                    return line
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line

    def require_mapping(self, what: str, fix: str) -> dict[Any, Any]:
        """The data, if the top level is a mapping.

        Raises:
            BadInput: an empty file, or a top level that is not a mapping; ``fix`` says
                which keys to start with.
        """
        if self.data is None:
            raise BadInput(f"{self.at(self.line_of(()))}: the {what} is empty", fix)
        if not isinstance(self.data, dict):
            raise BadInput(f"{self.at(self.line_of(()))}: the top level must be a mapping, "
                           f"got a {type(self.data).__name__}", fix)
        return self.data


#: nodes that aliases may add beyond those written in the file: anchors for shared headers
#: or templates stay usable, a "billion laughs" file is refused before anything expands it
MAX_ALIAS_EXPANSION = 100_000


def _check_nodes(root: yaml.Node, source: str, style: Style) -> None:
    """Refuse duplicate keys and alias bombs in one walk over the distinct nodes.

    An alias is the same node object reached twice: each node is visited once (a visited
    set), so the walk is linear in the file, and the size the data would have once every
    alias is expanded is counted bottom-up (memoised per node) to refuse exponential growth.
    """
    seen_nodes: set[int] = set()
    order: list[yaml.Node] = []
    stack = [root]  # iterative: a deeply nested file must not exhaust the Python stack
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        order.append(node)
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    line = k.start_mark.line + 1
                    if (k.tag, k.value) in seen:
                        raise BadInput(
                            f"{_at(source, style, line, k.start_mark.column + 1)}: key "
                            f"{k.value!r} appears twice (first on line {seen[k.tag, k.value]})",
                            "keep one of them; YAML would silently drop the first")
                    seen[k.tag, k.value] = line
                stack.extend((k, v))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    size: dict[int, int] = {}
    limit = len(order) + MAX_ALIAS_EXPANSION
    for node in reversed(order):  # children before parents (a cycle counts as 1 here)
        if isinstance(node, yaml.MappingNode):
            total = 1 + sum(size.get(id(k), 1) + size.get(id(v), 1) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total = 1 + sum(size.get(id(v), 1) for v in node.value)
        else:
            total = 1
        if total > limit:
            raise BadInput(f"{_at(source, style, node.start_mark.line + 1)}: YAML aliases "
                           f"expand this file past {limit:,} nodes (an alias bomb?)",
                           "write the repeated parts out, or use fewer nested aliases")
        size[id(node)] = total


def parse_yaml(text: str, *, source: str = "<string>", style: Style = "compact") -> YamlDocument:
    """Parse ``text`` as one YAML document (see :func:`read_yaml`); ``source`` names it in
    messages.

    >>> doc = parse_yaml("a:\\n  b: [1, 2]\\n", source="x.yaml")
    >>> doc.data, doc.line_of(["a", "b"])
    ({'a': {'b': [1, 2]}}, 2)
    >>> parse_yaml("a: 1\\na: 2\\n", source="x.yaml")
    Traceback (most recent call last):
    ...
    agentverity_props.errors.BadInput: x.yaml:2:1: key 'a' appears twice (first on line 1) \
— keep one of them; YAML would silently drop the first
    """
    try:
        loader = yaml.SafeLoader(text)  # the reader refuses control characters right here
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "a control"
        raise BadInput(f"{_at(source, style, line)}: not YAML text ({char} character is not "
                       "allowed)", "remove the control characters or binary data") from None
    try:
        root = loader.get_single_node()
        if root is not None:
            _check_nodes(root, source, style)
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, None)
        said = ", ".join(str(part) for part in (exc.context, exc.problem) if part)
        problem = " ".join((said or "invalid YAML").split())
        several = isinstance(exc, yaml.composer.ComposerError) and "another document" in problem
        raise BadInput(f"{_at(source, style, line, column)}: YAML syntax error: {problem}",
                       "keep one document: remove the second '---'" if several
                       else _SYNTAX_FIX) from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{_at(source, style, 1)}: YAML error: {' '.join(str(exc).split())}",
                       "check the file is valid YAML") from None
    except RecursionError:
        raise BadInput(f"{_at(source, style, 1)}: YAML nested too deeply to read",
                       "flatten the nesting") from None
    except BadInput:
        raise
    except (ValueError, OverflowError) as exc:  # e.g. an integer of 10,000 digits
        why = "an integer of more than 4300 digits" if "4300" in str(exc) else str(exc)[:120]
        raise BadInput(f"{_at(source, style, 1)}: a YAML value cannot be read ({why})",
                       "shorten the number, or quote it to make it text") from None
    finally:
        loader.dispose()
    return YamlDocument(source, data, root, style)


def read_yaml(path: str | os.PathLike[str], *, what: str, source: str | None = None,
              style: Style = "compact") -> YamlDocument:
    """Read ``path`` as one UTF-8 YAML document.

    ``what`` names the kind of file in messages ("benchmark file"); ``source`` how the user
    wrote its path (default: ``str(path)``).

    Raises:
        BadInput: a missing, unreadable or oversized file (over
            :data:`~agentverity_props._internal.inputs.MAX_YAML_BYTES`, refused before
            parsing), text that is not UTF-8, a YAML syntax error, several documents, or a
            duplicated key; one line naming the file, the line and the fix.
    """
    p = Path(path)
    name = source or str(p)
    raw = read_file_bytes(p, what=what, yaml_file=True)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BadInput(
            f"{_at(name, style, line)}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
            f"offset {exc.start})", "re-save the file with UTF-8 encoding") from None
    return parse_yaml(text, source=name, style=style)
