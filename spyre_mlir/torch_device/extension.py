"""The device's C++ part (csrc/spyre_device.cpp), built once with torch.utils.cpp_extension
and cached.

The build goes into `$SPYRE_DEVICE_BUILD_DIR` or `~/.cache/spyre-mlir/device/<key>`, where the
key hashes the source, the torch version and the Python version: a changed source or another
torch builds anew; an unchanged one loads the built module (well under a second). Building
needs a C++ compiler (g++ or clang++, found as `$CXX` or `c++`) and ninja; without them the
first import says so. Nothing is downloaded.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

_SOURCE = Path(__file__).with_name("csrc") / "spyre_device.cpp"
_NAME = "spyre_device_C"


class DeviceBuildError(RuntimeError):
    """The C++ part of the device could not be built (no compiler, or a failed build)."""


def build_dir() -> Path:
    import torch

    key = hashlib.sha256(_SOURCE.read_bytes() + torch.__version__.encode() + sys.version.encode()).hexdigest()[:16]
    root = os.environ.get("SPYRE_DEVICE_BUILD_DIR")
    base = (
        Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "spyre-mlir" / "device"
    )
    return base / key


@functools.cache
def module() -> ModuleType:
    """The built module (building it first if this source and torch have none yet)."""
    where = build_dir()
    built = where / f"{_NAME}.so"
    if built.exists():  # this source, this torch: load it (no ninja run, no cpp_extension import)
        spec = importlib.util.spec_from_file_location(_NAME, built)
        if spec is not None and spec.loader is not None:
            try:
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                return mod
            except ImportError:  # a damaged build: built again below
                pass
    from torch.utils import cpp_extension

    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        raise DeviceBuildError(
            f"the spyre device needs a C++ compiler to build its runtime once: {cxx!r} is not on PATH "
            "(install g++ or clang++, or set CXX)"
        )
    if not cpp_extension.is_ninja_available():
        raise DeviceBuildError("the spyre device needs ninja to build its runtime once (pip install ninja)")
    where.mkdir(parents=True, exist_ok=True)
    try:
        return cpp_extension.load(
            name=_NAME,
            sources=[str(_SOURCE)],
            build_directory=str(where),
            extra_cflags=["-O2"],
            verbose=False,
        )
    except (RuntimeError, OSError) as e:
        raise DeviceBuildError(f"building the spyre device runtime in {where} failed: {e}") from None
