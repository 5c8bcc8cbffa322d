"""The child process a team grader runs in: `python -m passhat.graders.team._child SPEC RESULT`.

It rebuilds the outcome's view from SPEC (JSON: the outcome, the grader's file, function, settings, threshold),
imports the team's module (its folder first on sys.path, as Promptfoo loads a python assertion), calls the
function with the view, and writes RESULT: {"pass", "score", "reason"} or {"error": "FILE:LINE: ..."}, one line.
Its stdout is a file the parent reads (anything there fails the grade: graders.team._spawn says why); its
stderr is the parent's (a traceback of a failure goes there in full). SIGTERM (the parent's timeout) raises
in the grader, so that a command it runs through the view is stopped with it.
"""

from __future__ import annotations

import base64
import importlib.util
import inspect
import json
import math
import os
import signal
import sys
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

RETURNS = "return a bool, a score 0..1, (passed, score, reason) or {'pass': ..., 'score': ..., 'reason': ...}"


PASSHAT = Path(__file__).resolve().parents[2]


class BadReturnError(Exception):
    """The grader returned none of the shapes a grader may return (the message names file:line)."""


class Stopped(BaseException):
    """The parent stopped the grader at its timeout."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stopped


def one_line(error: BaseException, folder: Path) -> str:
    """`FILE:LINE: Type: message` at the deepest line of the team's code (its grader file's folder) in the
    traceback, else the deepest line of all."""
    frames = traceback.extract_tb(error.__traceback__)
    theirs = [
        f
        for f in frames
        if (path := Path(f.filename).resolve()).is_relative_to(folder)
        and not path.is_relative_to(PASSHAT)
        and "site-packages" not in path.parts
    ]
    words = " ".join(str(error).split())[:500]
    what = f"{type(error).__name__}: {words}" if words else type(error).__name__
    if not (theirs or frames):
        return what
    frame = (theirs or frames)[-1]
    return f"{frame.filename}:{frame.lineno}: {what}"


def _score(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= 1:
        msg = f"{where}: the score {value!r} is not a number from 0 to 1; {RETURNS}"
        raise BadReturnError(msg)
    return float(value)


def normalize(returned: object, where: str, name: str, threshold: float | None) -> dict[str, Any]:
    """What a grader returned, as a GradingResult's pass, score and reason (BadReturnError naming `where` when it
    is none of the shapes a grader may return)."""
    if isinstance(returned, bool):
        return {"pass": returned, "score": 1.0 if returned else 0.0, "reason": f"{name} returned {returned}"}
    if isinstance(returned, int | float):
        score = _score(returned, where)
        passed = score >= threshold if threshold is not None else score > 0  # as Promptfoo reads a number
        rule = f">= {threshold:g}" if threshold is not None else "> 0"
        return {"pass": passed, "score": score, "reason": f"{name} returned score {score:g} (passes {rule})"}
    if isinstance(returned, tuple | list) and len(returned) == 3:
        passed, score, reason = returned
    elif isinstance(returned, dict) and "pass" in returned:
        passed, reason = returned["pass"], returned.get("reason", "")
        score = returned.get("score", 1.0 if passed is True else 0.0)
    else:
        shown = repr(returned)[:80]
        msg = f"{where}: {name} returned {type(returned).__name__} {shown}; {RETURNS} (a dict needs 'pass')"
        raise BadReturnError(msg)
    if not isinstance(passed, bool):
        msg = f"{where}: {name} returned pass = {passed!r}, not True or False; {RETURNS}"
        raise BadReturnError(msg)
    text = reason if isinstance(reason, str) else repr(reason)
    return {"pass": passed, "score": _score(score, where), "reason": text or f"{name} returned {passed}"}


def _call(spec: dict[str, Any]) -> dict[str, Any]:
    from passhat.graders.view import view_of
    from passhat.trial._outcome import TrialOutcome

    file, name = Path(spec["file"]), spec["function"]
    outcome = TrialOutcome(Path(spec["task_dir"]), Path(spec["base_dir"]), base64.b64decode(spec["patch"]), spec["run"])
    sys.path.insert(0, str(file.parent))
    module_spec = importlib.util.spec_from_file_location(f"passhat_team_grader_{file.stem}", file)
    if module_spec is None or module_spec.loader is None:
        return {"error": f"{file}: cannot be imported as a Python module"}
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module
    module_spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if not callable(function):
        return {"error": f"{file}: {name} is not a function after the module ran; `def {name}(view, settings):`"}
    code = getattr(function, "__code__", None)
    where = f"{file}:{code.co_firstlineno}" if code is not None else str(file)
    view, settings = view_of(outcome), spec["settings"]
    arguments: tuple[object, ...] = (view, settings)
    try:
        inspect.signature(function).bind(view, settings)
    except TypeError:
        arguments = (view,)  # `def grade(view):` — no settings wanted
    except ValueError:
        pass  # no signature to read (a builtin): called as documented
    returned = function(*arguments)
    try:
        return normalize(returned, where, name, spec.get("threshold"))
    except BadReturnError as error:
        return {"error": str(error)}


def main(argv: list[str]) -> int:
    spec_file, result_file = Path(argv[1]), Path(argv[2])
    spec = json.loads(spec_file.read_text(encoding="utf-8"))
    signal.signal(signal.SIGTERM, _stop)
    try:
        result = _call(spec)
    except BaseException as error:  # the team's code: whatever it raises (SystemExit too) is its grade's reason
        if isinstance(error, Stopped):
            result = {"stopped_at": one_line(error, Path(spec["file"]).parent.resolve()).split(": ")[0]}
        else:
            traceback.print_exc(file=sys.stderr)
            result = {"error": one_line(error, Path(spec["file"]).parent.resolve())}
    tmp = result_file.with_name(result_file.name + ".tmp")
    tmp.write_text(json.dumps(result, default=str), encoding="utf-8")
    os.replace(tmp, result_file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
