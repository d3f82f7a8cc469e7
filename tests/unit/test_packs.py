"""Strategy packs: lookup, validation with file/line/key errors, schema, compiled strategies."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import string
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from agentverity_props.errors import BadInput
from agentverity_props.strategies import (
    Perturbation,
    StrategyPack,
    available_packs,
    case_changes,
    follow_ups,
    from_pack,
    load_pack,
    pack_json_schema,
    pack_perturbations,
)
from agentverity_props.strategies._packs import find_named_pack, pack_dirs
from agentverity_props.strategies._schema import CANONICAL_REGIONS, pack_json_schema_text

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "docs" / "schemas" / "strategy-pack.schema.json"
SHIPPED = ["moderation", "refund_approval", "support_routing"]
FAST = settings(max_examples=50, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])

def minimal(strategy, predicate, *, max_examples: int = 100):
    """``hypothesis.find`` without the explain phase (it re-runs ~100 variants per call)."""
    return find(strategy, predicate, settings=settings(
        max_examples=max_examples, database=None, phases=[Phase.generate, Phase.shrink]))

MINIMAL = """\
version: 1
name: demo
description: A tiny pack.
labels: [ok, bad]
slots:
  who: [Ann, Bo]
regions:
  everyday:
    templates: ["Hi {who}"]
  violation:
    templates: ["Bye {who}"]
