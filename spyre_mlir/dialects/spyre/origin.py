"""Which torch ops a device op computes: `#spyre.origin`, and the contract the passes keep.

spyre-track-origins numbers a function's torch compute ops 0, 1, ... in program order and marks
the module `spyre.origins = n`. From then on every op that computes carries an origin:

    %y = torch.aten.relu %x {spyre.origin = #spyre.origin<[2] -> [2]>} : ...
    %m = spyre.matmul %a, %b {spyre.origin = #spyre.origin<[1] -> [-1]>} : ...
    %k = spyre.kernel "k0"(%a, %b, %c) origin <[1, 2] -> [2]> ... { ... }
    %o = spyre_isa.launch @k0(%a, %b, %c) {spyre.origin = #spyre.origin<[1, 2] -> [2]>, ...} : ...

    ops     the torch ops whose work the op does (sorted, distinct)
    values  per result: the torch op whose value it holds (in the op's layout), -1 for none (an
            intermediate of a lowering, a partial sum)

A pass that rewrites an op gives the ops it makes the origin of what they replace
(analysis/origins.py); a kernel's origin is its compute ops' (`kernel_origin`). The contract,
checked after every pass of a numbered module (`verify_origins`, from diagnostics.verify_module):
every torch compute op, spyre compute op or view, kernel and launch carries an origin with one
value per result, naming torch ops below `spyre.origins`; a kernel's equals its body's. An op a
pass folds, merges or finds dead takes its number with it: the numbers missing from the final
module are the torch ops the compiler removed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

ORIGIN_ATTR = "spyre.origin"
"""An op's discardable attribute (a `#spyre.origin`); `spyre.kernel` holds it as its `origin`
property."""

ORIGINS_ATTR = "spyre.origins"
"""A module attribute (an integer n): its torch compute ops were numbered 0 .. n - 1 by
spyre-track-origins, and every pass keeps the origins (`verify_origins`)."""


def _ints(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


@irdl_attr_definition
class OriginAttr(ParametrizedAttribute):
    """`#spyre.origin<[3, 4, 5] -> [5]>`: the torch ops an op computes (their numbers, sorted,
    distinct) -> per result, the one whose value it holds (-1: none)."""

    name = "spyre.origin"
    ops: ArrayAttr[IntAttr]
    values: ArrayAttr[IntAttr]

    def __init__(self, ops: Iterable[int], values: Sequence[int]):
        super().__init__(ArrayAttr(IntAttr(v) for v in sorted(set(ops))), ArrayAttr(IntAttr(v) for v in values))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            ops = _ints(parser)
            parser.parse_punctuation("->")
            values = _ints(parser)
        return (ArrayAttr(IntAttr(v) for v in ops), ArrayAttr(IntAttr(v) for v in values))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<[{', '.join(map(str, self.op_ids))}] -> [{', '.join(map(str, self.value_ids))}]>")

    @property
    def op_ids(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.ops)

    @property
    def value_ids(self) -> tuple[int, ...]:
        return tuple(v.data for v in self.values)

    def verify(self) -> None:
        ops = self.op_ids
        if any(b <= a for a, b in zip(ops, ops[1:])) or any(v < 0 for v in ops):
            raise VerifyException(f"#spyre.origin: ops {list(ops)} are not distinct torch op numbers >= 0, sorted")
        bad = [v for v in self.value_ids if v != -1 and v not in ops]
        if bad:
            raise VerifyException(
                f"#spyre.origin: values {bad} are not among its ops {list(ops)} (a value is one of them, or -1)"
            )


def origin_of(op: Operation) -> OriginAttr | None:
    """The origin an op carries (a kernel's property, any other op's attribute), or None."""
    attr = op.properties.get("origin") if op.name == "spyre.kernel" else op.attributes.get(ORIGIN_ATTR)
    return attr if isinstance(attr, OriginAttr) else None


def set_origin(op: Operation, origin: OriginAttr) -> None:
    if op.name == "spyre.kernel":
        op.properties["origin"] = origin
    else:
        op.attributes[ORIGIN_ATTR] = origin


def numbered(module: Operation) -> int | None:
    """n when the module's torch ops were numbered 0 .. n - 1 (spyre-track-origins), else None."""
    attr = module.attributes.get(ORIGINS_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def value_of(v: SSAValue) -> int:
    """The torch op whose value `v` holds (-1: none known)."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return -1
    origin = origin_of(owner)
    if origin is None:
        return -1
    values = origin.value_ids
    return values[v.index] if v.index < len(values) else -1  # type: ignore[attr-defined]


COMPUTE_OPS = (
    "spyre.matmul",
    "spyre.pointwise",
    "spyre.reduce",
    "spyre.gather",
    "spyre.scatter",
    "spyre.slice",
    "spyre.concat",
    "spyre.restickify",
    "spyre.permute",
    "spyre.reshape",
    "spyre.kernel",
    "spyre_isa.launch",
)
"""Device ops that carry an origin in a numbered module: the compute ops, the views, kernels and
launches (transfers, constants and casts are the border's, not a torch op's work)."""

TORCH_VALUE_OPS = ("torch.constant.", "torch.prim.ListConstruct", "torch.prim.ListUnpack", "torch.vtensor.literal")
"""Torch ops that compute nothing: constants, lists and literals (not numbered)."""


def is_torch_compute(op: Operation) -> bool:
    """A torch op spyre-track-origins numbers: any torch op but constants, lists and literals."""
    return op.name.startswith("torch.") and not op.name.startswith(TORCH_VALUE_OPS)


def needs_origin(op: Operation) -> bool:
    return op.name in COMPUTE_OPS or is_torch_compute(op)


def kernel_body_origin(kernel: Operation) -> OriginAttr | None:
    """What a kernel's origin must be: the union of its body ops' origins -> the values its
    yield returns; None when no body op carries one."""
    ops: set[int] = set()
    found = False
    term = None
    for inner in kernel.regions[0].block.ops:
        origin = origin_of(inner)
        if origin is not None:
            found = True
            ops.update(origin.op_ids)
        term = inner
    if not found or term is None:
        return None
    return OriginAttr(ops, [value_of(v) for v in term.operands])


def verify_origins(module: ModuleOp) -> None:
    """The contract of a numbered module (module docstring); VerifyException naming the op."""
    count = numbered(module)
    if count is None:
        return
    for op in module.walk():
        origin = origin_of(op)
        if origin is None:
            if needs_origin(op):
                raise VerifyException(
                    f"'{op.name}': carries no {ORIGIN_ATTR} in a module whose torch ops are numbered "
                    f"({ORIGINS_ATTR} = {count}): the pass that made it did not say which torch ops it computes"
                )
            continue
        if len(origin.values) != len(op.results):
            raise VerifyException(
                f"'{op.name}': its origin names {len(origin.values)} values for {len(op.results)} results"
            )
        if origin.op_ids and origin.op_ids[-1] >= count:
            raise VerifyException(
                f"'{op.name}': its origin names torch op {origin.op_ids[-1]}, the module numbered {count}"
            )
        if op.name == "spyre.kernel":
            want = kernel_body_origin(op)
            if want is not None and want != origin:
                raise VerifyException(
                    f"'spyre.kernel': its origin {origin} is not its body's {want} (its compute ops' torch ops -> "
                    "the values it yields)"
                )
