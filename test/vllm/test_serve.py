"""`vllm serve` on the spyre platform (`python -m spyre_mlir.vllm serve`, spyre_mlir/vllm/server.py):
the OpenAI server on a free loopback port answers 8 concurrent completions and a chat with
transformers' eager greedy tokens, refuses malformed requests with a 4xx and keeps serving,
logs each request's simulated device time, compiles its step buckets at start-up only (and
none on a second start with the compile cache on disk), and stops cleanly on SIGINT."""

from __future__ import annotations

import asyncio
import re

import httpx
import openai
import pytest
import transformers
from conftest import llama_greedy

from spyre_mlir.vllm.server import Server

PROMPTS = [
    "Hello, spyre!",
    "The card has 32 cores",
    "abc",
    "Serving on the device model, one token at a time.",
    "42",
    "Which way to the station?",
    "x = y + 1",
    "Dataflow accelerators stream tensors between cores",
]
NEW_TOKENS = 12
ARGS = ["--max-model-len", "128", "--max-num-seqs", "8", "--max-num-batched-tokens", "64"]  # dtype auto: float32

STARTUP = re.compile(
    r"spyre start-up: (\d+) graphs compiled, (\d+) loaded from the compile cache .* for the steps at (\d+) "
    r"\(tokens, pages\) buckets, (\d+) of them decode: tokens \[([\d, ]+)\], pages up to (\d+)"
)
REQUEST = re.compile(r"spyre request (\S+): ([\d.]+) ms simulated device time over (\d+) steps, (\d+) tokens")
STEP = re.compile(r"spyre step \d+: (\d+) requests, (\d+) tokens: ([\d.]+) ms")
SERVING_COMPILE = re.compile(r"spyre step \d+ compiled")


@pytest.fixture(scope="module")
def eager(llama_dir):
    greedy = llama_greedy(llama_dir)
    return transformers.AutoTokenizer.from_pretrained(llama_dir), lambda ids: greedy(ids, NEW_TOKENS)


def _startup(log: str) -> tuple[int, int, int, int, list[int], int]:
    found = STARTUP.findall(log)
    assert len(found) == 1, found
    compiled, loaded, buckets, decode, tokens, pages = found[0]
    return int(compiled), int(loaded), int(buckets), int(decode), [int(b) for b in tokens.split(",")], int(pages)


def _metrics(url: str) -> dict[str, float]:
    """The server's /metrics: value by sample name (with its labels, as Prometheus prints them)."""
    text = httpx.get(f"{url}/metrics", timeout=30).text
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


async def _complete_all(client: openai.AsyncOpenAI, model: str) -> list:
    return await asyncio.gather(
        *(
            client.completions.create(
                model=model, prompt=p, max_tokens=NEW_TOKENS, temperature=0, extra_body={"return_token_ids": True}
            )
            for p in PROMPTS
        )
    )


