"""The budget guard: `budget_usd:` in the provider config caps what one eval spends, across every Promptfoo worker
(and every Ray node: their trials pass through the driver's workers) through one ledger in the state dir.

Before a trial starts, the guard forecasts: what finished trials spent, plus what the trials in flight and this
one will spend at the mean cost of a finished trial (before any finished, `max_budget_usd` per trial if set,
else nothing can be forecast and the trial runs). When that would cross the budget the trial does not start:
the provider returns an infrastructure-style error "budget reached" (outside n), which says how to continue.
The ledger is one JSON file per eval id under `<state_dir>/budget/`, updated under an exclusive `flock`; a trial
whose worker died (Ctrl+C) leaves the in-flight list when its process is gone.

`PASSHAT_BUDGET_USD` sets the budget when the config does not (`passhat eval --until-decided --budget-usd` gives
each round what is left).
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from passhat.common._errors import PasshatError

BUDGET_KEY = "budget_usd"
BUDGET_ENV = "PASSHAT_BUDGET_USD"
REACHED = "budget reached"  # in the error of every trial the guard refused


def budget_of(raw: dict, environ: Mapping[str, str] | None = None) -> float | None:
    """The budget in dollars from the provider config (`budget_usd`), else $PASSHAT_BUDGET_USD; None for none."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    value: object = raw.get(BUDGET_KEY)
    where = f"provider config `{BUDGET_KEY}`"
    if value is None and env.get(BUDGET_ENV):
        value, where = env[BUDGET_ENV], f"${BUDGET_ENV}"
        try:
            value = float(str(value))
        except ValueError:
            value = str(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        msg = f"{where}: {value!r} is not a budget; give a positive number of dollars, e.g. {BUDGET_KEY}: 20"
        raise PasshatError(msg)
    return float(value)


@dataclass(frozen=True)
class Admission:
    token: str | None  # None: refused
    refusal: str | None = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Ledger:
    """What one eval spent and has in flight, shared through `<state_dir>/budget/<eval id>.json`."""

    def __init__(self, state_dir: Path, eval_id: str) -> None:
        folder = state_dir / "budget"
        folder.mkdir(parents=True, exist_ok=True)
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in eval_id) or "adhoc"
        self.path = folder / f"{safe}.json"
        self.lock = folder / f"{safe}.lock"

    @contextmanager
    def _locked(self) -> Iterator[dict]:
        with open(self.lock, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                data = json.loads(self.path.read_text()) if self.path.exists() else {}
                data.setdefault("spent_usd", 0.0)
                data.setdefault("finished", 0)
                data.setdefault("in_flight", {})
                yield data
                tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(data))
                os.replace(tmp, self.path)
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def admit(self, budget: float, per_trial_cap: float | None) -> Admission:
        """Start a trial if spent + (in flight + 1) x forecast stays within `budget`."""
        with self._locked() as data:
            data["in_flight"] = {t: pid for t, pid in data["in_flight"].items() if _alive(int(pid))}
            spent, finished, flying = float(data["spent_usd"]), int(data["finished"]), len(data["in_flight"])
            forecast = spent / finished if finished else per_trial_cap
            if forecast is not None and spent + (flying + 1) * forecast > budget:
                how = "the mean of the finished trials" if finished else "max_budget_usd per trial"
                return Admission(None, (
                    f"{REACHED} (budget_usd ${budget:.2f}): raise budget_usd, then `promptfoo eval --retry-errors "
                    f"--repeat N`; ${spent:.4f} spent by {finished} finished trial(s) + {flying + 1} at ${forecast:.4f} "
                    f"each ({how}) would cross it"
                ))  # fmt: skip
            token = uuid.uuid4().hex
            data["in_flight"][token] = os.getpid()
            return Admission(token)

    def settle(self, token: str, cost_usd: float | None) -> None:
        """A trial ended: add its cost (an unknown cost counts as 0 spent and is not in the mean)."""
        with self._locked() as data:
            data["in_flight"].pop(token, None)
            if cost_usd is not None:
                data["spent_usd"] = float(data["spent_usd"]) + float(cost_usd)
                data["finished"] = int(data["finished"]) + 1

    def spent(self) -> float:
        with self._locked() as data:
            return float(data["spent_usd"])
