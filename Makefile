# passhat — two commands on a fresh machine:
#   make demo   install into the repo, run the example suite against the scripted model, print pass^k
#   make test   install the same, run the whole test suite
# then, in a new shell, `. ./activate` puts passhat and promptfoo on PATH as the recipes below have them.
SHELL := /bin/bash
VENV := .venv
PY := $(CURDIR)/$(VENV)/bin/python
# The recipes' PATH and promptfoo settings; ./activate sets the same ones in a shell (keep the two alike).
export PATH := $(CURDIR)/node_modules/.bin:$(CURDIR)/$(VENV)/bin:$(PATH)
export PROMPTFOO_PYTHON := $(PY)
export PROMPTFOO_DISABLE_TELEMETRY := 1
export PROMPTFOO_DISABLE_UPDATE := 1

REPEAT ?= 10
JOBS ?= 2
SCRIPT ?= flaky:0.7+hack:0.1
PYTEST_ARGS ?=

.PHONY: install system-deps demo-intro demo demo-real rehearse test test-fast lint fmt bench clean

$(VENV)/.installed: pyproject.toml
	@echo "make: installing passhat and its Python packages into $(VENV) (a few minutes the first time)"
	python3 -m venv $(VENV)
	scripts/progress.sh "make: pip install" \
	  $(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,ray]'  # ray: executor: ray and its e2e tests
	touch $@

node_modules/.installed: package.json package-lock.json
	@echo "make: installing promptfoo and Node 22 into node_modules (a few minutes the first time)"
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 scripts/progress.sh "make: npm ci" npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian packages the tests need: bubblewrap (trial confinement), chromium (reports people look at).
# Installed only when missing; needs root (as in CI). Without them the affected tests fail, saying so.
SYSTEM_PACKAGES := bubblewrap chromium
system-deps:
	@missing=""; command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "make: please install:$$missing (Debian packages; needs root)"; fi; \
	fi

# Bytecode of passhat's own modules: an editable install has none, and promptfoo starts a fresh interpreter per
# assertion and hook call, which would compile them again every time (only changed files are recompiled here).
install: $(VENV)/.installed node_modules/.installed
	@$(PY) -m compileall -q src/passhat > /dev/null

# What `make demo` takes, said before anything starts: the installs (first run only; about 8 min on 2 CPUs) and the
# trials (about 7 s each per job on 2 idle CPUs: 100 trials at -j 2 are about 6 min).
demo-intro:
	@todo=""; [ -f $(VENV)/.installed ] || todo="$$todo Python packages,"; \
	[ -f node_modules/.installed ] || todo="$$todo promptfoo and Node 22,"; \
	if [ -n "$$todo" ]; then echo "make demo: first it installs$${todo%,} (about 8 min on 2 CPUs, progress every 20 s)," \
	  "then runs the example suite (scripts/demo.sh says how many trials and about how long)"; \
	else echo "make demo: installed; runs the example suite (scripts/demo.sh says how many trials and about how long)"; fi

demo: demo-intro install
	REPEAT=$(REPEAT) JOBS=$(JOBS) SCRIPT=$(SCRIPT) scripts/demo.sh

demo-real: install
	REPEAT=$(REPEAT) JOBS=$(JOBS) PASSHAT_REAL_CLAUDE=1 scripts/demo.sh --real

# The real-API path (PASSHAT_REAL_CLAUDE=1, ANTHROPIC_BASE_URL, a key) against the scripted model: costs nothing.
REHEARSE_SCRIPT ?= oracle+real
rehearse: install
	REPEAT=$(REPEAT) JOBS=$(JOBS) SCRIPT=$(REHEARSE_SCRIPT) scripts/demo.sh --rehearse

LINTED := src tests bench assertions providers tasks/promptfoo_tests.py

test: install system-deps lint
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: install lint
	$(PY) -m pytest -m "not e2e" $(PYTEST_ARGS)

# The habits: ruff (lint + format), mypy strict on src/, import-linter's layering contracts (pyproject.toml).
lint: install
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

fmt: install
	$(VENV)/bin/ruff format $(LINTED)
	$(VENV)/bin/ruff check --fix $(LINTED)

bench: install
	$(PY) bench/where_cpu_goes.py  # every phase's CPU against its budget (root: kernel process accounting)
	$(PY) bench/integrity_cost.py  # the gaming defences inside the tests' command, every shipped task: cap +10%
	$(PY) bench/trial_overhead.py

clean:
	rm -rf .passhat results.json
