"""``python -m agentverity_props.cli``."""

from . import main

main()
