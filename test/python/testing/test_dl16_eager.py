"""spyre_mlir.testing.dl16_eager: eager PyTorch with DL16's rounding, and the spread of a model's
DL16 runs that tells a compiler's error from DL16 arithmetic's own."""

import numpy as np
import torch

from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.criteria import compare_model_outputs
from spyre_mlir.testing.dl16_eager import RUNS, DL16Eager, dl16_spread

U = DL16.unit_roundoff


def _dl16(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(DL16.round(x.numpy()).astype(np.float32))


def test_an_op_takes_and_gives_dl16_values_and_a_view_moves_none():
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, 64, generator=gen), torch.randn(64, 16, generator=gen)
    with DL16Eager():
        y = a @ b
        v = a.t()
    assert torch.equal(y, _dl16(_dl16(a) @ _dl16(b)))
    assert not torch.equal(y, a @ b)
    assert torch.equal(v, a.t())  # a view's values are its source's, unrounded


def test_an_op_that_writes_its_argument_leaves_dl16_values_there():
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 64, generator=gen), torch.randn(4, 64, generator=gen)
    want = _dl16(_dl16(x) + _dl16(y))
    with DL16Eager():
        x.add_(y)
    assert torch.allclose(x, want, rtol=U, atol=0)
    assert torch.equal(x, _dl16(x))


def test_a_random_op_draws_eagers_numbers_in_its_operands_layout():
    """randn_like fills its result in its operand's layout: rounded, a transposed operand keeps
    its strides, so the run draws what eager draws and leaves the generator where eager does."""
    means = torch.randn(1, 40, 24).transpose(1, 2)
    state = torch.get_rng_state()
    want = torch.randn_like(means)
    after = torch.get_rng_state()
    torch.set_rng_state(state)
    with DL16Eager():
        got = torch.randn_like(means)
    assert torch.equal(torch.get_rng_state(), after)
    assert got.stride() == want.stride()
    assert torch.equal(got, _dl16(want))


def test_a_jittered_run_stays_within_one_and_a_half_roundings():
    gen = torch.Generator().manual_seed(2)
    a, b = torch.randn(32, 64, generator=gen), torch.randn(64, 64, generator=gen)
    exact = (_dl16(a).double() @ _dl16(b).double()).numpy()
    with DL16Eager(seed=3):
        y = (a @ b).double().numpy()
    assert np.all(np.abs(y - exact) <= 1.5 * U * np.abs(exact) + 1e-6)
    assert not np.array_equal(y, _dl16(torch.from_numpy(exact).float()).double().numpy())  # some moved


def test_a_well_conditioned_model_passes_in_every_dl16_run():
    torch.manual_seed(4)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64), torch.nn.LayerNorm(64)
    ).eval()
    x = torch.randn(16, 64)
    with torch.no_grad():
        eager = model(x)
    spread = dl16_spread(lambda: model(x), eager, layers=1)
    assert spread.failing == 0 and len(spread.runs) == RUNS, str(spread)
    assert spread.min_error > 0  # DL16 rounding shows in every run
    wrong = compare_model_outputs(eager * 1.05, eager, layers=1)
    assert not wrong.passed and not spread.explains(wrong)


def _decays(g: torch.Tensor) -> torch.Tensor:
    """Weights between neighbours from cumulative log decays (the gated delta rule's form): the
    sums reach -700, where DL16's rounding is 0.25 to 0.5 and exp() turns it into a factor."""
    c = g.cumsum(-1)
    return (c[:, 1:] - c[:, :-1]).exp()


def test_an_ill_conditioned_model_fails_in_dl16_itself_and_explains_only_results_within_its_runs():
    g = -torch.rand(4, 64, generator=torch.Generator().manual_seed(5)) * 20
    eager = _decays(g)
    spread = dl16_spread(lambda: _decays(g), eager, layers=1)
    assert spread.failing > 0, str(spread)
    with torch.no_grad(), DL16Eager(seed=1):
        one_run = _decays(g)
    assert spread.explains(compare_model_outputs(one_run, eager, layers=1))
    beyond = compare_model_outputs(eager + 2 * spread.max_error * eager.abs().max(), eager, layers=1)
    assert not spread.explains(beyond)
    assert "DL16 runs of the model fail the criterion too" in str(spread)


def _frames(x: torch.Tensor) -> torch.Tensor:
    """As many frames as a duration rounds to (FastSpeech 2's length regulator): 5.749 s is 57
    frames, its DL16 value 5.75 s is 58."""
    return torch.ones(int(torch.round(x.sum() * 10)), 4) * x.mean()


def test_an_output_shape_decided_by_a_rounding_is_explained_only_by_a_dl16_run_that_has_it():
    x = torch.tensor([5.749])
    eager = _frames(x)
    spread = dl16_spread(lambda: _frames(x), eager, layers=1)
    dl16_shape = compare_model_outputs(torch.ones(58, 4) * 5.75, eager, layers=1)
    assert dl16_shape.problem and spread.explains(dl16_shape), str(spread)
    assert "give 'out': compiled torch.float32[58, 4], eager torch.float32[57, 4]" in str(spread)
    other_shape = compare_model_outputs(torch.ones(59, 4) * 5.75, eager, layers=1)
    assert not spread.explains(other_shape)
