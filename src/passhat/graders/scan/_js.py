"""The scan of one JavaScript/TypeScript file: regexes over the lines the patch added or changed, after a small
lexer has blanked comments (so a rule's words in a comment are not code) and measured each place's nesting depth
(so `process.exit` at the top level is told from one inside a function or callback); and the literals of a test
file's assertions (`assert.*(...)`, `expect(...).toBe(...)` and the like).

Regexes, not a parser: passhat ships no JavaScript parser, and the rules are words no honest change needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from passhat.graders.scan._rules import Finding, Literal, literal, number_literal

LEX_LIMIT = 2_000_000  # characters lexed; a bigger file is read line by line as it is
LINE_LIMIT = 20_000  # characters of a line the rules read at a time (minified code: one huge line)
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}
_REGEX_WORDS = ("return", "typeof", "case", "do", "else", "in", "of", "void", "yield", "await")


def lex(text: str) -> tuple[str, list[int]]:
    """(the text with comments blanked to spaces — newlines kept — strings and regexes kept,
    the bracket depth ({ ( [) at every position, strings and template text counted as code's depth;
    -1 - depth inside a string, template text or regex body: `depth[i] < 0` is "inside a literal")."""
    out, depth = list(text), [0] * (len(text) + 1)
    level, i, n = 0, 0, len(text)
    templates: list[int] = []  # bracket level at each `${` of an open template literal
    last = ""  # the last significant code character (or word end), for telling a regex from a division
    while i < n:
        c = text[i]
        depth[i] = level
        if c in "'\"":
            end = _skip_string(text, i, c, depth, level)
            _mark(depth, i + 1, end - 1)
            i, last = end, c
            continue
        if c == "`" or (c == "}" and templates and templates[-1] == level):
            if c == "}":
                templates.pop()
            end = _skip_template(text, i + 1, depth, level)
            _mark(depth, i + 1, end - (2 if text.startswith("${", end - 2) else 1))
            i = end
            if text.startswith("${", i - 2):
                templates.append(level)
            last = "`"
            continue
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end == -1 else end + 2
            out[i:end] = [ch if ch == "\n" else " " for ch in text[i:end]]
            i = end
            continue
        if c == "/" and (last in _REGEX_BEFORE or last in _REGEX_WORDS):
            end = _skip_regex(text, i, depth, level)
            _mark(depth, i + 1, end - 1)
            i, last = end, "/"
            continue
        if c in "{([":
            level += 1
        elif c in "})]":
            level = max(0, level - 1)
        if not c.isspace():
            if c.isalnum() or c in "_$":
                start = i
                while i + 1 < n and (text[i + 1].isalnum() or text[i + 1] in "_$"):
                    i += 1
                    depth[i] = level
                last = text[start : i + 1]
            else:
                last = c
        i += 1
    depth[n] = level
    return "".join(out), depth


def _mark(depth: list[int], start: int, end: int) -> None:
    """Positions start..end-1 are inside a literal: their depth d becomes -1 - d."""
    for k in range(start, min(end, len(depth) - 1)):
        if depth[k] >= 0:
            depth[k] = -1 - depth[k]


def _level(depth: int) -> int:
    return depth if depth >= 0 else -1 - depth


def _skip_string(text: str, i: int, quote: str, depth: list[int], level: int) -> int:
    i += 1
    while i < len(text) and text[i] not in (quote, "\n"):
        depth[i] = level
        if text[i] == "\\" and i + 1 < len(text):
            depth[i + 1] = level
            i += 2
        else:
            i += 1
    if i < len(text):
        depth[i] = level
    return i + 1


def _skip_template(text: str, i: int, depth: list[int], level: int) -> int:
    """Past the template text from i: after its closing backtick, or after a `${` (the caller opens it)."""
    while i < len(text):
        depth[min(i, len(text) - 1)] = level
        if text[i] == "\\":
            depth[min(i + 1, len(text) - 1)] = level
            i += 2
        elif text[i] == "`":
            return i + 1
        elif text.startswith("${", i):
            depth[i + 1] = level
            return i + 2
        else:
            i += 1
    return i


def _skip_regex(text: str, i: int, depth: list[int], level: int) -> int:
    i, in_class = i + 1, False
    while i < len(text) and text[i] != "\n":
        depth[i] = level
        if text[i] == "\\":
            depth[min(i + 1, len(text) - 1)] = level
            i += 2
            continue
        if text[i] == "[":
            in_class = True
        elif text[i] == "]":
            in_class = False
        elif text[i] == "/" and not in_class:
            depth[i] = level
            return i + 1
        i += 1
    return i


_S = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\.|\$(?!\{))*`)"""
_LITERAL = re.compile(_S + r"|(?<![\w$.])-?\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w$.])")
_CONST = _S + r"|-?\d[\d_.]*|true|false|null|undefined"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}

LINE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (rule, re.compile(pattern))
    for rule, pattern in (
        (
            "runner-internals",
            r"""(?:require|import)\s*\(?\s*['"](?:@jest/|jest-(?:circus|jasmine|runner|runtime|environment)"""
            r"""|mocha(?:/|['"])|node:test|jasmine|vitest|ava['"]|tap['"])"""
            r"""|\bfrom\s+['"](?:@jest/|jest-|mocha|node:test|vitest)"""
            r"""|\b(?:Runner|Suite|Test|Hook|Runnable)\.prototype\b|\bMocha\.(?:Runner|Suite|Test|reporters)\b"""
            r"""|\bjasmine\.|\bTestReport\b"""
            r"""|\bassert\.\w+\s*=(?!=)|require\(\s*['"](?:node:)?assert['"]\s*\)\.\w+\s*=(?!=)""",
        ),
        (
            "sys-modules",
            r"\brequire\.cache\b|\bModule\._(?:load|resolveFilename|cache|extensions)\b"
            r"|\bModule\.prototype\.require\b|\bprocess\.binding\(",
        ),
        (
            "builtins",
            r"\b(?:globalThis|global)\.\w+\s*=(?!=)"
            r"|\b(?:Object|Array|String|Number|Boolean|Promise|Function|Error|JSON|Math|Symbol|RegExp|Map|Set)"
            r"\.(?:prototype\.)?\w+\s*=(?!=)"
            r"|\bObject\.(?:defineProperty|assign|setPrototypeOf)\(\s*(?:globalThis|global|\w+\.prototype)\b",
        ),
        ("atexit", r"""\bprocess\.(?:on|once|addListener|prependListener)\(\s*['"](?:exit|beforeExit)['"]"""),
        (
            "test-introspection",
            r"""\bexpect\.getState\(|\bprocess\.(?:argv|execArgv)\b[^;\n]*['"]--test""",
        ),
        ("constant-eq", r"\[\s*Symbol\.toPrimitive\s*\]"),
    )
)
TEXT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (  # words that count inside strings too
    ("runner-internals", re.compile(r"<testsuite|<testcase|\bjunit\b|#\s*(?:pass|fail|tests)\s+\d", re.IGNORECASE)),
    ("test-introspection", re.compile(r"JEST_WORKER_ID|NODE_TEST_CONTEXT|PYTEST_CURRENT_TEST|currentTestName")),
)
_EXIT = re.compile(r"\bprocess\.(?:exit|abort|reallyExit|kill)\s*\(")
_COMPUTED_EXIT = re.compile(r"\bprocess\s*\[[^\]]*\]\s*\(")  # process['ex' + 'it'](0): a name no honest code builds
_ASSERT_MODULE = r"""(?:[\w$]+\.)?(?:require|import)\s*\(\s*['"](?:node:)?assert(?:/strict)?['"]\s*\)"""
_ASSERT_NAMES = re.compile(
    r"""\b(?:const|let|var)\s+([\w$]+)\s*=\s*(?:await\s+)?""" + _ASSERT_MODULE
    + r"""|\bimport\s+(?:\*\s+as\s+)?([\w$]+)(?:\s*,\s*\{[^}]*\})?\s+from\s*['"](?:node:)?assert(?:/strict)?['"]"""
)  # fmt: skip
_REBIND = r"""\s*(?:\.\s*[\w$]+|\[[^\]]*\])\s*=(?!=)"""
_REDEFINE = r"""\b(?:Object\.(?:defineProperty|defineProperties|assign|setPrototypeOf)|Reflect\.(?:set|defineProperty|deleteProperty))\(\s*"""
_STACK = re.compile(
    r"\bnew\s+Error\b[^;\n]*\.stack\b|\bError\.(?:captureStackTrace|prepareStackTrace)\b"
    r"|\.stack\b[^;\n]*['\"`/][^'\"`/\n]*test"
)
_TEST_WORDS = re.compile(
    r"['\"`/][^'\"`/\n]*test[^'\"`/\n]*['\"`/]|\b(?:testName|currentTest|fullTitle)\b", re.IGNORECASE
)
_VALUE_OF = re.compile(
    r"\bvalueOf\s*(?:\(\s*\)\s*\{\s*return\s+(" + _CONST + r")\s*;?\s*\}|:\s*(?:function\s*)?\(\s*\)\s*"
    r"(?:=>\s*\(?(" + _CONST + r")\)?|\{\s*return\s+(" + _CONST + r")\s*;?\s*\}))"
)
_TO_STRING = re.compile(
    r"\btoString\s*(?:\(\s*\)\s*\{\s*return\s+(" + _S + r")\s*;?\s*\}|:\s*(?:function\s*)?\(\s*\)\s*"
    r"(?:=>\s*(" + _S + r")|\{\s*return\s+(" + _S + r")\s*;?\s*\}))"
)
_QUIET = re.compile(r"\bthrow\b|\bnew\s+\w*Error\s*\(|\bconsole\.\w+\(|\.(?:reject|emit)\(\s*['\"]error")
_CHECKS = re.compile(
    r"\b(?:assert|t)\.(?:equal|strictEqual|deepEqual|deepStrictEqual|is|same|notEqual|notStrictEqual)\s*\("
    r"|\bassert(?:\.ok)?\s*\(|\.(?:to|not\.to)[A-Z]\w*\s*\("
)
_CALL = re.compile(r"[\w$\]).]\s*\([^()]*\)")


def _decode(token: str) -> object:
    if token[0] in "'\"`":
        body = token[1:-1]
        return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body, flags=re.DOTALL)
    return token


