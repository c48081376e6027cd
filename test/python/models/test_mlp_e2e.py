"""torch.compile(backend="spyre") runs an MLP through torch -> spyre -> spyre_isa on the
device model and matches PyTorch within the DL16 bound (criterion:
spyre_mlir.testing.criteria)."""

import gc
import weakref

import numpy as np
import pytest
import torch

from spyre_mlir.frontend.backend import STATS, ParamKey, get_device_model
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.numerics import DL16, IEEE_FP16
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.target.constants import F16_LANES, STICK_BYTES
from spyre_mlir.testing.criteria import accumulation_bound, assert_within_device_bound, reference

ACTIVATIONS = {"gelu": torch.nn.GELU(), "relu": torch.nn.ReLU(), "gelu_tanh": torch.nn.GELU(approximate="tanh")}


def mlp(activation: str) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), ACTIVATIONS[activation], torch.nn.Linear(512, 256)).eval()


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize(
    "batch",
    [
        *(pytest.param(b, marks=pytest.mark.slow) for b in (1, 8, 63, 64)),
        100,
        pytest.param(128, marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_mlp_matches_eager_within_dl16_bound(activation, batch):
    model = mlp(activation)
    x = torch.randn(batch, 256, generator=torch.Generator().manual_seed(batch))
    (exact,), (bound,) = reference(model, x, numerics=DL16)
    with torch.no_grad():
        y = torch.compile(model, backend="spyre")(x)
        eager = model(x)
    assert y.dtype == torch.float32 and y.shape == eager.shape
    assert_within_device_bound(y, exact, bound, DL16)
    # eager's own fp32 error is far below the device bound
    assert np.all(np.abs(eager.double().numpy() - exact) <= bound)


def test_second_call_recompiles_nothing_and_keeps_weights_resident():
    model = mlp("gelu")
    f = torch.compile(model, backend="spyre")
    x = torch.randn(8, 256)
    device = get_device_model()
    with torch.no_grad():
        f(x)
        compiles, sent = STATS.compiles, device.profile.transfers_bytes
        y2 = f(x)
        assert STATS.compiles == compiles
        # only x (8 x 256) goes in and y (8 x 256) comes out: 8 rows of 4 sticks each way
        assert device.profile.transfers_bytes - sent == 2 * (8 * (256 // F16_LANES) * STICK_BYTES)
        assert torch.equal(y2, f(x))


def test_a_constant_built_on_the_host_is_built_and_uploaded_once():
    """torch.full is made on the host (CREATION_OPS); its operands are constants, so the
    executor builds it on the first call only and keeps its upload: a second call moves
    x in and the result out, 8 sticks each, and not the constant's 8 more."""

    def f(x):
        return x + torch.full((8, 64), 2.0)

    g = torch.compile(f, backend="spyre")
    x = torch.randn(8, 64)
    device = get_device_model()
    with torch.no_grad():
        first = g(x)
        sent = device.profile.transfers_bytes
        second = g(x)
    assert device.profile.transfers_bytes - sent == 2 * 8 * 128
    assert torch.equal(first, second)
    # the device's answer: x stored in DL16, an fp32 add, the sum stored in DL16
    assert np.array_equal(second.numpy(), DL16.round(DL16.round(x.numpy()) + np.float32(2.0)))


def test_a_returned_constant_is_built_again_for_each_call(executable_calls):
    """What a call returns is the caller's to write into (an Executable hands back its
    arrays as they are): a host-built constant that is returned is not kept from one call
    to the next."""

    def f(x):
        return x * 2.0, torch.zeros(4, 64)

    with torch.no_grad():
        torch.compile(f, backend="spyre")(torch.randn(4, 64))
    exe, inputs = executable_calls[-1]
    _, z = exe(*inputs)
    z += 5.0
    _, again = exe(*inputs)
    assert np.array_equal(again, np.zeros((4, 64), dtype=np.float32))


def test_updated_weights_are_sent_again():
    model = mlp("relu")
    f = torch.compile(model, backend="spyre")
    x = torch.randn(4, 256)
    with torch.no_grad():
        before = f(x)
        model[2].bias.add_(1.0)
        after = f(x)
    assert torch.allclose(after - before, torch.ones_like(before), atol=2e-2)


@pytest.fixture
def executable_calls(monkeypatch):
    """The (Executable, inputs) of every call of any Executable in the test, in order."""
    calls = []
    call = Executable.__call__
    monkeypatch.setattr(Executable, "__call__", lambda self, *a, **k: calls.append((self, a)) or call(self, *a, **k))
    return calls


@pytest.fixture
def fresh_replay(executable_calls):
    """A function giving, for the last call of any Executable, the outputs a fresh executable
    of the same program computes from the same inputs (nothing resident from earlier calls)."""

    def replay() -> tuple:
        exe, inputs = executable_calls[-1]
        return Executable(exe.module, exe.ctx, DeviceModel(exe.model.config))(*inputs)

    return replay


def parameter_in_a_pool_of_its_own(w: torch.Tensor) -> tuple[torch.nn.Parameter, list[torch.nn.Parameter]]:
    """(p, keep): a Parameter of `w` whose memory block sits in a CPython allocator pool that only
    the Parameters `keep` (to be kept alive) share, filled to its last block. When p dies, the
    pool moves to the front of its size class's list with one free block, p's, which is the next
    one handed out (Objects/obmalloc.c): a new Parameter then takes p's id."""
    before = [torch.nn.Parameter(w) for _ in range(20_000)]  # the partly used pools' free blocks
    p = torch.nn.Parameter(w)
    after = [torch.nn.Parameter(w) for _ in range(1_000)]  # the rest of p's pool
    return p, before + after


def test_a_new_parameter_in_a_freed_ones_place_is_sent_and_the_old_copy_freed(fresh_replay):
    # CPython gives a new object the address of a freed one: a new Parameter often has the id
    # of the one it replaced, at the same version (0). Keyed by (id, version), it got the old
    # one's device copy (relative errors ~1: a wrong answer, silently). Each call is compared
    # bit for bit with a fresh executable of the same program on the same inputs.
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64, bias=False)
    model.weight, keep = parameter_in_a_pool_of_its_own(torch.randn(64, 64))
    f = torch.compile(model, backend="spyre")
    x = torch.randn(8, 64)
    memory = get_device_model().memory
    with torch.no_grad():
        f(x)
        used = memory.ddr_used
        for _ in range(3):
            old = weakref.ref(model.weight)
            where = id(model.weight)
            w = torch.randn(64, 64)
            gc.collect()  # before the parameter dies: nothing else is freed or made in between
            model.weight = None  # the old parameter dies here
            assert old() is None, "the old parameter outlived its last reference"
            # its device copy goes with it (the card's copies of a tensor are watched by its
            # life), so no later tensor can be taken for it, whatever id it gets
            assert memory.ddr_used < used, "the dead parameter's device copy outlived it"
            candidates = [torch.nn.Parameter(w)]  # the first takes the freed block, unless another object did
            while len(candidates) < 1_000 and id(candidates[-1]) != where:
                candidates.append(torch.nn.Parameter(w))
            model.weight = candidates.pop()  # in the freed block when one took it: its pool is full again
            del candidates
            y = f(x)
            (fresh,) = fresh_replay()
            assert np.array_equal(y.numpy(), fresh)
            assert memory.ddr_used == used  # the replaced copy was freed, not kept
    del keep


def test_writes_through_data_are_seen(fresh_replay):
    # p.data bypasses the version counter; each write below left the old device copy in use
    # (relative errors ~1) before the key held the data pointer and sampled values
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64)
    f = torch.compile(model, backend="spyre")
    x = torch.randn(8, 64)
    writes = [
        lambda: model.weight.data.normal_(),
        lambda: model.weight.data.add_(torch.randn(64, 64)),  # a LoRA-style merge
        lambda: setattr(model.weight, "data", torch.randn(64, 64)),
        lambda: model.bias.data.copy_(torch.randn(64)),
    ]
    with torch.no_grad():
        f(x)
        for write in writes:
            version = (model.weight._version, model.bias._version)
            write()
            assert (model.weight._version, model.bias._version) == version  # unseen by the version counter
            y = f(x)
            (fresh,) = fresh_replay()
            assert np.array_equal(y.numpy(), fresh)


def test_param_key_equal_only_for_the_same_live_tensor_and_contents():
    def key(p):
        return ParamKey(p, p.detach().numpy())

    p = torch.nn.Parameter(torch.zeros(1000))
    k = key(p)
    assert k == key(p)
    assert k != key(torch.nn.Parameter(torch.zeros(1000)))
    with torch.no_grad():
        p.add_(1.0)
    assert k != key(p)  # updated in place: a new version
    k = key(p)
    p.data[-1] = 7.0  # through .data: no new version, but a sampled value (the last is one) changed
    assert k != key(p)
    old = key(p)
    del p
    gc.collect()
    assert old != old  # its tensor is gone: equal to nothing, not even itself


def test_bf16_model_returns_bf16():
    model = mlp("relu").to(torch.bfloat16)
    x = torch.randn(8, 256, dtype=torch.bfloat16)
    with torch.no_grad():
        y = torch.compile(model, backend="spyre")(x)
        eager = model(x)
    assert y.dtype == torch.bfloat16
    assert torch.allclose(y.float(), eager.float(), atol=0.05, rtol=0.05)


def test_ieee_fp16_numerics_option():
    model = mlp("gelu")
    x = torch.randn(16, 256)
    (exact,), (bound,) = reference(model, x, numerics=IEEE_FP16)
    with torch.no_grad():
        y = torch.compile(model, backend="spyre", options={"numerics": "ieee-fp16"})(x)
    assert_within_device_bound(y, exact, bound, IEEE_FP16)


class LogCumSumExp(torch.nn.Module):
    """A float op with no device lowering: it runs on the CPU inside the compiled graph."""

    def forward(self, x):
        return torch.logcumsumexp(x, dim=-1) * 2.0


def test_unsupported_op_strict_raises_naming_the_op():
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), LogCumSumExp()).eval()
    with (
        torch.no_grad(),
        pytest.raises(
            Exception,
            match=r"'torch\.aten\.logcumsumexp' producing !torch.vtensor<\[4,64\],f32> cannot run on the device: no device lowering yet",
        ),
    ):
        torch.compile(model, backend="spyre", options={"strict": True})(torch.randn(4, 64))


def test_unsupported_op_falls_back_to_cpu_with_one_warning():
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), LogCumSumExp()).eval()
    x = torch.randn(4, 64)
    with (
        torch.no_grad(),
        pytest.warns(
            UserWarning,
            match=r"1 op\(s\) of this graph run on the CPU \(no device lowering yet\): torch\.aten\.logcumsumexp x1",
        ) as record,
    ):
        y = torch.compile(model, backend="spyre")(x)
        eager = model(x)
    assert len([w for w in record if "spyre" in str(w.message)]) == 1
    # the linear and the * 2 ran on the device (DL16), the logcumsumexp on the CPU
    assert not torch.equal(y, eager)
    assert torch.allclose(y, eager, rtol=0.02, atol=0.05)


