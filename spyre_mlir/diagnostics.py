"""How spyre-mlir reports what goes wrong, in the tools and the pipeline.

Three kinds of failure, kept apart so that a user (and the fuzz harness, docs/fuzzing.md) can
tell them apart:

    diagnostic       bad input: a parse error at file:line:col, or a verifier or pass message
                     naming the op ('spyre.matmul': ...). xDSL's DiagnosticException and
                     ParseError; the tools print it and exit 1.
    unsupported      a diagnostic of its own type (`Unsupported`): valid input the device path
                     has no lowering for (an op, a layout pair, a buffer past LX). The
                     torch.compile backend and the native device run such an op on the CPU,
                     and only such an op.
    internal error   the compiler itself failed: an exception other than a diagnostic escaped a
                     pass, or a pass left IR that does not verify. InternalCompilerError names
                     the pass and the op it was working on; the tools print
                     "internal error in pass X on op Y: ..." and exit 1. Every one is a bug.

`verify_module` is xDSL's verifier plus what xDSL 0.75 does not check: that every operand's
definition dominates its use (a value used before it is defined, or outside its region).
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException, VerifyException
from xdsl.utils.lexer import Position, Span

from spyre_mlir.dialects.spyre.origin import verify_origins

REMARKS = logging.getLogger("spyre_mlir.remarks")
"""Optimisation remarks: why a pass applied a transformation or not (`spyre-opt
--print-remarks` sends them to stderr)."""


class Unsupported(PassFailedException):
    """The device path has no lowering for this op or form: the message names the op and the
    form. The one failure a caller may answer by running the op on the CPU (the torch.compile
    backend and the native device do, warning once; strict mode raises it); any other exception
    in the compiler is a bug (InternalCompilerError) and propagates."""


class InternalCompilerError(Exception):
    """The compiler failed on input it accepted (a bug): where (`pass spyre-fuse`, `the
    device model`), on which op."""

    def __init__(self, message: str, where: str | None = None, op: str | None = None):
        place = " ".join(x for x in (f"in {where}" if where else "", f"on op {op}" if op else "") if x)
        super().__init__(f"internal error{' ' + place if place else ''}: {message}")
        self.where = where
        self.op = op


def describe_op(op: Operation) -> str:
    """`'spyre.kernel' @k0` (the symbol, when the op has one)."""
    sym = op.properties.get("sym_name") or op.attributes.get("sym_name")
    name = getattr(sym, "data", None)
    return f"'{op.name}'" + (f" @{name}" if isinstance(name, str) else "")


def failing_op(e: BaseException) -> Operation | None:
    """The innermost op the code that raised `e` was working on (`_failing_op`)."""
    return _failing_op(e.__traceback__)


def _failing_op(tb: TracebackType | None) -> Operation | None:
    """The innermost op a frame of the traceback was working on (a local holding an Operation)."""
    for frame, _ in reversed(list(traceback.walk_tb(tb))):
        loc = frame.f_locals
        for key in ("op", "operation", "kernel", "prog", "stream", *loc):
            v = loc.get(key)
            if isinstance(v, Operation) and not isinstance(v, ModuleOp):
                return v
    return None


def internal_error(e: BaseException, where: str | None = None) -> InternalCompilerError:
    """`e` as an internal error in `where`, on the op the failing code was working on."""
    if isinstance(e, InternalCompilerError):
        return e
    op = _failing_op(e.__traceback__)
    return InternalCompilerError(f"{type(e).__name__}: {e}", where, describe_op(op) if op is not None else None)


@contextmanager
def in_pass(name: str) -> Iterator[None]:
    """Diagnostics pass through; any other exception becomes an InternalCompilerError naming
    the pass and op."""
    try:
        yield
    except (DiagnosticException, ParseError, InternalCompilerError):
        raise
    except Exception as e:
        raise internal_error(e, f"pass {name}") from e


def verify_after_pass(module: Operation, name: str) -> None:
    """A pass must leave IR that verifies: if it does not, that is the pass's bug."""
    try:
        verify_module(module)
    except DiagnosticException as e:
        raise InternalCompilerError(
            f"the IR after the pass does not verify: {diagnostic_text(e)}", f"pass {name}"
        ) from e


def diagnostic_text(e: BaseException) -> str:
    """The message, plus the op it is about when the message does not name it and xDSL
    attached it as a note (the printed module with the op underlined: the op's line and the
    marker are kept)."""
    text = str(e)
    if re.search(r"'[\w$.-]+\.[\w$.-]+'", text):
        return text
    for note in getattr(e, "__notes__", []):
        lines = note.splitlines()
        for i, line in enumerate(lines):
            if i > 0 and re.fullmatch(r"\s*\^+-*\s*", line):  # the marker under the op
                return text + "\n" + lines[i - 1][:1000] + "\n" + line[: len(lines[i - 1][:1000])]
    return text


