"""The meaning of #spyre.layout: generic layouts, free views, and exact host <-> device transfers."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spyre_mlir.layout import Layout, LayoutError
from spyre_mlir.sim.memory import DeviceMemory
from spyre_mlir.target.config import DeviceConfig

DIMS = [1, 2, 3, 63, 64, 65, 100, 128, 150]


def test_design_example_generic_layout():
    lay = Layout.generic((5, 100, 150), 2)
    assert lay.device_size == (100, 3, 5, 64)
    assert lay.stride_map == (150, 64, 15000, 1)
    assert lay.stick_dim == 2 and lay.padded_extent(2) == 192
    lay.verify()


def test_f32_sticks_hold_32_elements():
    lay = Layout.generic((10, 70), 4)
    assert lay.device_size == (3, 10, 32)


@pytest.mark.parametrize(
    "size, strides, message",
    [
        ((4, 100, 64), (64, 1), "3 dims but stride_map has 2"),
        ((4, 100, 32), (64, 256, 1), "must hold 64 elements"),
        ((5, 100, 64), (64, 256, 1), "whole slices of padding"),
        ((3, 100, 64), (64, 256, 1), "cover 192 of 256"),
        ((4, 100, 64), (64, 256, 2), "step one element"),
    ],
)
def test_invalid_layouts_are_rejected(size, strides, message):
    lay = Layout((100, 256), 2, size, strides)
    with pytest.raises(LayoutError, match=message):
        lay.verify()


def element_map(lay: Layout) -> np.ndarray:
    """Host flat offset of every valid device element, in device order (-1 for padding)."""
    off, valid = lay.index_arrays()
    return np.where(valid, off, -1).reshape(-1)


shapes = st.lists(st.sampled_from(DIMS), min_size=1, max_size=4).filter(lambda s: math.prod(s) <= 200_000)


@settings(max_examples=150, deadline=None)
@given(shapes, st.randoms(use_true_random=False))
def test_permuted_view_reads_the_same_bytes(shape, rnd):
    shape = tuple(shape)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    lay = Layout.generic(shape, 2)
    view = lay.permuted(tuple(perm))
    view.verify()
    x = np.arange(math.prod(shape)).reshape(shape)
    off, valid = lay.index_arrays()
    voff, vvalid = view.index_arrays()
    assert np.array_equal(valid, vvalid)
    # the device element at each position is the same logical element, seen permuted
    assert np.array_equal(x.reshape(-1)[off[valid]], x.transpose(perm).reshape(-1)[voff[vvalid]])


@settings(max_examples=150, deadline=None)
@given(shapes, st.integers(0, 3))
def test_reshape_view_is_exact_or_refused(shape, cut):
    shape = tuple(shape)
    cut = min(cut, len(shape) - 1)
    # merge dims [cut:] -> one, or split the first dim in two when possible
    new = shape[:cut] + (math.prod(shape[cut:]),)
    lay = Layout.generic(shape, 2)
    view = lay.reshaped(new)
    if view is None:
        # refused only when padding would move: the stick dim is merged and not a multiple of 64
        assert shape[-1] % 64 != 0 and len(shape) - cut > 1
        return
    view.verify()
    off, valid = lay.index_arrays()
    voff, vvalid = view.canonical().index_arrays()
    assert valid.size == vvalid.size
    assert np.array_equal(valid.reshape(-1), vvalid.reshape(-1))
    assert np.array_equal(off.reshape(-1)[valid.reshape(-1)], voff.reshape(-1)[vvalid.reshape(-1)])


@settings(max_examples=100, deadline=None)
@given(shapes, st.randoms(use_true_random=False))
def test_unit_device_dims_do_not_change_the_placement(shape, rnd):
    lay = Layout.generic(tuple(shape), 2)
    sizes, strides = list(lay.device_size), list(lay.stride_map)
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randint(0, len(sizes) - 1)  # anywhere before the lane dim
        sizes.insert(at, 1)
        strides.insert(at, rnd.choice([1, 64, 576]))
    padded = Layout(lay.shape, 2, tuple(sizes), tuple(strides))
    padded.verify()
    assert lay.places_like(padded) and padded.places_like(lay)
    off, valid = lay.index_arrays()
    poff, pvalid = padded.index_arrays()
    assert np.array_equal(off[valid], poff[pvalid])
    # the outer device dims in another order place the elements elsewhere, and are told apart
    outer = [j for j, n in enumerate(lay.device_size[:-1]) if n > 1]
    if len(outer) >= 2:
        order = list(range(len(lay.device_size)))
        order[outer[0]], order[outer[1]] = order[outer[1]], order[outer[0]]
        moved = Layout(lay.shape, 2, tuple(lay.device_size[j] for j in order), tuple(lay.stride_map[j] for j in order))
        moff, mvalid = moved.index_arrays()
        assert not np.array_equal(off[valid], moff[mvalid])
        assert not lay.places_like(moved)


@settings(max_examples=100, deadline=None)
@given(shapes, st.randoms(use_true_random=False))
def test_transfers_roundtrip_bit_exactly(shape, rnd):
    """Values already representable in the device format come back unchanged, in any layout."""
    shape = tuple(shape)
    mem = DeviceMemory(DeviceConfig())
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    x = mem.numerics.round(rng.standard_normal(shape).astype(np.float32))
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    lay = Layout.generic(tuple(shape[p] for p in perm), 2)
    t = mem.to_device(x, lay, tuple(perm))
    assert np.array_equal(mem.from_device(t), x.transpose(perm))
    # padding lanes are zero
    _, valid = lay.index_arrays()
    dev = t.data.reshape(-1).view(np.uint16).reshape(lay.device_size)
    assert not dev[~valid].any()


@settings(max_examples=60, deadline=None)
@given(shapes, st.sampled_from([1, 7, 64, 1000]), st.randoms(use_true_random=False))
def test_transfers_in_slabs_write_the_same_bytes(shape, slab, rnd):
    """to_device stages and encodes a large tensor slab by slab (bounding its peak memory): the
    bytes equal those of one whole-tensor step, whatever the slab size."""
    from spyre_mlir.sim import memory

    shape = tuple(shape)
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    x = rng.standard_normal(shape).astype(np.float32)  # not rounded: the encoding is tested too
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    lay = Layout.generic(tuple(shape[p] for p in perm), 2)
    whole = DeviceMemory(DeviceConfig()).to_device(x, lay, tuple(perm)).data
    old = memory._TO_DEVICE_SLAB
    memory._TO_DEVICE_SLAB = slab
    try:
        sliced = DeviceMemory(DeviceConfig()).to_device(x, lay, tuple(perm)).data
    finally:
        memory._TO_DEVICE_SLAB = old
    assert np.array_equal(whole, sliced)


ranks_0_to_6 = st.lists(st.sampled_from(DIMS), min_size=0, max_size=6).filter(lambda s: math.prod(s) <= 100_000)


@settings(max_examples=150, deadline=None)
@given(ranks_0_to_6, st.sampled_from([1, 2, 4]), st.randoms(use_true_random=False))
def test_views_of_every_rank_and_element_size(shape, element_bytes, rnd):
    """Ranks 0-6; i8 (128 per stick), 16-bit (64) and f32 (32): the generic layout is valid,
    a permuted view places each element where the permuted tensor has it, and a reshape is
    either the same placement or refused (only when padding would move)."""
    shape = tuple(shape)
    lay = Layout.generic(shape, element_bytes)
    lay.verify()
    assert lay.device_size[-1] == 128 // element_bytes
    x = np.arange(max(1, math.prod(shape))).reshape(shape)
    off, valid = lay.index_arrays()
    assert valid.sum() == x.size  # every element once, the rest padding
    assert np.array_equal(np.sort(off[valid]), np.arange(x.size))
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    view = lay.permuted(tuple(perm))
    view.verify()
    voff, vvalid = view.index_arrays()
    assert np.array_equal(x.reshape(-1)[off[valid]], x.transpose(perm).reshape(-1)[voff[vvalid]])
    flat = lay.reshaped((x.size,))
    if flat is None:
        assert len(shape) > 1 and shape[-1] % lay.lanes != 0  # the stick dim's padding would move
    else:  # the same bytes: device position by device position, the same element (flat offset)
        foff, fvalid = flat.index_arrays()
        assert foff.size == off.size
        assert np.array_equal(fvalid.reshape(-1), valid.reshape(-1))
        assert np.array_equal(foff.reshape(-1)[fvalid.reshape(-1)], off.reshape(-1)[valid.reshape(-1)])
