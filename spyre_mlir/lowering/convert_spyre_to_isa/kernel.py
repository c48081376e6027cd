"""One kernel's instructions per core, from its plan (plan.py) and the lowering registered for
its form:

    @lowers(spyre.MatmulOp)                    # the op class (or kernel form) it lowers
    def lower_matmul(plan, core, box) -> CoreCode: ...

    lower_kernel(plan)                         # each core's instructions, the resident ranges

A lowering reads the frozen plan and returns its core's instructions with the LX ranges they
keep for, or take from, another launch (`CoreCode`); the driver gathers them and checks the
ranges apart from the plan's buffers. The op families (matmul, pointwise, attention, movement,
onchip) register themselves when the pass module imports them; this module imports none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.utils.exceptions import PassFailedException

from spyre_mlir.lowering.convert_spyre_to_isa.gathered import GatheredLoads
from spyre_mlir.lowering.convert_spyre_to_isa.instructions import Ins
from spyre_mlir.lowering.convert_spyre_to_isa.plan import KernelPlan, check_apart


@dataclass(frozen=True)
class CoreCode:
    """One core's instructions, and the LX ranges [lo, hi) in sticks they keep for, or take
    from, another launch, by the program attribute that records them (`spyre.resident_in`,
    `spyre.resident_out`)."""

    ins: list[Ins]
    resident: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelCode:
    """A kernel's instructions for each core (None: an idle core) and its program's resident
    ranges, gathered over the cores."""

    per_core: list[list[Ins] | None]
    resident: dict[str, tuple[int, int]]


@dataclass(frozen=True)
class Lowering:
    lower: Callable[..., CoreCode]
    """(plan, core, box) -> the core's code."""
    every_core: bool
    """Run on an idle core too (its box None): the on-chip relayout's cores all take part."""


_LOWERINGS: dict[type, Lowering] = {}
_L = TypeVar("_L", bound=Callable[..., CoreCode])


def lowers(*forms: type, every_core: bool = False) -> Callable[[_L], _L]:
    """Register a function as the lowering of kernels of these forms (`KernelPlan.form`: an
    op class, a kernel form's class) and their subclasses."""

    def register(fn: _L) -> _L:
        for form in forms:
            _LOWERINGS[form] = Lowering(fn, every_core)
        return fn

    return register


def lowering(form: type) -> Lowering:
    """The lowering registered for a kernel form, or for its nearest base class."""
    found = next((_LOWERINGS[c] for c in form.__mro__ if c in _LOWERINGS), None)
    if found is None:
        raise LookupError(f"convert-spyre-to-isa: no lowering is registered for {form.__name__}")
    return found


def lower_kernel(plan: KernelPlan) -> KernelCode:
    """Each core's instructions, by the lowering registered for the kernel's form, and the
    resident ranges they record, checked apart from the plan's buffers."""
    how = lowering(plan.form)
    per_core: list[list[Ins] | None] = []
    resident: dict[str, tuple[int, int]] = {}
    gathered = [GatheredLoads(plan, i) for i in range(len(plan.gathered))]
    for core, box in enumerate(plan.boxes):
        if box is None and not how.every_core:
            per_core.append(None)
            continue
        try:
            code = how.lower(plan, core, box)
        except ValueError as e:  # a layout the generator cannot address (analysis.sticks)
            raise PassFailedException(f"kernel {plan.name}: {e}") from None
        for g in gathered:
            code = CoreCode(g.rewrite(code.ins), code.resident)
        per_core.append(code.ins or None)
        for which, (lo, hi) in code.resident.items():
            resident[which] = (lo, max(resident.get(which, (lo, lo))[1], hi))
    for which, (lo, hi) in resident.items():
        if hi > lo:
            check_apart(
                plan.name,
                [*plan.placed, (lo, hi, which)],
                f"the LX range of its {which}",
                "a value kept in LX between launches lies apart from the kernel's buffers (above its lx_budget)",
            )
    return KernelCode(per_core, resident)
