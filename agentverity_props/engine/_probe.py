"""A :class:`Probe`: one input, as the engine sees it."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._internal.fingerprint import fingerprint, salt_from_env, short
from ..errors import InvalidArgument

__all__ = ["Probe"]


@dataclass(frozen=True, slots=True)
class Probe:
    """An input to send to the agent, identified by its fingerprint.

    The raw ``text`` lives only in memory: stores, ledgers and reports keep ``fp``. ``repr``
    hides the text too, so a probe logged by accident does not leak the prompt.

    Attributes:
        text: the prompt sent to the agent.
        fp: its fingerprint (``sha256:...`` or, with a salt, ``hmac-sha256:...``).

    Example:
        >>> p = Probe.make("hello", salt=b"")
        >>> p.fp[:15]
        'sha256:2cf24dba'
    """

    text: str = field(repr=False)
    fp: str

    @classmethod
    def make(cls, text: str, *, salt: bytes | None = None) -> Probe:
        """Fingerprint ``text``; ``salt=None`` reads ``AGENTVERITY_PROPS_SALT``.

        Pass ``salt=b""`` to force an unsalted fingerprint whatever the environment says.
        """
        if not isinstance(text, str):
            raise InvalidArgument(
                f"Probe.make expects the prompt as str, got {type(text).__name__}; "
                "convert it with str() or build a prompt string first")
        return cls(text, fingerprint(text, salt_from_env() if salt is None else salt))

    @property
    def short(self) -> str:
        """A short display form of the fingerprint (never the text)."""
        return short(self.fp)
