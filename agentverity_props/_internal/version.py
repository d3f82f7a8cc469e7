"""The tool's version, in one place (written into snapshots; pyproject.toml repeats it)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
