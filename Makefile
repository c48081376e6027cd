# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PIP     := $(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: demo test lit pytest clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	# torch first, pinned: any other release pulls a multi-GB CUDA build on this machine
	$(BIN)/python -m pip install --disable-pip-version-check -q torch==2.13.0
	$(PIP) -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m spyre_mlir.demo

lit: $(STAMP)
	$(BIN)/lit -sv test/

pytest: $(STAMP)
	$(BIN)/python -m pytest -q test/python

test: lit pytest

clean:
	rm -rf $(VENV)
