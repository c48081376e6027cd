"""Set-up for the conformance tests (PyTorch's own device-generic tests on "spyre"):

- the default configuration, as test/python's conftest sets it: the compile cache on, in a
  fresh directory for this run;
- the `full` marker: the OpInfo samples of every op (test_opinfo.py's `test_samples_full`),
  left out of `make test` (which runs the common ops' samples, marked `slow`: not in
  `make quick`) and run by `make test-full`;
- SPYRE_CONFORMANCE_ACCEPT=1: the ops that ran are written into expectations.yaml as they ran,
  when the run ends (spyre_mlir/testing/expectations.py).
"""

import os
import tempfile

import pytest

from spyre_mlir.testing import expectations

os.environ.pop("SPYRE_CACHE", None)
os.environ["SPYRE_CACHE_DIR"] = tempfile.mkdtemp(prefix="spyre-test-cache-")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.name.startswith("test_samples_full_"):
            item.add_marker(pytest.mark.full)
        elif item.name.startswith("test_samples_"):  # the common ops': make test, not make quick
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if os.environ.get("SPYRE_CONFORMANCE_ACCEPT") == "1" and expectations.OBSERVED:
        entries = expectations.updated(expectations.load(expectations.FILE), expectations.OBSERVED)
        expectations.FILE.write_text(expectations.render(entries))
