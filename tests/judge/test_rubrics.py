"""Rubrics: the shipped ones load and say what they should; a broken rubric is one line naming the file,
the field, the value and the fix."""

from __future__ import annotations

import copy
import math

import pytest
import yaml
from conftest import ROOT

from passhat.judge import RubricError, find_rubric, load_rubric
from passhat.judge._rubric import parse_rubric, with_conciseness

RUBRICS = ROOT / "rubrics"
SHIPPED = sorted(p.stem for p in RUBRICS.glob("*.yaml"))


def test_the_three_named_rubrics_ship():
    assert {"agent-output", "code-change", "code-readability"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_rubric_is_valid_and_its_weights_sum_to_one(name):
    rubric = load_rubric(RUBRICS / f"{name}.yaml")
    assert rubric.name == name
    assert math.isclose(sum(c.weight for c in rubric.criteria), 1.0)
    assert [lv.score for lv in rubric.levels] == list(range(rubric.points, 0, -1))
    assert all(len(c.levels) == rubric.points for c in rubric.criteria)
    assert rubric.edge_cases, f"{name}: say how the judge handles the cases the levels do not settle"


def test_agent_output_is_the_specified_rubric():
    rubric = load_rubric(RUBRICS / "agent-output.yaml")
    assert [(c.name, c.weight) for c in rubric.criteria] == [
        ("instruction_following", 0.30), ("completeness", 0.25), ("tool_efficiency", 0.20),
        ("reasoning_quality", 0.15), ("coherence", 0.10),
    ]  # fmt: skip
    assert [(lv.label, lv.value) for lv in rubric.levels] == [
        ("excellent", 1.0), ("good", 0.8), ("acceptable", 0.6), ("poor", 0.3), ("failed", 0.0),
    ]  # fmt: skip
    assert rubric.threshold == 0.7 and rubric.strictness == "balanced" and not rubric.critical


def test_code_change_criteria():
    rubric = load_rubric(RUBRICS / "code-change.yaml")
    assert [c.name for c in rubric.criteria] == ["correctness", "completeness", "style", "efficiency"]


def test_code_readability_is_a_three_point_scale():
    rubric = load_rubric(RUBRICS / "code-readability.yaml")
    assert rubric.points == 3 and [lv.value for lv in rubric.levels] == [1.0, 0.5, 0.0]


def _base() -> dict:
    return yaml.safe_load((RUBRICS / "agent-output.yaml").read_text())


def _ten_point() -> dict:
    data = _base()
    labels = [f"p{i}" for i in range(10, 0, -1)]
    data["scale"] = {
        "points": 10,
        "levels": [{"score": i, "label": f"p{i}", "value": (i - 1) / 9} for i in range(10, 0, -1)],
    }
    for criterion in data["criteria"]:
        criterion["levels"] = {label: f"{label} for {criterion['name']}" for label in labels}
    return data


def _write(tmp_path, data, name="agent-output"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_a_ten_point_scale_with_a_level_for_every_point_is_valid(tmp_path):
    rubric = load_rubric(_write(tmp_path, _ten_point()))
    assert rubric.points == 10 and rubric.level(10).value == 1.0 and rubric.level(1).value == 0.0


def test_a_critical_rubric_passes_at_085_unless_it_says_otherwise(tmp_path):
    data = _base()
    data["critical"] = True
    assert load_rubric(_write(tmp_path, data)).threshold == 0.85
    data["threshold"] = 0.9
    (tmp_path / "explicit").mkdir()
    assert load_rubric(_write(tmp_path / "explicit", data)).threshold == 0.9


def _edit(change):
    def apply():
        data = copy.deepcopy(_base())
        change(data)
        return data

    return apply


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(_edit(lambda d: d["criteria"][0].update(weight=0.35)),
                     r"field 'criteria\[\*\]\.weight': weights sum to 1\.05 \(instruction_following 0\.35, .*\); "
                     "make them add up to 1", id="weights"),
        pytest.param(_edit(lambda d: d["scale"].update(points=4)),
                     r"field 'scale\.points': 4 is not one of 3, 5, 10; use one of those", id="points"),
        pytest.param(_edit(lambda d: d["scale"]["levels"].pop()),
                     r"field 'scale\.levels': scores \[2, 3, 4, 5\] on a 5-point scale; give exactly one level for each "
                     r"point 1\.\.5", id="missing-point"),
        pytest.param(_edit(lambda d: d["criteria"][1]["levels"].pop("poor")),
                     r"field 'criteria\[1\]\.levels' \(completeness\) lacks poor; describe every level of the scale, "
                     "keyed by its label: excellent, good, acceptable, poor, failed", id="missing-level-text"),
        pytest.param(_edit(lambda d: d["criteria"][0].update(weigth=0.3)),
                     r"field 'criteria\[0\]\.weigth' is not a known field; remove it", id="typo"),
        pytest.param(_edit(lambda d: d.update(strictness="harsh")),
                     r"field 'strictness': 'harsh' is not one of lenient, balanced, strict", id="strictness"),
        pytest.param(_edit(lambda d: d.update(name="other")),
                     r"field 'name': 'other' does not match the file name; set `name: agent-output`", id="name"),
        pytest.param(_edit(lambda d: d["scale"]["levels"][1].update(value=1.0)),
                     r"field 'scale\.levels': score 5 \(excellent\) is worth 1\.0, not more than score 4 \(good, 1\.0\); "
                     "values must rise with the score", id="values"),
        pytest.param(_edit(lambda d: d.update(threshold=1.5)), r"field 'threshold': 1\.5: .*use a number in range",
                     id="threshold"),
        pytest.param(_edit(lambda d: d["criteria"].append(dict(d["criteria"][0], weight=0.0001))),
                     r"field 'criteria\[5\]\.name': 'instruction_following' appears twice", id="duplicate"),
        pytest.param(_edit(lambda d: d.pop("criteria")), r"field 'criteria' is missing; add it", id="no-criteria"),
        pytest.param(lambda: "name: [unclosed\n", r"YAML syntax error at line 2, column 1", id="yaml"),
        pytest.param(lambda: "- a list\n", r"the rubric must be a mapping of fields", id="not-a-mapping"),
    ],
)  # fmt: skip
def test_broken_rubrics_are_one_line_with_file_field_value_and_fix(tmp_path, make, message):
    path = _write(tmp_path, make())
    load_rubric.cache_clear()
    with pytest.raises(RubricError, match=message) as caught:
        load_rubric(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and "\n" not in text


def test_a_missing_rubric_says_where_it_looked(tmp_path):
    with pytest.raises(
        RubricError, match=r"field 'rubric': 'nope' not found \(tried .*/rubrics/nope\.yaml\); name a shipped"
    ):
        find_rubric("nope", [tmp_path, ROOT])


def test_a_bare_name_is_rubrics_name_yaml_and_a_path_is_taken_as_written(tmp_path):
    assert find_rubric("agent-output", [tmp_path, ROOT]).path == str(RUBRICS / "agent-output.yaml")
    copy_path = _write(tmp_path, _base())
    assert find_rubric("agent-output.yaml", [tmp_path, ROOT]).path == str(copy_path)


def test_conciseness_keeps_the_ratios_and_the_sum():
    rubric = with_conciseness(load_rubric(RUBRICS / "agent-output.yaml"), 0.2)
    weights = {c.name: c.weight for c in rubric.criteria}
    # 0.30 x 0.8 = 0.24, 0.25 x 0.8 = 0.20, ...; + conciseness 0.2; sum 1
    assert weights["instruction_following"] == pytest.approx(0.24) and weights["conciseness"] == 0.2
    assert math.isclose(sum(weights.values()), 1.0)
    conciseness = rubric.criteria[-1]
    assert [label for label, _ in conciseness.levels] == ["excellent", "good", "acceptable", "poor", "failed"]


def test_parse_rubric_accepts_a_three_point_scale_without_edge_cases(tmp_path):
    data = {"name": "tiny", "description": "d", "scale": {"points": 3, "levels": [
        {"score": 3, "label": "yes", "value": 1}, {"score": 2, "label": "partly", "value": 0.5},
        {"score": 1, "label": "no", "value": 0}]},
        "criteria": [{"name": "works", "description": "it works", "weight": 1,
                      "levels": {"yes": "y", "partly": "p", "no": "n"}}]}  # fmt: skip
    rubric = parse_rubric(tmp_path / "tiny.yaml", data)
    assert rubric.threshold == 0.7 and rubric.edge_cases == ()
