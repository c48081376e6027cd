"""torch-adapt end to end: each rewrite keeps the answer (within the DL16 bound of the exact
float64 result, criterion in spyre_mlir.testing.criteria) and takes the op to the device;
without the pass the same ops stay correct on the CPU (the lowering never trades a sign for a
device path)."""

import math

import pytest
import torch
from helpers import Fn, compiled_within_bound
from helpers import seeded_randn as randn
from xdsl.context import Context
from xdsl.parser import Parser

from spyre_mlir.tools.spyre_opt import make_tool_context
from spyre_mlir.transforms.torch_adapt import TorchAdaptPass


def compiled(fn, *inputs, **options):
    """One compiled call of `fn`, checked within the DL16 bound: its graph report and output."""
    y, report = compiled_within_bound(fn, *inputs, **options)
    return report, y


def _launches(fn, *inputs, **options):
    """The device launches of one compiled call of `fn` (all of it on the device), and its output."""
    from spyre_mlir.frontend import backend

    device = backend.get_device_model(backend.DeviceConfig(**{k: v for k, v in options.items() if k != "disable"}))
    before = len(device.profile.kernels)
    report, y = compiled(fn, *inputs, **options)
    assert not report.cpu_fallback
    return [k.name for k in device.profile.kernels[before:]], y


def _with_and_without(monkeypatch, adaptation, fn, inputs, nan_inputs):
    """`fn` compiled with the adaptations as they are and without `adaptation`
    (`_with_and_without_change`)."""
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    kept = tuple(a for a in torch_adapt.ADAPTATIONS if a is not adaptation)
    return _with_and_without_change(
        lambda: monkeypatch.setattr(torch_adapt, "ADAPTATIONS", kept), fn, inputs, nan_inputs
    )


def _with_and_without_change(undo, fn, inputs, nan_inputs):
    """`fn` compiled as the compiler is and after `undo()` (a monkeypatch taking a change
    out): the launches of each, asserting the same bits on `inputs` and the same NaNs and
    other bits on `nan_inputs` (a NaN in an input, which each run keeps where it is). The NaN
    runs' outputs are returned."""

    def run():
        launches, y = _launches(fn, *inputs)
        torch._dynamo.reset()
        with torch.no_grad():
            y_nan = torch.compile(Fn(fn), backend="spyre")(*nan_inputs)
        return launches, y, y_nan

    launches_with, with_it, nan_with = run()
    undo()
    launches_without, without, nan_without = run()
    assert torch.equal(with_it, without)
    assert torch.equal(nan_with.isnan(), nan_without.isnan())
    assert torch.equal(nan_with.nan_to_num(), nan_without.nan_to_num())
    return launches_with, launches_without, nan_with


def gelu_new(x):  # GPT-2's NewGELUActivation, as written in transformers
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


@pytest.mark.parametrize(
    "c",
    [
        pytest.param(2, marks=pytest.mark.slow),
        3,
        pytest.param(4, marks=pytest.mark.slow),
        -1,
        pytest.param(-2, marks=pytest.mark.slow),
    ],
)
def test_integer_powers_keep_the_sign(c):
    # negative bases: exp(c log x) would give NaN here; the multiplications do not
    x = randn(5, 100, seed=c + 10)
    x = torch.where(x.abs() < 0.2, torch.full_like(x, -0.7), x)  # keep 1/x^2 in range
    report, _ = compiled(lambda v: torch.pow(v, c), x)
    assert not report.cpu_fallback


@pytest.mark.parametrize("c", [0.5, *(pytest.param(c, marks=pytest.mark.slow) for c in (-0.5, 1.5))])
def test_fractional_powers(c):
    report, _ = compiled(lambda v: torch.pow(v, c), randn(5, 100, seed=3).abs() + 0.1)
    assert not report.cpu_fallback


def test_gelu_new_is_one_kernel():
    assert len(_launches(gelu_new, randn(3, 130, seed=4, scale=2.0))[0]) == 1, (
        "gelu_new should be a single device launch"
    )


