"""A multicast chain's middle cores run one stream whose tokens are per-core tables, each core
at its own pace (spyre_isa.stream): the device model plans such a stream once for all its
cores and splits the plans core by core (`Plan.split`). Every split plan must equal the plan
of the instruction written out for its core alone, field by field, or the executors would
move other bytes or time other work than the program says."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser

from spyre_mlir.dialects import spyre_isa
from spyre_mlir.dialects.torch import make_context
from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass
from spyre_mlir.sim import plans
from spyre_mlir.target.config import DEFAULT_CONFIG
from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass
from spyre_mlir.transforms.spyre_fuse import SpyreFusePass
from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

KERNELS = Path(__file__).parents[2] / "filecheck" / "inputs" / "kernels.mlir"


@functools.cache  # collection and the test both walk the chains: lowered once per option
def lowered(split_k: bool) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, KERNELS.read_text()).parse_module()
    for p in (
        SpyreFusePass(),
        SpyreDivideWorkPass(split_k=split_k),
        SpyrePlanScratchpadPass(),
        ConvertSpyreToIsaPass(),
    ):
        p.apply(ctx, module)
    module.verify()
    return module


def for_core(op: Operation, i: int, n: int) -> Operation:
    """The instruction as core i of a stream of n cores runs it: every per-core table cut to
    its entry i."""

    def one(value: Attribute) -> Attribute:
        if isinstance(value, spyre_isa.PerCoreAttr):
            return spyre_isa.per_core(value.table(n)[i])
        if isinstance(value, spyre_isa.AccessAttr):
            return spyre_isa.AccessAttr(one(value.base), value.strides.as_tuple(), value.element_type)
        return value

    alone = op.clone()
    for name, value in list(alone.properties.items()):
        alone.properties[name] = one(value)
    return alone


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def chain_streams():
    for split_k in (False, True):
        for prog in lowered(split_k).walk():
            if isinstance(prog, spyre_isa.ProgramOp):
                for stream in prog.streams:
                    plan = plans.StreamPlan(stream, prog.sym_name.data, DEFAULT_CONFIG)
                    if not plan.lockstep():
                        yield (
                            f"{prog.sym_name.data}{'/k-split' if split_k else ''}/{list(stream.core_list)}",
                            stream,
                            plan,
                        )


def test_chains_fold_into_streams_that_run_core_by_core():
    found = list(chain_streams())
    names = [name for name, *_ in found]
    assert any("/k-split" in n for n in names) and any("/k-split" not in n for n in names), names
    assert all(len(stream.core_list) > 1 for _, stream, _ in found)
    # the cores that pass tiles on send with per-core tokens (a chain's last cores only receive)
    assert any(
        isinstance(op, spyre_isa.RingSendOp) and op.notify is not None and not op.notify.is_uniform
        for _, stream, _ in found
        for op in stream.body.ops
    )


@pytest.mark.parametrize("name, stream, plan", list(chain_streams()), ids=lambda x: x if isinstance(x, str) else "")
def test_split_plans_are_the_plans_of_each_core_alone(name, stream, plan):
    cores = stream.core_list
    n = len(cores)
    kernel = stream.parent_op().sym_name.data
    ops = list(stream.body.ops)
    parts = plan.split()
    assert [p.cores.tolist() for p in parts] == [[c] for c in cores]
    fields = 0
    for i, (core, part) in enumerate(zip(cores, parts)):
        alone = [
            q
            for k, op in enumerate(ops)
            for q in plans.plan_instruction(for_core(op, i, n), kernel, k, [core], DEFAULT_CONFIG)
        ]
        assert len(part.instrs) == len(alone)
        for got, want in zip(part.instrs, alone):
            assert type(got) is type(want)
            mine, theirs = vars(got), vars(want)
            assert mine.keys() == theirs.keys(), (got.where, mine.keys() ^ theirs.keys())
            for field in mine:
                if field == "op":  # the stream's instruction itself, not a copy for one core
                    continue
                assert same(mine[field], theirs[field]), (got.where, f"core {core}", field)
                fields += 1
            for total in ("ddr_read", "ddr_write", "ring_bytes", "macs", "sync", "notify"):
                assert getattr(got, total, None) == getattr(want, total, None), (got.where, total)
    assert fields > 200 * n, fields  # every instruction's fields, for every core
