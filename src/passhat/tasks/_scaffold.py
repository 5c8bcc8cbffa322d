"""`passhat task new ID`: the files of a hand-written task to fill in — task.yaml with every field explained
(commented out where there is no sensible default, so check-task names what is missing), and the task
folder's README.md: what goes in repo/ and the commands that make solution.patch (tests/cli/test_task_author.py
runs them).
"""

from __future__ import annotations

_SCAFFOLD_YAML = """\
# A passhat task: the repository the agent starts from, the prompt it gets, a reference fix (solution.patch)
# and the graders that judge what it produced. Fill in the fields marked TODO, then run
#   passhat check-task {folder}
# which names the first thing still missing and, once nothing is, checks that solution.patch passes every
# grader and that the empty patch fails one. Every field and grader: passhat's README, section "Tasks".

id: {id}                # equals the folder name
# description: TODO     # one line saying what the task asks (shown in reports, not to the agent)
tier: medium            # simple | medium | complex | very-complex: groups the results

# prompt: |             # TODO: what the agent is asked, worded as your unattended job words it
#   Fix ... so that ...; run `python -m pytest` to check.

# Where the agent starts: the files in repo/ (README.md here says what to put there), or instead of repo/
# a commit of a git repository (then delete repo/):
# base:
#   git: ../..          # a path (relative to this folder) or a URL
#   commit: 0123abc...  # the full commit id

{test_patch}# setup: pip install -e .   # run once per base at the repo root, before any agent; what it makes is base
# solution: solution.patch  # the reference fix (the default name); README.md here says how to make it
# timeout_s: 600            # the agent's wall-clock deadline per trial; default: the provider's timeout_s
# tags: [bugfix]            # free labels, for your own grouping
# language: python          # a free label
# network: [pypi.org:443]   # host:port a trial may reach besides the model API; default none
# limits:                   # this task's resource limits (override the provider config's); the defaults:
#   processes: 512          #   pids in the trial
#   memory_mb: 4096         #   memory of the trial
#   tmpfs_mb: 512           #   each private /tmp, /var/tmp, /dev/shm
#   file_mb: 1024           #   the largest file the agent can write
#   worktree_mb: 2048       #   the work tree's size
#   worktree_files: 200000  #   files in the work tree
#   patch_mb: 64            #   the largest patch passhat collects
# reference_output: |       # what a good final message says (shown to the LLM judge graders)

graders:                # the trial passes when every grader passes
  - type: tests         # runs `command` at the repo root on base + the trial's patch
    # command: python -m pytest -q   # TODO: your test command; passes when it exits 0
    # timeout_s: 300                 # seconds before the command is killed (a failure)
    # Per-test verdicts instead of the exit code: put {{junit}} where the command writes its JUnit XML
    # report, e.g. `python -m pytest -q --junitxml={{junit}}`, and list test ids (classname::name):
    # fail_to_pass: [test_mod::test_the_bug]   # fail on the base, must pass
    # pass_to_pass: auto                       # pass on the base, must still pass (auto: computed once)
    # protected: ["tests/**"]   # restored from the base before the command runs (default: test files)
    # env: {{TZ: UTC}}            # variables for the command (it gets none of passhat's environment)
    # pass_env: [JAVA_HOME]     # host variables passed through by name
    # executor: ray             # run it as a Ray task on a cluster node (or PASSHAT_GRADER_EXECUTOR=ray for all);
    # ray_address: 10.0.0.5:6379  #   the cluster (default PASSHAT_RAY_ADDRESS, else the trial's, else auto)
  - type: diff-scope    # the changed paths stay where the task allows
    deny: ["tests/**", "test/**", "**/test_*.py", "**/*.test.*"]
    # allow: ["src/**"]  # every changed path must match one of these
    # max_files: 3       # at most this many changed files
    # max_lines: 100     # at most this many lines added + removed
  - type: health        # the run ended cleanly: no error, no permission denial (its own score)
    # max_permission_denials: 0
    # max_turns: 30
    # max_cost_usd: 2.0
  # - type: files        # checks on files of base + patch
  #   checks:
  #     - {{path: CHANGELOG.md, contains: "1.2.4"}}   # also: exists, not_contains, regex, unchanged
  #     - {{path: package.json, key: version, equals: "1.2.4"}}
  # - type: rubric       # an LLM judge scores the trial on a rubric (rubrics/<name>.yaml)
  #   rubric: code-readability
  # - type: pairwise     # an LLM judge compares the answer with the reference, both orders
  #   question: Which change is easier to review?
"""

_SCAFFOLD_README = """\
# Task {id}

What to put here:

- `repo/`: the repository as the agent should find it, bug and all: copy your project's files in (no `.git`).
  git does not keep an empty folder: commit repo/ only once it holds files.
- `task.yaml`: the prompt and the graders; its comments say what each field means.
- `solution.patch`: the reference fix, a git patch against repo/. `git diff --no-index repo fixed` does not
  make one that applies (its paths carry the folder names), so record the fix in a throwaway git copy.

Make solution.patch — in this folder, first:

```sh
rm -rf work && cp -a repo work
git -C work init -q && git -C work add -A
git -C work -c user.name=passhat -c user.email=passhat@localhost commit -q --no-verify -m base
```

{held_out}then make the fix in `work/` (edit, add and delete files, run its tests), and record it:

```sh
git -C work add -A && git -C work diff --cached --binary > solution.patch
rm -rf work
```

Then `passhat check-task {folder}` tells what is still missing, and once nothing is, whether the task is
valid: solution.patch passes every grader and the empty patch fails at least one.
"""


_TEST_PATCH_OFF = """\
# test_patch: test.patch   # held-out tests: applied by the tests grader only, never shown to the agent
"""
_TEST_PATCH_ON = """\
test_patch: test.patch     # held-out tests: applied by the tests grader only, never shown to the agent
                           # (README.md here says how to make it; the agent sees only repo/'s tests)
"""
_HELD_OUT = """\
then write the tests that show the bug in `work/` (new test files, or new cases in existing ones) and
record them apart — the held-out tests: the tests grader applies them, the agent never sees them, so the
prompt must say what behaviour is wanted:

```sh
git -C work add -A && git -C work diff --cached --binary > test.patch
git -C work -c user.name=passhat -c user.email=passhat@localhost commit -q --no-verify -m tests
```

"""


def scaffold(task_id: str, folder: str, held_out: bool = False) -> dict[str, str]:
    """The files of `passhat task new`: task.yaml and README.md (`folder` is how the user names the task folder).
    `held_out`: the task keeps the tests that show the bug in test.patch (README.md says how to make it)."""
    return {
        "task.yaml": _SCAFFOLD_YAML.format(
            id=task_id, folder=folder, test_patch=_TEST_PATCH_ON if held_out else _TEST_PATCH_OFF
        ),
        "README.md": _SCAFFOLD_README.format(id=task_id, folder=folder, held_out=_HELD_OUT if held_out else ""),
    }