def test_softmax_from_max_values():
    # torch.max(x, dim) with the indices dropped: torch-mlir's softmax decomposition
    report, _ = compiled(lambda v: torch.exp(v - torch.max(v, -1, keepdim=True).values), randn(4, 100, seed=5))
    assert not report.cpu_fallback


def test_mean_without_keepdim():
    report, _ = compiled(lambda v: v.mean(-1) * 2.0, randn(2, 7, 100, seed=6))
    assert not report.cpu_fallback


def test_without_the_pass_integer_powers_stay_on_the_cpu():
    ctx: Context = make_tool_context()
    text = """
    func.func @f(%x: !torch.vtensor<[4,64],f32>) -> !torch.vtensor<[4,64],f32> {
      %c = torch.constant.float 2.000000e+00
      %0 = torch.aten.pow.Tensor_Scalar %x, %c : !torch.vtensor<[4,64],f32>, !torch.float -> !torch.vtensor<[4,64],f32>
      return %0 : !torch.vtensor<[4,64],f32>
    }"""
    from spyre_mlir.lowering.convert_torch_to_spyre import ConvertTorchToSpyrePass

    module = Parser(ctx, text).parse_module()
    ConvertTorchToSpyrePass().apply(ctx, module)
    pow_op = next(op for op in module.walk() if op.name == "torch.aten.pow.Tensor_Scalar")
    assert "torch-adapt" in pow_op.attributes["spyre.host"].data

    module = Parser(ctx, text).parse_module()
    TorchAdaptPass().apply(ctx, module)
    ConvertTorchToSpyrePass().apply(ctx, module)
    assert not any(op.name.startswith("torch.aten.") for op in module.walk())


def test_a_linear_and_its_activation_on_a_3d_input_are_one_launch():
    # aot_autograd flattens the Linear (view -> addmm -> view); the gelu moves before the view
    # and runs as the matmul's epilogue, in its layout (no launch of its own, no relayout)
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 192)
    names, _ = _launches(lambda v: torch.nn.functional.gelu(lin(v)), randn(1, 128, 64, seed=7))
    assert len(names) == 1, names


def test_a_gated_activation_on_3d_inputs_runs_in_the_matmuls_epilogue():
    torch.manual_seed(1)
    gate, up = torch.nn.Linear(64, 128), torch.nn.Linear(64, 128)
    names, _ = _launches(lambda v: torch.nn.functional.silu(gate(v)) * up(v), randn(1, 128, 64, seed=8))
    assert len(names) == 2, names  # one matmul, and one whose epilogue is silu(.) * the other's result


@pytest.mark.parametrize("rows", [1, 8])
def test_a_residual_add_after_a_3d_linear_runs_in_the_matmuls_epilogue(rows):
    # a decoder's x + o_proj(h): the add reads the product through the view back to 3-d;
    # spyre-fuse looks through the view (it moves no element) and the add is the epilogue
    torch.manual_seed(3)
    lin = torch.nn.Linear(128, 64, bias=False)
    names, _ = _launches(lambda h, x: x + lin(h), randn(1, rows, 128, seed=19), randn(1, rows, 64, seed=20))
    assert len(names) == 1, names


@pytest.mark.slow
def test_heads_from_a_transposed_linear_give_the_same_bits_in_fewer_launches(monkeypatch):
    """Q, K and V computed as w @ x^T + b[:, None] (HeadsFromTransposedLinear): the same
    products and sums, so the same output bits, with fewer relayout launches than the
    Linear's (S, H * D) result split into heads of 32 (half a stick)."""
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    torch.manual_seed(2)
    q, k, v = (torch.nn.Linear(384, 384) for _ in range(3))

    def attention(x):
        heads = [p(x).view(1, 128, 12, 32).permute(0, 2, 1, 3) for p in (q, k, v)]
        a = torch.softmax(heads[0] @ heads[1].transpose(-1, -2) / 32**0.5, dim=-1)
        return (a @ heads[2]).permute(0, 2, 1, 3).reshape(1, 128, 384)

    x = randn(1, 128, 384, seed=9)

    # fp32 sums: each run within the DL16 bound (`compiled`); the rewrite changes the products'
    # tile shapes, so BLAS's order of the sums. The f64 reference mode's sums do not depend on
    # tile shapes: there the two give the same bits, as long as both plans keep the same k
    # chunks (the fp32 accumulator adds each chunk's sums), so stationary A blocks, with which
    # the estimates may pick other splits (and k chunks) for few-row products, are off in both.
    same_k = {"accumulation": "f64", "disable": ["stationary_a"]}
    launches_with, _ = _launches(attention, x)
    _, with_it = _launches(attention, x, **same_k)
    kept = tuple(a for a in torch_adapt.ADAPTATIONS if a is not torch_adapt.HeadsFromTransposedLinear)
    monkeypatch.setattr(torch_adapt, "ADAPTATIONS", kept)
    launches_without, _ = _launches(attention, x)
    _, without = _launches(attention, x, **same_k)
    assert torch.equal(with_it, without)
    assert len(launches_with) < len(launches_without), (launches_with, launches_without)


