# viewfinder: `make help` lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash

UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
PYTEST_ARGS ?=
# pytest-xdist workers for `make test` (0: one process); whole files go to a worker
PYTEST_WORKERS ?= 2
# askui's own reader, in a venv of its own, reads the cache files viewfinder writes (tests)
ASKUI_VENV := .venv-askui
ASKUI_VERSION := 0.48.0
# Qt from PyPI in a venv of its own, for the element tests' Qt apps: Qt 6 (PySide6's
# essential modules), and PyPI's Qt 5 (PyQt5's wheels, built without AT-SPI support)
QT_VENV := .venv-qt
QT_PACKAGES := pyside6-essentials==6.12.0 pyqt5==5.15.11 pyqt5-qt5==5.15.19

.PHONY: help setup demo test lint typecheck bench docs build clean

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  %-10s %s\n", $$1, $$2}'

setup: ## Install missing system packages and uv, then the workspace (uv sync --frozen)
	@scripts/setup-system.sh
	@$(UV) sync --frozen --all-packages --quiet
	@$(UV) venv --quiet --allow-existing --python 3.11 $(ASKUI_VENV)
	@$(UV) pip install --quiet --python $(ASKUI_VENV)/bin/python askui==$(ASKUI_VERSION)
	@$(UV) venv --quiet --allow-existing --python 3.11 $(QT_VENV)
	@$(UV) pip install --quiet --python $(QT_VENV)/bin/python $(QT_PACKAGES)

demo: setup ## Run the demo: `viewfinder exec` on the code env examples, then every backend, into ./demo-output/
	$(UV) run --frozen python examples/demo.py --out demo-output

test: setup lint typecheck ## Lint, type-check and run every test
	$(UV) run --frozen pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: setup ## ruff (lint + format check) and the import layering contracts
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen lint-imports

typecheck: setup ## mypy over every member
	$(UV) run --frozen mypy

bench: setup ## Run the benchmarks side by side and write docs/benchmarks.md
	$(UV) run --frozen python benchmarks/run.py

docs: setup ## Regenerate generated docs (CLI reference)
	$(UV) run --frozen python scripts/gen_cli_docs.py

build: setup ## Build every member on its own into dist/
	$(UV) build --all-packages --out-dir dist

clean: ## Remove generated output
	rm -rf demo-output dist .pytest_cache .ruff_cache .mypy_cache benchmarks/results
