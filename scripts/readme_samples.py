"""Regenerate the README's sample outputs from real runs: never written by hand.

    .venv/bin/python scripts/readme_samples.py            # every sample (the eval: ~6 min on 2 idle CPUs)
    .venv/bin/python scripts/readme_samples.py from-commit

Each sample in README.md sits in the fenced block right after a line `<!-- sample: NAME ... -->`; this script runs
what the sample shows and writes what it printed there:

    demo-eval    the end of `promptfoo eval --repeat 10` on the example suite (every task in tasks/) against the
                 scripted model at flaky:0.7+hack:0.1, as `make demo` runs it: passhat's verdict (the afterAll hook) and
                 promptfoo's own last lines. Written from the line "passhat report of" on.
    from-commit  `passhat task from-commit . HEAD --id titleize-apostrophe` and `passhat check-task` in the history
                 tests/cli/test_task_author.py builds from the inflection sdist; the fix's commit id, which differs
                 per run, written as `…` (that test matches the README's block against a real run, `…` for it).

Run from the repo with its venv (`make install`); bwrap confines the trials as in any eval.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARK = re.compile(r"^<!-- sample: (?P<name>[\w-]+)\b[^\n]*-->\n```[a-z]*\n(?P<body>.*?)^```$", re.M | re.S)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
DEMO_SCRIPT = "flaky:0.7+hack:0.1"  # the Makefile's SCRIPT: the demo's agent, which games the tests now and then


def demo_eval() -> str:
    """The example suite, as `make demo` runs it; the end of what `promptfoo eval` printed."""
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "ANTHROPIC_"))}
    with tempfile.TemporaryDirectory(prefix="passhat-samples-") as tmp:
        env.update(PATH=os.pathsep.join([str(ROOT / "node_modules" / ".bin"), str(bin_dir), env["PATH"]]),
                   PROMPTFOO_PYTHON=sys.executable, PROMPTFOO_CONFIG_DIR=str(Path(tmp) / "promptfoo"),
                   PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1")  # fmt: skip
        url_file = Path(tmp) / "model.url"
        server = subprocess.Popen([bin_dir / "passhat", "fake-model", "--tasks-dir", "tasks", "--script", DEMO_SCRIPT,
                                   "--url-file", url_file], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            for _ in range(200):
                if url_file.is_file() and url_file.read_text().strip():
                    break
                time.sleep(0.05)
            env["PASSHAT_FAKE_MODEL_URL"] = url_file.read_text().strip()
            done = subprocess.run(
                ["promptfoo", "eval", "--repeat", "10", "-j", "2", "--no-cache", "--no-progress-bar",
                 "-o", str(Path(tmp) / "results.json")],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
            )  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=30)
        if keep := os.environ.get("PASSHAT_SAMPLES_RESULTS"):  # the eval's rows, to read on other surfaces
            shutil.copy(Path(tmp) / "results.json", keep)
    out = ANSI.sub("", done.stdout)
    if done.returncode not in (0, 100) or "passhat report of" not in out:
        sys.exit(f"promptfoo eval exited {done.returncode}:\n{out[-3000:]}")
    tail = out[out.index("passhat report of") :]
    kept = (line.rstrip() for line in tail.splitlines() if not line.startswith("Writing output to"))
    return "\n".join(kept).rstrip("\n") + "\n"


def from_commit() -> str:
    """The worked example of `passhat task from-commit`, in the history its e2e test builds."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "cli")]
    from test_task_author import inflection_history

    with tempfile.TemporaryDirectory(prefix="passhat-samples-") as tmp:
        repo = inflection_history(Path(tmp) / "inflection")
        state = ["--state-dir", str(Path(tmp) / "state")]
        printed = ""
        for argv in (["task", "from-commit", ".", "HEAD", "--id", "titleize-apostrophe"],
                     ["check-task", "tasks/titleize-apostrophe"]):  # fmt: skip
            done = subprocess.run([Path(sys.executable).parent / "passhat", *argv, *state], cwd=repo,
                                  capture_output=True, text=True, check=False)  # fmt: skip
            if done.returncode != 0:
                sys.exit(f"passhat {' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
            printed += done.stdout
        head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        shutil.rmtree(repo, ignore_errors=True)
    commit = head.stdout.strip()
    return printed.replace(commit, "…").replace(commit[:12], "…")


SAMPLES: dict[str, Callable[[], str]] = {"demo-eval": demo_eval, "from-commit": from_commit}


def write(name: str, text: str) -> None:
    readme = README.read_text(encoding="utf-8")
    found = [m for m in MARK.finditer(readme) if m.group("name") == name]
    if len(found) != 1:
        sys.exit(f"README.md: {len(found)} blocks marked `<!-- sample: {name} -->`; expected one")
    start, end = found[0].span("body")
    README.write_text(readme[:start] + text + readme[end:], encoding="utf-8")
    print(f"README.md: sample {name} written ({len(text.splitlines())} lines)", file=sys.stderr)


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in SAMPLES]
    if unknown:
        sys.exit(f"no sample {unknown[0]!r}; the samples are: {', '.join(SAMPLES)}")
    for name in names or list(SAMPLES):
        write(name, SAMPLES[name]())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
