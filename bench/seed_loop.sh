#!/usr/bin/env bash
# The loop passhat replaces, as the seed wrote it: for each trial, a fresh `git worktree`, one bare
# `claude -p` run, the task's test command, the patch kept. Serial, no isolation, no grading beyond the
# test command's exit status.
#
#   bench/seed_loop.sh PLAN OUT
#
# PLAN: one trial per line, tab-separated: task_id  repeat  model_url  repo  prompt_file  test_command
# OUT:  a folder; each trial leaves OUT/<task>-<repeat>.{patch,json,status}
set -u
plan=$1 out=$2
claude=${CLAUDE_CLI:?set CLAUDE_CLI to the claude binary}
mkdir -p "$out"
while IFS=$'\t' read -r task repeat url repo prompt_file command; do
  scratch=$(mktemp -d)
  worktree=$scratch/wt
  git -C "$repo" worktree add -q --detach "$worktree"
  mkdir "$scratch/home" "$scratch/tmp"
  (
    cd "$worktree" || exit 1
    env -i PATH="$PATH" HOME="$scratch/home" TMPDIR="$scratch/tmp" LANG=C.UTF-8 IS_SANDBOX=1 \
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 \
      ANTHROPIC_API_KEY=anything ANTHROPIC_BASE_URL="$url" \
      "$claude" --bare -p "$(cat "$prompt_file")" --dangerously-skip-permissions --output-format json \
      > "$out/$task-$repeat.json" 2>/dev/null
    git add -A && git diff --cached --binary > "$out/$task-$repeat.patch"
    if bash -c "$command" > /dev/null 2>&1; then echo pass; else echo fail; fi > "$out/$task-$repeat.status"
  )
  git -C "$repo" worktree remove --force "$worktree"
  rm -rf "$scratch"
done < "$plan"
