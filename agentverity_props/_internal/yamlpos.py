"""Locating pydantic validation errors in YAML files: key paths and line numbers."""

from __future__ import annotations

from typing import Any


def parse_yaml(text: str, path: str) -> tuple[Any, Any]:
    """``(root node, data)`` of a YAML document, parsed once (the node tree locates errors).

    Raises:
        BadInput: malformed YAML, with ``path:line:column`` and the problem.
    """
    import yaml

    from ..errors import BadInput

    try:
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        at = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInput(f"{at}: malformed YAML: {problem}",
                       "fix the YAML syntax at that line") from None
    return root, data


def where(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def line_of(root: Any, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc`` (or of its deepest existing ancestor)."""
    import yaml

    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for i, part in enumerate(loc):
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if getattr(k, "value", None) == part:
                    # an unknown key: point at the key itself
                    nxt = v if i < len(loc) - 1 else k
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
                and part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line
