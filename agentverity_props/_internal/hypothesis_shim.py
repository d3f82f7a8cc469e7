"""The one place that touches Hypothesis's private attributes (a compatibility shim).

Hypothesis has no public API to *read* the settings a test will run with, to move a user's
``@settings`` / ``@seed`` from the function ``@agent_property`` returns onto the ``@given``
test it wraps, to replace settings already applied, or to run a test a second time on the
examples of its first run (the seed Hypothesis drew). ``@agent_property`` needs all four:
a user may stack ``@settings`` above it or below it, and the agent defaults
(:mod:`agentverity_props._internal.agent_settings`) are merged under whatever the user set,
at call time, when the loaded profile is known. Everything else goes through public API:
the check is handed to the test by replacing ``test.hypothesis.inner_test`` (Hypothesis's
documented hook), the defaults are a registered settings profile, and health findings are
warnings.

The attribute names below are those of Hypothesis 6.x (``hypothesis/_settings.py``,
``hypothesis/core.py``); ``tests/unit/test_hypothesis_shim.py`` fails when a Hypothesis
release renames them, and ``tests/unit/test_layout.py`` fails when any other module uses a
``_hypothesis_internal_*`` name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["copy_decorations", "drop_applied_mark", "replay_seed", "seed_of", "seeded",
           "settings_applied", "settings_of", "use_settings"]

_APPLIED = "_hypothesis_internal_settings_applied"
_SETTINGS = "_hypothesis_internal_use_settings"
_SEED = "_hypothesis_internal_use_seed"
_GENERATED_SEED = "_hypothesis_internal_use_generated_seed"


def settings_applied(fn: Any) -> bool:
    """Whether a ``@settings`` decorator was applied to ``fn`` itself."""
    return bool(getattr(fn, _APPLIED, False))


def settings_of(fn: Any) -> Any:
    """The settings Hypothesis would run the ``@given`` test ``fn`` with."""
    return getattr(fn, _SETTINGS)


def use_settings(fn: Any, value: Any) -> None:
    """Run the ``@given`` test ``fn`` with ``value`` (a ``hypothesis.settings``)."""
    setattr(fn, _SETTINGS, value)


def drop_applied_mark(fn: Any) -> None:
    """Forget that ``fn`` (a copy made by ``functools.wraps``) had ``@settings`` applied, so
    a user's ``@settings`` above it is not refused as a second one."""
    fn.__dict__.pop(_APPLIED, None)


def seed_of(fn: Any) -> Any:
    """The ``@seed(...)`` of ``fn``, or None."""
    return getattr(fn, _SEED, None)


def replay_seed(fn: Any) -> Any:
    """The seed a second run of the ``@given`` test ``fn`` needs to generate the examples its
    last run generated: its ``@seed``, else the seed Hypothesis drew for that run (None when
    Hypothesis chose the examples deterministically anyway: ``derandomize`` or
    ``--hypothesis-seed``)."""
    own = getattr(fn, _SEED, None)
    return own if own is not None else getattr(fn, _GENERATED_SEED, None)


@contextlib.contextmanager
def seeded(fn: Any, seed: Any) -> Iterator[None]:
    """Run the ``@given`` test ``fn`` with ``@seed(seed)`` inside the block (None: as it
    is), then restore what it had."""
    if seed is None:
        yield
        return
    had = fn.__dict__.get(_SEED, _MISSING)
    setattr(fn, _SEED, seed)
    try:
        yield
    finally:
        if had is _MISSING:
            fn.__dict__.pop(_SEED, None)
        else:
            setattr(fn, _SEED, had)


_MISSING = object()


def copy_decorations(outer: Any, inner: Any) -> None:
    """``@example`` and ``@seed`` stacked on ``outer`` (the function ``@agent_property``
    returned) apply to ``inner`` (the ``@given`` test it wraps)."""
    examples = getattr(outer, "hypothesis_explicit_examples", None)
    if examples is not None and examples is not getattr(inner, "hypothesis_explicit_examples",
                                                        None):
        inner.hypothesis_explicit_examples = examples
    if getattr(outer, _SEED, None) is not None:
        setattr(inner, _SEED, getattr(outer, _SEED))
