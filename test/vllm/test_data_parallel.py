"""`vllm serve --data-parallel-size 2` on the spyre platform (`python -m spyre_mlir.vllm serve`):
two engines, each with its own worker and simulated card, behind vLLM's internal load balancer.
Concurrent completions answer with transformers' eager greedy tokens; both engines take requests,
and /metrics has both cards' step time (`card` = data parallel rank x tensor parallel size +
tensor parallel rank: here the engine's index) beside vLLM's per-engine scheduler metrics."""

from __future__ import annotations

import asyncio
import re

import openai
import pytest
import transformers
from conftest import llama_greedy
from test_serve import ARGS, NEW_TOKENS, PROMPTS, _complete_all, _metrics, _startup

from spyre_mlir.vllm.server import Server

ENGINES = ("0", "1")
WORKER_STARTUP = re.compile(r"\(Worker(?:_\w+)? pid=(\d+)\).*spyre start-up:")


@pytest.fixture(scope="module")
def eager(llama_dir):
    tok, greedy = transformers.AutoTokenizer.from_pretrained(llama_dir), llama_greedy(llama_dir)
    return lambda prompt: greedy(tok(prompt).input_ids, NEW_TOKENS)


LABEL = re.compile(r'(\w+)="([^"]*)"')


def _sum(metrics: dict[str, float], name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels` (their other labels any)."""
    total = 0.0
    for key, value in metrics.items():
        sample, _, rest = key.partition("{")
        if sample == name and labels.items() <= dict(LABEL.findall(rest)).items():
            total += value
    return total


def _delta(after: dict[str, float], before: dict[str, float], name: str, **labels: str) -> float:
    return _sum(after, name, **labels) - _sum(before, name, **labels)


@pytest.mark.full
def test_serve_with_data_parallel_2(llama_dir, eager, tmp_path):
    model = str(llama_dir)
    env = {"SPYRE_CACHE": "1", "SPYRE_CACHE_DIR": str(tmp_path / "cache")}
    args = [*ARGS, "--data-parallel-size", "2"]
    with Server(llama_dir, args, tmp_path / "serve.log", env=env, start_timeout=480) as server:
        before = _metrics(server.url)
        client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="none", timeout=120, max_retries=0)
        completions = asyncio.run(_complete_all(client, model))
        after = _metrics(server.url)
    for prompt, c in zip(PROMPTS, completions):
        assert c.choices[0].token_ids == eager(prompt), prompt
    assert server.process is not None and server.process.returncode == 0, server.log()[-3000:]
    assert not server.left_behind  # both engines and their workers exited with the server

    # two workers, each compiled (or loaded) every bucket of its own card at start-up
    log = server.log()
    assert len(set(WORKER_STARTUP.findall(log))) == 2, WORKER_STARTUP.findall(log)
    for line in (m.group(0) for m in re.finditer(r".*spyre start-up:.*", log)):
        compiled, loaded, graphs, *_ = _startup(line)
        assert compiled + loaded == graphs, line

    # vLLM's scheduler metrics, one series per engine, beside the cards'
    for e in ENGINES:
        for name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"):
            assert f'{name}{{engine="{e}",model_name="{model}"}}' in after, (name, e, sorted(after))
    # the load balancer gave each engine some of the 8 requests, and every token is one engine's
    served = {e: _delta(after, before, "vllm:request_success_total", engine=e) for e in ENGINES}
    generated = {e: _delta(after, before, "vllm:generation_tokens_total", engine=e) for e in ENGINES}
    assert sum(served.values()) == len(PROMPTS) and all(n >= 1 for n in served.values()), served
    assert sum(generated.values()) == sum(c.usage.completion_tokens for c in completions), generated

    # each engine's card (card = its data parallel rank: one card per engine) ran its requests'
    # steps: at least as many as its longest request's tokens, so as many as their mean
    for e in ENGINES:
        steps = _delta(after, before, "spyre:step_device_seconds_count", card=e)
        seconds = _delta(after, before, "spyre:device_seconds_total", card=e)
        assert steps >= generated[e] / served[e] and seconds > 0, (e, steps, seconds, served, generated)
        total = _sum(after, "spyre:device_seconds_total", card=e)
        assert _sum(after, "spyre:step_device_seconds_sum", card=e) == pytest.approx(total)
        allocated = after[f'spyre:kv_cache_ddr_bytes{{card="{e}",kind="allocated"}}']
        # 2 layers x keys and values x (vLLM's 9 blocks + 1 spare) x 128 slots x 128 values in DL16
        assert allocated == 2 * 2 * 10 * 128 * 128 * 2, after
        assert 0 < after[f'spyre:kv_cache_ddr_bytes{{card="{e}",kind="in_use"}}'] <= allocated
    assert not any(k.startswith("spyre:card_link") for k in after)  # engines of one card: no collective
    assert not any(k.startswith("spyre:") and 'card="2"' in k for k in after)
