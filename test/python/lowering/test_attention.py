"""spyre-fuse's attention kernel (spyre.Attention, docs/optimizations.md "Attention in one
kernel"): the scores product, the softmax's row group and the context product in one launch,
the scores kept in LX. Each variant is within the DL16 bound of the exact result (what
`compiled_within_bound` checks), in one launch where the three kernels apart are three, and
moves less through DDR; with sums whose order does not depend on tile shapes (the f64
reference mode) it gives the bits of the three kernels apart."""

import pytest
import torch
from helpers import compiled_within_bound, seeded_randn

from spyre_mlir.frontend import backend

HEADS, KV_HEADS, POSITIONS, HEAD_DIM = 8, 2, 128, 64
"""2 matrices (KV heads) of 4 query heads x 128 positions: 1024 rows, enough for every core."""


def causal(positions: int) -> torch.Tensor:
    return torch.triu(torch.full((positions, positions), -1e4), 1)


def attention(variant: str):
    """Grouped-query attention as transformers writes it (repeat_kv, a scaled product, an
    additive mask, softmax), in one of the variants the kernel takes."""
    group = HEADS // KV_HEADS

    def repeat_kv(x):
        d = x.shape[-1]
        return x[:, :, None].expand(1, KV_HEADS, group, POSITIONS, d).reshape(1, HEADS, POSITIONS, d)

    def fn(q, k, v, mask):
        scores = q @ repeat_kv(k).transpose(-1, -2) * q.shape[-1] ** -0.5
        if variant == "soft-capped":  # Gemma 2's logit soft-capping, then the mask
            scores = torch.tanh(scores / 5.0) * 5.0
        if variant != "unmasked":
            scores = scores + mask
        return torch.softmax(scores, dim=-1) @ repeat_kv(v)

    return fn


def inputs(variant: str, head_dim: int = HEAD_DIM) -> tuple[torch.Tensor, ...]:
    mask = causal(POSITIONS)
    if variant == "per-head bias":  # a bias that differs by head (ALiBi's form): read per head
        mask = mask + seeded_randn(1, HEADS, POSITIONS, POSITIONS, seed=4)
    return (
        seeded_randn(1, HEADS, POSITIONS, head_dim, seed=1),
        seeded_randn(1, KV_HEADS, POSITIONS, head_dim, seed=2),
        seeded_randn(1, KV_HEADS, POSITIONS, head_dim, seed=3),
        mask,
    )


def launches(fn, xs, **options):
    """The kernels of one compiled call (checked within the DL16 bound) and its output."""
    device = backend.get_device_model(backend.DeviceConfig(**{k: v for k, v in options.items() if k != "disable"}))
    before = len(device.profile.kernels)
    y, report = compiled_within_bound(fn, *xs, **options)
    assert not report.cpu_fallback
    return device.profile.kernels[before:], y


