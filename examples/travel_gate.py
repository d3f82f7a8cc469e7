"""A travel-request triage agent as a plain function: a domain no strategy pack covers.

CLI reference: ``examples/travel_gate.py:gate``; probes: ``examples/inputs/travel.txt``
(twenty economy trips, all ``approve``: blind). Try::

    agentverity-props enlarge --agent examples/travel_gate.py:noisy_gate \
        --inputs examples/inputs/travel.txt -o /tmp/trips.txt

References:
    gate        deterministic: approve; manager above $2,000 or in business/first class;
                deny for a restricted destination
    noisy_gate  the same with 5% noise (its own Random)
"""

from agentverity_props.examples.travel import gate, make_gate, noisy_gate

__all__ = ["gate", "make_gate", "noisy_gate"]
