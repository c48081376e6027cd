"""Prefill/decode disaggregation on the spyre platform (spyre_mlir/vllm/connector.py,
disagg_proxy.py): two `vllm serve` instances of the tiny Llama, a prefill one (kv_producer) and
a decode one (kv_consumer), each its own card, sharing a transfer directory, behind the proxy.
Completions through the proxy, concurrent and streamed, give transformers' eager greedy tokens
(and a single instance's logprobs); the decode instance never prefills a prompt (each of its
steps computes one token per request); each transfer's bytes and card-link time are in both
instances' step records, logs and /metrics; a transfer the prefill instance did not finish is
the client's error, and so is a request whose prefill instance is killed, within a timeout."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest
import transformers
from conftest import llama_greedy

from spyre_mlir.distributed.link import collective_seconds
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.vllm.connector import MANIFEST, transfer_config
from spyre_mlir.vllm.server import Server, free_port

pytestmark = pytest.mark.full

BLOCK = 64
"""Pages of 64 token slots: a prompt of up to 127 tokens spans two."""
ARGS = ["--max-model-len", "128", "--max-num-seqs", "4", "--max-num-batched-tokens", "64", "--block-size", str(BLOCK)]
NEW_TOKENS = 12
PROMPTS = [  # greedy tokens whose top two logits are apart in eager float32 (at least 0.02): DL16's
    # rounding does not swap them
    "x = y + 1",
    "0123456789" * 6 + "abc",  # 64 tokens with the BOS: the decode instance computes page one's last slot
    " prefill card computes the prompt and the decode card takes its ",  # 65: page one whole, then slot one
    "The prefill card computes the prompt and the decode card takes its pages over the link, page by page.",
]
STEP = re.compile(
    r"spyre step \d+: (\d+) requests, (\d+) tokens: [\d.]+ ms .*collectives ([\d.]+) ms of them; host link ([\d.]+) ms"
)
SENT = re.compile(r"spyre KV transfer (\S+): sent (\d+) tokens of request \S+, (\d+) bytes, ([\d.]+) us")
RECEIVED = re.compile(r"spyre KV transfer (\S+): received (\d+) tokens of request (\S+), (\d+) bytes, ([\d.]+) us")
REQUEST = re.compile(r"spyre request (\S+): [\d.]+ ms simulated device time over (\d+) steps, (\d+) tokens")
START_S = 420.0
"""Both servers start at once on the machine's cores: each compiles its step buckets."""


@pytest.fixture(scope="module")
def eager(llama_dir):
    greedy = llama_greedy(llama_dir)
    return transformers.AutoTokenizer.from_pretrained(llama_dir), lambda ids: greedy(ids, NEW_TOKENS)


def _row_bytes(llama_dir: Path) -> int:
    """A token's keys and values over every layer, in the card's 16-bit values."""
    c = json.loads((llama_dir / "config.json").read_text())
    return c["num_key_value_heads"] * c["head_dim"] * 2 * c["num_hidden_layers"] * 2


