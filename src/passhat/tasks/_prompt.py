"""The prompt of a task made from a commit: its message minus what gives the fix away. Pure: the CLI passes the
message, the two patches and the parent's versions of the files the fix changes.

The rule (README, "Tasks"). Start from the message — subject, blank line, body — without its trailers (the last
paragraph, when all of it is `Key: value` lines: Signed-off-by, Co-authored-by, ...). Judge prose sentence by
sentence, a list item or a code line as a whole:
  1. how the fix works is cut: from the first clause (split at `, ; :` and dashes) that opens with an editing
     verb (add, use, replace, change, return, ... in any form; the behaviour verbs only as the imperative) or with
     "this fix / the change / instead / to fix", or that holds "now", to the end of the sentence (a verb written
     as a name the tests use, as in "add returned 0", or followed by `(`, is that name); and from
     "by <verb>ing" or "instead of <verb>ing" on ("Fix median by averaging the two middle values." -> "Fix
     median.");
  2. what is left is left out whole when it names a file the fix changes (its path or file name); names an
     identifier the fix adds (defined on an added line — def, class, function, const NAME = ... — or code-like:
     snake_case, camelCase, with a digit; at least 3 characters; in none of the parent's versions of the changed
     files); names a function the fix changes (a hunk's function or a definition on a changed line) that the
     tests (test.patch) never mention — where the fix goes; quotes an added line of solution.patch (6 characters
     or more); or quotes code the fix adds: 4 tokens in a row of an added line, in none of the parent's lines.
What stays is the symptom, in the names the tests already use. Every piece left out is listed with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from passhat.tasks._author import hunk_lines

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*: \S")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|[A-Za-z][0-9]")
_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d+(?:\.\d+)?|[^\w\s]")
_DEFINED = re.compile(
    r"\b(?:def|class|function|func|fn)\s+([A-Za-z_$][\w$]*)"
    r"|\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)"
)
_HUNK_HEADER = re.compile(rb"(?m)^@@ [^@]* @@(.*)$")
_ITEM = re.compile(r"\s*(?:[-*+•]|\d+[.)])\s")  # a list item's first line
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'`(\[])")
_CLAUSE = re.compile(r"[,;:](?=\s)|\s[-–—]{1,2}(?=\s)")
_MIN_NAME, _MIN_QUOTE, _GRAM = 3, 6, 4

_EDITS = (
    "add use replace change switch rename move remove delete drop introduce refactor extract inline wrap swap "
    "rewrite update call implement apply convert escape strip guard cache store initialize initialise reorder"
)
_BEHAVIOURS = "return compute average sort round check pass set cast clamp append insert catch skip ignore normalize"
_IRREGULAR = ("rewrote", "rewritten", "applies", "applied")


def _forms(verb: str) -> set[str]:
    """The forms of an editing verb a commit message uses (a few made-up ones, like "addes", do no harm)."""
    stem = verb[:-1] if verb.endswith("e") else verb
    double = verb + verb[-1] if verb in ("drop", "wrap", "swap", "strip") else verb
    return {verb, f"{verb}s", f"{verb}es", f"{stem}ed", f"{double}ed", f"{stem}ing", f"{double}ing"}


_VERBS = {form for verb in _EDITS.split() for form in _forms(verb)} | {*_BEHAVIOURS.split(), *_IRREGULAR}
_OPENER = re.compile(
    r"(?i)(?:(?:this|the|that|my|our)\s+(?:fix|commit|change|patch|pr|pull request|solution|new code)|instead|to fix"
    rf"|fixed by|{'|'.join(sorted(_VERBS, key=len, reverse=True))})\b(?![(.\[])"  # add(2, 2): a call, not a verb
)
_NOW = re.compile(r"(?i)\bnow\b")
_BY = re.compile(r"(?i)\b(?:by|instead\s+of)\s+(?!(?:string|thing|nothing|something|anything|everything)\b)\w{2,}ing\b")
_CAUSED = {"caused", "triggered", "raised", "thrown", "hit", "reported", "seen", "found", "broken", "introduced"}


@dataclass(frozen=True)
class Prompt:
    text: str
    left_out: tuple[tuple[str, str], ...]  # (sentence, clause or line; why) for each piece left out


def added_identifiers(solution: bytes, base_texts: Iterable[str]) -> set[str]:
    """Names the fix adds: defined on its added lines, or code-like there; none of the parent's files holds them."""
    before = {word for text in base_texts for word in _WORD.findall(text)}
    added = hunk_lines(solution, b"+")
    names = {w for line in added for w in _WORD.findall(line) if _CODE_LIKE.search(w.strip("_$"))}
    names |= {name for line in added for found in _DEFINED.finditer(line) for name in found.groups() if name}
    return {name for name in names - before if len(name.strip("_$")) >= _MIN_NAME}