def test_unknown_option_is_rejected():
    with pytest.raises(Exception, match="unknown spyre backend option"):
        torch.compile(mlp("relu"), backend="spyre", options={"cores_please": 3})(torch.randn(2, 256))


def _on_cores(model, x, cores: int, **options) -> torch.Tensor:
    torch._dynamo.reset()
    with torch.no_grad():
        return torch.compile(model, backend="spyre", options={"cores": cores, **options})(x)


def test_fewer_cores_same_answer():
    """4 cores give each core a larger tile than 32: BLAS sums it in another order, so the fp32
    results agree within the bound (both within the reference's); the f64 reference mode's sums
    do not depend on tile shapes, and there the two give the same bits (without a k split,
    whose parts add their fp32 partial sums over the ring in either mode, and with the same k
    chunks: with stationary A blocks the estimates may pick other splits on 32 cores than on
    4, and with them other k chunks, whose sums the fp32 accumulator adds)."""
    model = mlp("gelu")
    x = torch.randn(32, 256)
    (exact,), (bound,) = reference(model, x, numerics=DL16)
    y32, y4 = _on_cores(model, x, 32), _on_cores(model, x, 4)
    assert_within_device_bound(y32, exact, bound, DL16)
    assert_within_device_bound(y4, exact, bound, DL16)
    f64 = {"accumulation": "f64", "disable": ["k_split", "stationary_a"]}
    assert torch.equal(_on_cores(model, x, 32, **f64), _on_cores(model, x, 4, **f64))
    assert get_device_model(DeviceConfig(cores=4)).profile.kernels


def test_work_divisions_agree_within_the_accumulation_bound():
    """One matmul on 32, 4 and 1 cores: the results differ only in the order of their fp32 sums
    and stay within criteria.accumulation_bound of each other; each run repeats its own bits."""
    torch.manual_seed(3)
    lin = torch.nn.Linear(1024, 256, bias=False).eval()
    x = torch.randn(64, 1024)
    a = DL16.round(x.numpy())
    b = DL16.round(lin.weight.detach().numpy().T)
    runs = {c: _on_cores(lin, x, c).numpy() for c in (32, 4, 1)}
    for c, y in runs.items():
        assert np.array_equal(_on_cores(lin, x, c).numpy().view(np.uint32), y.view(np.uint32)), c
        spread = np.abs(y.astype(np.float64) - runs[32])
        assert np.all(spread <= accumulation_bound(a, b, y, runs[32], DL16)), (c, spread.max())
