"""The prompt of a task made from a commit (passhat.tasks._prompt): the commit message minus what gives the fix
away. Each rule has a message here that hands the agent the solution without it — the files and names the fix
adds or touches, a quote of its code, a clause saying how ("by averaging ...", "Use ...", "It now ...") — and
messages that only describe the bug keep every word."""

from __future__ import annotations

import pytest
from conftest import TASKS

from passhat.tasks._prompt import added_code, added_identifiers, changed_functions, cut_how, derive_prompt

SOLUTION = b"""diff --git a/pkg/text.py b/pkg/text.py
index 1111111..2222222 100644
--- a/pkg/text.py
+++ b/pkg/text.py
@@ -1,3 +1,6 @@
+def _keep_apostrophe(match):
+    # the apostrophe belongs to the word
+    return match.group(1).capitalize()
 def titleize(word):
-    return re.sub(r"\\b(\\w)", up, word)
+    return re.sub(r"\\b('?\\w)", _keep_apostrophe, word)
"""
BASE_TEXT = 'import re\ndef titleize(word):\n    return re.sub(r"\\b(\\w)", up, word)\n'

# The e2e adoption test's repository (tests/e2e/test_e2e_adoption.py): median's even case returned the upper
# middle value; the fix averages the two middle values, in a new helper, and its test calls median only.
MEDIAN_BASE = """def mean(xs):
    return sum(xs) / len(xs)


def _upper(s, mid):
    return s[mid]


def median(xs):
    s = sorted(xs)
    mid = len(s) // 2
    if len(s) % 2:
        return s[mid]
    return _upper(s, mid)
"""
MEDIAN_FIX = b"""diff --git a/tinystats/__init__.py b/tinystats/__init__.py
index 0f8332b..6478d05 100644
--- a/tinystats/__init__.py
+++ b/tinystats/__init__.py
@@ -2,7 +2,7 @@ def mean(xs):
     return sum(xs) / len(xs)
\x20
\x20
-def _upper(s, mid):
-    return s[mid]
+def middle(s, mid):
+    return (s[mid - 1] + s[mid]) / 2
\x20
\x20
@@ -11,4 +11,4 @@ def median(xs):
     mid = len(s) // 2
     if len(s) % 2:
         return s[mid]
-    return _upper(s, mid)
+    return middle(s, mid)
"""
MEDIAN_TEST = b"""diff --git a/tests/test_stats.py b/tests/test_stats.py
--- a/tests/test_stats.py
+++ b/tests/test_stats.py
@@ -1,4 +1,8 @@
 from tinystats import mean, median
+
+
+def test_median_even():
+    assert median([4, 1, 3, 2]) == 2.5
"""
SYMPTOM = "median([1, 2, 3, 4]) returned 3; it is 2.5."


def median_prompt(message: str) -> tuple[str, dict[str, str]]:
    prompt = derive_prompt(message, MEDIAN_FIX, ["tinystats/__init__.py"], [MEDIAN_BASE], MEDIAN_TEST)
    return prompt.text, dict(prompt.left_out)


def test_the_parts_of_the_fix_the_rule_knows():
    assert added_identifiers(MEDIAN_FIX, [MEDIAN_BASE]) == {"middle"}  # defined: a plain word counts too
    assert changed_functions(MEDIAN_FIX, MEDIAN_TEST) == {"_upper", "middle"}  # mean, median: the test uses them
    code = added_code(MEDIAN_FIX, [MEDIAN_BASE])
    assert ("[", "mid", "-", "1") in code
    assert ("return", "s", "[", "mid") not in code  # the parent has it: quoting it is describing the bug


