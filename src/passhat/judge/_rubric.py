"""Rubrics: `rubrics/<name>.yaml`, validated against schemas/rubric.schema.json, then the rules a schema
cannot say (weights sum to 1, one level per point, every criterion describes every level).

Every problem is one RubricError: file, field, value, fix.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from passhat.common._errors import RubricError, yaml_position

Strictness = Literal["lenient", "balanced", "strict"]
GENERAL_THRESHOLD = 0.7
CRITICAL_THRESHOLD = 0.85
WEIGHT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Level:
    score: int  # a point of the scale, 1..points
    label: str  # e.g. excellent
    value: float  # what the point is worth, 0..1


@dataclass(frozen=True)
class Criterion:
    name: str
    description: str
    weight: float
    levels: tuple[tuple[str, str], ...]  # (label, what it means for this criterion), best first


@dataclass(frozen=True)
class EdgeCase:
    case: str
    guidance: str


@dataclass(frozen=True)
class Rubric:
    name: str
    description: str
    points: int
    levels: tuple[Level, ...]  # best first
    criteria: tuple[Criterion, ...]
    strictness: Strictness = "balanced"
    threshold: float = GENERAL_THRESHOLD
    critical: bool = False
    edge_cases: tuple[EdgeCase, ...] = ()
    version: str = ""
    path: str = ""

    def level(self, score: int) -> Level:
        return next(level for level in self.levels if level.score == score)

    def canonical(self) -> dict[str, Any]:
        """Everything that shapes a score, as plain data (the rubric part of judge_version)."""
        return {
            "name": self.name, "description": self.description, "version": self.version,
            "scale": [[lv.score, lv.label, lv.value] for lv in self.levels],
            "criteria": [[c.name, c.description, c.weight, [list(pair) for pair in c.levels]] for c in self.criteria],
            "strictness": self.strictness, "edge_cases": [[e.case, e.guidance] for e in self.edge_cases],
        }  # fmt: skip


@functools.cache
def _validator() -> Any:
    import jsonschema

    text = resources.files("passhat").joinpath("schemas/rubric.schema.json").read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


def _field(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _show(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _schema_problem(error: Any) -> str:
    path, kind = list(error.absolute_path), error.validator
    field, value = _field(path), _show(error.instance)
    if kind == "required":
        missing = next(k for k in error.validator_value if k not in error.instance)
        return f"field '{_field([*path, missing])}' is missing; add it (see passhat/schemas/rubric.schema.json)"
    if kind == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = next(k for k in error.instance if k not in allowed)
        return f"field '{_field([*path, extra])}' is not a known field; remove it (allowed: {', '.join(allowed)})"
    if kind == "enum":
        options = ", ".join(map(str, error.validator_value))
        return f"field '{field}': {value} is not one of {options}; use one of those"
    if kind in ("minimum", "maximum", "exclusiveMinimum"):
        return f"field '{field}': {value}: {error.message}; use a number in range"
    if kind == "pattern":
        return f"field '{field}': {value} does not match {error.validator_value}; use lowercase letters, digits, _ or -"
    return f"field '{field}': {value}: {error.message}; see passhat/schemas/rubric.schema.json"


def _check_scale(file: Path, data: dict) -> tuple[Level, ...]:
    points, raw = data["scale"]["points"], data["scale"]["levels"]
    scores = sorted(level["score"] for level in raw)
    if scores != list(range(1, points + 1)):
        msg = (f"{file}: field 'scale.levels': scores {scores} on a {points}-point scale; "
               f"give exactly one level for each point 1..{points}")  # fmt: skip
        raise RubricError(msg)
    labels = [level["label"] for level in raw]
    if len(set(labels)) != len(labels):
        msg = f"{file}: field 'scale.levels': labels {labels} repeat; give every level its own label"
        raise RubricError(msg)
    levels = tuple(
        sorted((Level(lv["score"], lv["label"], float(lv["value"])) for lv in raw), key=lambda lv: -lv.score)
    )
    for higher, lower in itertools.pairwise(levels):
        if higher.value <= lower.value:
            msg = (f"{file}: field 'scale.levels': score {higher.score} ({higher.label}) is worth {higher.value}, "
                   f"not more than score {lower.score} ({lower.label}, {lower.value}); values must rise with the score")  # fmt: skip
            raise RubricError(msg)
    return levels


def _check_criteria(file: Path, data: dict, levels: tuple[Level, ...]) -> tuple[Criterion, ...]:
    labels = [level.label for level in levels]
    criteria, seen = [], set()
    for index, raw in enumerate(data["criteria"]):
        at = f"criteria[{index}]"
        if raw["name"] in seen:
            raise RubricError(
                f"{file}: field '{at}.name': {raw['name']!r} appears twice; give each criterion its own name"
            )
        seen.add(raw["name"])
        missing = [label for label in labels if label not in raw["levels"]]
        extra = [label for label in raw["levels"] if label not in labels]
        if missing or extra:
            problem = f"lacks {', '.join(missing)}" if missing else f"has unknown level(s) {', '.join(extra)}"
            msg = (f"{file}: field '{at}.levels' ({raw['name']}) {problem}; describe every level of the scale, "
                   f"keyed by its label: {', '.join(labels)}")  # fmt: skip
            raise RubricError(msg)
        described = tuple((label, raw["levels"][label].strip()) for label in labels)
        criteria.append(Criterion(raw["name"], raw["description"].strip(), float(raw["weight"]), described))
    total = math.fsum(c.weight for c in criteria)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        weights = ", ".join(f"{c.name} {c.weight:g}" for c in criteria)
        msg = f"{file}: field 'criteria[*].weight': weights sum to {total:g} ({weights}); make them add up to 1"
        raise RubricError(msg)
    return tuple(criteria)


def parse_rubric(file: Path, data: Any) -> Rubric:
    """A Rubric from already-parsed YAML; `file` names it in errors."""
    from jsonschema.exceptions import best_match

    if not isinstance(data, dict):
        msg = f"{file}: the rubric must be a mapping of fields (name, description, scale, criteria), not {_show(data)}"
        raise RubricError(msg)
    error = best_match(_validator().iter_errors(data))
    if error is not None:
        raise RubricError(f"{file}: {_schema_problem(error)}") from None
    if data["name"] != file.stem:
        msg = f"{file}: field 'name': {data['name']!r} does not match the file name; set `name: {file.stem}` or rename the file"
        raise RubricError(msg)
    levels = _check_scale(file, data)
    critical = bool(data.get("critical", False))
    default = CRITICAL_THRESHOLD if critical else GENERAL_THRESHOLD
    return Rubric(
        name=data["name"],
        description=data["description"].strip(),
        points=data["scale"]["points"],
        levels=levels,
        criteria=_check_criteria(file, data, levels),
        strictness=data.get("strictness", "balanced"),
        threshold=float(data.get("threshold", default)),
        critical=critical,
        edge_cases=tuple(EdgeCase(e["case"].strip(), e["guidance"].strip()) for e in data.get("edge_cases", ())),
        version=str(data.get("version", "")),
        path=str(file),
    )


@functools.cache
def load_rubric(path: str | Path) -> Rubric:
    """Read and validate one rubric file."""
    file = Path(path)
    try:
        raw = file.read_text(encoding="utf-8")
    except OSError as error:
        raise RubricError(f"{file}: cannot read the rubric ({error.strerror}); check the path") from None
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as error:
        where = yaml_position(error)
        msg = f"{file}: YAML syntax error{where}: {getattr(error, 'problem', None) or error}; fix the YAML"
        raise RubricError(msg) from None
    return parse_rubric(file, data)


def rubric_candidates(spec: str, roots: Sequence[Path]) -> list[Path]:
    """Where `rubric: SPEC` may live: a bare name means rubrics/NAME.yaml; a path is taken as written.
    Each is tried under every root in order (the task folder, the project, the working directory); a bare
    name last of all among the rubrics passhat ships (package data: they come with an installed wheel)."""
    bare = not ("/" in spec or spec.endswith((".yaml", ".yml")))
    relative = Path("rubrics") / f"{spec}.yaml" if bare else Path(spec)
    if relative.is_absolute():
        return [relative]
    shipped = [Path(__file__).resolve().parent.parent] if bare else []  # passhat/: its rubrics/ is package data
    out: list[Path] = []
    for root in [*roots, *shipped]:
        candidate = (root / relative).resolve()
        if candidate not in out:
            out.append(candidate)
    return out


def find_rubric(spec: str, roots: Sequence[Path], where: str = "grader config") -> Rubric:
    candidates = rubric_candidates(spec, roots)
    for candidate in candidates:
        if candidate.is_file():
            return load_rubric(candidate)
    tried = ", ".join(str(c) for c in candidates)
    msg = (f"{where}: field 'rubric': {spec!r} not found (tried {tried}); name a shipped rubric "
           "(agent-output, code-change, code-readability) or give a path to a rubric YAML")  # fmt: skip
    raise RubricError(msg)


_CONCISENESS_BY_RANK = (  # best to worst; a scale's levels are mapped onto these by position
    "Says what the task needs and no more: no padding, repetition or unrequested changes.",
    "Brief, with a little that could go.",
    "Noticeably longer than the task needs: restates, over-explains or touches extra code.",
    "Mostly padding, repetition or changes nobody asked for.",
    "So long or so unfocused that the useful part is hard to find.",
)


def with_conciseness(rubric: Rubric, weight: float) -> Rubric:
    """The rubric plus a `conciseness` criterion of `weight`; the others keep their ratios, scaled by 1 - weight."""
    if any(c.name == "conciseness" for c in rubric.criteria):
        return rubric
    last = len(_CONCISENESS_BY_RANK) - 1
    span = max(len(rubric.levels) - 1, 1)
    described = tuple(
        (level.label, _CONCISENESS_BY_RANK[round(rank * last / span)]) for rank, level in enumerate(rubric.levels)
    )
    scaled = tuple(Criterion(c.name, c.description, c.weight * (1 - weight), c.levels) for c in rubric.criteria)
    meaning = "Length fits the task: judged against what the task needs, never rewarded for its own sake."
    extra = Criterion("conciseness", meaning, weight, described)
    return replace(rubric, criteria=(*scaled, extra))
