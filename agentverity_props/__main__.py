"""``python -m agentverity_props``."""

from .cli import main

main()