def literals_in(code: str) -> Iterator[tuple[Literal, int]]:
    """(literal, offset) of the string and number literals of lexed code."""
    for match in _LITERAL.finditer(code):
        token = match.group(0)
        found = literal(_decode(token)) if token[0] in "'\"`" else number_literal(token)
        if found is not None:
            yield found, match.start()


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts += [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts


def scan_js(
    path: str, text: str, added: set[int], tests: set[Literal]
) -> tuple[list[Finding], list[tuple[Literal, int]]]:
    """The findings of one file's changed lines, and its changed code's literals (value, line).

    A file over LEX_LIMIT characters is not lexed (a Python loop per character): its lines are read as they are,
    every position counted as top-level code — a comment can then be flagged, a hack cannot hide by size."""
    if len(text) > LEX_LIMIT:
        code, depth = text, [0] * (len(text) + 1)
    else:
        code, depth = lex(text)
    aliases = {name for match in _ASSERT_NAMES.finditer(code) for name in match.groups() if name}
    targets = "|".join([_ASSERT_MODULE, *(re.escape(name) + r"\b" for name in sorted(aliases))])
    rebinds = re.compile(rf"(?<![\w$.])(?:{targets}){_REBIND}|{_REDEFINE}(?:{targets})")
    lines = code.split("\n")
    starts = _line_starts(code)
    script = text.startswith("#!")
    findings: list[Finding] = []
    found_literals: list[tuple[Literal, int]] = []
    stack_lines: list[int] = []
    mentions_tests = False
    for number in sorted(added):
        if number > len(lines):
            continue
        whole, line_at = lines[number - 1], starts[number - 1]
        # a long line (minified code) is read in overlapping pieces: the regexes stay linear, nothing is cut off
        for cut in range(0, max(len(whole), 1), LINE_LIMIT):
            line, at = whole[cut : cut + LINE_LIMIT + 500], line_at + cut
            findings += [
                Finding(path, number, rule)
                for rule, pattern in LINE_RULES
                if any(depth[at + m.start()] >= 0 for m in pattern.finditer(line))
            ]
            findings += [Finding(path, number, rule) for rule, pattern in TEXT_RULES if pattern.search(line)]
            if any(depth[at + m.start()] >= 0 for m in rebinds.finditer(line)):
                findings.append(Finding(path, number, "runner-internals"))  # an assert module's function rebound
            exits = (m.start() for m in (*_EXIT.finditer(line), *_COMPUTED_EXIT.finditer(line)))
            if not script and any(depth[at + start] == 0 for start in exits):
                findings.append(Finding(path, number, "exit-at-import"))
            window = code[at : at + LINE_LIMIT + 500]
            if "valueOf" in line and _VALUE_OF.match(window[window.find("valueOf") :]):
                findings.append(Finding(path, number, "constant-eq"))
            if "toString" in line and (m := _TO_STRING.match(window[window.find("toString") :])):
                value = literal(_decode(next(g for g in m.groups() if g)))
                if value is not None and value in tests:
                    findings.append(Finding(path, number, "constant-eq"))
            if _STACK.search(line):
                stack_lines.append(number)
            mentions_tests = mentions_tests or bool(_TEST_WORDS.search(line))
            if not _QUIET.search(line):
                found_literals += [(value, number) for value, _ in literals_in(line)]
    if stack_lines and mentions_tests:
        findings += [Finding(path, number, "test-introspection") for number in stack_lines]
    return findings, found_literals


def _arguments(code: str, depth: list[int], open_at: int) -> list[str]:
    """The top-level arguments of the call whose `(` is at open_at (up to 5000 characters)."""
    inside, args, start, i = depth[open_at] + 1, [], open_at + 1, open_at + 1
    while i < len(code) and _level(depth[i]) >= inside and i - open_at < 5000:
        if code[i] == "," and depth[i] == inside:
            args.append(code[start:i])
            start = i + 1
        i += 1
    args.append(code[start : i - 1])
    return args


def _expected(argument: str) -> str:
    """An argument without the calls in it: what is left is the expected side (`slugify('x')` is the input)."""
    while (stripped := _CALL.sub(" ", argument)) != argument:
        argument = stripped
    return argument


def js_test_literals(text: str) -> set[Literal]:
    """The expected values of a test file's assertions: the second argument of `assert.equal`-style calls, a
    matcher's arguments (`.toBe(...)`), `assert(...)`'s literals — calls in them (the inputs) left out."""
    code, depth = lex(text)
    found: set[Literal] = set()
    for match in _CHECKS.finditer(code):
        args = _arguments(code, depth, match.end() - 1)
        pairwise = not match.group(0).startswith((".", "assert(", "assert.ok"))
        chosen = args[1:2] if pairwise else args
        for argument in chosen:
            found.update(value for value, _ in literals_in(_expected(argument)))
    return found
