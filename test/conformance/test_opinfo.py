"""PyTorch's device-generic OpInfo tests on the native "spyre" device, built on PyTorch's own
machinery (`common_device_type`: the PrivateUse1 device, `@ops` over `op_db`), with
`test_compare_cpu`'s semantics: each float32 sample made on the device, run there, and compared
with the CPU's answer on the inputs as the card holds them, within the DL16 bound
(spyre_mlir/testing/opinfo.py says how each outcome is decided). expectations.yaml states what
every sample does; a sample that does otherwise fails, either way.

`test_samples` runs the common ops (opinfo.COMMON_OPS: `make test`); `test_samples_full` every
other op (marked `full`: `make test-full`). PyTorch's own skips and tolerances for its tests are
not applied (the expectations file states each op's outcome, the bound is the device's).
"""

import copy
import os

import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_utils import TestCase

from spyre_mlir.testing import expectations, opinfo
from spyre_mlir.torch_device import state


def _undecorated(op):
    op = copy.copy(op)
    op.decorators = ()
    op.skips = ()
    return op


SELECTED = [_undecorated(op) for op in opinfo.selected_opinfos()]
COMMON = [op for op in SELECTED if op.full_name in opinfo.COMMON_OPS]
REST = [op for op in SELECTED if op.full_name not in opinfo.COMMON_OPS]
ENTRIES = expectations.load(expectations.FILE)


class TestOpInfoOnSpyre(TestCase):
    def check(self, device, op):
        outcomes = opinfo.run_op(op, device, state.numerics())
        if os.environ.get("SPYRE_CONFORMANCE_ACCEPT") == "1":
            expectations.OBSERVED[op.full_name] = outcomes
        problems = expectations.mismatches(op.full_name, ENTRIES.get(op.full_name), outcomes)
        if problems:
            self.fail("\n".join(problems))

    @ops(COMMON, allowed_dtypes=(torch.float32,))
    def test_samples(self, device, dtype, op):
        self.check(device, op)

    @ops(REST, allowed_dtypes=(torch.float32,))
    def test_samples_full(self, device, dtype, op):
        self.check(device, op)


instantiate_device_type_tests(TestOpInfoOnSpyre, globals(), only_for="privateuse1")


def test_every_selected_op_has_an_entry_and_no_other_does():
    names = {op.full_name for op in SELECTED}
    assert sorted(names - set(ENTRIES)) == []
    assert sorted(set(ENTRIES) - names) == []
