"""A step's bucket and its attention inputs, computed by the host (spyre_mlir/vllm/buckets.py,
attention.py's `step_metadata`): a decode step attends per request where that gathers no more
pages than attending over the step's pages, and both forms give the same attention (run here
eagerly, as the ops the step's program is traced from)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from spyre_mlir.vllm.attention import cache_shape, paged_attention, step_metadata
from spyre_mlir.vllm.buckets import Bucket, StepShapes

BLOCK = 16
SHAPES = StepShapes(max_num_batched_tokens=64, max_num_seqs=8, max_model_len=128, block_size=BLOCK, num_blocks=40)
"""8 requests of up to 128 tokens (8 pages each) in a cache of 40 blocks."""
LENS, TABLES = [30, 25, 20], [[5, 7], [9, 10], [11, 12]]
"""A decode step of 3 requests of 2 pages each."""


def test_the_buckets_bound_every_step():
    assert SHAPES.decode_token_buckets == [1, 4, 16]  # up to the first holding max_num_seqs
    assert SHAPES.decode_page_buckets == [1, 2, 4, 8]
    decode = [b for b in SHAPES.buckets if b.decode]
    assert decode == [Bucket(t, p, True) for t in (1, 4, 16) for p in (1, 2, 4, 8)]
    others = [b for b in SHAPES.buckets if not b.decode]
    # powers of 4 up to 16 rows, then of 2; a step of one token is a decode step
    assert {b.tokens for b in others} == {4, 16, 32, 64}
    assert max(b.pages for b in others) == 39  # 8 requests of 8 pages, at most the cache (less the null block)
    assert SHAPES.decode_bucket(5, 3) == Bucket(16, 4, True)
    assert SHAPES.bucket(17, 9) == Bucket(32, 16, False)
    assert SHAPES.bucket(33, 9) == Bucket(64, 16, False)
    with pytest.raises(ValueError, match="decode step of 9 requests"):
        SHAPES.decode_bucket(9, 1)
    with pytest.raises(ValueError, match="reads 9 KV-cache pages: at most 8"):
        SHAPES.decode_bucket(2, 9)


def _step(lens: list[int], query_lens: list[int], tables: list[list[int]]):
    """The metadata of a step whose requests hold `lens` tokens (this step's included), of which
    `query_lens` are this step's, their pages in `tables`."""
    table = torch.zeros(len(lens), SHAPES.pages_per_request, dtype=torch.int32)
    for r, pages in enumerate(tables):
        table[r, : len(pages)] = torch.tensor(pages)
    qsl = torch.zeros(len(lens) + 1, dtype=torch.int32)
    qsl[1:] = torch.cumsum(torch.tensor(query_lens), 0)
    slots = torch.cat(
        [
            torch.tensor([tables[r][p // BLOCK] * BLOCK + p % BLOCK for p in range(n - q, n)])
            for r, (n, q) in enumerate(zip(lens, query_lens))
        ]
    )
    return step_metadata(
        SHAPES,
        [],
        query_start_loc=qsl,
        seq_lens=torch.tensor(lens, dtype=torch.int32),
        block_table=table,
        slot_mapping=slots,
        num_reqs=len(lens),
        num_tokens=sum(query_lens),
    )


def test_a_decode_step_attends_per_request():
    md = _step(LENS, [1, 1, 1], TABLES)
    assert md.bucket == Bucket(4, 2, True)  # 3 requests of 2 pages: 4 x 2 pages, as the step's 6 -> 8
    assert md.page_ids.view(4, 2).tolist() == [[5, 7], [9, 10], [11, 12], [0, 0]]
    # the last visible offset of each request's pages: position 29 is offset 13 of its 2nd page
    assert md.visible_to.tolist() == [[15, 13], [15, 8], [15, 3], [-1, -1]]
    assert md.logits_rows[:3].tolist() == [0, 1, 2]
    # 3 requests of 2, 1 and 3 pages: per request 4 x 4 pages, over the step's pages 6 -> 8
    assert _step([20, 3, 40], [1, 1, 1], [[5, 7], [9], [11, 12, 13]]).bucket == Bucket(4, 8, False)
    # one request: always per request
    assert _step([128], [1], [list(range(1, 9))]).bucket == Bucket(1, 8, True)


def test_both_forms_attend_alike():
    """One decode step of 3 requests as a batch per request and over every page of the step:
    the same attention, GQA (4 heads, 2 KV heads) and a request's keys only."""
    gen = torch.Generator().manual_seed(3)
    lens, tables = LENS, TABLES
    per_request = _step(lens, [1, 1, 1], tables)
    assert per_request.decode
    every_page = _over_every_page(per_request, lens, tables)
    heads, kv_heads, dim = 4, 2, 64
    cache = [torch.randn(cache_shape(SHAPES, kv_heads, dim), generator=gen) for _ in range(2)]
    q = torch.randn(4, heads, dim, generator=gen)
    k, v = torch.randn(4, kv_heads, dim, generator=gen), torch.randn(4, kv_heads, dim, generator=gen)
    outs = []
    for md in (per_request, every_page):
        caches = tuple(c.clone() for c in cache)
        outs.append(paged_attention(q[: md.tokens], k[: md.tokens], v[: md.tokens], caches, md, scale=0.125)[:3])
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    # and the reference: each request's query against its own keys so far
    k_cache, v_cache = (c.clone() for c in cache)
    k_cache[0, per_request.slots[:3]] = k[:3].reshape(3, -1)
    v_cache[0, per_request.slots[:3]] = v[:3].reshape(3, -1)
    for r, (n, pages) in enumerate(zip(lens, tables)):
        rows = torch.cat([torch.arange(p * BLOCK, (p + 1) * BLOCK) for p in pages])[:n]
        keys = k_cache[0, rows].view(n, kv_heads, dim).repeat_interleave(2, 1).transpose(0, 1)
        values = v_cache[0, rows].view(n, kv_heads, dim).repeat_interleave(2, 1).transpose(0, 1)
        want = torch.softmax(q[r][:, None] @ keys.transpose(1, 2) * 0.125, -1) @ values
        torch.testing.assert_close(outs[0][r], want[:, 0], rtol=1e-5, atol=1e-5)


def _over_every_page(md, lens: list[int], tables: list[list[int]]):
    """The same decode step over every page of the step (the form a mixed step takes)."""
    bucket = SHAPES.bucket(len(lens), sum(len(t) for t in tables))
    pages = [p for t in tables for p in t]
    page_ids = torch.zeros(bucket.pages, dtype=torch.int64)
    page_ids[: len(pages)] = torch.tensor(pages)
    visible = torch.full((bucket.tokens, bucket.pages), -1.0)
    first = 0
    for r, (n, t) in enumerate(zip(lens, tables)):
        for i in range(len(t)):
            visible[r, first + i] = max(-1, min(n - 1 - i * BLOCK, BLOCK - 1))
        first += len(t)
    return dataclasses.replace(
        md, tokens=bucket.tokens, pages=bucket.pages, decode=False, page_ids=page_ids, visible_to=visible
    )