def changed_functions(solution: bytes, tests: bytes) -> set[str]:
    """Functions the fix changes (a hunk header's, or defined on a changed line) that the tests never mention."""
    texts = [header.decode(errors="replace") for header in _HUNK_HEADER.findall(solution)]
    texts += hunk_lines(solution, b"+") + hunk_lines(solution, b"-")
    names = {name for text in texts for found in _DEFINED.finditer(text) for name in found.groups() if name}
    return names - set(_WORD.findall(tests.decode(errors="replace")))


def _grams(text: str) -> set[tuple[str, ...]]:
    tokens = [token.lower() for token in _TOKEN.findall(text)]
    return {tuple(tokens[i : i + _GRAM]) for i in range(len(tokens) - _GRAM + 1)}


def added_code(solution: bytes, base_texts: Iterable[str]) -> set[tuple[str, ...]]:
    """Runs of 4 tokens (lowercased; a word or number at least among them) on the fix's added lines that no
    line of the parent's files holds."""
    before = {gram for text in base_texts for line in text.splitlines() for gram in _grams(line)}
    new = {gram for line in hunk_lines(solution, b"+") for gram in _grams(line)} - before
    return {gram for gram in new if any(_WORD.match(token) or token[0].isdigit() for token in gram)}


def _without_trailers(lines: list[str]) -> tuple[list[str], list[str]]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    start = end
    while start and lines[start - 1].strip():
        start -= 1
    block = lines[start:end]
    if start and block and all(_TRAILER.match(line) for line in block):  # never the subject itself
        return lines[:start], block
    return lines[:end], []


def _units(lines: list[str]) -> list[tuple[str, str]]:
    """The message as (kind, text): `blank`; `code` (a fenced or indented line, alone); `item` (a list item
    with its indented continuation lines); `prose` (a paragraph's other lines, joined)."""
    units: list[tuple[str, str]] = []
    fenced = False
    for line in lines:
        kind, text = units[-1] if units else ("blank", "")
        if line.strip().startswith("```") or fenced:
            fenced ^= line.strip().startswith("```")
            units.append(("code", line.rstrip()))
        elif not line.strip():
            units.append(("blank", ""))
        elif _ITEM.match(line):
            units.append(("item", line.rstrip()))
        elif kind == "item" and line[:1].isspace():
            units[-1] = ("item", f"{text} {line.strip()}")
        elif line.startswith(("    ", "\t")):
            units.append(("code", line.rstrip()))
        elif kind == "prose":
            units[-1] = ("prose", f"{text} {line.strip()}")
        else:
            units.append(("prose", line.strip()))
    return units


def _by_method(before: str) -> bool:
    """Whether "by <verb>ing" after `before` says how (fixed by averaging), not what caused it (caused by)."""
    words = before.split()
    return not words or words[-1].lower().strip(",;:") not in _CAUSED