@pytest.mark.parametrize("variant", ["causal mask", "per-head bias", "soft-capped", "unmasked"])
def test_attention_is_one_launch_that_keeps_the_scores_in_lx(variant):
    fn, xs = attention(variant), inputs(variant)
    fused, _ = launches(fn, xs)
    apart, _ = launches(fn, xs, disable=["attention"])
    assert len(fused) == 1 and len(apart) == 3, ([k.name for k in fused], [k.name for k in apart])
    scores = KV_HEADS * (HEADS // KV_HEADS) * POSITIONS * POSITIONS * 2  # bytes of DL16 scores
    moved = [sum(k.ddr_read_bytes + k.ddr_write_bytes for k in ks) for ks in (fused, apart)]
    # apart, the scores are stored, read and stored by the softmax, and read: 4 times
    assert moved[0] < moved[1] - 2 * scores, moved
    assert sum(k.time_s for k in fused) < sum(k.time_s for k in apart)


def test_attention_gives_the_bits_of_the_kernels_apart():
    """In the f64 reference mode (a tile's sums do not depend on its shape) and without k
    splits (the same additions of k chunks), the fused kernel rounds the scores, runs the
    softmax's steps and the context's product on the same values as the three kernels."""
    fn, xs = attention("causal mask"), inputs("causal mask")
    same_sums = {"accumulation": "f64"}
    _, fused = launches(fn, xs, **same_sums, disable=["k_split"])
    _, apart = launches(fn, xs, **same_sums, disable=["k_split", "attention"])
    assert torch.equal(fused, apart)


@pytest.mark.slow
def test_the_heads_side_by_side_are_stored_by_the_attention_kernel():
    """The context transposed to (positions, heads x head dim) for the output projection, as
    transformers writes it: the restickify that puts the heads side by side moves whole
    sticks, so the attention kernel stores each context stick where it would put it, and no
    relayout launch is left; the bits are those of the kernels apart (f64 sums). Heads of 128
    (two sticks), as Granite's: heads of one stick need no relayout for the projection."""
    head_dim = 128
    w = seeded_randn(HEADS * head_dim, 256, seed=5) * 0.05

    def projected(q, k, v, mask):
        context = attention("causal mask")(q, k, v, mask)
        return context.transpose(1, 2).reshape(1, POSITIONS, HEADS * head_dim) @ w

    xs = inputs("causal mask", head_dim)
    fused, _ = launches(projected, xs)
    apart, _ = launches(projected, xs, disable=["attention"])
    assert len(fused) == 2 and len(apart) == 5, ([k.name for k in fused], [k.name for k in apart])
    _, y = launches(projected, xs, accumulation="f64", disable=["k_split"])
    _, y_apart = launches(projected, xs, accumulation="f64", disable=["k_split", "attention"])
    assert torch.equal(y, y_apart)


def test_keys_inside_one_stick_are_attended_in_one_launch():
    """23 positions (BERT-style heads at a short prompt: 12 x 23 rows, enough for every core):
    the scores' rows are a single stick of 23 keys, the lanes past them masked in the
    reductions; one launch for the three, within the DL16 bound."""

    def fn(q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1) @ v

    xs = tuple(seeded_randn(1, 12, 23, 64, seed=s) for s in (6, 7, 8))
    fused, _ = launches(fn, xs)
    apart, _ = launches(fn, xs, disable=["attention"])
    assert len(fused) == len(apart) - 2, ([k.name for k in fused], [k.name for k in apart])


def test_a_long_context_keeps_a_full_pt_pass_of_rows_a_step():
    """4,096 keys a matrix (a prompt's chunk of 64 tokens against 32 pages of 128): K^T and V
    fill half of LX, and the second copies of the scores and the group's buffers would leave
    room for steps of 4 rows only, each PT pass half empty (a pass yields pt_rows = 8 rows).
    The kernel is planned with one copy instead, 8 rows a step: its PT cycles are those of
    full passes, every row's scores and context once."""
    heads, kv_heads, tokens, keys, dim = 9, 3, 64, 4096, 64
    group = heads // kv_heads

    def fn(q, k, v, mask):
        def rep(x):
            return x[:, :, None].expand(1, kv_heads, group, keys, dim).reshape(1, heads, keys, dim)

        return torch.softmax(q @ rep(k).transpose(-1, -2) * 0.125 + mask, dim=-1) @ rep(v)

    xs = (
        seeded_randn(1, heads, tokens, dim, seed=9),
        seeded_randn(1, kv_heads, keys, dim, seed=10),
        seeded_randn(1, kv_heads, keys, dim, seed=11),
        torch.triu(torch.full((tokens, keys), -1e4), keys - tokens + 1),
    )
    (kernel,), _ = launches(fn, xs)
    config = backend.get_device_model().config
    rows = heads * tokens
    passes = rows // config.pt_rows * (keys // config.pt_lanes * dim + keys)  # scores, then context
    assert kernel.engine_cycles["pt"] == passes / config.corelets_used, kernel.engine_cycles
