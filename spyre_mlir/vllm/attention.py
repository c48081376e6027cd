"""Paged attention of plain PyTorch ops, for the card (docs/vllm.md, "Attention on the card").

vLLM's attention layer hands its backend the step's queries, keys and values, the layer's KV
cache and the step's metadata. Here the backend is ops the spyre compiler lowers to the card,
traced once per step bucket into the step's program (runner.py); they never run eagerly.

The KV cache of a layer is two tensors, keys and values, each `[1, (blocks + spare) *
block_size, kv_heads * head_dim]`: a row per slot (vLLM's slot = block * block_size + offset),
all KV heads side by side; the `spare` blocks after vLLM's hold the rows of a step's padding
tokens, each its own (the card's cores write a step's rows at once: two writes of one row
would race), and no page id points there. Per step and layer:

    k_cache[:, slots] = k;  v_cache[:, slots] = v       the step's rows (spyre.scatter)
    K = k_cache.view(blocks, block_size, -1)[pages, :]   the step's pages' rows, each read once
    V = v_cache.view(blocks, block_size, -1)[pages, :]   (spyre.gather; L = pages * block_size keys)
    out = softmax(q K^T * scale + bias) V                every token against every page of the step

The step's tokens of every request attend to the pages of every request of the step at once,
so the bucket has two dims only (tokens, pages: buckets.py); `bias` keeps each token to the
keys of its own request up to its own position (and within its window). A decode step (every
token its own request's) is a batch instead, token t against its request's pages only (at t *
pages in `page_ids`): the same ops with a batch dim, p then counting the request's pages; it
takes that form unless it would gather more pages than the other (`step_metadata`).

    visible(t, p, o) = lo(t, p) < o <= hi(t, p)        o: the key's offset in page p
    bias = (min(hi - o, 0) + min(o - lo - 1, 0)) * MASKED

with hi(t, p) = clamp(pos(t) - start(p), -1, block_size - 1) (start(p): the position of the
page's first key in its request; -1 where p is padding or not the token's request's page) and
lo the same of pos(t) - window (-1 without one), computed by the host from positions and block
tables: small numbers (a value per token and page), exact in DL16. The bias is float arithmetic the
device computes; a masked key's bias is at most -MASKED, whose exponential is 0.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import torch
from vllm.v1.attention.backend import (
    AttentionBackend,
    AttentionImpl,
    AttentionMetadataBuilder,
    AttentionType,
    CommonAttentionMetadata,
    MultipleOf,
)
from vllm.v1.kv_cache_layout import KVCacheLayout

from spyre_mlir.vllm.buckets import Bucket, StepShapes

MASKED = 1.0e6
"""The bias per offset past a visible range: scores are far smaller, so exp(score - max - MASKED)
is 0 in float32 and DL16, and (block_size + 1) * MASKED stays within DL16's range (8.6e9)."""

NAME = "CUSTOM"
"""vLLM's enum member for an out-of-tree attention backend (registered in platform.py)."""


class SpyreAttentionBackend(AttentionBackend):
    forward_includes_kv_cache_update: bool = True
    accept_output_buffer: bool = True
    supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float32, torch.bfloat16, torch.float16]
    supported_kv_cache_dtypes: ClassVar[list[Any]] = ["auto"]

    @staticmethod
    def get_name() -> str:
        return NAME

    @staticmethod
    def get_impl_cls() -> type[SpyreAttentionImpl]:
        return SpyreAttentionImpl

    @staticmethod
    def get_builder_cls() -> type[SpyreAttentionMetadataBuilder]:
        return SpyreAttentionMetadataBuilder

    @staticmethod
    def get_supported_kernel_block_sizes(kv_cache_spec: Any = None) -> list[int | MultipleOf]:
        return [MultipleOf(16)]

    @classmethod
    def supported_kv_cache_layouts(cls) -> tuple[KVCacheLayout, ...]:
        return (KVCacheLayout.LBHNC,)

    @classmethod
    def supports_sliding_window(cls) -> bool:
        return True

    @classmethod
    def supports_attn_type(cls, attn_type: str) -> bool:
        return attn_type == AttentionType.DECODER


