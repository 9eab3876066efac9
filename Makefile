# One command each: `make demo` and `make test` set everything up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# torch==2.13.0 first: it resolves to the CPU build; an open range pulls gigabytes of CUDA.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[all]"
	touch $(STAMP)

install: $(STAMP)

# Build the sample corpus offline, benchmark the offline retrievers on it, write the HTML report.
demo: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/fincprg demo --out runs/demo
	HF_HUB_OFFLINE=1 $(BIN)/fincprg eval runs/demo/dataset --out runs/demo/eval
	$(BIN)/fincprg report runs/demo

test: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

test-fast: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m "not slow" -x

clean:
	rm -rf runs .pytest_cache
