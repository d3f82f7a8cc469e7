"""Writes promptfoo_support.json (a promptfoo JSON export, version 3) and support_draws.jsonl
(the same draws as JSONL) from one seeded generator: a support router run 26 times per
message, whose refund/escalate message split 14/12. Rerun it to regenerate both files."""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROMPT = ("Route this customer message to one of refund, escalate, faq. Answer with JSON "
          '{"route": ...}.\n\nMessage: {{message}}')
PROVIDER = "openai:gpt-4o-mini"
REPEATS = 26
# message -> the routes of its 26 repeats (counts), the route the promptfoo test expects
TESTS = [
    ("How do I reset my password?", {"faq": 26}, "faq"),
    ("I want a refund for order 1001, it arrived broken.", {"refund": 26}, "refund"),
    ("This is ridiculous, refund order 1003 now.", {"refund": 14, "escalate": 12}, "refund"),
]


def main() -> None:
    rng = random.Random(2026)
    results = []
    lines = []
    test_idx = 0
    for t, (message, counts, expected) in enumerate(TESTS):
        routes = [r for r, n in counts.items() for _ in range(n)]
        rng.shuffle(routes)
        for repeat, route in enumerate(routes):
            output = json.dumps({"route": route})
            ok = route == expected
            latency = rng.randint(380, 1400)
            tokens = {"total": 112 + len(message) // 4, "prompt": 104 + len(message) // 4,
                      "completion": 8, "cached": 0, "numRequests": 1}
            results.append({
                "id": f"7c1d{t:02d}{repeat:02d}-5b0e-4f7a-9a51-3f6a0d2c{test_idx:04d}",
                "promptIdx": 0, "testIdx": test_idx,
                "testCase": {"vars": {"message": message},
                             "assert": [{"type": "is-json"},
                                        {"type": "javascript",
                                         "value": f"JSON.parse(output).route === '{expected}'"}],
                             "options": {}, "metadata": {}},
                "promptId": "3f0b9d6c2a51e8d4",
                "provider": {"id": PROVIDER, "label": ""},
                "prompt": {"raw": PROMPT.replace("{{message}}", message), "label": PROMPT,
                           "config": {}},
                "vars": {"message": message},
                "response": {"output": output, "tokenUsage": tokens, "cached": False,
                             "latencyMs": latency, "finishReason": "stop"},
                "error": None if ok else "Custom function returned false",
                "failureReason": 0 if ok else 1,
                "success": ok, "score": 1 if ok else 0.5, "latencyMs": latency,
                "gradingResult": {"pass": ok, "score": 1 if ok else 0.5,
                                  "reason": "All assertions passed" if ok
                                  else "Custom function returned false",
                                  "namedScores": {}, "tokensUsed": {"total": 0},
                                  "componentResults": []},
                "namedScores": {}, "cost": 0.0000312, "metadata": {},
            })
            lines.append({"input": message, "output": output, "order": test_idx})
            test_idx += 1
    # promptfoo stores results as they finish (concurrency 4): the file order is not the
    # schedule; testIdx is
    for i in range(0, len(results) - 3, 4):
        chunk = results[i:i + 4]
        rng.shuffle(chunk)
        results[i:i + 4] = chunk
    passes = sum(r["success"] for r in results)
    export = {
        "evalId": "eval-Xk2-2026-11-30T09:14:51",
        "results": {
            "version": 3, "timestamp": "2026-11-30T09:14:51.402Z",
            "prompts": [{"raw": PROMPT, "label": PROMPT, "id": "3f0b9d6c2a51e8d4",
                         "provider": PROVIDER,
                         "metrics": {"score": sum(r["score"] for r in results),
                                     "testPassCount": passes,
                                     "testFailCount": len(results) - passes,
                                     "testErrorCount": 0}}],
            "results": results,
            "stats": {"successes": passes, "failures": len(results) - passes, "errors": 0,
                      "tokenUsage": {"total": sum(r["response"]["tokenUsage"]["total"]
                                                  for r in results)}},
        },
        "config": {"description": "support router", "prompts": [PROMPT],
                   "providers": [PROVIDER], "evaluateOptions": {"repeat": REPEATS}},
        "shareableUrl": None,
    }
    (HERE / "promptfoo_support.json").write_text(json.dumps(export, indent=1) + "\n")
    (HERE / "support_draws.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines))


if __name__ == "__main__":
    main()
