# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test lint typecheck schemas clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,ray]'
	touch $@ $(VENV)/.core

## The learned-detector extra (torch + ultralytics). ultralytics pulls the GUI wheel
## opencv-python, which overwrites the headless cv2/ folder; put the headless one back.
$(VENV)/.yolo: pyproject.toml | $(VENV)/.dev
	$(BIN)/pip install -q -e '.[dev,ray,yolo]'
	$(BIN)/pip uninstall -y -q opencv-python
	$(BIN)/pip install -q --force-reinstall --no-deps opencv-python-headless
	$(BIN)/python -c "import cv2, ultralytics"
	touch $@

## Grade the synthetic scenes offline, end to end (no network, no API key).
demo: $(VENV)/.core
	$(BIN)/groundeval demo --out runs/demo

## Headless Chromium for the report's browser tests: Debian's package, nothing from a browser vendor.
$(CHROMIUM):
	$(SUDO) apt-get update -q
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium

## Install the dev extras and run the whole test suite (ruff and mypy included).
test: $(VENV)/.dev $(VENV)/.yolo $(CHROMIUM)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory typecheck
	$(BIN)/pytest -q

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## mypy needs the namespace mapped as folders: a tree of symlinks under build/.
typecheck: $(VENV)/.dev
	rm -rf build/typecheck && mkdir -p build/typecheck/groundeval
	for d in grounding programs state judges benchmarks; do ln -s ../../../$$d build/typecheck/groundeval/$$d; done
	cd build/typecheck && ../../$(BIN)/mypy -p groundeval

## Regenerate the checked-in JSON Schemas after changing a model.
schemas: $(VENV)/.dev
	$(BIN)/python -c "from pathlib import Path; from groundeval.state._schemas import *; [Path('state/schemas', SCHEMA_FILES[k]).write_text(schema_text(s)) for k, s in generate_schemas().items()]"

clean:
	rm -rf $(VENV) build runs .pytest_cache .ruff_cache .mypy_cache
