# One command each: `make demo` and `make test` set everything up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TORCH_VERSION := 2.13.0
# PyTorch's CPU-only wheels. PyPI's torch for Linux is the CUDA build (several GB more), and pip would take
# it: bertopic (a core dependency) pulls torch through sentence-transformers.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: install torch demo test test-fast lint clean

$(BIN)/python:
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
		echo "make: fincprg needs Python >= 3.11, and $(PY) is $$($(PY) -V 2>&1); run make PY=python3.11 (or newer)"; \
		exit 1; }
	$(PY) -m venv $(VENV)

# torch first, as the CPU build from PyTorch's index. That attempt runs with pip --isolated, so that only
# that index is asked (not find-links or extra indexes from PIP_* variables or the user's pip.conf, which
# could answer instead). Where the index cannot be reached it says so and installs from the default
# index: on Linux the CUDA build, unless a wheel source configured for pip offers a CPU one.
$(VENV)/.torch: $(BIN)/python
	$(BIN)/pip install -q --upgrade pip
	@if $(BIN)/python -c "import importlib.metadata as m, sys; sys.exit(m.version('torch').split('+')[0] != '$(TORCH_VERSION)')" 2>/dev/null; then \
		echo "make: torch $(TORCH_VERSION) is installed already"; \
	elif $(BIN)/pip --isolated install -q --retries 1 --timeout 20 --index-url $(TORCH_CPU_INDEX) torch==$(TORCH_VERSION); then \
		echo "make: installed torch==$(TORCH_VERSION) from $(TORCH_CPU_INDEX)"; \
	else \
		echo "make: could not install torch from $(TORCH_CPU_INDEX) (see pip's message above); falling back to pip install torch==$(TORCH_VERSION) from the default index, which on Linux is the CUDA build (several GB)"; \
		$(BIN)/pip install -q torch==$(TORCH_VERSION); \
	fi
	@$(BIN)/python -W ignore -c "import torch; print('make: torch', torch.__version__, '(CUDA ' + torch.version.cuda + ' build)' if torch.version.cuda else '(CPU build)')"
	touch $@

torch: $(VENV)/.torch

$(STAMP): $(VENV)/.torch pyproject.toml
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
