"""The node --test canary's text: it shares the tests' world.

A prologue, run before anything else in the host test file (after its `#!` line and `'use strict'`; in an ES
module, a `data:` module imported first, as imports run in order), keeps the runtime's own functions of every
assert module (node:assert, node:assert/strict and the assert modules the tests import) and of node:test, and
checks after each test (a root `afterEach`) that each is still there. The failing canary, run last, calls each
assert function the tests call, with values of the types the tests compare (strings, numbers, objects), each a
call that must throw; and asks the prologue's check once more. A call that did not throw, or an assert function
that is not the runtime's own (replaced, wrapped, redefined — under any alias, at import or later, put back or
not) makes the canary that must fail pass: `canary-failing-passed`, what the guard already reports.
"""

from __future__ import annotations

import json
import re
import secrets
import urllib.parse

NODE_TEST = re.compile(r"""(['"])node:test\1""")
ASSERT_SPEC = re.compile(r"""(?:\brequire\(\s*|\bfrom\s*|\bimport\s*\(?\s*)(['"])(?:node:)?(assert(?:/strict)?)\1""")
FUNCTIONS = (
    "ok", "equal", "strictEqual", "deepEqual", "deepStrictEqual", "notEqual", "notStrictEqual", "notDeepEqual",
    "notDeepStrictEqual", "match", "doesNotMatch", "throws", "doesNotThrow", "rejects", "doesNotReject", "ifError",
    "fail", "partialDeepStrictEqual",
)  # fmt: skip
_CALL = re.compile(r"\.\s*(" + "|".join(FUNCTIONS) + r")\s*\(([^;\n]*)")
_BARE = re.compile(r"(?<![\w$.])assert\s*\(")
_MUST_FAIL = "passhat canary: this test must fail (the tests grader checks that it does)"
_SAYS = "'passhat canary check'"  # the message of each check's call that takes one (see _checks)


