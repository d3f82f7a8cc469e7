"""agentverity-props: property-based testing for non-deterministic LLM agents."""

__version__ = "0.1.0"