@pytest.mark.parametrize(
    ("message", "prompt", "left_out"),
    [
        pytest.param(
            f"Fix median of an even number of values\n\n{SYMPTOM}\n",
            f"Fix median of an even number of values\n\n{SYMPTOM}\n",
            {},
            id="the-bug-only",
        ),
        pytest.param(
            f"Fix median by averaging the two middle values\n\n{SYMPTOM}\n",
            f"Fix median\n\n{SYMPTOM}\n",
            {"by averaging the two middle values": "says how the fix works"},
            id="by-doing-x",
        ),
        pytest.param(
            "Fix median: average the two middle values for even lengths\n",
            "Fix median\n",
            {"average the two middle values for even lengths": "says how the fix works"},
            id="after-a-colon",
        ),
        pytest.param(
            f"Fix median\n\n{SYMPTOM} Return the mean of the two middle values when the length is even.\n",
            f"Fix median\n\n{SYMPTOM}\n",
            {"Return the mean of the two middle values when the length is even.": "says how the fix works"},
            id="an-imperative-sentence",
        ),
        pytest.param(
            "Fix median\n\nmedian([1, 2, 3, 4]) returned 3, the upper one. It now takes the mean of both middle ones.\n",
            "Fix median\n\nmedian([1, 2, 3, 4]) returned 3, the upper one.\n",
            {"It now takes the mean of both middle ones.": "says how the fix works"},
            id="now",
        ),
        pytest.param(
            "Fix median\n\nThe fix averages both middle values, as numpy does.\n\n- Average the middle values\n- Odd works\n",
            "Fix median\n\n- Odd works\n",
            {
                "The fix averages both middle values, as numpy does.": "says how the fix works",
                "- Average the middle values": "says how the fix works",
            },
            id="the-fix-and-a-list-item",
        ),
        pytest.param(
            "Fix median: the even case returned s[mid] instead of averaging\n",
            "Fix median: the even case returned s[mid]\n",
            {"instead of averaging": "says how the fix works"},
            id="instead-of-doing-x",
        ),
        pytest.param(
            "Fix median\n\nmedian([1, 2, 3, 4]) returned 3 but should give (s[mid - 1] + s[mid]) / 2.\n",
            "Fix median\n",
            {
                "median([1, 2, 3, 4]) returned 3 but should give (s[mid - 1] + s[mid]) / 2.": (
                    "quotes code the fix adds: (s[mid - 1] + s[mid]) / 2"
                )
            },
            id="part-of-an-added-line",
        ),
        pytest.param(
            f"Fix median\n\n{SYMPTOM} The middle helper has it right.\n",
            f"Fix median\n\n{SYMPTOM}\n",
            {"The middle helper has it right.": "names middle, which the fix adds"},
            id="a-function-it-adds",
        ),
        pytest.param(
            f"Fix median\n\n{SYMPTOM} The bug is in _upper.\n",
            f"Fix median\n\n{SYMPTOM}\n",
            {"The bug is in _upper.": "names _upper, the function the fix changes, which the tests never mention"},
            id="where-the-fix-goes",
        ),
        pytest.param(
            f"Fix median in __init__.py\n\n{SYMPTOM}\n",
            f"{SYMPTOM}\n",
            {"Fix median in __init__.py": "names tinystats/__init__.py, a file the fix changes"},
            id="a-file-it-changes",
        ),
        pytest.param(
            "Fix median\n\nThe error was caused by sorting the list twice; the even case returned s[mid].\n",
            "Fix median\n\nThe error was caused by sorting the list twice; the even case returned s[mid].\n",
            {},
            id="a-cause-and-code-of-the-parent-stay",
        ),
    ],
)
def test_prompt_leaves_out_what_gives_the_fix_away(message, prompt, left_out):
    assert median_prompt(message) == (prompt, left_out)


def test_the_e2e_adoption_commit_message_stays_whole():
    """tests/e2e/test_e2e_adoption.py's fix commit: a bug report as it should be."""
    message = "Fix median of an even number of values\n\nmedian([1, 2, 3, 4]) returned 3; it is 2.5."
    assert median_prompt(message) == (message + "\n", {})


