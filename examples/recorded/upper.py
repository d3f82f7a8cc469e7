"""The relation of sampled_upper.jsonl: upper-casing a prompt does not change its label."""

from agentverity_props.relations import Relation

RELATIONS = [Relation("upper", "invariant", str.upper,
                      description="upper-casing the prompt keeps its label")]
