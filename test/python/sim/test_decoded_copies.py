"""Products read a frozen device tensor's decoded copy (sim/memory.py,
`DeviceMemory.decoded`) in place of decoding its DL16 bits: the same values, so the same bits
as the cooperative run and as the batched run without copies."""

import numpy as np
import pytest
import torch

from spyre_mlir.frontend.backend import get_device_model
from spyre_mlir.layout import Layout
from spyre_mlir.sim import interpreter, plans, regroup
from spyre_mlir.sim.memory import DeviceMemory
from spyre_mlir.target.config import DeviceConfig


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 192)).eval()


def _calls(batch: bool, rows: int, **options) -> tuple[list[np.ndarray], int]:
    """Three calls of the compiled MLP (the later ones regrouped when `batch`): each output, and
    the bytes of decoded copies the device holds after them (while the graph is alive)."""
    torch._dynamo.reset()
    model = _mlp()
    fn = torch.compile(model, backend="spyre", options={"cache": False, **options})
    xs = [torch.randn(rows, 256, generator=torch.Generator().manual_seed(s)) for s in range(3)]
    old, interpreter.BATCH = interpreter.BATCH, batch
    try:
        with torch.no_grad():
            outs = [fn(x).numpy().copy() for x in xs]
        return outs, get_device_model(DeviceConfig(**options)).memory.decoded_bytes
    finally:
        interpreter.BATCH = old
        torch._dynamo.reset()


@pytest.mark.parametrize("rows", [1, 8])  # a decode step's matrix-vector products, a prefill's
def test_products_on_decoded_copies_give_the_same_bits(rows, monkeypatch):
    views = []
    strided = regroup.BView.strided

    def view(self, copy, k, n):
        tiles = strided(self, copy, k, n)
        views.append((copy.rows, len(self.grid), tiles.of(copy.values).flags.owndata))
        return tiles

    loads = []
    run = plans.DmaPlan.run

    def counted(self, *args, **kwargs):
        loads.append(self.lx_idx.size if self.load else 0)
        return run(self, *args, **kwargs)

    monkeypatch.setattr(regroup.BView, "strided", view)
    monkeypatch.setattr(plans.DmaPlan, "run", counted)
    cooperative, _ = _calls(False, rows, cores=8)
    loads.clear()
    copies, held = _calls(True, rows, cores=8)
    loaded_with_copies = sum(loads)
    # B tiles read in place: from copies arranged row by row (the weights' sticks run down
    # their columns first), and at 1 row also on a grid of tiles (n groups x k halves)
    assert any(arranged is not None and not owned for arranged, _, owned in views), views
    assert rows != 1 or any(grid >= 2 and not owned for _, grid, owned in views), views
    loads.clear()
    none, held_none = _calls(True, rows, cores=8, decoded_copy_bytes=0)
    # the weights' loads are skipped (the products read the copies): 2 of 3 calls regrouped
    assert sum(loads) - loaded_with_copies >= 2 * (256 + 512), (sum(loads), loaded_with_copies)
    assert held_none == 0
    # both weights (256 x 512, 512 x 192) at least, as fp32
    assert held >= 4 * (256 * 512 + 512 * 192), held
    for c, w, n in zip(copies, cooperative, none):
        assert np.array_equal(c.view(np.uint32), w.view(np.uint32))
        assert np.array_equal(n.view(np.uint32), w.view(np.uint32))


def test_a_budget_for_one_copy_gives_the_same_bits():
    """With room for one weight's copy, one is made, the other weight's loads run and its
    products decode LX: the bits are the cooperative run's."""
    cooperative, _ = _calls(False, 8, cores=8)
    one = 4 * 256 * 512  # the larger weight's fp32 copy; the two together do not fit
    copies, held = _calls(True, 8, cores=8, decoded_copy_bytes=one)
    assert 0 < held <= one
    for c, w in zip(copies, cooperative):
        assert np.array_equal(c.view(np.uint32), w.view(np.uint32))


def test_a_frozen_tensor_has_read_only_bytes_and_a_budgeted_copy():
    cfg = DeviceConfig(decoded_copy_bytes=2 * 4 * 64 * 64)  # two 64 x 64 tensors' copies
    memory = DeviceMemory(cfg)
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    a, b, c = (memory.to_device(x, Layout.generic((64, 64), 2)) for _ in range(3))
    assert memory.decoded(a) is None  # not frozen: its bytes may change
    for t in (a, b, c):
        t.freeze()
    with pytest.raises(ValueError, match="read-only"):
        a.data[0, 0] = 1
    bits = memory.numerics.decode(a.data.view(np.uint16)).reshape(-1, 64)
    copy = memory.decoded(a)
    assert copy is not None and copy.rows is None and copy.values.shape == (a.layout.num_sticks, 64)
    assert np.array_equal(copy.values, bits)
    assert memory.decoded(a.view_as(a.layout), 16) is copy  # views share their owner's copy, as it was made
    # arranged by 16 rows: stick p = 16 c + r at row 4 r + c, each stick's values as decoded
    arranged = memory.decoded(b, 16)
    assert arranged is not None and arranged.rows == 16
    sticks = np.arange(64)
    assert np.array_equal(arranged.rows_of(sticks), sticks % 16 * 4 + sticks // 16)
    assert np.array_equal(arranged.values[arranged.rows_of(sticks)], bits)
    assert memory.decoded(c) is None  # past the budget: the caller decodes
    memory.free(a)
    memory.free(b)
    assert memory.decoded_bytes == 0 and memory.decoded(c) is not None