@pytest.mark.parametrize(
    ("sentence", "kept", "cut"),
    [
        ("Fix median by averaging them.", "Fix median.", "by averaging them."),
        ("Crashed, caused by parsing an empty string.", "Crashed, caused by parsing an empty string.", ""),
        ("Sorted by string length.", "Sorted by string length.", ""),
        ("Use the mean.", "", "Use the mean."),
        ("- Use the mean", "", "- Use the mean"),
        ("It returned 3 instead of 2.5.", "It returned 3 instead of 2.5.", ""),
        ("Returned 3; instead, take the mean.", "Returned 3.", "instead, take the mean."),
        ("Wrong for even lengths -- switched to the mean.", "Wrong for even lengths.", "switched to the mean."),
        ("f(a, use_b=1) fails", "f(a, use_b=1) fails", ""),
        ("add(2, 2) returned 0.", "add(2, 2) returned 0.", ""),  # a call, not the verb
        ("add returned 0.", "add returned 0.", ""),  # the tests call add
        ("Add a + b.", "", "Add a + b."),  # the verb: the tests call add, not Add
        ("sort breaks on ties.", "", "sort breaks on ties."),  # not a name the tests use: the verb
    ],
)
def test_cut_how(sentence, kept, cut):
    assert cut_how(sentence, tested={"add", "median"}) == (kept, cut)


def test_without_the_tests_no_changed_function_counts_as_where_the_fix_goes():
    prompt = derive_prompt(
        "Fix median\n\nThe bug is in _upper.\n", MEDIAN_FIX, ["tinystats/__init__.py"], [MEDIAN_BASE]
    )
    assert prompt.text == "Fix median\n\nThe bug is in _upper.\n"


def test_prompt_keeps_the_symptom_and_leaves_out_the_fix():
    message = (
        "Fix titleize for words with an apostrophe\n"
        "\n"
        'titleize("david\'s code") gave "David\'S Code". The letter after an\n'
        "apostrophe was capitalized. Then _keep_apostrophe and\n"
        'r"\\b(\'?\\w)" as the pattern. Edit pkg/text.py only.\n'
        "\n"
        "- reported in issue 12\n"
        "- touches text.py\n"
        "\n"
        "Signed-off-by: Dev <dev@example.com>\n"
        "Co-authored-by: Other <o@example.com>\n"
    )
    prompt = derive_prompt(message, SOLUTION, ["pkg/text.py"], [BASE_TEXT])
    assert prompt.text == (
        "Fix titleize for words with an apostrophe\n"
        "\n"
        'titleize("david\'s code") gave "David\'S Code". The letter after an apostrophe was capitalized.\n'
        "\n"
        "- reported in issue 12\n"
    )
    assert dict(prompt.left_out) == {
        'Then _keep_apostrophe and r"\\b(\'?\\w)" as the pattern.': "names _keep_apostrophe, which the fix adds",
        "Edit pkg/text.py only.": "names pkg/text.py, a file the fix changes",
        "- touches text.py": "names pkg/text.py, a file the fix changes",
        "Signed-off-by: Dev <dev@example.com>": "a trailer",
        "Co-authored-by: Other <o@example.com>": "a trailer",
    }


def test_prompt_leaves_out_a_quote_of_the_fix_and_keeps_code_lines_apart():
    solution = (TASKS / "inflection-titleize" / "solution.patch").read_bytes()  # + r"\b('?\w)", (one line)
    base = (TASKS / "inflection-titleize" / "repo" / "inflection" / "__init__.py").read_text()
    message = 'Fix titleize\n\nThis pattern:\n\n    re.sub(\n        r"\\b(\'?\\w)"\n    titleize("a\'b")\n'
    prompt = derive_prompt(message, solution, ["inflection/__init__.py"], [base])
    assert prompt.text == 'Fix titleize\n\nThis pattern:\n\n    re.sub(\n    titleize("a\'b")\n'
    assert prompt.left_out == (('r"\\b(\'?\\w)"', 'quotes the fix: r"\\b(\'?\\w)"'),)


def test_a_one_paragraph_message_of_trailer_lines_is_still_the_subject():
    prompt = derive_prompt("Docs: fix the typo in the title\n", SOLUTION, ["pkg/text.py"], [BASE_TEXT])
    assert prompt.text == "Docs: fix the typo in the title\n"


def test_a_message_that_is_all_fix_leaves_an_empty_prompt():
    prompt = derive_prompt("Add _keep_apostrophe to text.py\n", SOLUTION, ["pkg/text.py"], [BASE_TEXT])
    assert (prompt.text, prompt.left_out) == ("", (("Add _keep_apostrophe to text.py", "says how the fix works"),))
