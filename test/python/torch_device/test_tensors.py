"""Spyre tensors: a device identity, values as the card holds them (DL16 in generic sticks),
views that alias, and an allocator that counts device bytes and refuses what DDR cannot hold."""

import numpy as np
import pytest
import torch

from spyre_mlir.layout import Layout
from spyre_mlir.sim.memory import DeviceMemory
from spyre_mlir.sim.numerics import DL16
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.torch_device import storage


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def dl16(x: torch.Tensor) -> torch.Tensor:
    """What a store leaves of x on the card, in x's dtype."""
    return torch.from_numpy(DL16.round(x.float().numpy())).to(x.dtype)


def test_spyre_is_a_device():
    x = torch.ones(3).to("spyre")
    assert x.device == torch.device("spyre", 0) and x.is_spyre
    assert torch.empty(2, 5, device="spyre").device.type == "spyre"
    assert torch.zeros(4, device="spyre").cpu().tolist() == [0.0] * 4
    assert torch.ones(2).spyre().device.type == "spyre"
    assert torch.accelerator.current_accelerator() == torch.device("spyre")
    assert torch.spyre.is_available() and torch.spyre.device_count() == 1
    assert "device='spyre:0'" in repr(x)


def test_a_module_moves_to_the_device_and_back():
    m = torch.nn.Linear(8, 4)
    w = m.weight.detach().clone()
    m.to("spyre")
    assert m.weight.device.type == "spyre" and isinstance(m.weight, torch.nn.Parameter)
    m.cpu()
    assert torch.equal(m.weight.detach(), dl16(w))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_floats_arrive_rounded_to_dl16(dtype):
    x = (randn(7, 130) * 3).to(dtype)
    back = x.to("spyre").cpu()
    assert back.dtype == dtype
    assert torch.equal(back, dl16(x).to(dtype))
    # the rounding is visible: DL16 keeps 9 fraction bits, float32 and float16 more
    if dtype != torch.bfloat16:
        assert not torch.equal(back, x)


def test_dl16_edges_survive_a_round_trip_as_the_format_says():
    x = torch.tensor([1.0 + 2.0**-10, 1.0 + 3 * 2.0**-10, 1e-12, -1e-12, 1e12, -1e12, 0.0])
    back = x.to("spyre").cpu()
    # a tie rounds to even; below the smallest normal flushes to zero; past the largest saturates
    assert back[0] == 1.0 and back[1] == 1.0 + 4 * 2.0**-10
    assert back[2] == 0 and back[3] == 0
    assert back[4] == DL16.max_value and back[5] == -DL16.max_value


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool])
def test_integers_and_booleans_are_held_exactly(dtype):
    if dtype == torch.bool:
        x = randn(5, 33) > 0
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(info.min, info.max, (5, 33), dtype=dtype, generator=torch.Generator().manual_seed(1))
        x[0, 0], x[0, 1] = info.min, info.max
    assert torch.equal(x.to("spyre").cpu(), x)


def test_float64_has_no_device_format():
    with pytest.raises(TypeError, match="holds no torch.float64"):
        torch.zeros(3, dtype=torch.float64, device="spyre")


def test_the_bytes_are_the_device_models_generic_sticks():
    x = randn(3, 5, 150)
    t = x.to("spyre")
    layout = Layout.generic((3, 5, 150), 2)
    model = DeviceMemory(DeviceConfig()).to_device(x.numpy(), layout)
    assert np.array_equal(storage.sticks(t), model.data)
    assert storage.ddr_tensor(t).layout == layout


def test_views_alias_their_base():
    x = randn(6, 70)
    t = x.to("spyre")
    expect = dl16(x)
    t.t()[3].fill_(2.0)  # column 3 of the base
    expect[:, 3] = 2.0
    t[1:5, ::2].mul_(-1)  # through a strided slice
    expect[1:5, ::2] *= -1
    v = t.view(3, 2, 70)
    v[2, 1, :4] = torch.tensor([1.0, 2.0, 3.0, 4.0]).to("spyre")
    expect.view(3, 2, 70)[2, 1, :4] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert torch.equal(t.cpu(), expect)
    assert t.unsqueeze(0).expand(2, 6, 70).cpu()[1].equal(expect)
    assert t.diagonal().cpu().equal(expect.diagonal())  # a view op without a kernel of its own
    d = t.diagonal()
    d.zero_()
    expect.diagonal().zero_()
    assert torch.equal(t.cpu(), expect)
    assert t.untyped_storage().data_ptr() == t.t().untyped_storage().data_ptr() == d.untyped_storage().data_ptr()


def test_a_view_reinterpreting_the_bytes_is_refused():
    t = randn(4, 8).to("spyre")
    with pytest.raises(TypeError, match="read as torch.int32"):
        t.view(torch.int32).cpu()


def test_the_allocator_counts_device_bytes():
    before = torch.spyre.memory_allocated()
    t = torch.empty(3, 70, device="spyre")  # 70 lanes pad to 2 sticks per row
    assert torch.spyre.memory_allocated() - before == 3 * 2 * 128 == Layout.generic((3, 70), 2).nbytes
    assert torch.accelerator.memory_allocated() == torch.spyre.memory_allocated()
    torch.spyre.reset_peak_memory_stats()
    peak = torch.spyre.max_memory_allocated()
    u = torch.empty(1000, 64, device="spyre")
    assert torch.spyre.max_memory_allocated() == peak + 1000 * 128
    del t, u
    assert torch.spyre.memory_allocated() == before
    assert torch.spyre.max_memory_allocated() == peak + 1000 * 128
    free, total = torch.spyre.mem_get_info()
    assert total == DeviceConfig().ddr_usable_bytes and free == total - before


def test_out_of_memory_names_the_bytes_and_leaves_the_allocator_consistent():
    before = torch.spyre.memory_allocated()
    torch.spyre.set_per_process_memory_fraction((before + 1024 * 1024) / DeviceConfig().ddr_usable_bytes)
    try:
        keep = torch.empty(256, 1024, device="spyre")  # 512 KiB
        with pytest.raises(torch.OutOfMemoryError, match=r"tried to allocate 1048576 bytes; \d+ of \d+ usable"):
            torch.empty(512, 1024, device="spyre")  # 1 MiB
        assert torch.spyre.memory_allocated() == before + 512 * 1024
        del keep
        ok = torch.empty(512, 1024, device="spyre")  # fits again
        assert ok.numel() == 512 * 1024
    finally:
        torch.spyre.set_per_process_memory_fraction(1.0)


def test_a_copy_converts_dtypes_as_pytorch_does():
    x = torch.tensor([-2.7, 0.0, 3.9, 1.5])
    t = x.to("spyre")
    assert torch.equal(t.to(torch.int32).cpu(), dl16(x).to(torch.int32))
    assert torch.equal(t.to(torch.bool).cpu(), x != 0)
    assert torch.equal(t.to(torch.float16).cpu(), dl16(x).half())
    i = torch.tensor([3, -1, 7]).to("spyre")
    assert torch.equal(i.float().cpu(), torch.tensor([3.0, -1.0, 7.0]))


def test_resize_keeps_the_elements_and_grows_the_storage():
    t = torch.arange(6.0).to("spyre")
    t.resize_(3, 4)
    assert torch.equal(t.cpu().flatten()[:6], torch.arange(6.0))
    t.resize_(2)
    assert torch.equal(t.cpu(), torch.tensor([0.0, 1.0]))