class Proxy:
    """disagg_proxy.py in a subprocess on a free loopback port, until the block ends."""

    def __init__(self, prefill: str, decode: str, log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        command = [sys.executable, "-m", "spyre_mlir.vllm.disagg_proxy", "--prefill", prefill, "--decode", decode]
        command += ["--port", self.url.rsplit(":", 1)[1], "--timeout", "120"]
        self._log = log.open("wb")
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            time.sleep(0.5)
        self.stop()
        raise AssertionError(f"the proxy did not answer /health within 60 s:\n{log.read_text()}")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self._log.close()


@pytest.fixture(scope="module")
def instances(llama_dir, tmp_path_factory):
    """(prefill, decode, proxy, transfer directory), started together."""
    where = tmp_path_factory.mktemp("disagg")
    transfers = where / "kv"
    env = {"VLLM_LOGGING_LEVEL": "DEBUG"}

    def server(role: str) -> Server:
        config = json.dumps(transfer_config(role, transfers))
        return Server(
            llama_dir, [*ARGS, "--kv-transfer-config", config], where / f"{role}.log", env=env, start_timeout=START_S
        )

    prefill, decode = server("kv_producer"), server("kv_consumer")
    with contextlib.ExitStack() as stack:
        stack.callback(decode.stop)
        stack.callback(prefill.stop)
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for f in [pool.submit(prefill.start), pool.submit(decode.start)]:
                f.result()
        print(f"both instances answered /health after {time.monotonic() - start:.0f} s")
        proxy = Proxy(prefill.url, decode.url, where / "proxy.log")
        stack.callback(proxy.stop)
        yield prefill, decode, proxy, transfers


def _metrics(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return {
        name: float(value)
        for line in text.splitlines()
        if line and not line.startswith("#")
        for name, value in [line.rsplit(" ", 1)]
    }


def _complete(url: str, model: str, prompt: str, **extra) -> openai.types.Completion:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", timeout=120, max_retries=0)
    return client.completions.create(
        model=model, prompt=prompt, max_tokens=NEW_TOKENS, temperature=0, extra_body={"return_token_ids": True}, **extra
    )


async def _complete_all(url: str, model: str) -> list:
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="none", timeout=120, max_retries=0)
    return await asyncio.gather(
        *(
            client.completions.create(
                model=model,
                prompt=p,
                max_tokens=NEW_TOKENS,
                temperature=0,
                logprobs=0,
                extra_body={"return_token_ids": True},
            )
            for p in PROMPTS
        )
    )


def test_disaggregated_completions_as_eager(llama_dir, eager, instances):
    tok, generate = eager
    prefill, decode, proxy, transfers = instances
    model = str(llama_dir)
    card = '{card="0"}'
    before = {s.url: _metrics(s.url) for s in (prefill, decode)}
    # concurrent completions through the proxy: eager's tokens
    completions = asyncio.run(_complete_all(proxy.url, model))
    ids = [tok(p).input_ids for p in PROMPTS]
    for prompt, prompt_ids, c in zip(PROMPTS, ids, completions):
        assert c.choices[0].token_ids == generate(prompt_ids), prompt
        assert c.usage.prompt_tokens == len(prompt_ids)
    # and a single instance's logprobs (the prefill instance serving a request of its own): the
    # decode card computed from the prompt's keys and values as the prefill card left them
    for prompt, c in zip(PROMPTS, completions):
        alone = _complete(prefill.url, model, prompt, logprobs=0).choices[0]
        assert alone.token_ids == c.choices[0].token_ids
        assert c.choices[0].logprobs.token_logprobs == pytest.approx(alone.logprobs.token_logprobs, abs=5e-3)
    # a streamed one, relayed as it comes
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key="none", timeout=120, max_retries=0)
    stream = client.completions.create(
        model=model, prompt=PROMPTS[-1], max_tokens=NEW_TOKENS, temperature=0, stream=True
    )
    assert "".join(chunk.choices[0].text for chunk in stream) == completions[-1].choices[0].text
    transferred = [*ids, ids[-1]]
    after = {s.url: _metrics(s.url) for s in (prefill, decode)}
    # every transfer read, then removed by the decode instance
    deadline = time.monotonic() + 10
    while any(transfers.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(transfers.iterdir()), list(transfers.iterdir())

    # each transfer: the prompt's tokens but the last, every layer's keys and values in DL16,
    # over the card link at collective_seconds("send", bytes, 2), on both cards; the decode
    # instance reads the rows its prefix cache lacks (the repeated prompt's first page it has)
    config = DeviceConfig()
    row = _row_bytes(llama_dir)
    rows = {"sent": [len(p) - 1 for p in transferred]}
    rows["received"] = [*rows["sent"][:-1], rows["sent"][-1] - BLOCK]
    found = {
        "sent": [(int(n), int(b), float(us)) for _, n, b, us in SENT.findall(prefill.log())],
        "received": [(int(n), int(b), float(us)) for _, n, _, b, us in RECEIVED.findall(decode.log())],
    }
    for s, kind in ((prefill, "sent"), (decode, "received")):
        want_bytes = sorted(n * row for n in rows[kind])
        want_s = sum(collective_seconds("send", n, 2, config) for n in want_bytes)
        assert sorted(b for _, b, _ in found[kind]) == want_bytes, found
        assert all(b == n * row for n, b, _ in found[kind])
        assert sum(us for _, _, us in found[kind]) == pytest.approx(want_s * 1e6, abs=1e-3 * len(want_bytes))
        moved, took = (
            after[s.url][f"spyre:card_link_{what}_total{card}"]
            - before[s.url].get(f"spyre:card_link_{what}_total{card}", 0)
            for what in ("bytes", "seconds")
        )
        assert moved == sum(want_bytes), (kind, moved, want_bytes)
        assert took == pytest.approx(want_s, rel=1e-9)
        print(f"{kind}: {want_bytes} bytes, {want_s * 1e6:.3f} us in all")

    # the steps: those with a transfer carry its link time, on both cards, and the decode
    # instance never prefills: each of its steps computes one token per request (the prompt's
    # last token, then one per new token), a request's total its completion tokens
    steps = {s.url: [tuple(float(x) for x in found) for found in STEP.findall(s.log())] for s in (prefill, decode)}
    for s in (prefill, decode):
        assert sum(link > 0 for _, _, link, _ in steps[s.url]) >= 1, steps[s.url]
    assert steps[decode.url] and all(t == r for r, t, _, _ in steps[decode.url]), steps[decode.url]
    # the rows reach the decode card's resident cache over the card link, not the host link: a
    # step with a transfer moves no more over the host link than one without (the whole cache
    # would, were the card's copy stale and uploaded again); the tokens above show the card
    # computed from them
    allocated = after[decode.url]['spyre:kv_cache_ddr_bytes{card="0",kind="allocated"}']
    upload_ms = allocated / config.host_link_bytes_per_s * 1e3
    plain = max(host for _, _, link, host in steps[decode.url] if link == 0)
    loads = [host for _, _, link, host in steps[decode.url] if link > 0]
    assert loads and max(loads) < plain + upload_ms / 2, (loads, plain, upload_ms)
    print(f"decode steps with a transfer: host link {loads} ms (without: {plain} ms; the cache: {allocated:.0f} bytes)")
    done = {rid: (int(n), int(t)) for rid, n, t in REQUEST.findall(decode.log())}
    for c in completions:
        n, t = next(v for rid, v in done.items() if rid.startswith(c.id + "-"))
        assert t == c.usage.completion_tokens and n == t, (c.id, n, t, c.usage)


def test_unfinished_transfer_is_an_error(llama_dir, instances):
    """A transfer without its manifest (the prefill instance stopped while writing it): the
    decode instance fails the request (kv_load_failure_policy "fail"), names the transfer, and
    keeps serving."""
    prefill, decode, _, transfers = instances
    model = str(llama_dir)
    first = httpx.post(
        f"{prefill.url}/v1/completions",
        json={"model": model, "prompt": PROMPTS[-1], "max_tokens": 1, "kv_transfer_params": {"do_remote_decode": True}},
        timeout=120,
    )
    params = first.json()["kv_transfer_params"]
    (transfers / params["spyre_transfer"] / MANIFEST).unlink()
    start = time.monotonic()
    body = {"model": model, "prompt": PROMPTS[-1], "max_tokens": NEW_TOKENS, "kv_transfer_params": params}
    answer = httpx.post(f"{decode.url}/v1/completions", json=body, timeout=60)
    assert answer.status_code == 500, answer.text
    assert time.monotonic() - start < 60
    assert f"spyre KV transfer {params['spyre_transfer']} for request" in decode.log()
    assert "not loaded" in decode.log() and "did not finish writing it" in decode.log()
    # another prompt's transfer named for this one: refused as well
    body["prompt"] = PROMPTS[0]
    assert httpx.post(f"{decode.url}/v1/completions", json=body, timeout=60).status_code == 500
    assert "the transfer is of another prompt" in decode.log()
    assert httpx.get(f"{decode.url}/health", timeout=10).status_code == 200


def test_prefill_killed_mid_request(llama_dir, eager, instances):
    """The prefill instance killed while a request is in flight: the client gets an error (or,
    had the hand-over been done, eager's tokens) within the timeout, never a hang."""
    tok, generate = eager
    prefill, decode, proxy, _ = instances
    model = str(llama_dir)
    prompt = PROMPTS[-1]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        start = time.monotonic()
        future = pool.submit(
            httpx.post,
            f"{proxy.url}/v1/completions",
            json={
                "model": model,
                "prompt": prompt,
                "max_tokens": NEW_TOKENS,
                "temperature": 0,
                "return_token_ids": True,
            },
            timeout=90,
        )
        time.sleep(0.2)
        assert prefill.process is not None
        os.killpg(prefill.process.pid, signal.SIGKILL)
        answer = future.result(timeout=100)
        took = time.monotonic() - start
    if answer.status_code == 200:
        assert answer.json()["choices"][0]["token_ids"] == generate(tok(prompt).input_ids)
    else:
        assert answer.status_code == 502 and "prefill instance" in answer.text, answer.text
    assert took < 60, took
    # later requests: an error at once, naming the prefill instance; the decode one serves on
    again = httpx.post(
        f"{proxy.url}/v1/completions", json={"model": model, "prompt": "hi", "max_tokens": 2}, timeout=30
    )
    assert again.status_code == 502 and prefill.url in again.text, again.text
    assert httpx.get(f"{decode.url}/health", timeout=10).status_code == 200
    print(f"killed mid-request: HTTP {answer.status_code} after {took:.1f} s")
