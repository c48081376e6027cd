"""Data movement on float data through torch.compile on the device model: index.Tensor,
index_select, repeat, constant_pad_nd and expand along the stick dim, against the exact
answer within the DL16 bound (spyre_mlir.testing.criteria), each op on the device
(STATS.graphs records no CPU fallback). Tables are computed on the device (x * 2) unless a
case is about a table sent by the host."""

import pytest
import torch
import torch.nn.functional as F
from helpers import compiled_within_bound, seeded_randn


def check(fn, *inputs, on_cpu=()):
    """fn compiled for the device agrees with the exact answer within the DL16 bound; the
    graph's CPU fallbacks are exactly `on_cpu`."""
    _, report = compiled_within_bound(fn, *inputs, cache=False)
    assert set(report.cpu_fallback) == set(on_cpu), f"ran on the CPU: {dict(report.cpu_fallback)}"


randn = seeded_randn


def randint(low, high, *shape, seed=0):
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed))


# index.Tensor and index_select: rows at host indices


def test_rows_of_a_host_table():
    """GPT-J's sin/cos table (a graph input) at the positions."""
    check(lambda t, i: t[i], randn(128, 8), randint(0, 128, 1, 23))


@pytest.mark.parametrize("rows,cols,n", [(100, 65, 63), (257, 1, 9), (63, 257, 100)])
def test_rows_with_negative_indices(rows, cols, n):
    check(lambda t, i: (t * 2)[i], randn(rows, cols), randint(-rows, rows, n, seed=1))


@pytest.mark.parametrize("dim,shape,n", [(0, (130, 64), 23), (1, (7, 65, 3), 5), (0, (65,), 100)])
def test_index_select(dim, shape, n):
    check(lambda t, i: torch.index_select(t * 2, dim, i), randn(*shape), randint(0, shape[dim], n, seed=2))


def test_index_select_of_a_0d_index_keeps_the_dim():
    check(lambda t, i: torch.index_select(t * 3, 1, i), randn(4, 100, 64), torch.tensor(7))


def test_two_indices_pick_rows():
    """CLIP's pooled output: x[arange(batch), eos] (the row numbers computed on the host)."""
    check(lambda x, b, i: (x * 2)[b, i], randn(2, 23, 64), torch.tensor([0, 1]), torch.tensor([5, -1]))


def test_index_a_middle_dim():
    """A leading dim before the indexed one: a row block per leading element."""
    check(lambda x, i: (x + 1)[:, i], randn(3, 63, 100), randint(-63, 63, 4, 5, seed=3))


@pytest.mark.parametrize("shape", [(65, 100), (3, 63, 100)])
def test_index_the_stick_dim(shape):
    """The last dim indexed: swapped with the dim before it, gathered, swapped back."""
    check(lambda x, i: (x * 2)[..., i], randn(*shape), randint(-shape[-1], shape[-1], 7, 2, seed=4))


def test_index_a_vector_gathers_columns():
    """Rows of single elements that share sticks: gathered as columns."""
    check(lambda x, i: (x * 2)[..., None][i], randn(257), randint(0, 257, 9, seed=5))


def test_indices_not_adjacent_put_the_rows_first():
    check(lambda x, i, j: (x - 1)[i, :, j], randn(5, 7, 65), torch.tensor([0, 4, -5]), torch.tensor([64, 0, 1]))


def test_convbert_span_unfold_stays_on_the_host_saying_why():
    """ConvBERT's unfold: a padded (1, 32, 31, 1) indexed on its last two dims by (9, 23, 1, 1)
    and (1, 1). The rows gathered hold the 32 channels side by side, but the (..., 1) result's
    readers take one element per stick, and no device relayout puts them there: the index stays
    on the host (the padding runs on the device)."""
    spans = torch.arange(9)[:, None, None, None] + torch.arange(23)[None, :, None, None]
    check(
        lambda x, i, j: F.pad(x * 2, (0, 0, 4, 4))[:, :, i, j],
        randn(1, 32, 23, 1),
        spans,
        torch.zeros(1, 1).long(),
        on_cpu={"torch.aten.index.Tensor"},
    )


def test_every_dim_indexed_stays_on_the_host_saying_why():
    """Rows of single elements of a 2-d tensor whose last dim is no multiple of a stick: no
    view makes them a vector to gather as columns (the result is still right)."""
    check(
        lambda x, i, j: (x * 2)[i, j],
        randn(4, 65),
        torch.tensor([0, 3, 1]),
        torch.tensor([64, 0, -1]),
        on_cpu={"torch.aten.index.Tensor"},
    )


# repeat and constant_pad_nd: copies into offsets of one buffer


@pytest.mark.parametrize(
    "shape,reps",
    [((4, 1, 23), (2, 1, 3)), ((1, 63), (1, 3)), ((65, 64), (2, 1, 2)), ((4, 64, 16), (1, 1, 1))],
)
def test_repeat(shape, reps):
    check(lambda x: (x * 2).repeat(*reps), randn(*shape))


@pytest.mark.parametrize(
    "shape,pad,value",
    [
        ((1, 22, 32), (0, 0, 1, 0), 0.0),
        ((2, 23, 65), (3, 2, 4, 4), 1.5),
        ((257,), (1, 2), 0.0),
        ((3, 100, 64), (0, 0, 0, 3), -4.0),
    ],
)
def test_constant_pad(shape, pad, value):
    check(lambda x: F.pad(x * 2, pad, value=value), randn(*shape))


def test_negative_padding_stays_on_the_host():
    check(lambda x: F.pad(x * 2, (0, 0, -1, 2)), randn(3, 7, 64), on_cpu={"torch.aten.constant_pad_nd"})


# expand along the stick dim of a computed (..., 1) tensor


@pytest.mark.parametrize("shape,width", [((1, 23, 8), 2), ((2, 63), 5)])
def test_expand_along_the_stick_dim(shape, width):
    """Helium's and GLM's interleaved rotary tables: x[..., None].expand(..., 2)."""
    check(lambda x: (x * 2)[..., None].expand(*shape, width) * 1.5, randn(*shape))


# slice_scatter: `y[..., a:b] = src` after functionalisation, a cat of x's pieces and src


def _assign_rows(x, src):
    y = x * 2
    y[:, 3:7] = src * 3  # Longformer's chunk assignment: rows of a non-stick dim
    return y


def _assign_sticks(x, src):
    y = x * 2
    y[..., 64:128] = src + 1  # whole sticks of the stick dim
    return y


def _assign_tail(x, src):
    return torch.slice_scatter(x * 2, src * 3, dim=1, start=-2)  # to the end, from a negative start


@pytest.mark.parametrize(
    "fn, x_shape, src_shape",
    [
        (_assign_rows, (2, 9, 64), (2, 4, 64)),
        (_assign_sticks, (3, 5, 192), (3, 5, 64)),
        (_assign_tail, (4, 6, 32), (4, 2, 32)),
    ],
    ids=["rows", "sticks", "tail"],
)
def test_a_slice_assignment_runs_on_the_device(fn, x_shape, src_shape):
    check(fn, randn(*x_shape), randn(*src_shape, seed=1))