"""


def _region_regexes(pack: StrategyPack, region: str) -> list[re.Pattern[str]]:
    slots = pack.slots_for(region)
    out = []
    for template in pack.regions[region].templates:
        rx = ""
        for literal, field, _, _ in string.Formatter().parse(template):
            rx += re.escape(literal)
            if field is not None:
                rx += "(?:" + "|".join(map(re.escape, slots[field])) + ")"
        out.append(re.compile(rx))
    return out


def _region_of(pack: StrategyPack, text: str) -> str:
    hits = [r for r in pack.region_names() if any(rx.fullmatch(text)
                                                   for rx in _region_regexes(pack, r))]
    assert hits, f"{text!r} matches no template of pack {pack.name}"
    return hits[0]


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# -- lookup ---------------------------------------------------------------------------------------

def test_shipped_packs_are_available_by_name() -> None:
    assert set(SHIPPED) <= set(available_packs())
    for name in SHIPPED:
        assert load_pack(name).name == name


def test_named_lookup_prefers_the_installed_copy(tmp_path: Path) -> None:
    wheel, repo = tmp_path / "_packs", tmp_path / "strategies"
    for folder, desc in ((wheel, "wheel"), (repo, "repo")):
        folder.mkdir()
        _write(folder, "demo.yaml", MINIMAL.replace("A tiny pack.", desc))
    _write(repo, "only_repo.yaml", MINIMAL)
    assert find_named_pack("demo", [wheel, repo]) == wheel / "demo.yaml"
    assert find_named_pack("only_repo", [wheel, repo]) == repo / "only_repo.yaml"
    with pytest.raises(BadInput, match="use one of: demo, only_repo"):
        find_named_pack("missing", [wheel, repo])
    # this checkout is an editable install: the repo's strategies/ folder is on the path
    assert REPO / "strategies" in pack_dirs()


def test_load_by_path_str_and_pathlike(tmp_path: Path) -> None:
    path = _write(tmp_path, "mine.yaml", MINIMAL)
    assert load_pack(str(path)).name == "demo"
    assert load_pack(path).name == "demo"
    shutil.copy(path, tmp_path / "other.yml")
    assert load_pack(str(tmp_path / "other.yml")).description == "A tiny pack."


def test_unknown_name_lists_available_packs() -> None:
    with pytest.raises(BadInput) as info:
        load_pack("no_such_pack")
    message = str(info.value)
    assert "'no_such_pack'" in message
    assert all(name in message for name in SHIPPED)


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not found"):
        load_pack(str(tmp_path / "absent.yaml"))
    with pytest.raises(BadInput, match="directory"):
        load_pack(tmp_path)


# -- shipped packs --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_pack_shape(name: str) -> None:
    pack = load_pack(name)
    assert pack.region_names()[:3] == list(CANONICAL_REGIONS)
    assert pack.labels
    assert pack.perturbations
    for region in pack.regions.values():
        assert set(region.expect) <= set(pack.labels)
    # the schema allows any names; shipped packs use the canonical three, mildest first
    assert isinstance(pack_perturbations(pack), st.SearchStrategy)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_pack_validates_against_the_published_schema(name: str) -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    data = yaml.safe_load((REPO / "strategies" / f"{name}.yaml").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)


def test_committed_schema_equals_generated() -> None:
    committed = SCHEMA_FILE.read_text(encoding="utf-8")
    assert json.loads(committed) == pack_json_schema()
    assert committed == pack_json_schema_text(), "regenerate: see _schema.py docstring"


@pytest.mark.parametrize("name", SHIPPED)
def test_minimal_example_is_the_first_everyday_prompt(name: str) -> None:
    pack = load_pack(name)
    first = pack.regions["everyday"].templates[0]
    slots = pack.slots_for("everyday")
    expected = first.format(**{k: v[0] for k, v in slots.items()})
    assert minimal(from_pack(name), lambda s: True) == expected


@pytest.mark.parametrize("name", SHIPPED)
def test_generated_text_matches_the_pack_grammar(name: str) -> None:
    pack = load_pack(name)

    @FAST
    @given(from_pack(pack))
    def check(text: str) -> None:
        _region_of(pack, text)  # fails unless the text is one of the pack's templates, filled

    check()


@pytest.mark.parametrize("name", SHIPPED)
def test_each_region_is_reached_and_shrinks_to_its_first_template(name: str) -> None:
    # Hypothesis mutates earlier examples rather than sampling independently, so weights
    # steer the search without fixing proportions; every region must still be reachable.
    pack = load_pack(name)
    for region in pack.region_names():
        slots = pack.slots_for(region)
        first = pack.regions[region].templates[0].format(**{k: v[0] for k, v in slots.items()})
        found = minimal(from_pack(pack), lambda s, r=region: _region_of(pack, s) == r,
                        max_examples=1000)
        assert found == first


@pytest.mark.parametrize("region", CANONICAL_REGIONS)
def test_region_argument_restricts_the_draws(region: str) -> None:
    pack = load_pack("moderation")
    rxs = _region_regexes(pack, region)

    @FAST
    @given(from_pack("moderation", region=region))
    def check(text: str) -> None:
        assert any(rx.fullmatch(text) for rx in rxs), text

    check()
    with pytest.raises(BadInput, match=r"no region 'nope'.*everyday, borderline, violation"):
        from_pack("moderation", region="nope")


def test_moderation_pack_crosses_the_example_gates_boundaries() -> None:
    # The example gate's real scorer: everyday text must stay clear of its thresholds, the
    # borderline region must straddle the review threshold, violations must reach block.
    from agentverity_props.examples import _risk

    pack = load_pack("moderation")
    verdicts: dict[str, Counter[str]] = {}
    for region in pack.region_names():
        slots = pack.slots_for(region)
        counts: Counter[str] = Counter()
        for template in pack.regions[region].templates:
            names = list(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(template) if f))
            for values in itertools.product(*(slots[n] for n in names)):
                text = template.format(**dict(zip(names, values, strict=False)))
                counts[_risk.verdict_for(_risk.risk(text).score, noise=0.0, rng=None)] += 1
        verdicts[region] = counts
    assert set(verdicts["everyday"]) == {"allow"}
    assert {"allow", "review"} <= set(verdicts["borderline"])
    assert verdicts["violation"]["block"] > verdicts["violation"]["review"] > 0


def test_moderation_probes_reach_the_planted_urgent_bug() -> None:
    # planted bug in the example gate: upper-case URGENT in a prompt over 40 characters
    def trigger(text: str) -> bool:
        return "URGENT" in text and len(text) > 40

    s = follow_ups(from_pack("moderation"), case_changes())
    text, p, _ = minimal(s, lambda t: trigger(t[0]) != trigger(t[2]), max_examples=300)
    assert "urgent" in text.lower()
    assert len(text) > 40
    assert _region_of(load_pack("moderation"), text) == "everyday"
    assert p.name == "case"
    # the pack itself also emits the upper-case form, for prompt -> prompt.lower() relations
    assert trigger(minimal(from_pack("moderation", region="everyday"), trigger,
                           max_examples=1000))


def test_pack_perturbations_use_the_listed_families_and_options(tmp_path: Path) -> None:
    path = _write(tmp_path, "opts.yaml", MINIMAL + """\
perturbations:
  - typo: {max_count: 1}
  - entity_swap:
      mapping: {Ann: [Zoe]}
  - paraphrase:
      templates: ["Q: {text}"]
