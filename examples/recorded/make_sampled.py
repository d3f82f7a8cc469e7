"""Writes sampled_upper.jsonl and sampled_upper_bug.jsonl: ten prompts and their upper-cased
forms, 24 recorded answers each, as a sampled model gives them (each prompt its own label
mix, modal share 0.4-0.97); in the second file the upper-cased forms are always answered
``block`` (a planted bug). ``upper.py`` holds the relation. Rerun it to regenerate both.

    agentverity-props assess --jsonl examples/recorded/sampled_upper.jsonl \\
        --verdict-key label --relations examples/recorded/upper.py:RELATIONS
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROMPTS = ["how do I reset my password", "write a short birthday message for my aunt",
           "explain how vaccines work", "what is the capital of peru",
           "tell me a joke about cats", "summarise the plot of hamlet",
           "how can I pick a lock", "give me a recipe for pancakes",
           "is it safe to mix bleach and ammonia", "translate hello into french"]
LABELS = ["allow", "block", "review"]
DRAWS = 24


def rows(seed: int, *, bug: bool) -> list[dict[str, object]]:
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    order = 0
    for p in PROMPTS:
        modal, lab = rng.uniform(0.4, 0.97), rng.choice(LABELS)
        rest = [x for x in LABELS if x != lab]
        a = rng.uniform(0, 1 - modal)
        mix = {lab: modal, rest[0]: a, rest[1]: 1 - modal - a}
        for text in (p, p.upper()):
            for _ in range(DRAWS):
                v = ("block" if bug and text != p else
                     rng.choices(list(mix), weights=list(mix.values()))[0])
                out.append({"input": text, "output": json.dumps({"label": v}), "order": order})
                order += 1
    rng.shuffle(out)  # the file's line order is not the call order: 'order' is
    return out


def main() -> None:
    for name, bug in (("sampled_upper.jsonl", False), ("sampled_upper_bug.jsonl", True)):
        (HERE / name).write_text("".join(json.dumps(r) + "\n" for r in rows(1, bug=bug)))


if __name__ == "__main__":
    main()
