"""Every device lowering, through torch.compile on the device model, against the exact answer
within the DL16 bound that reference/evaluate.py propagates (criterion:
spyre_mlir.testing.criteria)."""

import pytest
import torch
from helpers import Fn, check
from helpers import seeded_randn as randn

from spyre_mlir.frontend.backend import STATS
from spyre_mlir.sim.numerics import DL16

UNARY = {
    "relu": torch.relu,
    "neg": torch.neg,
    "abs": torch.abs,
    "exp": torch.exp,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "sin": torch.sin,
    "cos": torch.cos,
    "erf": torch.erf,
    "gelu": torch.nn.functional.gelu,
    "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "silu": torch.nn.functional.silu,
}


def some_quick(names, quick: set[str]) -> list:
    """`names` as test parameters, those not in `quick` marked slow (make quick runs the others)."""
    return [n if n in quick else pytest.param(n, marks=pytest.mark.slow) for n in names]


@pytest.mark.parametrize("name", some_quick(UNARY, {"exp", "sin", "gelu"}))
def test_unary(name):
    check(UNARY[name], randn(7, 100, seed=1))


@pytest.mark.parametrize("name", some_quick(["log", "sqrt", "rsqrt", "reciprocal"], {"rsqrt"}))
def test_unary_on_positive_inputs(name):
    check(getattr(torch, name), randn(7, 100, seed=2).abs() + 0.1)


BINARY = {
    "add": lambda x, y: x + y,
    "sub_alpha": lambda x, y: x - 2 * y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / (y.abs() + 1),
    "minimum": lambda x, y: torch.minimum(x, y),
    "maximum": lambda x, y: torch.maximum(x, y),
}


@pytest.mark.parametrize("name", some_quick(BINARY, {"sub_alpha", "div"}))
def test_binary_with_broadcast(name):
    check(BINARY[name], randn(3, 65, 130, seed=3), randn(130, seed=4))


SCALAR_FORMS = {
    "mul_add_scalar": lambda x: x * 3.0 + 1.0,
    "rsub": lambda x: 2.0 - x,
    "div_scalar": lambda x: x / 4.0,
    "square": lambda x: x**2,
    "cube": lambda x: x**3,
    "clamp": lambda x: torch.clamp(x, -0.5, 0.5),
}


@pytest.mark.parametrize("name", some_quick(SCALAR_FORMS, {"mul_add_scalar", "cube"}))
def test_scalar_forms(name):
    check(SCALAR_FORMS[name], randn(5, 70, seed=5))


def test_softmax_last_dim():
    check(lambda x: torch.softmax(x, dim=-1), randn(2, 7, 100, seed=6, scale=3.0))


def test_layer_norm():
    ln = torch.nn.LayerNorm(100)
    with torch.no_grad():
        ln.weight.normal_(generator=torch.Generator().manual_seed(7))
        ln.bias.normal_(generator=torch.Generator().manual_seed(8))
    check(ln, randn(2, 7, 100, seed=9))


def test_rms_norm_style_mean():
    check(lambda x: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6), randn(3, 130, seed=10))


def test_bmm():
    check(torch.bmm, randn(3, 100, 70, seed=11), randn(3, 70, 130, seed=12))


def test_attention_scores_with_expand():
    q, k = randn(1, 2, 7, 64, seed=13), randn(1, 2, 7, 64, seed=14)
    check(lambda a, b: torch.softmax(a @ b.transpose(-1, -2) / 8.0, dim=-1), q, k)


def test_grouped_query_attention_with_a_mask():
    """GQA as HF writes it (repeat_kv's expand, a causal mask added to the scores): the scores'
    batched product is batch-major, so the mask's add runs in the softmax's row group."""
    q, k, v = randn(1, 4, 64, 64, seed=31), randn(1, 2, 64, 64, seed=32), randn(1, 2, 64, 64, seed=33)
    mask = torch.triu(torch.full((64, 64), -1e4), 1)

    def attention(q, k, v, mask):
        k = k[:, :, None].expand(1, 2, 2, 64, 64).reshape(1, 4, 64, 64)
        v = v[:, :, None].expand(1, 2, 2, 64, 64).reshape(1, 4, 64, 64)
        return torch.softmax(q @ k.transpose(-1, -2) / 8.0 + mask, dim=-1) @ v

    check(attention, q, k, v, mask)


