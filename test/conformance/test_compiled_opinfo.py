"""PyTorch's OpInfo samples of the common float ops (opinfo.COMMON_OPS, SDPA among them),
compiled with `torch.compile(backend="spyre")`: every sample that is not left out (random
numbers, complex values) is right within the DL16 bound that `reference.evaluate` derives for
the compiled graph (the CPU inputs are rounded at the transfer, which the bound counts).

OpInfo runs random-free samples under `freeze_rng_state`, as `test_default_configuration.py`'s
`torch.random.fork_rng` case does: the native device's RNG functions are never traced."""

import pytest
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_utils import TestCase

from spyre_mlir.testing import opinfo
from spyre_mlir.torch_device import state

COMMON = [op for op in opinfo.selected_opinfos() if op.full_name in opinfo.COMMON_OPS]


class TestCompiledOpInfo(TestCase):
    @ops(COMMON, allowed_dtypes=(torch.float32,))
    def test_compiled_samples_are_right(self, device, dtype, op):
        outcomes = opinfo.run_compiled_op(op, state.numerics())
        failures = [str(o) for o in outcomes if o.kind in ("wrong", "crash")]
        if failures:
            self.fail("\n".join(failures))
        if all(o.kind == "left_out" for o in outcomes):
            self.fail(f"every sample of {op.full_name} is left out: {[o.reason for o in outcomes]}")


instantiate_device_type_tests(TestCompiledOpInfo, globals(), only_for="cpu")
pytestmark = pytest.mark.slow
