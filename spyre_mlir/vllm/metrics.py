"""The card's figures as Prometheus metrics, beside vLLM's on the server's /metrics
(docs/vllm.md, "Metrics"):

    spyre:step_device_seconds      histogram: each engine step's simulated device time
                                   (its kernels and its transfers over the host link)
    spyre:device_seconds_total     counter: their sum
    spyre:kv_cache_ddr_bytes       gauge: the KV cache's bytes in the card's DDR, by `kind`:
                                   "allocated" (every layer's key and value caches, DL16) and
                                   "in_use" (the blocks of the requests of the last step)
    spyre:card_link_seconds_total  counter: simulated time of the collectives between cards
                                   (tensor parallel) and of KV transfers (connector.py)
    spyre:card_link_bytes_total    counter: their bytes over the card link

Each is labelled by `card`: the worker's card, numbered over the engines (data parallel index
x tensor parallel size + tensor parallel rank), so the cards of `--tensor-parallel-size` and
`--data-parallel-size` each have their own series.

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
            ["card"],
            buckets=STEP_SECONDS_BUCKETS,
        ),
        "total": Counter(
            "spyre:device_seconds", "Simulated device time of the engine's steps on the card, summed.", ["card"]
        ),
        "kv": Gauge(
            "spyre:kv_cache_ddr_bytes",
            "The KV cache's bytes in the card's DDR: allocated, and in use by the last step's requests.",
            ["card", "kind"],
            multiprocess_mode="mostrecent",
        ),
        "link_s": Counter(
            "spyre:card_link_seconds",
            "Simulated time of the collectives and KV transfers between cards, summed.",
            ["card"],
        ),
        "link_bytes": Counter(
            "spyre:card_link_bytes", "Bytes of the collectives and KV transfers between cards, summed.", ["card"]
        ),
    }


def record_step(card: int, device_s: float, link_s: float, link_bytes: int) -> None:
    m = _metrics()
    m["step"].labels(card=str(card)).observe(device_s)
    m["total"].labels(card=str(card)).inc(device_s)
    if link_bytes:
        m["link_s"].labels(card=str(card)).inc(link_s)
        m["link_bytes"].labels(card=str(card)).inc(link_bytes)


def record_kv_cache(card: int, allocated: int, in_use: int) -> None:
    m = _metrics()
    m["kv"].labels(card=str(card), kind="allocated").set(allocated)
    m["kv"].labels(card=str(card), kind="in_use").set(in_use)