""")
    strategy = pack_perturbations(str(path))
    assert minimal(strategy, lambda p: True) == Perturbation(
        "typo", {"edits": [{"at": 0, "kind": "neighbour", "key": 0}]})
    seen: set[str] = set()

    @FAST
    @given(strategy)
    def check(p: Perturbation) -> None:
        seen.add(p.name)
        if p.name == "typo":
            assert len(p.params["edits"]) == 1
        elif p.name == "entity_swap":
            assert p.apply("Hi Ann") == "Hi Zoe"
        else:
            assert p.apply("x") == "Q: x"

    check()
    assert seen == {"typo", "entity_swap", "paraphrase"}
    with pytest.raises(BadInput, match="lists no perturbations"):
        pack_perturbations(str(_write(tmp_path, "none.yaml", MINIMAL)))


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_pack_perturbations_draw_listed_families(name: str) -> None:
    pack = load_pack(name)
    listed = set(pack.perturbation_names())
    first = pack.perturbation_names()[0]
    assert minimal(pack_perturbations(name), lambda p: True).name == first

    @settings(max_examples=30, deadline=None, database=None)
    @given(pack_perturbations(pack))
    def check(p: Perturbation) -> None:
        assert p.name in listed

    check()


# -- malformed packs: one line naming file, line and key ---------------------------------------

BAD_PACKS: list[tuple[str, str | bytes, int, str]] = [
    # (case id, content, expected line, expected key path / word in the message)
    ("unknown_key", MINIMAL.replace("    templates: [\"Bye", "    tempaltes: [\"Bye"), 11,
     "regions.violation.tempaltes"),
    ("unknown_top_key", MINIMAL + "colour: blue\n", 12, "colour"),
    ("wrong_type", MINIMAL.replace("who: [Ann, Bo]", "who: [Ann, 42]"), 6, "slots.who[1]"),
    ("weight_type", MINIMAL.replace("  everyday:\n", "  everyday:\n    weight: heavy\n"), 9,
     "regions.everyday.weight"),
    ("missing_regions", MINIMAL.split("regions:", maxsplit=1)[0], 1, "regions"),
    ("empty_regions", MINIMAL.split("regions:", maxsplit=1)[0] + "regions: {}\n", 7, "regions"),
    ("missing_templates", MINIMAL.replace("    templates: [\"Bye {who}\"]", "    weight: 2"),
     10, "regions.violation.templates"),
    ("undefined_slot", MINIMAL.replace("Bye {who}", "Bye {whom}"), 11,
     "regions.violation.templates[0]"),
    ("bad_version", MINIMAL.replace("version: 1", "version: 2"), 1, "version"),
    ("bad_label",
     MINIMAL.replace('    templates: ["Bye', '    expect: [maybe]\n    templates: ["Bye'),
     11, "regions.violation.expect[0]"),
    ("bad_perturbation", MINIMAL + "perturbations:\n  - case\n  - shout\n", 14, "perturbations[1]"),
    ("duplicate_key", MINIMAL + "slots:\n  x: [y]\n", 12, "slots"),
    ("syntax_error", MINIMAL.replace("name: demo", "name: demo: oops"), 2, "YAML syntax"),
    ("bad_indent", MINIMAL.replace("  who: [Ann, Bo]", "  who: [Ann, Bo\n"), 8, "YAML syntax"),
    ("not_utf8", MINIMAL.replace("A tiny pack.", "caf\udce9").encode("utf-8", "surrogateescape"),
     3, "UTF-8"),
    ("empty_file", "", 1, "empty"),
    ("only_comments", "# nothing here\n", 1, "empty"),
    ("top_level_list", "- a\n- b\n", 1, "mapping"),
]


@pytest.mark.parametrize(("content", "line", "key"), [c[1:] for c in BAD_PACKS],
                         ids=[c[0] for c in BAD_PACKS])
def test_malformed_pack_is_one_line_bad_input(tmp_path: Path, content: str | bytes, line: int,
                                              key: str) -> None:
    path = _write(tmp_path, "broken_pack.yaml", content)
    with pytest.raises(BadInput) as info:
        load_pack(str(path))
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert f"line {line}:" in message, message
    assert key in message, message
    assert info.value.fix, "every message says how to fix it"


def test_unknown_key_suggests_the_right_spelling(tmp_path: Path) -> None:
    path = _write(tmp_path, "typo.yaml", MINIMAL.replace("labels:", "lables:"))
    with pytest.raises(BadInput, match="did you mean 'labels'"):
        load_pack(path)


@pytest.mark.parametrize(
    "case", [c for c in BAD_PACKS if c[0] in {"unknown_key", "unknown_top_key", "wrong_type",
                                               "weight_type", "missing_regions", "empty_regions",
                                               "missing_templates", "bad_version",
                                               "bad_perturbation"}],
    ids=lambda c: c[0])
def test_schema_rejects_what_the_loader_rejects(case: tuple[str, str, int, str]) -> None:
    data = yaml.safe_load(case[1])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(pack_json_schema()).validate(data)


# -- the README is executable -------------------------------------------------------------------

def test_readme_format_example_loads_and_its_error_example_is_real(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO / "strategies" / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", readme, re.S)
    assert block is not None
    pack = load_pack(_write(tmp_path, "billing.yaml", block.group(1)))
    assert pack.region_names() == list(CANONICAL_REGIONS)
    assert isinstance(pack_perturbations(pack), st.SearchStrategy)

    shown = re.search(r"```text\n\s*(my\.yaml: line .*)\n", readme)
    assert shown is not None
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "my.yaml", "version: 1\nname: my\ndescription: d\nregions:\n"
                                "  everyday:\n    weight: 1\n    tempaltes: [hi]\n")
    with pytest.raises(BadInput) as info:
        load_pack("my.yaml")
    assert str(info.value) == shown.group(1)