def test_grouped_query_attention_gives_the_same_bits_without_the_cache_copies(monkeypatch):
    """GQA's repeat_kv (K and V expanded from 2 to 6 heads, as transformers writes it) folded
    into the rows of the attention's products (GroupedHeadsInRows): the same products and
    sums, so the same bits where the sums' order does not depend on tile shapes (the f64
    reference mode, no k split; each fp32 run within the DL16 bound), and the expanded copies
    are neither written nor read."""
    from spyre_mlir.frontend import backend
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    def repeat_kv(x, rep):
        b, g, length, d = x.shape
        return x[:, :, None, :, :].expand(b, g, rep, length, d).reshape(b, g * rep, length, d)

    def attention(q, k, v):
        k, v = repeat_kv(k, 3), repeat_kv(v, 3)
        scores = torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1)
        return scores @ v

    q, k, v = randn(1, 6, 8, 64, seed=13), randn(1, 2, 40, 64, seed=14), randn(1, 2, 40, 64, seed=15)
    device = backend.get_device_model(backend.DeviceConfig())

    def ddr_bytes():
        before = len(device.profile.kernels)
        _launches(attention, q, k, v)
        kernels = device.profile.kernels[before:]
        _, y = _launches(attention, q, k, v, accumulation="f64", disable=["k_split"])
        return sum(x.ddr_read_bytes + x.ddr_write_bytes for x in kernels), y

    grouped, with_it = ddr_bytes()
    kept = tuple(a for a in torch_adapt.ADAPTATIONS if a is not torch_adapt.GroupedHeadsInRows)
    monkeypatch.setattr(torch_adapt, "ADAPTATIONS", kept)
    copied, without = ddr_bytes()
    assert torch.equal(with_it, without)
    copies = 2 * 6 * 40 * 64 * 2  # the expanded K and V in DL16
    assert grouped <= copied - 2 * copies, (grouped, copied)  # written once and read once (75.8 vs 299.0 KB)


