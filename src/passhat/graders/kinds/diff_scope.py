"""The `diff-scope` grader: the patch stays where the task allows it.

Every changed path must match an `allow` glob (when given) and no `deny` glob; optional
`max_files` and `max_lines` (added + removed). The reason names the stray paths. Paths are the ones
git reads from the patch (trial._patch), so a quoted name (non-ASCII, a newline) is checked like any other.
"""

from __future__ import annotations

from passhat.graders._common import Grade, show_path
from passhat.graders._globs import matches
from passhat.graders.kinds import GraderKind
from passhat.graders.view import OutcomeView


def grade_diff_scope(view: OutcomeView, config: dict) -> Grade:
    paths, added, removed = view.changed_paths, view.lines_added, view.lines_removed
    allow, deny = config.get("allow"), config.get("deny", [])
    problems = []
    outside = [show_path(p) for p in paths if allow is not None and not matches(p, allow)]
    denied = [show_path(p) for p in paths if matches(p, deny)]
    if outside:
        problems.append(f"outside allow {allow}: {', '.join(outside)}")
    if denied:
        problems.append(f"denied by {deny}: {', '.join(denied)}")
    if "max_files" in config and len(paths) > config["max_files"]:
        problems.append(f"{len(paths)} files changed, max {config['max_files']}")
    if "max_lines" in config and added + removed > config["max_lines"]:
        problems.append(f"{added + removed} lines changed (+{added} -{removed}), max {config['max_lines']}")
    summary = f"{len(paths)} file(s), +{added} -{removed}"
    if problems:
        return Grade(False, 0.0, f"diff out of scope ({summary}): " + "; ".join(problems))
    return Grade(True, 1.0, f"diff in scope ({summary})")


_GLOBS = {"type": "array", "items": {"type": "string", "minLength": 1}}
SETTINGS = {
    "anyOf": [{"required": [name]} for name in ("allow", "deny", "max_files", "max_lines")],
    "properties": {
        "allow": _GLOBS,
        "deny": _GLOBS,
        "max_files": {"type": "integer", "minimum": 0},
        "max_lines": {"type": "integer", "minimum": 0},
    },
}

KIND = GraderKind("diff-scope", grade_diff_scope, deterministic=True, settings=SETTINGS)
