"""The public names of ``agentverity_props``, each written once: this stub is what type
checkers read, and ``__init__.py`` reads it at import time to build its lazy exports and
``__all__`` (docs/api.md describes every name; tests/unit/test_public_api.py keeps the three
equal, and at most 25 names). Add a public name here, as ``from .module import name as
name``, and in docs/api.md. Every other public name lives in its sub-module
(``agentverity_props.diagnose``, ``.engine``, ``.errors``...)."""

from ._internal.version import __version__ as __version__
from .adapters import from_callable as from_callable
from .conversation import AgentStateMachine as AgentStateMachine
from .conversation import conversation_machine as conversation_machine
from .diagnose import HealthCheck as HealthCheck
from .errors import AgentVerityError as AgentVerityError
from .errors import Inconclusive as Inconclusive
from .errors import PropertyViolation as PropertyViolation
from .observation import Observation as Observation
from .observation import by_callable as by_callable
from .observation import by_key as by_key
from .observation import by_regex as by_regex
from .property import agent_property as agent_property
from .relations import Relation as Relation
from .relations import builtin_relations as builtin_relations
from .runner import measure as measure
from .runner import plan as plan
from .runner import run as run
from .search import enlarge as enlarge
from .search import locate_boundary as locate_boundary
from .snapshot import compare_snapshot as compare_snapshot
from .snapshot import create_snapshot as create_snapshot
