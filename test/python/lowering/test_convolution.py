"""torch.aten.convolution on the device (convert-torch-to-spyre `LowerConvolution`): conv1d and
conv2d through torch.compile on the device model, over strides, paddings, dilations, groups,
biases and odd sizes, against the exact answer within the DL16 bound that reference/evaluate.py
propagates (criterion: spyre_mlir.testing.criteria). Transposed and 3-d convolutions stay on the
host, saying why, and stay correct."""

import pytest
import torch
import torch.nn.functional as F
from helpers import Fn, compiled_within_bound, seeded_randn

from spyre_mlir.frontend.backend import STATS

randn = seeded_randn


def conv(x_shape, w_shape, bias=True, seed=0, **kw):
    """A convolution (conv1d or conv2d by the input's rank) on the device, within the bound."""
    x, w = randn(*x_shape, seed=seed), randn(*w_shape, seed=seed + 1)
    f = F.conv1d if len(x_shape) == 3 else F.conv2d
    inputs = (x, w, randn(w_shape[0], seed=seed + 2)) if bias else (x, w)
    _, report = compiled_within_bound(lambda *a: f(*a, **kw), *inputs)
    assert not report.cpu_fallback, f"ran on the CPU: {dict(report.cpu_fallback)}"


CONV1D = {
    # whisper's stem: kernel 3, padding 1, stride 1 then 2 (im2col when the channels fill sticks)
    "stem": ((1, 16, 46), (64, 16, 3), dict(padding=1)),
    "stem-stride2": ((1, 64, 46), (64, 64, 3), dict(padding=1, stride=2)),
    "kernel1": ((1, 100, 65), (63, 100, 1), {}),
    "odd-dilated": ((2, 65, 63), (63, 65, 3), dict(padding=1, dilation=2)),
    "stride3-padding2": ((1, 5, 100), (7, 5, 4), dict(stride=3, padding=2)),
    # squeezebert's grouped kernel-1 convolutions
    "groups4": ((1, 128, 23), (64, 32, 1), dict(groups=4)),
    "groups3-taps": ((1, 6, 33), (9, 2, 3), dict(groups=3, padding=1, stride=2)),
    # convbert's depthwise separable conv and lfm2's causal depthwise conv
    "depthwise-k9": ((1, 64, 23), (64, 1, 9), dict(padding=4, groups=64)),
    "depthwise-causal": ((1, 64, 23), (64, 1, 3), dict(padding=2, groups=64)),
    "depthwise-odd": ((1, 65, 100), (65, 1, 3), dict(stride=2, dilation=2, padding=1, groups=65)),
    "one-channel": ((1, 1, 257), (1, 1, 3), dict(padding=1)),
}

CONV2D = {
    # vit/deit/dinov2's patch embedding: stride = kernel
    "patch": ((1, 3, 40, 40), (64, 3, 8, 8), dict(stride=8)),
    "patch-odd-out": ((1, 3, 12, 20), (63, 3, 4, 4), dict(stride=4)),
    "general": ((1, 5, 9, 11), (7, 5, 3, 3), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    "depthwise": ((1, 16, 9, 9), (16, 1, 3, 3), dict(padding=1, groups=16)),
    "groups2": ((1, 8, 7, 7), (12, 4, 3, 3), dict(groups=2, padding=1)),
}


@pytest.mark.parametrize("name", CONV1D)
def test_conv1d(name):
    x_shape, w_shape, kw = CONV1D[name]
    conv(x_shape, w_shape, **kw)


@pytest.mark.parametrize("name", CONV2D)
def test_conv2d(name):
    x_shape, w_shape, kw = CONV2D[name]
    conv(x_shape, w_shape, **kw)


def test_conv_without_bias():
    conv((1, 16, 46), (64, 16, 3), bias=False, padding=1)


@pytest.mark.slow
def test_long_sequence_and_wide_image():
    conv((1, 80, 257), (64, 80, 3), padding=1)
    conv((2, 3, 32, 32), (65, 3, 3, 3), padding=1)


@pytest.mark.parametrize(
    "fn, shapes, reason",
    [
        (F.conv_transpose1d, ((1, 16, 10), (16, 32, 3)), "a transposed convolution"),
        (F.conv3d, ((1, 4, 5, 6, 7), (8, 4, 3, 3, 3)), "a 3-d convolution"),
    ],
    ids=["transposed", "3d"],
)
def test_stays_on_the_host_saying_why(fn, shapes, reason):
    x, w = randn(*shapes[0]), randn(*shapes[1], seed=1)
    with torch.no_grad():
        want = fn(x, w)
    torch._dynamo.reset()
    before = len(STATS.graphs)
    with torch.no_grad():
        y = torch.compile(Fn(fn), backend="spyre")(x, w)
    assert "torch.aten.convolution" in STATS.graphs[before].cpu_fallback
    torch.testing.assert_close(y, want)
    torch._dynamo.reset()
    with pytest.raises(Exception, match=reason), torch.no_grad():
        torch.compile(Fn(fn), backend="spyre", options={"strict": True})(x, w)


@pytest.mark.parametrize(
    "x_shape, affine",
    [((1, 64, 1, 23), True), ((2, 65, 33), True), ((5, 64), False), ((1, 16, 9, 9), False)],
    ids=["sam3-2d", "1d-odd", "rows", "2d-no-affine"],
)
def test_a_batch_norm_in_inference_runs_on_the_device(x_shape, affine):
    """A batch norm by its running statistics (`_native_batch_norm_legit_no_training`, what an
    eval-mode BatchNorm after sam3_lite's convolutions is): the statistics are viewed at the
    channels' broadcast shape before any arithmetic, so their per-channel scale is a splat that
    x's scaling broadcasts along the stick dim, on the device."""
    c = x_shape[1]
    mean, var = randn(c, seed=1), randn(c, seed=2).abs() + 0.25
    affine_inputs = (randn(c, seed=3), randn(c, seed=4)) if affine else ()

    def norm(x, mean, var, *wb):
        return F.batch_norm(x, mean, var, *wb, training=False, eps=1e-5)

    _, report = compiled_within_bound(norm, randn(*x_shape), mean, var, *affine_inputs)
    assert not report.cpu_fallback, f"ran on the CPU: {dict(report.cpu_fallback)}"
