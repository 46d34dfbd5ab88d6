# privrepro — `make help` lists every target.
#
# The environment is installed on first use: uv (from PyPI into .tools/ when it is not on PATH),
# then `uv sync --frozen` from the committed uv.lock into .venv/.

SHELL := /bin/bash
PROFILE ?= smoke
ARGS ?=
# pytest-xdist workers of make test (CI has 2 cores; 0 runs the suite in one process)
TEST_WORKERS ?= 2
PYTHON ?= python3

UV := $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV := $(CURDIR)/.tools/bin/uv
endif
RUN := $(UV) run --frozen
ENV_STAMP := .venv/.privrepro-synced

.DEFAULT_GOAL := help
.PHONY: help env figures plots tables report report-check test test-fast test-lowest test-system bench lint typecheck check list clean-results
.PHONY: rehearsal-data rehearsal gpu-check

help: ## List the targets
	@echo "privrepro — reproduce four DP papers (PROFILE=$(PROFILE); set PROFILE=paper for the papers' grids)"
	@echo
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk 'BEGIN{FS=":.*## "}{printf "  %-18s %s\n", $$1, $$2}'
	@echo
	@echo "One figure: make fig-<paper>-<id>   (runs conf/experiment/<paper>/fig<id>*.yaml or <id>*.yaml)"
	@for f in conf/experiment/*/*.yaml; do p=$$(basename $$(dirname $$f)); n=$$(basename $$f .yaml); \
	  d=$$(grep -m1 -E '^# [^@]' $$f | sed 's/^# //'); printf "  %-22s %s\n" "fig-$$p-$${n#fig}" "$$d"; done

$(CURDIR)/.tools/bin/uv:
	@echo "uv not found: installing it into .tools/ (from PyPI)"
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet uv

# --compile-bytecode: every later process reads .pyc files instead of compiling torch, pandas,
# matplotlib … again (seconds per process; always, where PYTHONDONTWRITEBYTECODE is set)
$(ENV_STAMP): pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --compile-bytecode
	$(UV) run --frozen python -m compileall -q src
	@touch $@

env: $(ENV_STAMP) ## Install the environment (uv sync from uv.lock); then `source .venv/bin/activate`
	@echo "environment ready in .venv/: 'source .venv/bin/activate' puts privrepro, python and pytest on PATH"

figures: $(ENV_STAMP) ## Run every figure (PROFILE=smoke|paper): results/<paper>/<fig>.csv, plots/<paper>/<fig>.png
	$(RUN) python -m privrepro.runner.all --profile $(PROFILE) $(ARGS)

fig-%: $(ENV_STAMP)
	$(RUN) python -m privrepro.runner.all --profile $(PROFILE) --target $* $(ARGS)

list: $(ENV_STAMP) ## List the experiments and their make targets
	$(RUN) python -m privrepro.runner.all --list

plots: $(ENV_STAMP) ## Redraw every plot from results/ without recomputing
	$(RUN) python -m privrepro.runner.replot

tables: $(ENV_STAMP) ## Derive every results/ table (+ meta, summary) from the run store; computes nothing
	$(RUN) python -m privrepro.runner.make_tables $(ARGS)

report: $(ENV_STAMP) ## Write REPORT.md and REPORT.html: reproduced numbers against the papers'
	$(RUN) python -m privrepro.report

report-check: $(ENV_STAMP) ## Open REPORT.html and REPORT/*.html in headless Chromium: images, links, console, width; results/REPORT.summary.png
	$(RUN) python tests/report/page_check.py REPORT.html $(wildcard REPORT/*.html) --screenshot results/REPORT.summary.png

test: $(ENV_STAMP) test-system ## Run the test suite on TEST_WORKERS processes (with a real PostgreSQL, submitit and Chromium)
	$(RUN) pytest -q -n $(TEST_WORKERS) --dist worksteal $(ARGS)

test-fast: $(ENV_STAMP) ## Run the tests not marked slow
	$(RUN) pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not slow" $(ARGS)

test-lowest: $(ENV_STAMP) ## Fast tests on the lowest versions pyproject.toml declares (uv --resolution lowest-direct, in .venv-lowest/)
	UV=$(UV) TEST_WORKERS=$(TEST_WORKERS) bash .ci/lowest-versions $(ARGS)

test-system: ## Install the system packages the tests start (as root; else say which are missing)
	@bash .ci/system-packages

rehearsal-data: $(ENV_STAMP) ## Write full-size stand-in datasets and random weights, marked as such (DATA=<root>; default data/rehearsal)
	$(RUN) python -m privrepro.rehearsal.standins --root "$(or $(DATA),$(PRIVREPRO_DATA),data/rehearsal)" $(ARGS)

rehearsal: $(ENV_STAMP) ## Rehearse every paper-profile figure on the stand-ins (DATA=<root>), capped: results/rehearsal.csv, plots/rehearsal.png
	$(RUN) python -m privrepro.rehearsal --root "$(or $(DATA),$(PRIVREPRO_DATA),data/rehearsal)" $(ARGS)

gpu-check: $(ENV_STAMP) ## GPU paths in <= 8 min: gpu tests, bench --device cuda --quick, 4 figures rehearsed; results/gpu-check/ (no GPU: one line, exit 0; ARGS=--cpu-parts runs the CPU parts)
	$(RUN) python benchmarks/gpu_check.py $(ARGS)

bench: $(ENV_STAMP) ## Benchmarks: speedup = baseline time / project time (> 1 faster); ARGS='--device cuda' or names
	$(RUN) python -m privrepro.benchmark_harness $(ARGS)

lint: $(ENV_STAMP) ## ruff: lint and format check; import-linter: the layering contracts
	$(RUN) ruff check src tests benchmarks
	$(RUN) ruff format --check src tests benchmarks
	$(RUN) lint-imports --no-cache --no-logo

typecheck: $(ENV_STAMP) ## mypy on the library
	$(RUN) mypy

check: lint typecheck test ## lint, typecheck and test

clean-results: ## Remove results/ and plots/ (the run store in experiments/ stays)
	rm -rf results/* plots/*