def cut_how(text: str, tested: Collection[str] = ()) -> tuple[str, str]:
    """(what stays, what is cut) of a sentence or list item: rule 1 of the module docstring. A verb written as a
    name the tests use (`add returned 0`, when the tests call add) is that name, not a verb."""
    bullet = _ITEM.match(text)
    begin = bullet.end() if bullet else 0
    cuts = [found.start() for found in _BY.finditer(text) if _by_method(text[: found.start()])]
    seps = [found for found in _CLAUSE.finditer(text) if found.start() >= begin]
    starts = [(begin, begin), *((found.start(), found.end()) for found in seps)]
    for (cut_at, start), end in zip(starts, [found.start() for found in seps] + [len(text)], strict=True):
        clause = text[start:end].strip()
        opener = _OPENER.match(clause)
        if (opener and opener[0] not in tested) or _NOW.search(clause):
            cuts.append(cut_at)
            break
    if not cuts:
        return text, ""
    at = min(cuts)
    kept = text[:at].rstrip(" ,;:-–—")
    if not kept[begin:].strip():
        return "", text.strip()
    end_mark = text.rstrip()[-1]
    return kept + (end_mark if end_mark in ".!?" else ""), text[at:].strip(" ,;:-–—")


def _names(text: str, names: Iterable[str]) -> str | None:
    words = set(_WORD.findall(text))
    return next((name for name in sorted(names) if name in words), None)


def _mentions_file(text: str, paths: Iterable[str]) -> str | None:
    for path in sorted(paths):
        for name in dict.fromkeys((path, path.rsplit("/", 1)[-1])):
            if re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w/-])", text):
                return path
    return None


def _quoted(text: str, code: set[tuple[str, ...]]) -> str | None:
    """The first run of `text` made of 4-token runs of code the fix adds, as the text writes it."""
    found = list(_TOKEN.finditer(text))
    tokens = [token[0].lower() for token in found]
    covered = {j for i in range(len(tokens)) if tuple(tokens[i : i + _GRAM]) in code for j in range(i, i + _GRAM)}
    if not covered:
        return None
    first = last = min(covered)
    while last + 1 in covered:
        last += 1
    return text[found[first].start() : found[last].end()]


def derive_prompt(
    message: str, solution: bytes, solution_paths: Sequence[str], base_texts: Iterable[str], tests: bytes = b""
) -> Prompt:
    """The commit message minus what gives the fix away (the module docstring's rule). A paragraph's kept
    sentences are joined on one line. With no `tests`, no changed function counts as where the fix goes."""
    lines, trailers = _without_trailers(message.replace("\r\n", "\n").splitlines())
    bases = list(base_texts)
    added = added_identifiers(solution, bases)
    tested = set(_WORD.findall(tests.decode(errors="replace")))
    internal = changed_functions(solution, tests) - added if tests else set()
    code = added_code(solution, bases)
    quotes = {q for line in hunk_lines(solution, b"+") if len(q := line.strip().rstrip(",;").strip()) >= _MIN_QUOTE}

    def why(text: str) -> str | None:
        if path := _mentions_file(text, solution_paths):
            return f"names {path}, a file the fix changes"
        if name := _names(text, added):
            return f"names {name}, which the fix adds"
        if name := _names(text, internal):
            return f"names {name}, the function the fix changes, which the tests never mention"
        if quote := next((q for q in sorted(quotes) if q in text), None):
            return f"quotes the fix: {quote}"
        if quote := _quoted(text, code):
            return f"quotes code the fix adds: {quote}"
        return None

    kept: list[str] = []
    left_out = []
    for kind, text in _units(lines):
        remaining = []
        for piece in _SENTENCE_END.split(text) if kind == "prose" else [text]:
            if kind != "code" and piece.strip():
                piece, how = cut_how(piece, tested)  # what is left of it is judged next
                left_out += [(how, "says how the fix works")] if how else []
            if piece.strip() and (reason := why(piece)):
                left_out.append((piece.strip(), reason))
            elif piece.strip():
                remaining.append(piece)
        if kind == "blank" or remaining:
            kept.append(" ".join(remaining))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    left_out += [(line, "a trailer") for line in trailers]
    return Prompt(text + "\n" if text else "", tuple(left_out))
