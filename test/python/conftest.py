"""Set-up for every test:

- the compile cache on disk is off (SPYRE_CACHE=0): each test compiles what it checks, and a
  run neither reads nor fills the user's cache (test_compile_cache.py turns it on in its own
  processes, in a temporary directory);
- every module of spyre_mlir is loaded before any test runs, so a property test draws the
  same examples under `-k`, `make quick` and `make test` alike (spyre_mlir.testing.hypothesis
  says why).
"""

import os

from spyre_mlir.testing.hypothesis import load_every_module

os.environ["SPYRE_CACHE"] = "0"
load_every_module()
