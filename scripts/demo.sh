#!/usr/bin/env bash
# The example suite end to end: scripted model on loopback (or real Claude with --real),
# promptfoo eval --repeat, then passhat report. Run through `make demo` (it sets PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-10}
JOBS=${JOBS:-2}
SCRIPT=${SCRIPT:-flaky:0.7}
OUT=${OUT:-.passhat/demo-results.json}
mkdir -p .passhat

if [[ "${1:-}" == "--real" ]]; then
  if [[ -z "${ANTHROPIC_API_KEY:-}" ]]; then
    echo "demo-real: set ANTHROPIC_API_KEY first (this run spends real tokens)" >&2
    exit 2
  fi
  export PASSHAT_REAL_CLAUDE=1
else
  rm -f .passhat/fake-model.port
  passhat fake-model --tasks tasks --script "$SCRIPT" --port 0 --port-file .passhat/fake-model.port &
  server=$!
  trap 'kill $server 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [[ -s .passhat/fake-model.port ]] && break; sleep 0.1; done
  [[ -s .passhat/fake-model.port ]] || { echo "demo: the scripted model did not start" >&2; exit 1; }
  export PASSHAT_FAKE_MODEL_URL="http://127.0.0.1:$(cat .passhat/fake-model.port)"
  echo "demo: scripted model ($SCRIPT) at $PASSHAT_FAKE_MODEL_URL — no API key needed"
fi

passhat validate promptfooconfig.yaml --repeat "$REPEAT" >/dev/null

# promptfoo exits 100 when some assertion failed: expected here, the report is the point.
promptfoo eval -c promptfooconfig.yaml --repeat "$REPEAT" -j "$JOBS" --no-cache --no-progress-bar \
  -o "$OUT" > .passhat/demo-eval.log 2>&1 || [[ $? -eq 100 ]] || { tail -40 .passhat/demo-eval.log; exit 1; }
echo "demo: promptfoo eval --repeat $REPEAT done ($OUT; log in .passhat/demo-eval.log; browse with: promptfoo view)"
passhat report "$OUT" --k 1,3,5,10
