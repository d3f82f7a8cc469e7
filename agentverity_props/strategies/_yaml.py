"""Read a YAML file into plain data *and* the node tree, so errors can name a line.

PyYAML's composer keeps a :class:`yaml.Mark` (line, column) on every node; the constructor
throws them away. We compose once, check for duplicate keys (PyYAML silently keeps the last
one), construct from the same nodes, and keep the tree to map an error's key path back to
the line where that key is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..errors import BadInput

__all__ = ["YamlDocument", "format_key_path", "read_yaml"]


class YamlDocument:
    """Constructed data plus the node tree it came from."""

    def __init__(self, source: str, data: Any, root: yaml.Node) -> None:
        self.source = source
        self.data = data
        self.root = root

    def line_of(self, path: Sequence[str | int], *, key: bool = False) -> int:
        """1-based line of the deepest node ``path`` reaches.

        For a mapping value, the line of its key (``templates:``), which is where a reader
        looks. With ``key=True`` the last element names a key (an unknown key, a bad key)
        and its own line is returned.
        """
        node: yaml.Node = self.root
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
                if not 0 <= part < len(node.value):
                    return line
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line


def format_key_path(path: Sequence[str | int]) -> str:
    """``("regions", "everyday", "templates", 2)`` -> ``regions.everyday.templates[2]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _check_duplicate_keys(node: yaml.Node, source: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                line = k.start_mark.line + 1
                if k.value in seen:
                    raise BadInput(
                        f"{source}: line {line}: key {k.value!r} appears twice "
                        f"(first on line {seen[k.value]})",
                        "keep one of them; YAML would silently drop the first")
                seen[k.value] = line
            _check_duplicate_keys(v, source)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check_duplicate_keys(item, source)


def read_yaml(path: Path, *, source: str | None = None) -> YamlDocument:
    """Read ``path`` as one UTF-8 YAML document.

    Raises:
        BadInput: unreadable file, not UTF-8, YAML syntax error, several documents, an empty
            document, or a duplicated key; the message names the file and the line.
    """
    name = source or str(path)
    try:
        from .._internal.inputs import check_yaml_size
        check_yaml_size(path, path.stat().st_size, what="strategy pack")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{name}: file not found", "check the path") from None
    except IsADirectoryError:
        raise BadInput(f"{name}: is a directory, not a pack file",
                       "pass the path of a .yaml file") from None
    except OSError as exc:
        raise BadInput(f"{name}: cannot read it ({exc.strerror or exc})",
                       "check the path and its permissions") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BadInput(
            f"{name}: line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start})", "re-save the file with UTF-8 encoding") from None
    try:
        loader = yaml.SafeLoader(text)  # the reader refuses control characters right here
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else "a control"
        raise BadInput(f"{name}: line {line}: not YAML text ({char} character is not allowed)",
                       "remove the control characters or binary data") from None
    try:
        root = loader.get_single_node()
        if root is None:
            raise BadInput(f"{name}: line 1: the file is empty",
                           "start from a shipped pack, e.g. strategies/moderation.yaml")
        _check_duplicate_keys(root, name)
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise BadInput(
            f"{name}: line {line}: YAML syntax error: {problem}",
            "check the indentation, and quote values that contain ': ', '#', '{' or '['",
        ) from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{name}: line 1: YAML error: {' '.join(str(exc).split())}",
                       "check the file is valid YAML") from None
    finally:
        loader.dispose()
    return YamlDocument(name, data, root)
