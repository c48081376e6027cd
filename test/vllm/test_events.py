"""vLLM's KV events on the spyre platform, as llm-d's KV-cache indexer reads them: the engine
publishes each block its prefix cache stores (`BlockStored`) and each it evicts (`BlockRemoved`)
over ZMQ (`--kv-events-config`, publisher "zmq"), and a subscriber that recomputes the block
hashes from the token ids (sha256 over CBOR, `--prefix-caching-hash-algo sha256_cbor`, chained
from the previous block's) finds the prefix cache's: a prompt sharing the blocks gets them as
prefix-cache hits, and is published nothing new for them; under pressure a small KV cache
evicts them and says so, and a prompt that had them hits nothing."""

from __future__ import annotations

import hashlib
import os

import cbor2
import msgspec
import pytest
import torch
import zmq

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine (its scheduler) in this process

pytestmark = pytest.mark.slow  # the module's LLM compiles its 15 step buckets at start-up

MAX_MODEL_LEN, STEP_TOKENS = 384, 64
BLOCK = 128
"""The CPU platform's block size, which the spyre platform keeps."""
BLOCKS = MAX_MODEL_LEN // BLOCK
"""The KV cache's blocks besides vLLM's null block: the worker sizes it for max_num_seqs (1)
requests of max_model_len, so one long prompt needs all of them."""
TOPIC = "kv@127.0.0.1@tiny-llama"
"""llm-d's form of a pod's topic: kv@<pod address>@<model>."""


@pytest.fixture(scope="module")
def subscriber():
    """A ZMQ SUB socket bound on a free loopback port, as llm-d's indexer binds one: the engine's
    publisher connects to it (an endpoint without a wildcard is connected to, not bound)."""
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt_string(zmq.SUBSCRIBE, TOPIC)
    sub.bind("tcp://127.0.0.1:0")
    try:
        yield sub
    finally:
        sub.close(linger=0)
        ctx.term()


@pytest.fixture(scope="module")
def llm(llama_dir, subscriber):
    from vllm import LLM
    from vllm.config import KVEventsConfig

    endpoint = subscriber.getsockopt_string(zmq.LAST_ENDPOINT)
    monitor = subscriber.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    llm = LLM(
        model=str(llama_dir),
        max_model_len=MAX_MODEL_LEN,
        max_num_seqs=1,
        max_num_batched_tokens=STEP_TOKENS,
        prefix_caching_hash_algo="sha256_cbor",
        kv_events_config=KVEventsConfig(enable_kv_cache_events=True, publisher="zmq", endpoint=endpoint, topic=TOPIC),
        disable_log_stats=False,
    )
    llm.events_seen = 0  # type: ignore[attr-defined]  # the batches received so far (their sequence numbers)
    # the publisher connected; libzmq attaches a connecting peer to a bound SUB socket, and sends
    # it the subscription, when the SUB socket next polls or reads (zeromq/libzmq#2267): until
    # then the publisher drops every batch
    assert monitor.poll(30_000), "the engine's publisher did not connect"
    subscriber.disable_monitor()
    monitor.close(linger=0)
    assert not subscriber.poll(500)  # nothing published yet: no step has run
    yield llm
    llm.llm_engine.engine_core.engine_core.scheduler.kv_event_publisher.shutdown()


def _prompts(lengths, seed):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randint(3, 256, (n,), generator=gen).tolist() for n in lengths]


def _generate(llm, prompt: list[int], n: int = 3) -> list[int]:
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    params = SamplingParams(temperature=0, max_tokens=n, ignore_eos=True, detokenize=False)
    (out,) = llm.generate([TokensPrompt(prompt_token_ids=prompt)], params, use_tqdm=False)
    return list(out.outputs[0].token_ids)


def _metric(llm, name: str) -> float:
    return sum(m.value for m in llm.get_metrics() if m.name == name)


