"""The card's figures as Prometheus metrics, beside vLLM's on the server's /metrics
(docs/vllm.md, "Metrics"):

    spyre:step_device_seconds      histogram: each engine step's simulated device time
                                   (its kernels and its transfers over the host link)
    spyre:device_seconds_total     counter: their sum
    spyre:kv_cache_ddr_bytes       gauge: the KV cache's bytes in the card's DDR, by `kind`:
                                   "allocated" (every layer's key and value caches, DL16) and
                                   "in_use" (the blocks of the requests of the last step)

The worker records them (worker.py); vLLM's server publishes its metrics from another process
(the API server), so `python -m spyre_mlir.vllm` runs prometheus_client in its multiprocess mode
(`PROMETHEUS_MULTIPROC_DIR`, set before any process imports it: __main__.py), in which the API
server's /metrics collects every process's values. In one process (`LLM` without
multiprocessing) they are in prometheus_client's default registry.
"""

from __future__ import annotations

import functools
from typing import Any

STEP_SECONDS_BUCKETS = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)
"""A step of a tiny model on the card is tens of microseconds; one of an 8B model tens of ms."""


@functools.cache
def _metrics() -> dict[str, Any]:
    from prometheus_client import Counter, Gauge, Histogram

    return {
        "step": Histogram(
            "spyre:step_device_seconds",
            "Simulated device time of each engine step on the card (kernels and host-link transfers).",
            buckets=STEP_SECONDS_BUCKETS,
        ),
        "total": Counter("spyre:device_seconds", "Simulated device time of the engine's steps on the card, summed."),
        "kv": Gauge(
            "spyre:kv_cache_ddr_bytes",
            "The KV cache's bytes in the card's DDR: allocated, and in use by the last step's requests.",
            ["kind"],
            multiprocess_mode="mostrecent",
        ),
    }


def record_step(device_s: float) -> None:
    m = _metrics()
    m["step"].observe(device_s)
    m["total"].inc(device_s)


def record_kv_cache(allocated: int, in_use: int) -> None:
    m = _metrics()
    m["kv"].labels(kind="allocated").set(allocated)
    m["kv"].labels(kind="in_use").set(in_use)
