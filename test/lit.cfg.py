# lit configuration: `lit test/` from a fresh venv (make test runs it).
import os
import sys

import lit.formats

config.name = "spyre-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "python", "fixtures", "inputs"]
# the venv's console scripts (spyre-opt, spyre-run, filecheck) win even if it is not activated
config.environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + config.environment.get("PATH", "")
# the tools import the package of this checkout (a git worktree beside the one installed included)
config.environment["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%fixtures", os.path.join(os.path.dirname(__file__), "fixtures")))
config.substitutions.append(
    (
        "SPYRE_ROUNDTRIP",
        "spyre-opt %s --print-op-generic --split-input-file | spyre-opt --split-input-file | filecheck %s",
    )
)
config.substitutions.append(
    (
        "SPYRE_GENERIC_ROUNDTRIP",
        "spyre-opt %s --print-op-generic --split-input-file | filecheck %s --check-prefix=CHECK-GENERIC",
    )
)
