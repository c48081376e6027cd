"""The expectations file's reading, checking and writing (spyre_mlir/testing/expectations.py):
an outcome that differs from its entry is reported either way, and an accepted run states what
ran, keeping a failure's old expectation."""

import pytest

from spyre_mlir.testing import expectations as ex
from spyre_mlir.testing.opinfo import Outcome

FALLBACK = (
    "sort: 'torch.aten.sort.stable' producing !torch.vtensor<[5,5],f32>, !torch.vtensor<[5,5],si64> "
    "cannot run on the device: no device lowering yet"
)


def test_a_file_round_trips(tmp_path):
    entries = {
        "add": {i: ex.Expected("on_device") for i in range(5)},
        "sum": {0: ex.Expected("fallback", "sum: a reason"), 1: ex.Expected("on_device")},
        "double": {0: ex.Expected("refused", 'the device holds no "float64"')},
    }
    path = tmp_path / "e.yaml"
    path.write_text(ex.render(entries))
    assert ex.load(path) == entries
    assert ex.counts(entries) == {"on_device": 6, "fallback": 1, "refused": 1}


def test_reasons_lose_shapes_and_name_the_refused_piece():
    assert ex.reason_of(Outcome("sort", 0, "fallback", FALLBACK)) == "sort: no device lowering yet"
    nll = "nll_loss_forward: 'torch.aten.gather' producing !torch.vtensor<[2,1],f32> cannot run on the device: x"
    assert ex.reason_of(Outcome("nll", 0, "fallback", nll)) == "nll_loss_forward (gather): x"
    moved = "index: reshaping (5, 5) to (25,) would move stick padding"
    assert ex.reason_of(Outcome("i", 0, "fallback", moved)) == "index: reshaping (…) to (…) would move stick padding"


def test_an_outcome_other_than_its_entry_fails_either_way():
    entry = {0: ex.Expected("fallback", "sort: no device lowering yet"), 1: ex.Expected("on_device")}
    now_on_device = [Outcome("sort", 0, "on_device"), Outcome("sort", 1, "on_device")]
    assert ex.mismatches("sort", entry, now_on_device) == [
        "sort[0]: expected fallback (sort: no device lowering yet), got on_device"
    ]
    now_off = [Outcome("sort", 0, "fallback", FALLBACK), Outcome("sort", 1, "fallback", FALLBACK)]
    assert ex.mismatches("sort", entry, now_off) == [
        "sort[1]: expected on_device, got fallback (sort: no device lowering yet)"
    ]
    assert ex.mismatches("sort", entry, now_off[:1] + [Outcome("sort", 1, "wrong", "off by 1")]) == [
        "sort[1]: wrong: off by 1"
    ]
    assert ex.mismatches("sort", entry, now_off[:1]) == ["sort[1]: the entry names a sample the op does not have"]
    assert ex.mismatches("new", None, now_off)[0].startswith("new: no entry")


def test_accepting_a_run_keeps_a_failures_old_expectation():
    old = {"sort": {0: ex.Expected("on_device"), 1: ex.Expected("on_device")}}
    ran = {"sort": [Outcome("sort", 0, "fallback", FALLBACK), Outcome("sort", 1, "crash", "a bug")]}
    assert ex.updated(old, ran) == {
        "sort": {0: ex.Expected("fallback", "sort: no device lowering yet"), 1: ex.Expected("on_device")}
    }


@pytest.mark.parametrize(
    "text, error",
    [
        ("abs: on_device", "a group is"),
        ("abs: {fallback: [0]}", "needs its reason"),
        ("abs: {wrong: [0], reason: x}", "a group is"),
        ("abs: [{on_device: [0]}, {on_device: [0]}]", "in two groups"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_op(tmp_path, text, error):
    path = tmp_path / "e.yaml"
    path.write_text(text)
    with pytest.raises(ex.ExpectationsError, match=f"abs: .*{error}"):
        ex.load(path)
