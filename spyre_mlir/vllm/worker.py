"""vLLM's CPU worker with the device model's clock and the card's memory (docs/vllm.md).

`SpyreWorker` is vLLM's `CPUWorker` with three additions, each on a worker method vLLM's
engine calls:

- `execute_model` / `sample_tokens`: one engine step. `DeviceClock` takes the kernels the
  device model ran in the step off its profile and logs the step's simulated time (DEBUG) and,
  once vLLM reports a request finished, the request's total over the steps it was in (INFO);
- `determine_available_memory`: the KV cache sized for the card and the host
  (`kv_cache_bytes`), or a `CardMemoryError` naming what does not fit;
- `compile_or_warm_up_model`: every length bucket a step can take is run once, so a server
  compiles at start-up and not while serving; the count is logged.

The worker runs where the model does (with vLLM's multiprocessing, in the worker process under
the engine core): the log lines come from there, on vLLM's logger (logger name "vllm.spyre").
"""

from __future__ import annotations

from typing import Any

import psutil
import torch
from vllm.config import CompilationMode
from vllm.v1.core.kv_cache_utils import max_memory_usage_bytes
from vllm.v1.worker.cpu_worker import CPUWorker

from spyre_mlir.frontend.backend import STATS, get_device_model
from spyre_mlir.frontend.buckets import BUCKETS
from spyre_mlir.frontend.compile_cache import cache_where
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.vllm.clock import DeviceClock, logger
from spyre_mlir.vllm.memory import AUTO, DL16_BYTES, CardMemoryError, kv_cache_bytes, size


def bucket_sizes(largest: int) -> list[int]:
    """Lengths that make a dynamic length of 1 to `largest` run at each of its buckets once
    (frontend/buckets.py): the buckets below `largest`, and `largest` (it runs at its own)."""
    return [b for b in BUCKETS if b < largest] + [largest]


class SpyreWorker(CPUWorker):
    """vLLM's CPU worker with the device model's clock, the card's memory and the buckets
    warmed up at start-up (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clock = DeviceClock(get_device_model().profile)

    def _compiled(self) -> bool:
        """Whether the model is compiled for the device (not with enforce_eager, LoRA, ...: the
        platform then leaves vLLM's CPU path as it is)."""
        return bool(self.compilation_config.mode != CompilationMode.NONE)

    def load_model(self, *args: Any, **kwargs: Any) -> None:
        """vLLM compiles the model's forward (the pieces); its LM head, `compute_logits`, runs
        after it, outside: compiled here too, for the sampled rows (dynamic: length buckets)."""
        super().load_model(*args, **kwargs)
        if not self._compiled():
            return
        model = self.model_runner.get_model()
        compiled = torch.compile(model.compute_logits, backend="spyre")

        def compute_logits(hidden_states: torch.Tensor) -> Any:
            torch._dynamo.maybe_mark_dynamic(hidden_states, 0)
            return compiled(hidden_states)

        model.compute_logits = compute_logits

    def determine_available_memory(self) -> int:
        runner = self.model_runner
        weight_bytes = DL16_BYTES * sum(p.numel() for p in runner.get_model().parameters())
        specs = list(runner.get_kv_cache_spec().values())
        one_request = max_memory_usage_bytes(self.vllm_config, specs)
        block = sum(spec.page_size_bytes for spec in specs)
        card = DeviceConfig()
        cache = self.cache_config
        extra = self.vllm_config.additional_config
        if isinstance(extra, dict) and extra.get("spyre_kv_cache") == AUTO:
            host_free = psutil.virtual_memory().available
            cache.kv_cache_memory_bytes = kv_cache_bytes(
                weight_bytes=weight_bytes,
                one_request_bytes=one_request,
                max_model_len=self.model_config.max_model_len,
                max_num_seqs=self.scheduler_config.max_num_seqs,
                block_bytes=block,
                host_free_bytes=host_free,
                card=card,
            )
            logger.info(
                "spyre KV cache: %s, for %d requests of max_model_len=%d tokens (%s each), at most the card's DDR "
                "left after %s of weights in DL16 (%s) and a quarter of the host memory free (%s)",
                size(cache.kv_cache_memory_bytes),
                self.scheduler_config.max_num_seqs,
                self.model_config.max_model_len,
                size(one_request),
                size(weight_bytes),
                size(card.ddr_usable_bytes - weight_bytes),
                size(host_free),
            )
        elif (
            cache.kv_cache_memory_bytes is not None
            and weight_bytes + cache.kv_cache_memory_bytes > card.ddr_usable_bytes
        ):
            raise CardMemoryError(
                f"the KV cache asked for ({size(cache.kv_cache_memory_bytes)}, --kv-cache-memory-bytes) and the "
                f"weights ({size(weight_bytes)} in DL16) do not fit the card's usable DDR ({size(card.ddr_usable_bytes)})"
            )
        return super().determine_available_memory()

    def compile_or_warm_up_model(self) -> Any:
        """vLLM's warm-up ran the forward at the largest step (max_num_batched_tokens tokens);
        here every smaller bucket, and the LM head at 1 row (its own graph: Dynamo specialises
        size 1) and at each bucket up to max_num_seqs rows."""
        times = super().compile_or_warm_up_model()
        if not self._compiled():
            return times
        tokens = bucket_sizes(self.scheduler_config.max_num_batched_tokens)
        rows = [1, *bucket_sizes(self.scheduler_config.max_num_seqs)] if self.scheduler_config.max_num_seqs > 1 else [1]
        for n in tokens[:-1]:
            self.model_runner._dummy_run(n)
        hidden = self.model_config.get_hidden_size()
        with torch.inference_mode():
            for n in rows:
                self.model_runner.get_model().compute_logits(torch.zeros(n, hidden, dtype=self.model_config.dtype))
        logger.info(
            "spyre start-up: %d graphs compiled, %d loaded from the compile cache (%s), for the forward at %s "
            "tokens and the LM head at %s rows (each length bucket once)",
            STATS.compiles,
            STATS.cache_loads,
            cache_where(),
            tokens,
            rows,
        )
        return times

    def execute_model(self, scheduler_output: Any) -> Any:
        self.clock.begin(scheduler_output)
        output = super().execute_model(scheduler_output)
        if output is not None:  # no sampling to come (a step with nothing scheduled, a pooling model)
            self.clock.end()
        return output

    def sample_tokens(self, grammar_output: Any) -> Any:
        output = super().sample_tokens(grammar_output)
        self.clock.end()
        return output
