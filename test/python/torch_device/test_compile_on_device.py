"""torch.compile on spyre tensors: parameters and inputs used where they are (no upload),
results returned as spyre tensors (no download), the same bits as the host-tensor path."""

import pytest
import torch

import spyre_mlir


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).eval()


def test_a_compiled_model_uses_spyre_tensors_where_they_are():
    x = randn(16, 64)
    model = mlp()
    torch._dynamo.reset()
    with torch.no_grad():
        on_host = torch.compile(model, backend="spyre")(x)
        torch._dynamo.reset()
        model.to("spyre")
        xs = x.to("spyre")
        compiled = torch.compile(model, backend="spyre")
        compiled(xs)  # compiles
        with spyre_mlir.profile() as prof:
            out = compiled(xs)
    torch._dynamo.reset()
    assert out.device == torch.device("spyre", 0)
    assert prof.kernels and prof.transfers_bytes == 0, prof.transfer_bytes_by_kind
    # the same program on the same DL16 operands: the same bits
    assert torch.equal(out.cpu(), on_host)


def test_a_compiled_call_charges_the_current_stream():
    model = mlp().to("spyre")
    xs = randn(16, 64, seed=1).to("spyre")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="spyre")
    s = torch.spyre.Stream()
    with torch.no_grad():
        compiled(xs)
        start, end = torch.spyre.Event(enable_timing=True), torch.spyre.Event(enable_timing=True)
        with torch.spyre.stream(s), spyre_mlir.profile() as prof:
            start.record()
            compiled(xs)
            end.record()
    torch._dynamo.reset()
    assert start.elapsed_time(end) == pytest.approx(sum(k.time_s for k in prof.kernels) * 1e3, rel=1e-9)
    assert {k.stream for k in prof.kernels} == {s.stream_id}


def test_a_call_mixing_devices_is_refused_naming_the_devices():
    model = mlp().to("spyre")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="spyre")
    with torch.no_grad(), pytest.raises(Exception, match=r"(?s)cpu.*spyre|spyre.*cpu"):
        compiled(randn(16, 64))
    torch._dynamo.reset()