def spare_blocks(shapes: StepShapes) -> int:
    """Blocks after vLLM's for the rows of a step's padding tokens: a row per token of the
    largest step."""
    return -(-shapes.max_tokens // shapes.block_size)


def cache_shape(shapes: StepShapes, num_kv_heads: int, head_size: int) -> tuple[int, int, int]:
    """A layer's key (or value) cache: a row per slot (vLLM's blocks, then the spare ones)."""
    return (1, (shapes.num_blocks + spare_blocks(shapes)) * shapes.block_size, num_kv_heads * head_size)


def padding_slots(shapes: StepShapes, tokens: int) -> torch.Tensor:
    """(tokens,) int64: the slot each token of a step at this bucket writes when it is padding
    (its own row in the spare blocks)."""
    return shapes.num_blocks * shapes.block_size + torch.arange(tokens, dtype=torch.int64)


@dataclasses.dataclass
class SpyreAttentionMetadata:
    """One step of one KV-cache group, padded to its bucket (`tokens`, `pages`)."""

    num_actual_tokens: int
    num_reqs: int
    tokens: int
    """The step's token bucket: the forward runs on this many rows."""
    pages: int
    """The step's page bucket: of a decode step, pages per request."""
    decode: bool
    """Every token its own request's (a decode step): attention per request, token t against
    its request's pages only (module docstring)."""
    block_size: int
    slots: torch.Tensor
    """(tokens,) int64: each token's cache slot (padding: its own slot in the spare blocks)."""
    page_ids: torch.Tensor
    """(pages,) int64: the blocks of the step's requests, request by request (padding: 0); of a
    decode step (tokens * pages,): request t's at t * pages."""
    visible_to: torch.Tensor
    """(tokens, pages) float32: hi(t, p) (module docstring); of a decode step, p counts the
    token's own request's pages."""
    visible_from: dict[int, torch.Tensor]
    """Per sliding window: (tokens, pages) float32 lo(t, p)."""
    logits_rows: torch.Tensor
    """(min(tokens, max_num_seqs),) int64: the last token of each request (padding: 0)."""

    @property
    def bucket(self) -> Bucket:
        return Bucket(self.tokens, self.pages, self.decode)

    def tensors(self) -> list[torch.Tensor]:
        """The step's inputs in the program's order (runner.py)."""
        return [
            self.slots,
            self.page_ids,
            self.visible_to,
            *(self.visible_from[w] for w in sorted(self.visible_from)),
            self.logits_rows,
        ]

    def with_tensors(self, values: list[torch.Tensor]) -> SpyreAttentionMetadata:
        """The same metadata with the tensors of `tensors()` replaced (the traced inputs)."""
        slots, page_ids, visible_to, *rest = values
        windows = sorted(self.visible_from)
        return dataclasses.replace(
            self,
            slots=slots,
            page_ids=page_ids,
            visible_to=visible_to,
            visible_from=dict(zip(windows, rest[: len(windows)])),
            logits_rows=rest[len(windows)],
        )


def logits_rows_count(tokens: int, max_num_seqs: int) -> int:
    return min(tokens, max_num_seqs)


def step_metadata(
    shapes: StepShapes,
    windows: list[int],
    *,
    query_start_loc: torch.Tensor,
    seq_lens: torch.Tensor,
    block_table: torch.Tensor,
    slot_mapping: torch.Tensor,
    num_reqs: int,
    num_tokens: int,
) -> SpyreAttentionMetadata:
    """The host's part of a step: the bucket and the padded index and visibility inputs."""
    bs = shapes.block_size
    qsl = query_start_loc[: num_reqs + 1].to(torch.int64)
    lens = seq_lens[:num_reqs].to(torch.int64)
    query_lens = qsl[1:] - qsl[:-1]
    n_pages = (lens + bs - 1) // bs
    total_pages = int(n_pages.sum())
    tokens, pages, _ = shapes.bucket(num_tokens, total_pages)
    if num_tokens == num_reqs:
        # a decode step: attention per request, unless that gathers more pages than the other form
        decode = shapes.decode_bucket(num_reqs, int(n_pages.max()))
        if decode.tokens == 1 or decode.tokens * decode.pages <= pages:
            return _decode_metadata(shapes, decode, windows, lens, n_pages, block_table, slot_mapping)
    rows = logits_rows_count(tokens, shapes.max_num_seqs)
    if num_reqs > rows:
        raise ValueError(f"a step of {num_reqs} requests: the bucket of {tokens} tokens samples at most {rows}")

    slots = padding_slots(shapes, tokens)
    slots[:num_tokens] = slot_mapping[:num_tokens].to(torch.int64)
    # each token's request and position
    req_of = torch.repeat_interleave(torch.arange(num_reqs), query_lens)
    first = (lens - query_lens)[req_of]
    pos = first + (torch.arange(num_tokens) - qsl[:-1][req_of])
    # the step's pages, request by request: their request and first position
    page_req = torch.repeat_interleave(torch.arange(num_reqs), n_pages)
    page_first = qsl.new_zeros(num_reqs + 1)
    page_first[1:] = torch.cumsum(n_pages, 0)
    page_index = torch.arange(total_pages) - page_first[:-1][page_req]
    page_ids = torch.zeros(pages, dtype=torch.int64)
    page_ids[:total_pages] = block_table[page_req, page_index].to(torch.int64)
    start = page_index * bs
    mine = req_of[:, None] == page_req[None, :]  # (tokens, total_pages)
    logits_rows = torch.zeros(rows, dtype=torch.int64)
    logits_rows[:num_reqs] = qsl[1:] - 1
    return SpyreAttentionMetadata(
        num_actual_tokens=num_tokens,
        num_reqs=num_reqs,
        tokens=tokens,
        pages=pages,
        decode=False,
        block_size=bs,
        slots=slots,
        page_ids=page_ids,
        visible_to=_visibility((tokens, pages), pos, start, mine, 0, bs),
        visible_from={w: _visibility((tokens, pages), pos, start, mine, w, bs) for w in windows},
        logits_rows=logits_rows,
    )


def _visibility(
    shape: tuple[int, int], pos: torch.Tensor, start: torch.Tensor, mine: torch.Tensor, shift: int, bs: int
) -> torch.Tensor:
    """hi(t, p) (shift 0) or lo(t, p) (shift: the window), padded to the bucket's `shape`:
    -1 where the page is not the token's request's (`mine` false) or padding, so that lo then
    leaves the bias to hi alone. pos: each token's position; start: each page's first."""
    out = torch.full(shape, -1.0)
    d = (pos[:, None] - shift - start[None, :]).clamp(-1, bs - 1)
    out[: mine.shape[0], : mine.shape[1]] = torch.where(mine, d, -1).to(torch.float32)
    return out


def _decode_metadata(
    shapes: StepShapes,
    bucket: Bucket,
    windows: list[int],
    lens: torch.Tensor,
    n_pages: torch.Tensor,
    block_table: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> SpyreAttentionMetadata:
    """`step_metadata` of a decode step: request r is token r, its pages at r * pages."""
    bs, num_reqs = shapes.block_size, lens.shape[0]
    tokens, pages, _ = bucket
    slots = padding_slots(shapes, tokens)
    slots[:num_reqs] = slot_mapping[:num_reqs].to(torch.int64)
    pos, start = lens - 1, torch.arange(pages) * bs
    mine = torch.arange(pages)[None, :] < n_pages[:, None]  # (requests, pages)
    page_ids = torch.zeros(tokens, pages, dtype=torch.int64)
    # (vLLM's block table has a column per page of max_model_len, the most a decode bucket takes)
    page_ids[:num_reqs] = torch.where(mine, block_table[:num_reqs, :pages].to(torch.int64), 0)
    rows = logits_rows_count(tokens, shapes.max_num_seqs)
    logits_rows = torch.zeros(rows, dtype=torch.int64)
    logits_rows[:num_reqs] = torch.arange(num_reqs)
    return SpyreAttentionMetadata(
        num_actual_tokens=num_reqs,
        num_reqs=num_reqs,
        tokens=tokens,
        pages=pages,
        decode=True,
        block_size=bs,
        slots=slots,
        page_ids=page_ids.reshape(-1),
        visible_to=_visibility((tokens, pages), pos, start, mine, 0, bs),
        visible_from={w: _visibility((tokens, pages), pos, start, mine, w, bs) for w in windows},
        logits_rows=logits_rows,
    )


class SpyreAttentionMetadataBuilder(AttentionMetadataBuilder[SpyreAttentionMetadata]):
    def __init__(self, kv_cache_spec: Any, layer_names: list[str], vllm_config: Any, device: torch.device) -> None:
        super().__init__(kv_cache_spec, layer_names, vllm_config, device)
        from vllm.config import get_layers_from_vllm_config
        from vllm.model_executor.layers.attention import Attention

        layers = get_layers_from_vllm_config(vllm_config, Attention, layer_names)
        self.windows = sorted({w for layer in layers.values() if (w := layer.impl.sliding_window) is not None})
        self.shapes = step_shapes(vllm_config, kv_cache_spec.block_size)

    def build(
        self, common_prefix_len: int, common_attn_metadata: CommonAttentionMetadata, fast_build: bool = False
    ) -> SpyreAttentionMetadata:
        cm = common_attn_metadata
        return step_metadata(
            self.shapes,
            self.windows,
            query_start_loc=cm.query_start_loc_cpu,
            seq_lens=cm.seq_lens,
            block_table=cm.block_table_tensor,
            slot_mapping=cm.slot_mapping,
            num_reqs=cm.num_reqs,
            num_tokens=cm.num_actual_tokens,
        )


def step_shapes(vllm_config: Any, block_size: int) -> StepShapes:
    """The served model's buckets (the KV cache sized: `num_gpu_blocks` known)."""
    sched, cache = vllm_config.scheduler_config, vllm_config.cache_config
    if not cache.num_gpu_blocks:
        raise RuntimeError("the step buckets need the KV cache's size (cache_config.num_gpu_blocks), not known yet")
    return StepShapes(
        max_num_batched_tokens=sched.max_num_batched_tokens,
        max_num_seqs=sched.max_num_seqs,
        max_model_len=vllm_config.model_config.max_model_len,
        block_size=block_size,
        num_blocks=cache.num_gpu_blocks,
    )


class SpyreAttentionImpl(AttentionImpl):
    def __init__(
        self,
        num_heads: int,
        head_size: int,
        scale: float,
        num_kv_heads: int,
        alibi_slopes: list[float] | None,
        sliding_window: int | None,
        kv_cache_dtype: str,
        logits_soft_cap: float | None = None,
        attn_type: str = AttentionType.DECODER,
        kv_sharing_target_layer_name: str | None = None,
        sinks: torch.Tensor | None = None,
        **unknown: Any,
    ) -> None:
        refused = {
            "ALiBi slopes": alibi_slopes is not None,
            "a logits soft cap": bool(logits_soft_cap),
            "attention sinks": sinks is not None,
            f"attention of type {attn_type}": attn_type != AttentionType.DECODER,
            "a KV cache shared with another layer": kv_sharing_target_layer_name is not None,
            f"a KV cache of dtype {kv_cache_dtype}": kv_cache_dtype != "auto",
            f"the options {sorted(unknown)}": bool(unknown),
        }
        if what := [k for k, v in refused.items() if v]:
            raise NotImplementedError(f"the spyre attention backend does not take {', '.join(what)}")
        self.num_heads = num_heads
        self.head_size = head_size
        self.scale = float(scale)
        self.num_kv_heads = num_kv_heads
        self.sliding_window = sliding_window
        self.kv_sharing_target_layer_name = None

    def forward(
        self,
        layer: Any,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        kv_cache: tuple[torch.Tensor, torch.Tensor],
        attn_metadata: SpyreAttentionMetadata | None,
        output: torch.Tensor,
        output_scale: torch.Tensor | None = None,
        output_block_scale: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if output_scale is not None or output_block_scale is not None:
            raise NotImplementedError("the spyre attention backend has no fused output quantization")
        if attn_metadata is None:
            raise RuntimeError("the spyre attention backend runs in a step's program only (spyre_mlir/vllm/runner.py)")
        out = paged_attention(
            query,
            key,
            value,
            kv_cache,
            attn_metadata,
            scale=self.scale,
            window=self.sliding_window,
        )
        output.copy_(out.reshape(output.shape))
        return output


def paged_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    kv_cache: tuple[torch.Tensor, torch.Tensor],
    md: SpyreAttentionMetadata,
    *,
    scale: float,
    window: int | None = None,
) -> torch.Tensor:
    """The step's attention for one layer (module docstring); writes the step's keys and
    values into the layer's caches. query (T, H, D), key and value (T, KVH, D) -> (T, H, D)."""
    tokens, heads, dim = query.shape
    kv_heads = key.shape[1]
    width = kv_heads * dim
    bs = md.block_size
    k_cache, v_cache = kv_cache
    k_cache[:, md.slots] = key.reshape(1, tokens, width)
    v_cache[:, md.slots] = value.reshape(1, tokens, width)

    offsets = torch.arange(bs)
    length = md.pages * bs  # keys per request in a decode step; else of the step
    lanes = offsets.to(torch.float32)
    hi = md.visible_to[:, :, None]
    bias = torch.clamp(hi - lanes, max=0.0)
    if window is not None:
        lo = md.visible_from[window][:, :, None]
        bias = bias + torch.clamp(lanes - lo - 1.0, max=0.0)
    bias = (bias * MASKED).to(query.dtype)  # (tokens, pages, block_size)

    def rows(cache: torch.Tensor) -> torch.Tensor:
        # the pages' rows, page by page (the host computes each row's number from its page's)
        return cache.view(-1, bs, width)[md.page_ids[:, None], offsets[None, :]]

    if md.decode:
        # a batch of (KV head, request) pairs, a request's query heads of a KV head the rows of
        # their products: the pages' rows are then the products' operands as gathered
        n_rep = heads // kv_heads

        def per_head(cache: torch.Tensor) -> torch.Tensor:  # (KVH, T, L, D)
            return rows(cache).view(tokens, length, kv_heads, dim).permute(2, 0, 1, 3)

        q = query.view(tokens, kv_heads, n_rep, dim).permute(1, 0, 2, 3)
        mask = bias.reshape(1, tokens, 1, length)
        out = torch.nn.functional.scaled_dot_product_attention(
            q, per_head(k_cache), per_head(v_cache), attn_mask=mask, scale=scale
        )
        return out.permute(1, 0, 2, 3).reshape(tokens, heads, dim)

    def every_page(cache: torch.Tensor) -> torch.Tensor:  # (1, KVH, L, D)
        return rows(cache).view(length, kv_heads, dim).permute(1, 0, 2).unsqueeze(0)

    keys, values = (
        _repeat_kv(every_page(k_cache), heads // kv_heads),
        _repeat_kv(every_page(v_cache), heads // kv_heads),
    )
    q = query.permute(1, 0, 2).unsqueeze(0)
    mask = bias.reshape(1, 1, tokens, length)
    out = torch.nn.functional.scaled_dot_product_attention(q, keys, values, attn_mask=mask, scale=scale)
    return out.squeeze(0).permute(1, 0, 2)


def _repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(1, KVH, L, D) -> (1, KVH * n_rep, L, D), as transformers' repeat_kv (the compiler folds
    it into the rows of the attention's products: torch-adapt GroupedHeadsInRows)."""
    if n_rep == 1:
        return x
    b, kvh, length, dim = x.shape
    return x[:, :, None, :, :].expand(b, kvh, n_rep, length, dim).reshape(b, kvh * n_rep, length, dim)