def test_rotary_halves_of_transposed_heads():
    """rotate_half on heads of 128 transposed to (1, heads, rows, 128): the slices of whole
    sticks read the transposed view as it is."""
    x, w = randn(1, 64, 256, seed=34), randn(256, 256, seed=35, scale=0.05)
    cos, sin = randn(1, 1, 64, 128, seed=36), randn(1, 1, 64, 128, seed=37)

    def rotary(x, w, cos, sin):
        q = (x @ w).view(1, 64, 2, 128).transpose(1, 2)
        return q * cos + torch.cat((-q[..., 64:], q[..., :64]), dim=-1) * sin

    check(rotary, x, w, cos, sin)


@pytest.mark.slow
@pytest.mark.parametrize("batch,seq", [(1, 128), (2, 100)])
def test_attention_with_heads_below_a_stick_runs_on_the_device(batch, seq):
    """Heads of 32 (half a stick): the head split is a view of the projections sticked along
    the sequence (for 2 x 100, after splitting the rows into batch and sequence), and moving
    them there is estimated cheaper than the host's round trip, so no op goes to the host
    (convert-torch-to-spyre `_reshape`)."""

    def attention(x, wq, wk, wv):
        b, s, d = x.shape
        q, k, v = ((x @ w).view(b, s, 12, 32).permute(0, 2, 1, 3) for w in (wq, wk, wv))
        a = torch.softmax(q @ k.transpose(-1, -2) / 32**0.5, dim=-1)
        return (a @ v).permute(0, 2, 1, 3).reshape(b, s, d)

    check(attention, randn(batch, seq, 384, seed=30), *(randn(384, 384, seed=31 + i, scale=0.05) for i in range(3)))


def test_per_row_bias_of_a_host_vector_broadcasts_on_the_device():
    """b[:, None] of a host tensor, broadcast along the sticks of a (384, 128) product: the host
    lays b out as a splat (one element per stick, in every lane) on its way in."""
    check(
        lambda x, w, b: w @ torch.relu(x).t() + b[:, None],
        randn(128, 384, seed=40),
        randn(384, 384, seed=41, scale=0.05),
        randn(384, seed=42),
    )


def test_a_computed_per_head_gate_broadcasts_along_the_stick_on_the_device():
    """A gate computed per head ((23, 4): the heads side by side in a stick) times its head's
    16 values: the device puts each gate in every lane of a stick of its own (a lane scatter,
    then the splat), as it does with a host vector."""
    check(
        lambda x, w, g: (x @ w).view(23, 4, 16) * torch.sigmoid(x[:, :4] @ g).view(23, 4, 1),
        randn(23, 64, seed=43, scale=0.25),
        randn(64, 64, seed=44, scale=0.125),
        randn(4, 4, seed=45),
    )


def test_a_result_of_one_element_per_stick_from_elements_along_a_stick_on_the_device():
    """xLSTM's gate state: (1, 4) computed, viewed as (1, 4, 1) and clamped elementwise. The
    result holds one element per stick (a splat); its input holds the 4 side by side in one
    stick, and the device scatters them to sticks of their own."""
    check(
        lambda x, w: torch.maximum(torch.abs((x @ w)[:1, :4].view(1, 4, 1)), torch.tensor(0.5)),
        randn(23, 64, seed=46),
        randn(64, 64, seed=47, scale=0.25),
    )


def test_one_element_of_the_stick_dim_off_a_stick_boundary_on_the_device():
    """h[..., 15:16] of per-head values (a gate read from the last of a head's 16 lanes): taken
    between two transposes, then scattered one per stick for the broadcast that reads it."""
    check(
        lambda x, w: (lambda h: h * torch.sigmoid(h[..., 15:16]))((x @ w).view(1, 23, 4, 16)),
        randn(23, 64, seed=48, scale=0.25),
        randn(64, 64, seed=49, scale=0.125),
    )


def test_linear_on_3d_input():
    lin = torch.nn.Linear(100, 70)
    check(lin, randn(2, 5, 100, seed=15))


