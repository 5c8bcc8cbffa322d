"""The integrity scan: the known shapes of gaming the tests, found in a trial's added or changed non-test code.

May import: passhat.common._errors, passhat.graders' private modules (globs), trial (the outcome, safe reads, git).
Exports: Finding, RULES, scan_outcome, scan_source, assertion_literals, Literal.

Python files are read with `ast` (the post-patch file, each finding mapped to the lines the patch added or
changed), JavaScript/TypeScript with regexes over the added lines (comments blanked, nesting depth tracked).
A finding is (rule id, file, line); the `integrity` grader (graders/kinds/integrity.py) turns findings into a
Grade. The rules and what they catch are the table RULES (the README's "Gaming the tests" shows it).
"""

from __future__ import annotations

from passhat.graders.scan._rules import RULES, Finding, Literal
from passhat.graders.scan._source import assertion_literals, scan_source
from passhat.graders.scan._tree import scan_outcome

__all__ = ["RULES", "Finding", "Literal", "assertion_literals", "scan_outcome", "scan_source"]
