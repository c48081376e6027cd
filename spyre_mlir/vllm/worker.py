"""vLLM's CPU worker with the device model's clock and the card's memory (docs/vllm.md).

`SpyreWorker` is vLLM's `CPUWorker` with three additions, each on a worker method vLLM's
engine calls:

- `execute_model` / `sample_tokens`: one engine step. `DeviceClock` takes the kernels the
  device model ran in the step off its profile and logs the step's simulated time (DEBUG) and,
  once vLLM reports a request finished, the request's total over the steps it was in (INFO);
  the step's time and the KV cache's DDR bytes go to the Prometheus metrics (metrics.py);
- `determine_available_memory`: the KV cache sized for the card and the host
  (`kv_cache_bytes`), or a `CardMemoryError` naming what does not fit;
- `init_device`: the model runner is `SpyreModelRunner` (runner.py): each step one program
  on the card;
- `compile_or_warm_up_model`: every bucket a step can take (buckets.py) is compiled and run
  once, so a server compiles at start-up and not while serving; the count is logged.

The worker runs where the model does (with vLLM's multiprocessing, in the worker process under
the engine core): the log lines come from there, on vLLM's logger (logger name "vllm.spyre").
"""

from __future__ import annotations

import dataclasses
from typing import Any
from unittest import mock

import psutil
from vllm.v1.core.kv_cache_utils import max_memory_usage_bytes
from vllm.v1.worker import cpu_worker
from vllm.v1.worker.cpu_worker import CPUWorker

from spyre_mlir.frontend.backend import STATS, get_device_model
from spyre_mlir.frontend.compile_cache import cache_where
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.vllm import metrics
from spyre_mlir.vllm.clock import DeviceClock, logger
from spyre_mlir.vllm.memory import AUTO, DL16_BYTES, CardMemoryError, kv_cache_bytes, size
from spyre_mlir.vllm.platform import on_device
from spyre_mlir.vllm.runner import SpyreModelRunner


class SpyreWorker(CPUWorker):
    """vLLM's CPU worker with the device model's clock, the card's memory and the buckets
    warmed up at start-up (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clock = DeviceClock(get_device_model().profile)

    def _compiled(self) -> bool:
        """Whether the model's steps run on the card (not with enforce_eager or LoRA: the platform
        then leaves vLLM's CPU path as it is)."""
        return on_device(self.vllm_config)

    def init_device(self) -> None:
        if not self._compiled():
            return super().init_device()
        with mock.patch.object(cpu_worker, "CPUModelRunner", SpyreModelRunner):
            return super().init_device()

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
        """Every bucket a step can run at (buckets.py), compiled and run once."""
        times = super().compile_or_warm_up_model()
        if not self._compiled():
            return times
        runner = self.model_runner
        assert isinstance(runner, SpyreModelRunner)
        buckets = runner.device_forward.warm_up()
        logger.info(
            "spyre start-up: %d graphs compiled, %d loaded from the compile cache (%s), for the steps at %d "
            "(tokens, pages) buckets, %d of them decode: tokens %s, pages up to %d (blocks of %d tokens)",
            STATS.compiles,
            STATS.cache_loads,
            cache_where(),
            len(buckets),
            sum(b.decode for b in buckets),
            runner.step_shapes.token_buckets,
            runner.step_shapes.max_pages(runner.step_shapes.max_tokens),
            runner.step_shapes.block_size,
        )
        return times

    def execute_model(self, scheduler_output: Any) -> Any:
        self.clock.begin(scheduler_output)
        output = super().execute_model(scheduler_output)
        if output is not None:  # no sampling to come (a step with nothing scheduled, a pooling model)
            self._step_done()
        return output

    def sample_tokens(self, grammar_output: Any) -> Any:
        output = super().sample_tokens(grammar_output)
        self._step_done()
        return output

    def _step_done(self) -> None:
        runner = self.model_runner
        on_card = isinstance(runner, SpyreModelRunner) and self._compiled()
        step = self.clock.end(runner.device_forward.last_attention if on_card else frozenset())
        if step is None:
            return
        metrics.record_step(self.card, step.device_s, step.collectives_s, step.link_bytes)
        if on_card:
            metrics.record_kv_cache(self.card, runner.kv_cache_bytes(), runner.kv_cache_bytes_in_use())

    @property
    def card(self) -> int:
        """This worker's card, numbered over the engines: data parallel index (the engine's own:
        vLLM resets a dense model's engines' data_parallel_rank to 0) x tensor parallel size +
        tensor parallel rank (its metrics' `card` label)."""
        parallel = self.vllm_config.parallel_config
        return parallel.data_parallel_index * parallel.tensor_parallel_size + self.rank % parallel.tensor_parallel_size

    def card_totals(self) -> dict[str, Any]:
        """This worker's card over the engine's life (`LLM.collective_rpc("card_totals")`): its
        number, its KV cache's bytes on the card, its steps, tokens, simulated device time,
        collectives' time and card-link bytes."""
        runner = self.model_runner
        kv = runner.kv_cache_bytes() if isinstance(runner, SpyreModelRunner) and self._compiled() else 0
        return {"card": self.card, "kv_cache_bytes": kv, **dataclasses.asdict(self.clock.totals)}

    def take_steps(self) -> list[dict[str, Any]]:
        """The steps this worker ran since the last call, oldest first, each a `StepTime` as a
        dict with its `device_s` (`LLM.collective_rpc("take_steps")`: each card's own records,
        from processes other than the engine's)."""
        steps = [{**dataclasses.asdict(s), "device_s": s.device_s} for s in self.clock.kept]
        self.clock.kept.clear()
        return steps
