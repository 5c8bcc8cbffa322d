"""What `passhat eval --until-decided` keeps in `--out DIR`: the plan and each round (`rounds.json`), each round's
Promptfoo output (`round-NN.json`, its log `round-NN.log`), and the rows of every round in one results file
(`results.json`) that `passhat report` reads.

`rounds.json` is rewritten whole (a temporary file renamed over it) at every change of state, so a Ctrl+C or a kill
at any moment leaves the last state that was true: a round is `running` from before its Promptfoo starts,
`paused` once Promptfoo paused it (with its eval id, for `promptfoo eval --resume`), `done` once its output file
is complete. `passhat eval --resume DIR` reads it and goes on from there.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from passhat.common._errors import PasshatError

STATE = "rounds.json"
COMBINED = "results.json"
VERSION = 1


@dataclass
class Round:
    number: int
    offset: int  # its first repeat index: round r's repeats are offset .. offset + repeat - 1
    repeat: int
    tasks: list[str] | None  # None: every task of the config (round 1)
    status: str = "running"  # running | paused | done
    eval_id: str | None = None

    @property
    def output(self) -> str:
        return f"round-{self.number:02d}.json"

    @property
    def log(self) -> str:
        return f"round-{self.number:02d}.log"


@dataclass
class State:
    promptfoo_args: list[str]
    round: int
    max_trials: int
    budget_usd: float | None
    k: int
    safe_at: float
    rounds: list[Round] = field(default_factory=list)
    stop: str | None = None  # why the rounds ended (None: not yet)

    def scheduled(self, task: str) -> int:
        return sum(r.repeat for r in self.rounds if r.tasks is None or task in r.tasks)


def save(out: Path, state: State) -> None:
    data = {"version": VERSION, **asdict(state)}
    tmp = out / f".{STATE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, out / STATE)


def load(out: Path) -> State:
    path = out / STATE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        msg = f"--resume {out}: no {STATE} there; give the --out DIR of a `passhat eval --until-decided` run"
        raise PasshatError(msg) from None
    except (OSError, ValueError) as error:
        msg = f"{path}: cannot read it ({error}); it is passhat's own record of the rounds — restore it or start anew"
        raise PasshatError(msg) from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        msg = f"{path}: field 'version' is {data.get('version') if isinstance(data, dict) else data!r}, expected {VERSION}"
        raise PasshatError(msg)
    rounds = [Round(**r) for r in data.pop("rounds")]
    data.pop("version")
    return State(**data, rounds=rounds)


def _rows_and_wrapper(path: Path) -> tuple[list[Any], dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
        rows = data["results"]["results"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        msg = f"{path}: not a promptfoo -o results.json ({error}); rerun that round with `passhat eval --resume`"
        raise PasshatError(msg) from None
    return rows, data


def combine(out: Path, state: State) -> Path:
    """Every done round's rows in one promptfoo-shaped results file (`results.json`), the first round's wrapper
    (config, versions) around them and `passhat.rounds` beside it: `passhat report` reads it, and its verdict uses
    the anytime-valid interval because the rounds are there."""
    rows: list[Any] = []
    wrapper: dict[str, Any] = {}
    evals = []
    for r in state.rounds:
        if r.status != "done":
            continue
        found, data = _rows_and_wrapper(out / r.output)
        rows.extend(found)
        wrapper = wrapper or data
        r.eval_id = r.eval_id or data.get("evalId")
        evals.append(r.eval_id)
    combined = {key: value for key, value in wrapper.items() if key != "results"}
    combined["evalId"] = f"rounds:{','.join(str(e) for e in evals)}"
    combined["results"] = {**wrapper.get("results", {"version": 3}), "results": rows}
    combined["runtimeOptions"] = {**(wrapper.get("runtimeOptions") or {}), "repeat": None}
    combined["passhat"] = {
        "rounds": [asdict(r) | {"output": r.output, "eval_id": r.eval_id} for r in state.rounds if r.status == "done"],
        "stop": state.stop,
        "settings": {"round": state.round, "max_trials": state.max_trials, "budget_usd": state.budget_usd,
                     "k": state.k, "safe_at": state.safe_at},
    }  # fmt: skip
    path = out / COMBINED
    tmp = out / f".{COMBINED}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(combined))
    os.replace(tmp, path)
    return path
