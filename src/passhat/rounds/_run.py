"""Run the rounds: each one a normal `promptfoo eval` around the user's own arguments, then the stopping rule.

Round r runs `promptfoo eval <the user's args> --repeat R --no-cache -o DIR/round-NN.json` with
`PASSHAT_REPEAT_OFFSET` (the provider adds it to Promptfoo's repeatIndex, so repeat indices continue across
rounds and no (task, repeat) comes twice), `PASSHAT_TASKS` (from round 2: the open tasks only; the tests
generator reads it) and `PASSHAT_BUDGET_USD` (what is left of --budget-usd: the provider's guard stops a round
that would cross it). `--no-cache`: a cached response is not a trial.

Ctrl+C reaches Promptfoo (it pauses the eval and says its id) and passhat (which waits for Promptfoo, records the
round as paused, and exits 130); between rounds, passhat exits 130 with the last state saved (a round whose
Promptfoo never made its eval starts afresh on resume). `--resume DIR` runs `promptfoo eval --resume ID` (the steps never started),
then `promptfoo eval --retry-errors --repeat R` if any call was cut off, and goes on with the rounds.

promptfoo is found as `npx promptfoo` finds it (the nearest node_modules/.bin from the current folder up, its
folder first on PATH), else on PATH; none found is an error before any state is written. The same command given
again over a round 1 that never made its eval starts that round (any other command: --resume or a new --out).
A round in which no trial passed or failed (every one an infra error) measured nothing: the rounds stop, exit 1.
Dollars from the scripted model carry SCRIPTED_MARK; --budget-usd counts each trial's recorded dollars, and says so.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from passhat.common._budget import BUDGET_ENV, REACHED
from passhat.common._errors import PasshatError
from passhat.report._summary import finish
from passhat.report._words import SCRIPTED_MARK
from passhat.report.totals import fold_file
from passhat.rounds._plan import Count, Settings, decided, next_round
from passhat.rounds._state import COMBINED, Round, State, combine, load, save

OFFSET_ENV, TASKS_ENV = "PASSHAT_REPEAT_OFFSET", "PASSHAT_TASKS"
OURS = ("--repeat", "-o", "--output", "--resume", "--retry-errors", "--no-cache")  # the rounds set these
PAUSED = re.compile(r"Evaluation paused\. ID: (\S+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CUT_OFF = ("Worker shutting down", "Worker pool shutting down")


def check_args(args: Sequence[str]) -> None:
    for arg in args:
        if arg.split("=")[0] in OURS:
            msg = (f"promptfoo argument {arg!r}: passhat eval --until-decided sets {', '.join(OURS)} itself per round; "
                   "leave it out (the rounds' outputs go to --out DIR)")  # fmt: skip
            raise PasshatError(msg)


def _local_bin(start: Path) -> Path | None:
    """The nearest node_modules/.bin holding promptfoo, from `start` up: where `npx promptfoo` would find it."""
    for folder in (start, *start.parents):
        if (folder / "node_modules" / ".bin" / "promptfoo").is_file():
            return folder / "node_modules" / ".bin"
    return None


def _promptfoo(env: dict[str, str] | None = None) -> str:
    """promptfoo as `npx promptfoo` finds it: the nearest node_modules/.bin from the current folder up (put first
    on `env`'s PATH, so its `node` runs it), else PATH."""
    local = _local_bin(Path.cwd())
    if local is not None:
        if env is not None:
            env["PATH"] = os.pathsep.join([str(local), env.get("PATH", "")])
        return str(local / "promptfoo")
    found = shutil.which("promptfoo")
    if found is None:
        msg = ("promptfoo is not in node_modules/.bin (here or above) nor on PATH; `npm install` in the folder of "
               "package.json (passhat init writes one), or `. ./activate` in passhat's checkout")  # fmt: skip
        raise PasshatError(msg)
    return found


def _spawn(command: list[str], env: dict[str, str], log: Path, echo: TextIO) -> tuple[int, str | None, bool]:
    """Run Promptfoo, its output to `echo` and `log`: (exit code, the id of an eval it paused, Ctrl+C seen)."""
    interrupted = False

    def on_interrupt(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True  # Promptfoo got it too (same process group): wait while it pauses and saves

    previous = signal.signal(signal.SIGINT, on_interrupt)
    paused = None
    try:
        with open(log, "a", encoding="utf-8") as record:
            record.write(f"$ {' '.join(command)}\n")
            with subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            ) as process:  # its pipe closed on the way out
                assert process.stdout is not None
                for line in process.stdout:
                    echo.write(line)
                    record.write(line)
                    if found := PAUSED.search(ANSI.sub("", line)):
                        paused = found.group(1)
                code = process.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return code, paused, interrupted


def _env(state: State, rnd: Round, spent: float) -> dict[str, str]:
    env = {**os.environ, OFFSET_ENV: str(rnd.offset)}
    if rnd.tasks is not None:
        env[TASKS_ENV] = ",".join(rnd.tasks)
    if state.budget_usd is not None:
        env[BUDGET_ENV] = repr(max(state.budget_usd - spent, 1e-9))
    return env


def counts(results: Path, k: int) -> tuple[list[Count], bool, bool]:
    """Per (task, provider) so far, whether the budget guard refused any trial, and whether any trial's dollars
    are the scripted model's (simulated, not money: shown with SCRIPTED_MARK)."""
    summaries = finish(fold_file(results), (k,))
    found = [
        Count(s.task, s.provider, s.n, s.passes, s.n + s.errors + s.unscored,
              (s.mean_cost_usd or 0.0) * s.cost_known, s.cost_known)
        for s in summaries
    ]  # fmt: skip
    refused = any(REACHED in reason for s in summaries for reason, _ in s.infra_error_reasons)
    return found, refused, any(s.scripted for s in summaries)


def _cut_off(path: Path) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return any(marker in text for marker in CUT_OFF)


def _run_round(out: Path, state: State, rnd: Round, spent: float, echo: TextIO) -> int | None:
    """Run (or finish) one round; None when it is done, else the exit code to leave with."""
    output, log, env = out / rnd.output, out / rnd.log, _env(state, rnd, spent)
    promptfoo = _promptfoo(env)
    if rnd.eval_id and (rnd.status == "paused" or not output.exists()):
        code, paused, interrupted = _spawn([promptfoo, "eval", "--resume", rnd.eval_id], env, log, echo)
    elif rnd.status == "paused" or not output.exists():
        # never started, or stopped before Promptfoo made its eval: start it afresh (`promptfoo eval --resume`
        # without an id would resume the newest eval, the previous round's)
        output.unlink(missing_ok=True)
        code, paused, interrupted = _spawn(
            [promptfoo, "eval", *state.promptfoo_args, "--repeat", str(rnd.repeat), "--no-cache", "-o", str(output)],
            env, log, echo,
        )  # fmt: skip
    else:
        code, paused, interrupted = 0, None, False
    if paused or interrupted:
        rnd.status, rnd.eval_id = "paused", paused or rnd.eval_id
        save(out, state)
        print(f"passhat: round {rnd.number} paused; continue with: passhat eval --resume {out}", file=sys.stderr)
        return 130
    if code not in (0, 100) or not output.exists():
        msg = (f"round {rnd.number}: promptfoo eval exited {code} without writing {output}; its output is in {log}; "
               f"fix the cause, then `passhat eval --resume {out}`")  # fmt: skip
        raise PasshatError(msg)
    if _cut_off(output):  # calls Ctrl+C cut off: run them again, with the round's --repeat
        code, _, interrupted = _spawn(
            [promptfoo, "eval", "--retry-errors", "--repeat", str(rnd.repeat)], env, log, echo
        )
        if interrupted:
            rnd.status = "paused"
            save(out, state)
            return 130
    rnd.status = "done"
    save(out, state)
    return None


def start(out: Path, promptfoo_args: Sequence[str], settings: Settings, echo: TextIO = sys.stdout) -> int:
    check_args(promptfoo_args)
    _promptfoo()  # before any state: a round that cannot start leaves none
    out.mkdir(parents=True, exist_ok=True)
    state = State(list(promptfoo_args), settings.round, settings.max_trials, settings.budget_usd, settings.k,
                  settings.safe_at)  # fmt: skip
    if (out / "rounds.json").exists():
        if _never_started(out, load(out), state):  # the same command again: round 1 never ran, start it now
            print(f"passhat: round 1 in {out} never started; starting it", file=echo, flush=True)
            return _loop(out, load(out), echo)
        msg = (
            f"--out {out}: it holds rounds already; continue them with `passhat eval --resume {out}` or pick a new DIR"
        )
        raise PasshatError(msg)
    state.rounds.append(Round(1, 0, min(settings.round, settings.max_trials), None))
    save(out, state)
    if settings.budget_usd is not None:
        print(f"passhat: --budget-usd {settings.budget_usd:g} counts the dollars each trial records: what the API "
              f"charged, or on the scripted model its simulated dollars ({SCRIPTED_MARK}, not money)",
              file=echo, flush=True)  # fmt: skip
    return _loop(out, state, echo)


def _never_started(out: Path, found: State, asked: State) -> bool:
    """`found` is `asked` (the same arguments and settings) and its one round made no eval and no output."""
    same = (found.promptfoo_args, found.round, found.max_trials, found.budget_usd, found.k, found.safe_at) == (
        asked.promptfoo_args, asked.round, asked.max_trials, asked.budget_usd, asked.k, asked.safe_at)  # fmt: skip
    first = found.rounds[0] if len(found.rounds) == 1 else None
    return same and first is not None and first.eval_id is None and not (out / first.output).exists()


def resume(out: Path, echo: TextIO = sys.stdout) -> int:
    state = load(out)
    if state.stop is not None:
        print(f"passhat: the rounds in {out} ended: {state.stop}; report: passhat report {out / COMBINED}", file=echo)
        return 0
    return _loop(out, state, echo)


def _loop(out: Path, state: State, echo: TextIO) -> int:
    try:
        return _rounds(out, state, echo)
    except KeyboardInterrupt:  # between rounds: rounds.json holds the last state that was true
        print(f"passhat: stopped between rounds; continue with: passhat eval --resume {out}", file=sys.stderr)
        return 130


def _rounds(out: Path, state: State, echo: TextIO) -> int:
    settings = Settings(state.round, state.max_trials, state.budget_usd, state.k, state.safe_at)
    found: list[Count] = []
    if any(r.status == "done" for r in state.rounds):
        found, _, _ = counts(combine(out, state), state.k)
    while True:
        rnd = state.rounds[-1]
        if rnd.status != "done":
            tasks = "every task" if rnd.tasks is None else f"{len(rnd.tasks)} open task(s)"
            print(f"passhat: round {rnd.number}: {tasks} x {rnd.repeat} trial(s), repeats "
                  f"{rnd.offset}-{rnd.offset + rnd.repeat - 1}", file=echo, flush=True)  # fmt: skip
            code = _run_round(out, state, rnd, sum(c.cost_usd for c in found), echo)
            if code is not None:
                return code
        found, refused, scripted = counts(combine(out, state), state.k)
        plan = next_round(found, {c.task: state.scheduled(c.task) for c in found}, settings)
        settled = sum(decided(c, settings) for c in found)
        spent = sum(c.cost_usd for c in found)
        mark = f"{SCRIPTED_MARK} (the scripted model's simulated dollars, not money)" if scripted else ""
        print(f"passhat: after round {rnd.number}: {settled} of {len(found)} decided, {sum(c.trials for c in found)} "
              f"trials, ${spent:.2f}{mark} spent", file=echo, flush=True)  # fmt: skip
        if not any(c.n for c in found):
            state.stop = f"measured nothing: no trial of round {rnd.number} passed or failed (see {out / rnd.log})"
            save(out, state)
            print(f"passhat: stopped after round {rnd.number}: {state.stop}; fix the cause, then start anew",
                  file=sys.stderr, flush=True)  # fmt: skip
            return 1
        stop = f"the budget guard refused trials in round {rnd.number}" if refused and plan.stop is None else plan.stop
        if plan.beyond:
            print(f"passhat: left undecided (the trials left are unlikely to decide them): {', '.join(plan.beyond)}",
                  file=echo, flush=True)  # fmt: skip
        if stop is not None:
            state.stop = stop
            save(out, state)
            combine(out, state)
            print(f"passhat: stopped after round {rnd.number}: {stop}; report: passhat report {out / COMBINED}",
                  file=echo, flush=True)  # fmt: skip
            return 0
        state.rounds.append(Round(rnd.number + 1, rnd.offset + rnd.repeat, plan.repeat, list(plan.tasks)))
        save(out, state)