class LocatingParser(Parser):
    """xDSL's parser, with a location on every error: attribute verifiers and declarative
    format constraints run while an op is parsed and raise a VerifyException that carries no
    position; here its message gets the op's file:line:col and text, as a ParseError's has
    (the exception keeps its type: `--verify-diagnostics` still reports it)."""

    def _locate(self, e: DiagnosticException, start: Position, end: Position) -> DiagnosticException:
        if getattr(e, "located", False):
            return e
        text = self.lexer.input.content
        while end > start and text[end - 1].isspace():
            end -= 1
        located = type(e)(Span(start, max(end, start), self.lexer.input).print_with_context(str(e)).rstrip())
        located.located = True  # type: ignore[attr-defined]  # a mark on the exception: already located
        return located

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            return super().parse_operation()
        except DiagnosticException as e:  # the op ends before the next token
            raise self._locate(e, start, self._current_token.span.start) from None

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except DiagnosticException as e:  # outside any op: an attribute alias, the resources
            span = self._current_token.span
            raise self._locate(e, span.start, span.end) from None


# region Dominance


def _ancestor_in(region: Region, op: Operation) -> Operation | None:
    """The op of `region` that holds `op` (op itself if it is in the region)."""
    cur: Operation | None = op
    while cur is not None:
        block = cur.parent_block()
        if block is not None and block.parent is region:
            return cur
        cur = cur.parent_op()
    return None


def _block_dominates(def_block: Block, use_block: Block) -> bool:
    """Whether def_block strictly dominates use_block (two blocks of one region)."""
    from xdsl.irdl.dominance import DominanceInfo

    region = def_block.parent
    assert region is not None
    return DominanceInfo(region).strictly_dominates(def_block, use_block)


def verify_dominance(root: Operation) -> None:
    """Every operand is defined before its use, in a block that dominates it (or an
    enclosing one). Raises VerifyException naming the op and the operand. The body of a
    builtin.module is a graph region (no order), as in MLIR."""
    index_cache: dict[Operation, int] = {}

    def position(op: Operation) -> int:
        if op not in index_cache:
            block = op.parent_block()
            assert block is not None
            for i, o in enumerate(block.ops):
                index_cache[o] = i
        return index_cache[op]

    for op in root.walk():
        for k, v in enumerate(op.operands):
            if isinstance(v, OpResult):
                def_block = v.op.parent_block()
                def_index = position(v.op) if def_block is not None else 0
            elif isinstance(v, BlockArgument):
                def_block, def_index = v.block, -1
            else:
                continue
            region = def_block.parent if def_block is not None else None
            if region is not None and isinstance(region.parent, ModuleOp):
                continue
            top = _ancestor_in(region, op) if region is not None else None
            ok = top is not None and top is not (v.op if isinstance(v, OpResult) else None)
            if ok and top is not None:
                assert def_block is not None
                use_block = top.parent_block()
                if use_block is def_block:
                    ok = def_index < 0 or def_index < position(top)
                else:
                    ok = use_block is not None and _block_dominates(def_block, use_block)
            if not ok:
                raise VerifyException(
                    f"{describe_op(op)}: operand {k} ({_value_name(v)}) does not dominate this use: "
                    f"it is used before its definition or outside its scope"
                )


def _value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a value of type {v.type}"


def verify_resources(module: Operation, ctx: Context) -> None:
    """Every `dense_resource` an op holds has a blob in `ctx` that holds exactly the elements
    of its type (a truncated or missing blob is bad input, named with its op)."""
    from xdsl.dialects.builtin import DenseResourceAttr

    from spyre_mlir.dialects.torch import resource_to_numpy

    for op in module.walk():
        for attr in (*op.properties.values(), *op.attributes.values()):
            if isinstance(attr, DenseResourceAttr):
                try:
                    resource_to_numpy(ctx, attr)
                except (KeyError, ValueError) as e:
                    raise VerifyException(f"{describe_op(op)}: {str(e).strip(chr(39))}") from None


def verify_module(module: Operation, ctx: Context | None = None) -> None:
    """xDSL's verifier, then dominance, then the origins' contract (a module whose torch ops are
    numbered: dialects/spyre/origin.py), then (with the context that holds them) the blobs."""
    module.verify()
    verify_dominance(module)
    if isinstance(module, ModuleOp):
        verify_origins(module)
    if ctx is not None:
        verify_resources(module, ctx)


# endregion