def test_embedding_gathers_rows_on_the_device():
    torch._dynamo.reset()
    emb = torch.nn.Embedding(1000, 130).eval()
    ids = torch.randint(0, 1000, (2, 7), generator=torch.Generator().manual_seed(16))
    before = len(STATS.graphs)
    with torch.no_grad():
        y = torch.compile(emb, backend="spyre")(ids)
        eager = emb(ids)
    assert not STATS.graphs[before].cpu_fallback
    # a gather moves bits: the device result is the table rounded to DL16, exactly
    assert torch.equal(y, torch.from_numpy(DL16.round(eager.numpy())))


def test_embedding_index_out_of_range_is_refused():
    torch._dynamo.reset()
    emb = torch.nn.Embedding(10, 64).eval()
    with torch.no_grad(), pytest.raises(Exception, match="index 12 is out of range for a table of 10 rows"):
        torch.compile(emb, backend="spyre")(torch.tensor([[1, 12]]))


def test_where_with_a_boolean_mask():
    check(lambda x, y: torch.where(x > 0.3, x * 2.0, y), randn(2, 7, 100, seed=17), randn(7, 100, seed=18))


def test_slices_and_select():
    check(lambda x: x[:, 3:9, 64:130] * 2.0 + x[:, :6, :66], randn(2, 10, 200, seed=19))
    check(lambda x: x[:, 0] + 1.0, randn(2, 10, 200, seed=20))


def test_a_float_copy_of_integers_is_the_border_not_a_fallback():
    """Positions made floats (a rotary table's inv_freq @ positions.float()): the integer tensor
    lives on the host, its float copy is where it crosses to the device, by design; a float to
    float copy is not excused."""
    positions = torch.arange(64).reshape(1, 1, 64)
    inv_freq = randn(1, 32, 1, seed=31)
    check(lambda p, f: f @ p.float(), positions, inv_freq)
    report = STATS.graphs[-1]
    assert report.host_by_design.get("torch.aten._to_copy") == 1, report


def test_zero_dim_output_keeps_its_shape():
    torch._dynamo.reset()
    x = randn(4, 64, seed=30)
    with torch.no_grad():
        y, total = torch.compile(Fn(lambda v: (v * 2, v.sum())), backend="spyre")(x)
    assert y.shape == (4, 64) and total.shape == ()
    # on the device: each input rounded to DL16 (u |x_i|), the fp32 sum stored in DL16 (u |total|)
    assert abs(total - x.sum()) <= 2 * DL16.unit_roundoff * x.abs().sum()


@pytest.mark.parametrize(
    "name, fn",
    [
        # exp leaves 1.0 in the padding lanes of each row (exp(0)); every real value is > 1, so a
        # minimum that read the padding would be 1.0: the padding must be masked with +inf
        ("min", lambda x: torch.amin(torch.exp(x.abs() + 0.5), dim=-1)),
        # -exp leaves -1.0 there; every real value is < -1: masked with -inf
        ("max", lambda x: torch.amax(-torch.exp(x.abs() + 0.5), dim=-1)),
        # and a sum must not add the 1.0s: masked with 0
        ("sum", lambda x: torch.sum(torch.exp(x), dim=-1)),
    ],
)
@pytest.mark.parametrize(
    "width",
    [
        *(pytest.param(w, marks=pytest.mark.slow) for w in (1, 63)),
        65,
        *(pytest.param(w, marks=pytest.mark.slow) for w in (100, 129)),
    ],
)
def test_reductions_mask_the_padding_with_the_identity_of_their_op(name, fn, width):
    check(fn, randn(6, width, seed=width))


@pytest.mark.parametrize(
    "n", [*(pytest.param(n, marks=pytest.mark.slow) for n in (2, 9, 64)), 65, pytest.param(130, marks=pytest.mark.slow)]
)
def test_a_reduction_result_read_along_its_rows_is_gathered_into_sticks(n):
    """x.sum(-1) leaves one element per stick (lane 0); adding b of shape (3, n) reads those
    elements along sticks: a restickify gathers lane 0 of up to 64 sticks into one stick
    (SFP transpose of `rows` sticks into one)."""
    check(lambda x, b: x.sum(-1) + b, randn(3, n, 70, seed=n), randn(3, n, seed=n + 1))
