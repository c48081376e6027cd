"""Set-up for every test:

- the default configuration, as users run it: the compile cache on disk is on, in a fresh
  directory for this run (SPYRE_CACHE_DIR), so a graph compiled twice in one run is loaded the
  second time, and a run neither reads nor fills the user's cache; tests that measure a
  compile ask for the cache off themselves (the backend option `cache=False`, or the
  `no_compile_cache` fixture), and a test that patches the compiler (`monkeypatch.setattr` of
  anything in spyre_mlir) compiles with it off: the cache key sees the compiler's sources, not
  the patch;
- every module of spyre_mlir is loaded before any test runs, so a property test draws the
  same examples under `-k`, `make quick` and `make test` alike (spyre_mlir.testing.hypothesis
  says why);
- tiers: a hypothesis property is marked `property`, which `make test-full` selects to draw its
  full example count (`spyre_mlir.testing.hypothesis.example_count`); tests marked `full` run there
  only, `slow` ones in `make test` and not in `make quick`.
"""

import os
import tempfile

import pytest
from hypothesis.internal.detection import is_hypothesis_test

from spyre_mlir.testing.hypothesis import load_every_module

os.environ.pop("SPYRE_CACHE", None)
os.environ["SPYRE_CACHE_DIR"] = tempfile.mkdtemp(prefix="spyre-test-cache-")
load_every_module()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_hypothesis_test(getattr(item, "obj", None)):
            item.add_marker(pytest.mark.property)


@pytest.fixture(autouse=True)
def _keeps_the_default_configuration():
    """A test that leaves SPYRE_CACHE set (a bench module loaded without restoring it) would
    run every later test in its process with the compile cache off: it fails instead."""
    before = os.environ.get("SPYRE_CACHE")
    yield
    after = os.environ.get("SPYRE_CACHE")
    assert after == before, f"the test left SPYRE_CACHE={after!r} (it was {before!r}) for the tests after it"


@pytest.fixture
def no_compile_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compile cache off for one test (SPYRE_CACHE=0): for tests that count compiles."""
    monkeypatch.setenv("SPYRE_CACHE", "0")


@pytest.fixture
def monkeypatch(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """pytest's, except that patching an attribute of a spyre_mlir module or class turns the
    compile cache off for the test: a compile of the patched compiler must not load an entry
    of the unpatched one (nor store one under its key). Patching the cache itself
    (frontend.compile_cache) is how its own tests work: the cache stays on."""
    setattr_ = monkeypatch.setattr

    def setattr(target: object, *args: object, **kwargs: object) -> None:
        owner = target if isinstance(target, str) else getattr(target, "__module__", None)
        owner = owner if isinstance(owner, str) else getattr(target, "__name__", "")
        if isinstance(owner, str) and owner.startswith("spyre_mlir") and owner != "spyre_mlir.frontend.compile_cache":
            monkeypatch.setenv("SPYRE_CACHE", "0")
        setattr_(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr = setattr  # type: ignore[method-assign]
    return monkeypatch