def _received(llm, sub, quiet_ms: int = 1500) -> list:
    """The events of the batches published since the last call, in order: the subscriber reads
    until nothing comes for `quiet_ms` (the engine queued the events of a step before its
    outputs; the publisher's thread sends them). Each message is (topic, 8-byte big-endian
    sequence number, msgpack `KVEventBatch`), the numbers consecutive from 0: none lost."""
    from vllm.distributed.kv_events import KVEventBatch

    decoder = msgspec.msgpack.Decoder(type=KVEventBatch)
    events = []
    while sub.poll(quiet_ms):
        topic, seq, payload = sub.recv_multipart()
        assert topic == TOPIC.encode()
        assert int.from_bytes(seq, "big") == llm.events_seen, (int.from_bytes(seq, "big"), llm.events_seen)
        llm.events_seen += 1
        batch = decoder.decode(payload)
        assert batch.data_parallel_rank == 0 and batch.ts > 0
        events.extend(batch.events)
    return events


def _hashes(tokens: list[int]) -> list[bytes]:
    """The prefix cache's hash of each full block of `tokens`, recomputed as a subscriber that
    knows the token ids does: SHA-256 of the canonical CBOR of (parent hash, the block's token
    ids, extra keys: none), the first block's parent the hash of the seed (PYTHONHASHSEED, or
    vLLM's default)."""

    def sha256_cbor(value) -> bytes:
        return hashlib.sha256(cbor2.dumps(value, canonical=True)).digest()

    parent = sha256_cbor(os.environ.get("PYTHONHASHSEED", "vllm-none-hash"))
    out = []
    for i in range(len(tokens) // BLOCK):
        parent = sha256_cbor((parent, tuple(tokens[i * BLOCK : (i + 1) * BLOCK]), None))
        out.append(parent)
    return out


def _published(h: bytes) -> int:
    """A block hash as the events carry it (VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES, the default):
    the digest's last 64 bits."""
    return int.from_bytes(h, "big") & (2**64 - 1)


def _stored(events) -> list:
    from vllm.distributed.kv_events import BlockStored

    return [e for e in events if isinstance(e, BlockStored)]


def _removed(events) -> list[int]:
    from vllm.distributed.kv_events import BlockRemoved

    return [h for e in events if isinstance(e, BlockRemoved) for h in e.block_hashes]


def _cached(llm, h: bytes) -> bool:
    """Whether the scheduler's prefix cache holds a block of hash `h` (the engine in this process)."""
    pool = llm.llm_engine.engine_core.engine_core.scheduler.kv_cache_manager.block_pool
    return pool.get_cached_block(h, [0]) is not None


def _fresh(llm, sub) -> None:
    """An empty prefix cache, and the subscriber told so (`AllBlocksCleared`, published with the
    next step's events: the first of those `_received` returns next); any batch a test before
    left unread is read first."""
    _received(llm, sub, quiet_ms=200)
    assert llm.reset_prefix_cache()


def _cleared_first(events) -> list:
    from vllm.distributed.kv_events import AllBlocksCleared

    assert events and isinstance(events[0], AllBlocksCleared), events[:1]
    assert not any(isinstance(e, AllBlocksCleared) for e in events[1:])
    return events[1:]


def test_stored_blocks_carry_the_prefix_caches_hashes_and_are_hit(llm, subscriber):
    assert llm.llm_engine.vllm_config.cache_config.num_gpu_blocks == BLOCKS + 1
    _fresh(llm, subscriber)
    (a,) = _prompts([300], seed=11)  # 2 full blocks and 44 tokens
    hits = _metric(llm, "vllm:prefix_cache_hits")
    _generate(llm, a)
    events = _cleared_first(_received(llm, subscriber))
    h1, h2 = _hashes(a)
    # prefilled in steps of 64 tokens: a block is stored in the step that fills it, one event each,
    # chained by the parent hash, with its token ids and size; the 44 tokens (and the 2 decoded
    # ones computed) of the last block fill none
    stored = _stored(events)
    assert [e.block_hashes for e in stored] == [[_published(h1)], [_published(h2)]]
    assert [e.parent_block_hash for e in stored] == [None, _published(h1)]
    assert [e.token_ids for e in stored] == [a[:BLOCK], a[BLOCK : 2 * BLOCK]]
    assert all(e.block_size == BLOCK and e.group_idx == 0 and e.lora_name is None for e in stored)
    assert not _removed(events)  # a cache of 3 blocks, empty: nothing evicted
    assert _cached(llm, h1) and _cached(llm, h2)  # the scheduler's prefix cache: the same hashes
    assert _metric(llm, "vllm:prefix_cache_hits") == hits  # nothing to hit in an empty cache

    # the same prompt again: its 2 stored blocks are hit (256 tokens; the 44 others computed),
    # and nothing is stored for them again
    hits = _metric(llm, "vllm:prefix_cache_hits")
    _generate(llm, a)
    assert _metric(llm, "vllm:prefix_cache_hits") - hits == 2 * BLOCK
    events = _received(llm, subscriber)
    assert not _stored(events) and not _removed(events), events

    # a prompt of the same 2 blocks and another tail: the same 2 hit, nothing stored
    (tail,) = _prompts([90], seed=12)
    hits = _metric(llm, "vllm:prefix_cache_hits")
    _generate(llm, a[: 2 * BLOCK] + tail)
    assert _metric(llm, "vllm:prefix_cache_hits") - hits == 2 * BLOCK
    events = _received(llm, subscriber)
    assert not _stored(events) and not _removed(events), events

    # a prompt of the first block only: that one hit; its own second block stored, the child of
    # the first (the chain a subscriber follows), a hash of its own. Its 2 other blocks are the
    # cache's least recently used free ones (vLLM frees a request's blocks last one first): the
    # tail's uncached block, then the second block of `a`, whose removal is published
    (other,) = _prompts([200], seed=13)
    b = a[:BLOCK] + other
    hits = _metric(llm, "vllm:prefix_cache_hits")
    _generate(llm, b)
    assert _metric(llm, "vllm:prefix_cache_hits") - hits == BLOCK
    b1, b2 = _hashes(b)
    assert b1 == h1 and b2 != h2
    events = _received(llm, subscriber)
    stored = _stored(events)
    assert [(e.block_hashes, e.parent_block_hash) for e in stored] == [([_published(b2)], _published(h1))]
    assert [e.token_ids for e in stored] == [b[BLOCK : 2 * BLOCK]]
    assert _removed(events) == [_published(h2)]
    assert _cached(llm, h1) and _cached(llm, b2) and not _cached(llm, h2)


def test_evicted_blocks_are_published_as_removed(llm, subscriber):
    _fresh(llm, subscriber)
    (a,) = _prompts([300], seed=21)
    _generate(llm, a)
    h1, h2 = _hashes(a)
    events = _cleared_first(_received(llm, subscriber))
    assert [h for e in _stored(events) for h in e.block_hashes] == [_published(h1), _published(h2)]

    # a prompt that needs every block of the cache (380 tokens and 3 decoded: 3 blocks) takes
    # the 2 cached ones: both are removed, and the subscriber is told so
    (c,) = _prompts([380], seed=22)
    hits = _metric(llm, "vllm:prefix_cache_hits")
    _generate(llm, c)
    assert _metric(llm, "vllm:prefix_cache_hits") == hits
    events = _received(llm, subscriber)
    assert sorted(_removed(events)) == sorted([_published(h1), _published(h2)]), events
    c1, c2 = _hashes(c)
    assert [h for e in _stored(events) for h in e.block_hashes] == [_published(c1), _published(c2)]
    assert not _cached(llm, h1) and not _cached(llm, h2)

    # the first prompt again: removed means gone, no hit, its blocks computed and stored anew
    # (evicting the other prompt's, which the subscriber is told too)
    hits = _metric(llm, "vllm:prefix_cache_hits")
    _generate(llm, a)
    assert _metric(llm, "vllm:prefix_cache_hits") == hits
    events = _received(llm, subscriber)
    assert [h for e in _stored(events) for h in e.block_hashes] == [_published(h1), _published(h2)]
    assert sorted(_removed(events)) == sorted([_published(c1), _published(c2)])
