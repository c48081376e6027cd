"""vLLM's offline `LLM` on the spyre platform (spyre_mlir/vllm): greedy tokens as transformers'
eager ones, the linears on the device model, a bounded set of compiles for any prompt lengths
(the graph pieces run padded to the length buckets, all compiled at start-up), and each step's
and each request's simulated device time in the log."""

from __future__ import annotations

import contextlib
import logging
import os

import pytest
import torch
import transformers

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine in this process: STATS is ours

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.vllm.clock import RequestTime, StepTime


class Records(logging.Handler):
    """The spyre_step and spyre_request records of vLLM's "vllm.spyre" logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.steps: list[StepTime] = []
        self.requests: list[RequestTime] = []

    def emit(self, record: logging.LogRecord) -> None:
        if hasattr(record, "spyre_step"):
            self.steps.append(record.spyre_step)
        if hasattr(record, "spyre_request"):
            self.requests.append(record.spyre_request)


@contextlib.contextmanager
def records():
    """Collects the records; entered after vLLM configured its loggers (which clears the handlers
    of their children)."""
    logger = logging.getLogger("vllm.spyre")
    handler, level = Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_llm_generates_eagers_tokens_with_the_linears_on_the_device(llama_dir):
    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    import spyre_mlir.vllm.platform as platform

    llm = LLM(model=str(llama_dir), max_model_len=64, max_num_seqs=4)
    from vllm.platforms import current_platform

    assert type(current_platform) is platform.SpyrePlatform
    assert llm.llm_engine.vllm_config.model_config.dtype == torch.float32  # dtype auto: the checkpoint's
    # the KV cache holds max_num_seqs requests of max_model_len and vLLM's null block: 4 x 1 + 1
    # blocks of 128 tokens, not the quarter of the host memory it may have
    assert llm.llm_engine.vllm_config.cache_config.num_gpu_blocks == 5
    # start-up ran every bucket up to the step's largest (max_num_batched_tokens): serving compiles nothing
    startup = STATS.compiles
    assert startup > 0
    gen = torch.Generator().manual_seed(1)
    params = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True, detokenize=False)
    eager = transformers.LlamaForCausalLM.from_pretrained(llama_dir).eval()
    tokens = 0
    batches = ((5, 9, 13), (6, 11, 3, 7))
    with records() as got:
        for lengths in batches:
            tokens += sum(lengths) + 7 * len(lengths)  # each prompt, then 7 decode steps
            prompts = [torch.randint(3, 256, (n,), generator=gen).tolist() for n in lengths]
            outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params)
            for p, o in zip(prompts, outs):
                with torch.no_grad():
                    want = eager.generate(torch.tensor([p]), max_new_tokens=8, do_sample=False)[0, len(p) :]
                assert list(o.outputs[0].token_ids) == want.tolist(), (p, o.outputs[0].token_ids, want)
    assert STATS.compiles == startup, (startup, STATS.compiles)  # new prompt lengths, new batch sizes: no compile
    steps = got.steps
    assert sum(s.tokens for s in steps) == tokens
    assert all(s.compiles == 0 and s.device_s > 0 for s in steps)
    # the device did every token's linears: q, k, v, o and the MLP's three, in both layers
    per_token = 2 * (256 * 256 + 2 * 256 * 128 + 256 * 256 + 3 * 256 * 512)
    assert sum(s.macs for s in steps) >= tokens * per_token, (sum(s.macs for s in steps), tokens * per_token)
    # vLLM tells the worker a request finished at its next step: the first batch's, here
    first = got.requests
    assert sorted(r.tokens for r in first) == sorted(n + 7 for n in batches[0])
    assert all(r.steps == 8 for r in first)  # the prompt's step, then one per decoded token
    # a request's time is its steps' time: the first batch ran alone, in the first 8 steps
    assert sum(r.device_s for r in first) == pytest.approx(sum(s.device_s * s.requests for s in steps[:8]))
