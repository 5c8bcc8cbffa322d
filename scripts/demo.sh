#!/usr/bin/env bash
# The example suite end to end: scripted model on loopback (or real Claude with --real),
# promptfoo eval --repeat, then passhat report. Run through `make demo` (it sets PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-10}
JOBS=${JOBS:-2}
SCRIPT=${SCRIPT:-flaky:0.7+hack:0.1}
OUT=${OUT:-.passhat/demo-results.json}
mkdir -p .passhat

if [[ "${1:-}" == "--real" ]]; then
  if [[ -z "${ANTHROPIC_API_KEY:-}" ]]; then
    echo "demo-real: set ANTHROPIC_API_KEY first (this run spends real tokens)" >&2
    exit 2
  fi
  export PASSHAT_REAL_CLAUDE=1
elif [[ "${1:-}" == "--rehearse" ]]; then
  # real-API mode for free: the provider and the CLI go to ANTHROPIC_BASE_URL as to the API, with a dummy key;
  # there passhat's scripted model answers the API's own /v1/messages (--open), compressed as the CLI accepts
  rm -f .passhat/rehearsal.port
  passhat fake-model --open --tasks-dir tasks --script "$SCRIPT" --port 0 --port-file .passhat/rehearsal.port &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [[ -s .passhat/rehearsal.port ]] && break; sleep 0.1; done
  [[ -s .passhat/rehearsal.port ]] || { echo "rehearse: the scripted model did not start" >&2; exit 1; }
  unset PASSHAT_FAKE_MODEL_URL ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN
  export PASSHAT_REAL_CLAUDE=1 ANTHROPIC_API_KEY=sk-ant-passhat-rehearsal
  ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat .passhat/rehearsal.port)"
  export ANTHROPIC_BASE_URL
  echo "rehearse: real-API mode against the scripted model ($SCRIPT) at $ANTHROPIC_BASE_URL — a dummy key, nothing spent"
else
  # the URL carries the server's secret (http://passhat:<secret>@127.0.0.1:PORT, file mode 0600): only the
  # harness holds it; each trial's CLI gets a token for its own route
  rm -f .passhat/fake-model.url
  passhat fake-model --tasks-dir tasks --script "$SCRIPT" --port 0 --url-file .passhat/fake-model.url &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [[ -s .passhat/fake-model.url ]] && break; sleep 0.1; done
  [[ -s .passhat/fake-model.url ]] || { echo "demo: the scripted model did not start" >&2; exit 1; }
  PASSHAT_FAKE_MODEL_URL="$(cat .passhat/fake-model.url)"
  export PASSHAT_FAKE_MODEL_URL
  echo "demo: scripted model ($SCRIPT) at http://${PASSHAT_FAKE_MODEL_URL##*@} — no API key needed"
fi

passhat validate promptfooconfig.yaml --repeat "$REPEAT" >/dev/null

# How long: every trial runs the real Claude Code CLI (and a sandbox, and the graders), JOBS at a time. Progress is
# the trials that have left their trial.json so far, every PROGRESS seconds, with the time left at that pace.
if [[ -n "${PASSHAT_TASKS:-}" ]]; then tasks=$(tr ',' '\n' <<< "$PASSHAT_TASKS" | grep -c .); else
  tasks=$(find tasks -mindepth 2 -maxdepth 2 -name task.yaml | wc -l); fi
total=$((tasks * REPEAT))
PROGRESS=${PROGRESS:-20}
# About 7 s a trial per slot on 2 idle CPUs (100 trials at -j 2: ~6 min), most of it the CLI starting and the graders.
echo "demo: $total trials ($tasks tasks x --repeat $REPEAT, $JOBS at a time), each the real CLI in a sandbox, then its" \
  "graders: about $(( (total * 7 / JOBS + 59) / 60 )) min on 2 idle CPUs; progress every ${PROGRESS}s"
touch .passhat/demo-start
# promptfoo exits 100 when some assertion failed: expected here, the report is the point.
promptfoo eval -c promptfooconfig.yaml --repeat "$REPEAT" -j "$JOBS" --no-cache --no-progress-bar \
  -o "$OUT" > .passhat/demo-eval.log 2>&1 &
eval_pid=$!
started=$SECONDS
while kill -0 "$eval_pid" 2>/dev/null; do
  for _ in $(seq "$PROGRESS"); do kill -0 "$eval_pid" 2>/dev/null && sleep 1; done
  kill -0 "$eval_pid" 2>/dev/null || break
  # no artifacts folder until the first trial writes one (a fresh clone): 0 so far, not the end of the demo
  done_n=$( (find .passhat/artifacts -name trial.json -newer .passhat/demo-start 2>/dev/null || true) | wc -l)
  spent=$((SECONDS - started))
  if ((done_n > 0 && done_n < total)); then
    echo "demo: $done_n/$total trials in ${spent}s; about $(( spent * (total - done_n) / done_n ))s left"
  else
    echo "demo: $done_n/$total trials in ${spent}s"
  fi
done
status=0
wait "$eval_pid" || status=$?
[[ $status -eq 0 || $status -eq 100 ]] || { tail -40 .passhat/demo-eval.log; exit 1; }
echo "demo: promptfoo eval --repeat $REPEAT done in $((SECONDS - started))s ($OUT; log in .passhat/demo-eval.log)"
passhat report "$OUT" --k 1,3,5,10
# The commands to go on with, as they work in a new shell (where neither passhat nor promptfoo is on PATH).
case "$OUT" in /*) results=$OUT ;; *) results=$PWD/$OUT ;; esac
echo
echo "demo: in a new shell, put passhat and promptfoo on PATH first, then read or browse the results:"
printf '  . %q\n' "$PWD/activate"
printf '  passhat report %q --k 1,3,5,10\n' "$results"
echo "  passhat view"  # promptfoo view, with each trial's transcript and diff one click away