def test_attention_scales_q_once_and_leaves_the_k_cache_unscaled(monkeypatch):
    """SDPA's decomposition scales q and k each by sqrt(1/8); ScalingsOnOneOperand scales q by
    1/8 (exact) and k not at all: one launch fewer, less DDR traffic (the scaled copy of K is
    neither written nor read), and the output within the DL16 bound either way."""
    from spyre_mlir.frontend import backend
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    def attention(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    q, k, v = randn(1, 4, 8, 64, seed=16), randn(1, 4, 40, 64, seed=17), randn(1, 4, 40, 64, seed=18)
    device = backend.get_device_model(backend.DeviceConfig())

    def run():
        before = len(device.profile.kernels)
        launches, _ = _launches(attention, q, k, v)
        return launches, sum(x.ddr_read_bytes + x.ddr_write_bytes for x in device.profile.kernels[before:])

    launches_with, bytes_with = run()
    kept = tuple(a for a in torch_adapt.ADAPTATIONS if a is not torch_adapt.ScalingsOnOneOperand)
    monkeypatch.setattr(torch_adapt, "ADAPTATIONS", kept)
    launches_without, bytes_without = run()
    assert len(launches_with) == len(launches_without) - 1, (launches_with, launches_without)
    assert bytes_with <= bytes_without - 2 * 4 * 40 * 64 * 2, (bytes_with, bytes_without)  # K's copy: written, read


def test_a_rotary_embedding_gives_the_same_bits_in_fewer_launches(monkeypatch):
    """HF's apply_rotary_pos_emb at head dim 64: rotate_half's cat of half sticks swaps the
    stick dim once for the whole cat (LaneMovesInOneSwap) instead of once per piece; the same
    elements move, so the same bits, a NaN in a lane included (it stays in its two lanes)."""
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    def rotate_half(x):
        return torch.cat((-x[..., x.shape[-1] // 2 :], x[..., : x.shape[-1] // 2]), dim=-1)

    def rotary(q, cos, sin):
        return q * cos + rotate_half(q) * sin

    q, angles = randn(1, 4, 16, 64, seed=11), randn(1, 1, 16, 64, seed=12)
    nan_q = q.clone()
    nan_q[0, 1, 3, 5] = float("nan")

    swap_only = tuple(a for a in torch_adapt.ADAPTATIONS if a is not torch_adapt.LaneMovesAsProduct)
    monkeypatch.setattr(torch_adapt, "ADAPTATIONS", swap_only)
    with_it, without, nan_out = _with_and_without(
        monkeypatch,
        torch_adapt.LaneMovesInOneSwap,
        rotary,
        (q, angles.cos(), angles.sin()),
        (nan_q, angles.cos(), angles.sin()),
    )
    assert len(with_it) <= len(without) - 3, (with_it, without)  # 6 vs 9
    assert int(nan_out.isnan().sum()) == 2


def test_rotate_half_of_whole_sticks_negates_the_factor_instead(monkeypatch):
    """apply_rotary_pos_emb at head dim 128 (Granite, Llama 3), the heads transposed: the
    negated half moves onto sin as a product by the lanes' signs (NegationsOntoFactor), so no
    negation runs and the cat is of slices alone, which the combination with cos and sin reads
    in its own kernel (spyre-fuse): two launches fewer; the same bits, a NaN included."""
    from spyre_mlir.transforms import torch_adapt

    inputs, nan_inputs = _rotary_inputs(seed=13, nan_at=(0, 3, 70))
    with_it, without, nan_out = _with_and_without(
        monkeypatch, torch_adapt.NegationsOntoFactor, _rotary_of_heads_of_128, inputs, nan_inputs
    )
    assert len(with_it) == len(without) - 2, (with_it, without)
    assert int(nan_out.isnan().sum()) == 2


def test_a_rotary_combination_reads_the_swapped_halves_in_its_kernel(monkeypatch):
    """q * cos + cat(q[..., 64:], q[..., :64]) * sin on heads of 128 (sticks swapped, after
    NegationsOntoFactor): spyre-fuse puts the slices and the cat into the combination's
    kernel, which DMAs each half of a tile from q; the swapped copy is never stored. One launch
    fewer, and the same bits as with the copy (it moves elements, it rounds none), a NaN
    included."""
    from spyre_mlir.transforms import spyre_fuse

    inputs, nan_inputs = _rotary_inputs(seed=15, nan_at=(0, 5, 200))
    with_it, without, nan_out = _with_and_without_change(
        lambda: monkeypatch.setattr(spyre_fuse, "_sliced_inputs", lambda pw: []),
        _rotary_of_heads_of_128,
        inputs,
        nan_inputs,
    )
    assert len(with_it) == len(without) - 1, (with_it, without)
    assert int(nan_out.isnan().sum()) == 2


def test_a_rotary_combination_copies_the_swapped_halves_from_its_own_tile(monkeypatch):
    """The same combination: where a chunk's tile of q holds whole heads, the swapped halves
    are SFP copies from that tile (pointwise._held_in_tile), not a second DMA of q: the same
    bits and NaNs as with the second DMA, and q read from DDR once."""
    from spyre_mlir.frontend import backend
    from spyre_mlir.lowering.convert_spyre_to_isa import pointwise

    inputs, nan_inputs = _rotary_inputs(seed=16, nan_at=(0, 3, 70))
    device = backend.get_device_model(backend.DeviceConfig())
    reads = []

    def undo():
        reads.append(sum(k.ddr_read_bytes for k in device.profile.kernels[-1:]))
        monkeypatch.setattr(pointwise, "_held_in_tile", lambda *args: None)

    _with_and_without_change(undo, _rotary_of_heads_of_128, inputs, nan_inputs)
    reads.append(device.profile.kernels[-1].ddr_read_bytes)
    q_bytes = 16 * 256 * 2  # x in DL16
    assert reads[0] <= reads[1] - q_bytes, reads


def _rotary_of_heads_of_128(x, cos, sin):
    """apply_rotary_pos_emb on heads of 128 transposed to (1, heads, rows, 128)."""
    q = x.view(1, 16, 2, 128).transpose(1, 2)
    return q * cos + torch.cat((-q[..., 64:], q[..., :64]), dim=-1) * sin


def _rotary_inputs(seed, nan_at):
    """(x, cos, sin) for `_rotary_of_heads_of_128`, and the same with a NaN in x at `nan_at`."""
    x, angles = randn(1, 16, 256, seed=seed), randn(1, 1, 16, 128, seed=seed + 1)
    nan_x = x.clone()
    nan_x[nan_at] = float("nan")
    return (x, angles.cos(), angles.sin()), (nan_x, angles.cos(), angles.sin())


@pytest.mark.parametrize("rows, sizes", [(1, (64, 128)), (23, (63, 65, 1)), (100, (257, 64))])
def test_a_split_into_pieces_is_slices_on_the_device(rows, sizes):
    """split_with_sizes, unpacked: a slice per piece (SplitIntoSlices), joined again in the
    other order; nothing on the host."""

    def fn(x):
        return torch.cat([p * 2.0 for p in torch.split(x, list(sizes), dim=-1)][::-1], dim=-1)

    report, _ = compiled(fn, randn(rows, sum(sizes), seed=rows))
    assert not report.cpu_fallback and not report.host_by_design, report


@pytest.mark.parametrize("shape, dim", [((46, 9, 1), 1), ((3, 63, 1, 1), 1), ((65, 1), 0)])
def test_a_softmax_whose_later_dims_are_units_runs_along_the_last(shape, dim):
    """_softmax along a dim followed by dims of extent 1 (SoftmaxOverTrailingUnits)."""
    report, _ = compiled(lambda x: torch.softmax(x, dim), randn(*shape, seed=dim + 3))
    assert not report.cpu_fallback, report


@pytest.mark.parametrize("n, m, k", [(46, 16, 9), (1, 1, 1), (3, 65, 100), (2, 7, 257)])
def test_products_with_one_column_are_a_sum_of_products(n, m, k):
    """bmm(A, B) with B of one column (ProductsWithOneColumn): a product and a row sum."""
    report, _ = compiled(torch.bmm, randn(n, m, k, seed=k), randn(n, k, 1, seed=m))
    assert not report.cpu_fallback, report


def test_constants_computed_from_shapes_are_built_once_on_the_host():
    """Ops made of constants built from shapes and numbers (OPT's cumsum of a mask of ones, a
    product with a triangle of ones after decomposition) are host-built constants: not CPU
    fallbacks, folded at the first call, and no round trip."""
    import spyre_mlir

    def fn(x):
        positions = torch.cumsum(torch.ones(x.shape[0], x.shape[1]), dim=1) - 1.0
        return x * positions.unsqueeze(-1)

    x = randn(1, 23, 64, seed=5)
    report, _ = compiled(fn, x)
    assert not report.cpu_fallback, report
    assert report.host_by_design.get("torch.aten.mm") == 1, report  # the cumsum: ones times a mask of ones
    torch._dynamo.reset()
    f = torch.compile(Fn(fn), backend="spyre")
    with torch.no_grad():
        f(x)
        with spyre_mlir.profile() as prof:
            f(x)
    assert prof.host_round_trips == 0
    assert prof.transfer_bytes_by_kind.get("intermediate", 0) == 0  # the constant stays on the device


def test_float_arithmetic_on_positions_for_integer_indices_stays_on_the_host():
    """T5's relative position buckets: int distances -> float log -> int again, used as
    indices. Index building: host by design, no round trip (mark_index_arithmetic)."""
    import spyre_mlir

    table = torch.nn.Embedding(16, 64)

    def fn(x, pos):
        d = (pos[None, :] - pos[:, None]).abs()
        bucket = (torch.log(d.float() / 2.0 + 1.0) * 4.0).to(torch.long).clamp(max=15)
        return x[:, None, :] + table(bucket)

    x, pos = randn(23, 64, seed=6), torch.arange(23)
    report, _ = compiled(fn, x, pos)  # within the DL16 bound
    assert not report.cpu_fallback, report
    assert report.host_by_design.get("torch.aten.log", 0) == 1, report
    torch._dynamo.reset()
    f = torch.compile(Fn(fn), backend="spyre")
    with torch.no_grad():
        f(x, pos)
        with spyre_mlir.profile() as prof:
            f(x, pos)
    assert prof.host_round_trips == 0


@pytest.mark.parametrize("heads, seq, dim", [(4, 16, 64), (9, 1, 64), (3, 23, 32)])
def test_a_rotary_embedding_by_a_product_gives_the_same_bits_in_fewer_launches(monkeypatch, heads, seq, dim):
    """rotate_half as one product by a signed permutation (LaneMovesAsProduct) when the rotated
    q reaches only the attention scores' contraction: the same bits as the lane moves, in fewer
    launches, and a NaN in q makes the same scores NaN."""
    from spyre_mlir.transforms import torch_adapt

    def scores(q, k, cos, sin):
        h = q.shape[-1] // 2
        q_rot = q * cos + torch.cat((-q[..., h:], q[..., :h]), dim=-1) * sin
        return q_rot @ k.transpose(-2, -1)

    q, k = randn(1, heads, seq, dim, seed=dim), randn(1, heads, seq, dim, seed=dim + 1)
    angles = randn(1, 1, seq, dim, seed=heads)
    nan_q = q.clone()
    nan_q[0, 0, 0, 5] = float("nan")

    with_it, without, nan_out = _with_and_without(
        monkeypatch,
        torch_adapt.LaneMovesAsProduct,
        scores,
        (q, k, angles.cos(), angles.sin()),
        (nan_q, k, angles.cos(), angles.sin()),
    )
    assert len(with_it) < len(without), (with_it, without)
    assert nan_out[0, 0, 0].isnan().all()


def test_a_rotary_embedding_read_elsewhere_keeps_its_lane_moves():
    """The rotated value returned (a KV cache keeps it): a NaN must stay in its lanes, so the
    lane moves stay moves (LaneMovesInOneSwap), not a product."""

    def rotary(q, cos, sin):
        return q * cos + torch.cat((-q[..., 32:], q[..., :32]), dim=-1) * sin

    q, angles = randn(1, 4, 16, 64, seed=3), randn(1, 1, 16, 64, seed=4)
    q[0, 1, 3, 5] = float("nan")
    torch._dynamo.reset()
    with torch.no_grad():
        y = torch.compile(Fn(rotary), backend="spyre")(q, angles.cos(), angles.sin())
    assert int(y.isnan().sum()) == 2 and bool(y[0, 1, 3, 5].isnan()) and bool(y[0, 1, 3, 37].isnan())


@pytest.mark.parametrize("rows, cols", [(64, 128), (6, 200)])
def test_halves_swapped_along_rows_are_one_launch_and_move_the_same_bits(rows, cols):
    """cat(x[h:], x[:h]) along a dim of whole sticks: spyre-fuse's sliced concat, one launch
    whose parts are DMAed from x at each slice's start; every element moved, none rounded."""
    from spyre_mlir.sim.numerics import DL16

    h = rows // 2
    x = randn(rows, cols, seed=24)
    launches, y = _launches(lambda v: torch.cat((v[h:], v[:h]), 0), x)
    assert len(launches) == 1, launches
    want = torch.from_numpy(DL16.round(x.numpy()))
    assert torch.equal(y, torch.cat((want[h:], want[:h]), 0))


def test_rotary_signs_move_onto_the_shared_sine_once_for_every_layer(monkeypatch):
    """Two layers' keys rotated by one sin (read elsewhere, as a KV cache keeps them, so by
    lane moves): rotate_half's negation moves onto sin (exact), one sin * signs for both
    layers in place of a negation per layer, and the same bits. Without the negation both
    halves are slices that only the cat reads, so they join its kernel (spyre-fuse's sliced
    concats): a negated half would be a slice and a negation, two launches of its own."""
    from spyre_mlir.transforms.torch_adapt import lane_moves as torch_adapt

    def rotary(k1, k2, cos, sin):
        return torch.cat([k * cos + torch.cat((-k[..., 32:], k[..., :32]), dim=-1) * sin for k in (k1, k2)], dim=1)

    k1, k2, angles = randn(1, 3, 16, 64, seed=21), randn(1, 3, 16, 64, seed=22), randn(1, 1, 16, 64, seed=23)
    launches_with, with_it = _launches(rotary, k1, k2, angles.cos(), angles.sin())
    monkeypatch.setattr(torch_adapt, "_signs_onto_factor", lambda *args: False)
    launches_without, without = _launches(rotary, k1, k2, angles.cos(), angles.sin())
    assert len(launches_with) == len(launches_without) - 2 * 2 + 1, (launches_with, launches_without)
    assert torch.equal(with_it, without)


@pytest.mark.parametrize("heads, seq, dim", [(4, 23, 64), (2, 3, 16), (3, 5, 8)])
def test_an_interleaved_rotary_embedding_by_a_product_gives_the_same_bits(monkeypatch, heads, seq, dim):
    """GPT-J's rotate_every_two, stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2), on its
    way to the attention scores, as one product (InterleavedLaneMovesAsProduct): the same bits
    as without it, in fewer launches."""
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    def scores(q, k, cos, sin):
        pairs = torch.stack((-q[..., 1::2], q[..., ::2]), dim=-1).flatten(-2)
        return (q * cos + pairs * sin).transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1)

    q, k = randn(1, seq, heads, dim, seed=dim + 1), randn(1, seq, heads, dim, seed=dim + 2)
    angles = randn(1, seq, 1, dim, seed=seq)
    launches_with, with_it = _launches(scores, q, k, angles.cos(), angles.sin())
    kept = tuple(a for a in torch_adapt.ADAPTATIONS if a is not torch_adapt.InterleavedLaneMovesAsProduct)
    monkeypatch.setattr(torch_adapt, "ADAPTATIONS", kept)
    launches_without, without = _launches(scores, q, k, angles.cos(), angles.sin())
    assert torch.equal(with_it, without)
    assert len(launches_with) < len(launches_without), (launches_with, launches_without)


def test_a_slice_of_rows_moves_before_a_norm(monkeypatch):
    """generate's prefill keeps the last position: `norm(h)[:, -1:]` (SliceBeforeRowwise) becomes
    the norm of `h[:, -1:]`; the element-wise ops and the mean along the last dim each see the
    last row only, so the launches read one row of h instead of all of them (and the result
    is within the DL16 bound either way)."""
    from spyre_mlir.frontend import backend
    from spyre_mlir.transforms.torch_adapt import adapt as torch_adapt

    def last_row_normed(h, w):
        normed = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * w
        return normed[:, -1:]

    h, w = randn(1, 256, 512, seed=21), randn(512, seed=22)
    device = backend.get_device_model(backend.DeviceConfig())

    def read_bytes():
        before = len(device.profile.kernels)
        _launches(last_row_normed, h, w)
        return sum(k.ddr_read_bytes for k in device.profile.kernels[before:])

    moved = read_bytes()
    kept = tuple(a for a in torch_adapt.ADAPTATIONS if a is not torch_adapt.SliceBeforeRowwise)
    monkeypatch.setattr(torch_adapt, "ADAPTATIONS", kept)
    whole = read_bytes()
    h_bytes = 256 * 512 * 2
    assert whole >= h_bytes and moved < h_bytes // 8, (moved, whole)