def assert_use(sources: list[str]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(the assert modules the tests import, as `node:` specifiers; the assert functions they call; the kinds of
    values they compare: string, number, object) — read from the test files' text."""
    modules = {"node:" + m[2] for text in sources for m in ASSERT_SPEC.finditer(text)}
    functions, kinds = set(), {"number"}
    for text in sources:
        for match in _CALL.finditer(text):
            functions.add(match[1])
            arguments = match[2]
            if re.search(r"""['"`]""", arguments):
                kinds.add("string")
            if "{" in arguments or "[" in arguments or match[1].startswith(("deep", "notDeep", "partial")):
                kinds.add("object")
        if _BARE.search(text):
            functions.add("ok")
    return tuple(sorted(modules)), tuple(f for f in FUNCTIONS if f in functions), tuple(sorted(kinds))


def _value(kind: str, number: int) -> str:
    return {"string": json.dumps(f"s{number}"), "number": str(number), "object": f"{{ v: [{number}] }}"}[kind]


def _checks(functions: tuple[str, ...], kinds: tuple[str, ...], a: int, b: int) -> list[tuple[str, str]]:
    """(label, a call of `m.<function>` that must throw) for each function and kind.

    Each call that takes a message is given one (`_SAYS`): it throws all the same, but node's assert then builds no
    message of its own — for `ok` without one it reads the calling file again and parses it, for the equalities it
    renders a diff — which was most of the canary's cost in each test file's process."""
    calls: list[tuple[str, str]] = []
    for function in functions or ("strictEqual", "deepStrictEqual", "ok"):
        for kind in kinds:
            x, y = _value(kind, a), _value(kind, b)
            if function in ("equal", "strictEqual", "deepEqual", "deepStrictEqual", "partialDeepStrictEqual"):
                if function == "partialDeepStrictEqual" and kind != "object":
                    continue
                call = f"m.{function}({x}, {y}, {_SAYS})"
            elif function.startswith("not"):
                call = f"m.{function}({x}, {x}, {_SAYS})"
            elif function == "ok":
                falsy = {"string": "''", "number": "0", "object": "null"}[kind]
                call = f"m.ok({falsy}, {_SAYS})"
            elif function in ("match", "doesNotMatch"):
                call = f"m.{function}('s{a}', /{'^x$' if function == 'match' else 's'}/, {_SAYS})"
            elif function in ("throws", "rejects"):
                call = f"m.{function}({'async ' if function == 'rejects' else ''}() => {x})"
            elif function in ("doesNotThrow", "doesNotReject"):
                call = (
                    f"m.{function}({'async ' if function == 'doesNotReject' else ''}() => {{ throw new Error('x'); }})"
                )
            elif function == "ifError":
                call = "m.ifError(new Error('x'))"
            else:
                call = "m.fail('x')"
            calls.append((f"{function}({kind})", call))
            if function in ("ifError", "fail", "match", "doesNotMatch", "throws", "rejects", "doesNotThrow"):
                break  # one call says it: the kind of value does not change these
            if function == "doesNotReject":
                break
    return calls


def _keeper(names: list[str], load: str) -> str:
    """The JavaScript of the prologue's body: keep every function of each module, check them later."""
    return (
        "const gopd = Object.getOwnPropertyDescriptor, gopn = Object.getOwnPropertyNames;"
        f"const kept = {json.dumps(names)}.map((n) => {{ const m = {load}(n);"
        " return [n, m, gopn(m).map((k) => [k, gopd(m, k)]).filter(([, d]) => d && typeof d.value === 'function')"
        ".map(([k, d]) => [k, d.value])]; });"
        "const replaced = [];"
        "const check = () => { for (const [n, m, fns] of kept) { for (const [k, f] of fns) {"
        " const d = gopd(m, k); const label = n + '.' + k;"
        " if ((!d || d.value !== f) && !replaced.includes(label)) replaced[replaced.length] = label; } }"
        " return replaced; };"
    )


_WATCHED_FS = {
    "fs": (
        "readFileSync",
        "readFile",
        "openSync",
        "open",
        "createReadStream",
        "copyFileSync",
        "copyFile",
        "cpSync",
        "cp",
    ),
    "promises": ("readFile", "open", "copyFile", "cp"),
}
_HELPERS = ["node:fs", "node:path", "node:url", "node:module"]  # the watch's own modules (not kept, not checked)


def _watch(tests: tuple[str, ...], load: str) -> str:
    """The JavaScript that watches the tree's code read a test file: node's file-reading functions (fs and
    fs/promises, on the module object every `require` and, once synced, every `import` gets) wrapped so that a
    call naming a test file (by its real path) whose nearest caller outside node and node_modules is a file of the
    tree that is not a test file is recorded with the replaced functions (the failing canary then passes). The
    stack is read with the runtime's own Error settings, whatever the code under test set."""
    wrap = "".join(
        f"for (const k of {json.dumps(list(names))}) wrap({'fsm' if owner == 'fs' else 'fsm.promises'}, k);"
        for owner, names in _WATCHED_FS.items()
    )
    return (
        f"const fsm = {load}('node:fs'), pathm = {load}('node:path'), urlm = {load}('node:url');"
        "const real = fsm.realpathSync, E = Error, capture = Error.captureStackTrace, root = process.cwd();"
        "const norm = (p) => { try { return real(p); } catch { return p; } };"
        f"const tests = new Set({json.dumps(list(tests))}.flatMap((r) => {{"
        " const p = pathm.resolve(root, r); return [p, norm(p)]; }));"
        "const roots = [root, norm(root)].map((r) => r + pathm.sep);"
        "const target = (a) => { try { const p = a instanceof URL ? urlm.fileURLToPath(a) : typeof a === 'string'"
        " || Buffer.isBuffer(a) ? String(a) : null; if (p === null) return null; const f = pathm.resolve(root, p);"
        " return tests.has(f) ? f : tests.has(norm(f)) ? norm(f) : null; } catch { return null; } };"
        "const caller = (fn) => { const h = {}, limit = E.stackTraceLimit, prep = E.prepareStackTrace;"
        " E.stackTraceLimit = 100; E.prepareStackTrace = undefined;"
        " try { capture(h, fn); return String(h.stack); } finally { E.stackTraceLimit = limit;"
        " E.prepareStackTrace = prep; } };"
        "const who = (stack) => { for (const line of stack.split('\\n').slice(1)) {"
        " const m = /(?:\\(|at )((?:file:\\/\\/)?\\/[^()]*?):\\d+:\\d+\\)?$/.exec(line); if (!m) continue;"
        " const f = m[1].startsWith('file:') ? urlm.fileURLToPath(m[1]) : m[1];"
        " if (f.includes(pathm.sep + 'node_modules' + pathm.sep)) continue;"
        " if (tests.has(f) || tests.has(norm(f))) return null;"
        " const r = roots.find((x) => f.startsWith(x)); if (r) return f.slice(r.length); } return null; };"
        "const wrap = (o, k) => { const f = o && o[k]; if (typeof f !== 'function') return;"
        " const w = function (...a) { const t = a.length ? target(a[0]) : null;"
        " if (t !== null) { const from = who(caller(w)); const label = 'fs.' + k + '(' + t.slice(roots[0].length)"
        " + ') from ' + from; if (from !== null && !replaced.includes(label)) replaced[replaced.length] = label; }"
        " return f.apply(this, a); }; o[k] = w; };" + wrap + f"{load}('node:module').syncBuiltinESMExports();"
    )


def prologue(token: str, modules: tuple[str, ...], esm: bool, tests: tuple[str, ...] = ()) -> str:
    """What goes first in the host file: a `const passhat_<token>` (CommonJS) or an import of a data: module that
    exports it (an ES module: imports run first, in order), holding the check. `tests`: the test files (relative
    to the tree) whose reading by the tree's code the check reports."""
    names = sorted({"node:assert", "node:assert/strict", *modules}) + ["node:test"]
    if not esm:
        body = _keeper(names, "require") + _watch(tests, "require")
        body += "require('node:test').afterEach(() => { check(); }); return check;"
        return f"const passhat_{token} = (() => {{ {body} }})();\n"
    everything = [*names, *_HELPERS]
    imports = "".join(f"import * as i{k} from {json.dumps(n)};" for k, n in enumerate(everything))
    table = "{" + ",".join(f"{json.dumps(n)}: i{k}.default" for k, n in enumerate(everything)) + "}"
    body = imports + f"const table = {table}; const load = (n) => table[n];" + _keeper(names, "load")
    body += _watch(tests, "load")
    body += f"i{len(names) - 1}.default.afterEach(() => {{ check(); }}); export {{ check }};"
    return f"import {{ check as passhat_{token} }} from 'data:text/javascript,{urllib.parse.quote(body)}';\n"


def insert_prologue(text: str, prologue_text: str) -> str:
    """`text` with the prologue after its `#!` line and leading directives (`'use strict';` keeps its meaning)."""
    at = 0
    if text.startswith("#!"):
        at = text.find("\n") + 1 if "\n" in text else len(text)
    directive = re.compile(r"""(?:\s|//[^\n]*\n|/\*.*?\*/)*(['"])use strict\1\s*;?[ \t]*\n?""", re.DOTALL)
    if match := directive.match(text, at):
        at = match.end()
    return text[:at] + prologue_text + text[at:]


def canary_block(
    token: str, passing: str, failing: str, cjs: bool, use: tuple[tuple[str, ...], ...], *, sentinel: bool = False
) -> str:
    """The canary tests, in a block of their own (no name of the host file's is shadowed outside it); `use` is
    assert_use's answer. `sentinel`: for the other test files (each runs in a process of its own): only the
    failing canary's checks, under its name, skipped when the world is untouched — so an untouched run still
    fails that name exactly once, and a file whose process was tampered with reports it passed."""
    modules, functions, kinds = use
    a, b = 100_000 + secrets.randbelow(900_000), 1_000_000 + secrets.randbelow(9_000_000)
    load = "require" if cjs else "await import"
    pick = "" if cjs else ".default"
    under = list(modules) or ["node:assert", "node:assert/strict"]
    checks = [(f"{name}.{label}", name, call) for name in under for label, call in _checks(functions, kinds, a, b)]
    lines = [
        "",
        "// passhat canary",
        "{",
        f"  const passhatTest = ({load}('node:test')){pick};",
        f"  const passhatAssert = ({load}('node:assert/strict')){pick};",
        f"  const passhatModules = {{ {', '.join(f'{json.dumps(n)}: ({load}({json.dumps(n)})){pick}' for n in under)} }};",
        *(
            []
            if sentinel
            else [f"  passhatTest({json.dumps(passing)}, () => {{ passhatAssert.strictEqual({a}, {a}); }});"]
        ),
        f"  passhatTest({json.dumps(failing)}, async (passhatContext) => {{",
        "    const held = [];",
        "    for (const [label, name, run] of [",
        *(f"      [{json.dumps(label)}, {json.dumps(name)}, (m) => {call}]," for label, name, call in checks),
        "    ]) {",
        "      try { await run(passhatModules[name]); held[held.length] = label; } catch {}",
        "    }",
        f"    const replaced = passhat_{token}();",
        "    if (held.length || replaced.length) return;  // tampered: the canary that must fail passes",
        f"    {'passhatContext.skip(); return;' if sentinel else f'throw new Error({json.dumps(_MUST_FAIL)});'}",
        "  });",
        "}",
        "",
    ]
    return "\n".join(lines)