@pytest.mark.full
def test_serve_answers_concurrent_requests_as_eager(llama_dir, eager, tmp_path):
    tok, generate = eager
    model = str(llama_dir)
    env = {"SPYRE_CACHE": "1", "SPYRE_CACHE_DIR": str(tmp_path / "cache"), "VLLM_LOGGING_LEVEL": "DEBUG"}
    with Server(llama_dir, ARGS, tmp_path / "serve.log", env=env, start_timeout=240) as server:
        before = _metrics(server.url)
        client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="none", timeout=120, max_retries=0)
        completions = asyncio.run(_complete_all(client, model))
        for prompt, c in zip(PROMPTS, completions):
            choice = c.choices[0]
            want = generate(tok(prompt).input_ids)
            assert choice.token_ids == want, (prompt, choice.token_ids, want)
            assert choice.text == tok.decode(want, skip_special_tokens=True)

        messages = [{"role": "user", "content": "Which card is this?"}]
        sync = openai.OpenAI(base_url=f"{server.url}/v1", api_key="none", timeout=120, max_retries=0)
        chat = sync.chat.completions.create(
            model=model, messages=messages, max_tokens=NEW_TOKENS, temperature=0, extra_body={"return_token_ids": True}
        )
        prompt_ids = tok.apply_chat_template(messages, add_generation_prompt=True)["input_ids"]
        assert chat.prompt_token_ids == prompt_ids  # the model's own chat template, rendered by the server
        want = generate(prompt_ids)
        assert chat.choices[0].token_ids == want
        assert chat.choices[0].message.content == tok.decode(want, skip_special_tokens=True)

        # malformed requests: a 4xx naming the problem, and the server keeps serving
        url = f"{server.url}/v1/completions"
        bad_json = httpx.post(url, content=b'{"model": "x", "prompt": ', headers={"Content-Type": "application/json"})
        assert bad_json.status_code == 400, bad_json.text
        bad_type = httpx.post(url, json={"model": model, "prompt": "hi", "max_tokens": "many"})
        assert bad_type.status_code == 400 and "max_tokens" in bad_type.text, bad_type.text
        too_long = httpx.post(url, json={"model": model, "prompt": "x" * 200, "max_tokens": 4})  # a token per character
        assert too_long.status_code == 400 and "128" in too_long.text, too_long.text  # names the limit
        again = sync.completions.create(model=model, prompt=PROMPTS[0], max_tokens=NEW_TOKENS, temperature=0)
        assert again.choices[0].text == completions[0].choices[0].text
        # the card's figures on the server's /metrics (the worker's, beside vLLM's), moved by the requests
        after = _metrics(server.url)
    assert any(k.startswith("vllm:prefix_cache_hits_total") for k in after)  # vLLM's own are there too
    card = '{card="0"}'
    count, total = f"spyre:step_device_seconds_count{card}", f"spyre:device_seconds_total{card}"
    steps_served = after[count] - before.get(count, 0)
    seconds = after[total] - before.get(total, 0)
    assert steps_served >= NEW_TOKENS and seconds > 0, (before, after)
    assert after[f"spyre:step_device_seconds_sum{card}"] == pytest.approx(after[total])
    assert not any(k.startswith("spyre:card_link") for k in after)  # one card: no collective
    allocated = after['spyre:kv_cache_ddr_bytes{card="0",kind="allocated"}']
    # 2 layers x keys and values x (vLLM's 9 blocks + 1 spare) x 128 slots x 128 values in DL16
    assert allocated == 2 * 2 * 10 * 128 * 128 * 2, after
    assert 0 < after['spyre:kv_cache_ddr_bytes{card="0",kind="in_use"}'] <= allocated
    assert server.process is not None and server.process.returncode == 0, server.log()[-3000:]
    assert not server.left_behind  # the engine and its worker exited with the server

    log = server.log()
    compiled, loaded, graphs, decode, tokens, pages = _startup(log)
    assert tokens == [1, 4, 16, 32, 64]  # up to max_num_batched_tokens
    assert pages == 8  # 8 requests of one block (128 tokens)
    # decode: 1, 4 and 16 (up to max_num_seqs) requests of 1 page; the others (tokens, pages): 4 tokens
    # read up to 4 pages, 16, 32 and 64 up to 8
    assert decode == 3
    assert graphs == decode + 3 + 4 + 4 + 4
    assert (compiled, loaded) == (graphs, 0)
    assert not SERVING_COMPILE.findall(log)  # serving compiled nothing
    # continuous batching: the concurrent requests shared steps
    steps = [(int(r), int(t), float(ms)) for r, t, ms in STEP.findall(log)]
    assert max(r for r, _, _ in steps) >= 4, steps
    assert all(ms > 0 for _, _, ms in steps)
    # one line per finished request with its device time; a request is in a step per new token,
    # and in more when its prompt was prefilled in chunks (steps of 64 tokens, shared)
    done = {rid: (float(ms), int(n), int(t)) for rid, ms, n, t in REQUEST.findall(log)}
    for c in completions:
        (ms, n, t) = next(v for rid, v in done.items() if rid.startswith(c.id + "-"))
        new = c.usage.completion_tokens
        assert n >= new and t == c.usage.prompt_tokens + new - 1, (c.id, n, t, c.usage)
        assert ms > 0
    assert len(done) == len(PROMPTS) + 2  # the chat and the last completion too

    # a second start with the same compile cache: nothing compiled
    with Server(llama_dir, ARGS, tmp_path / "serve2.log", env=env, start_timeout=240) as second:
        sync = openai.OpenAI(base_url=f"{second.url}/v1", api_key="none", timeout=120, max_retries=0)
        again = sync.completions.create(model=model, prompt=PROMPTS[3], max_tokens=NEW_TOKENS, temperature=0)
        assert again.choices[0].text == completions[3].choices[0].text
    compiled, loaded, *_ = _startup(second.log())
    assert (compiled, loaded) == (0, graphs), second.log()[-3000:]
    assert not SERVING_COMPILE.findall(second.log())
