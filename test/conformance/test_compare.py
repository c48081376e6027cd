"""The OpInfo comparison of index results (spyre_mlir.testing.opinfo): the device holds its
inputs in DL16, so two float32 inputs that round to one value are a tie it may break either
way; any other difference of indices is wrong."""

import torch

from spyre_mlir.sim.numerics import DL16
from spyre_mlir.testing.opinfo import _tied_indices


def test_indices_of_values_tied_in_dl16_are_right_either_way():
    x = torch.tensor([[5.33349, -1.0, 5.33584, 8.5]])  # 5.33349 and 5.33584 both hold 5.3359375
    assert DL16.round(x[0, 0:1].numpy()) == DL16.round(x[0, 2:3].numpy())
    cpu = torch.topk(x, 2, 1).indices  # [[3, 2]]
    device = torch.tensor([[3, 0]])
    assert _tied_indices(x, device, cpu, DL16)


def test_indices_of_different_values_are_wrong():
    x = torch.tensor([[5.0, -1.0, 6.0, 8.5]])
    cpu = torch.topk(x, 2, 1).indices  # [[3, 2]]
    assert not _tied_indices(x, torch.tensor([[3, 0]]), cpu, DL16)
    assert not _tied_indices(x, torch.tensor([[3, 7]]), cpu, DL16)  # out of range is never a tie
