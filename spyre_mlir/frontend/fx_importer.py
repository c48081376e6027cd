"""Import an FX graph into the `torch` dialect, spelled as torch-mlir's FX importer spells it.

The input is the inference forward graph that aot_autograd hands to a compiler: core-ATen
`OpOverload` calls, placeholders carrying FakeTensors in `node.meta["val"]` (parameters are
lifted to placeholders), and constant tensors as `get_attr` nodes. The output is a module with
one `func.func` whose arguments are the placeholders in order and whose results are the graph
outputs, built directly as IR (no text round trip).

It follows `torch_mlir/extras/fx_importer.py`:
- The op name is `torch.<namespace>.<name>`, plus `.<overload>` unless the overload is
  `default`. `add`/`sub`/`mul`/`div.Tensor` with a Python number as second argument become the
  `.Scalar` overload, as torch-mlir does to undo an aot_autograd quirk.
- Every schema argument becomes an operand, in schema order: positional arguments, then
  keyword arguments by name, then the schema's defaults.
- Python values become constants typed by the value: int -> `torch.constant.int`, float ->
  `torch.constant.float`, bool, str, None; dtype, layout and memory format -> their int code;
  device -> `torch.constant.device`. Lists become `torch.prim.ListConstruct`
  (`!torch.list<int>`, `!torch.list<vtensor>`, `!torch.list<optional<...>>`). A number where the
  schema wants a Tensor goes through `torch.prim.NumToTensor.Scalar`, and a bool where it wants an
  int or float goes through `torch.aten.Int.bool` or `torch.aten.Float.bool`.
- Constants are emitted once per function and reused, as in torch-mlir's canonicalized output.
- Constant tensors become `torch.vtensor.literal` of a `dense_resource` blob named
  `torch_tensor_<shape>_<dtype>`. One-element tensors are written inline as `dense<...>`, and bool
  tensors go through ui8 and `torch.prims.convert_element_type`.
- An op with several returns has several results, which `operator.getitem` selects. An op
  returning `Tensor[]` yields a `!torch.list<vtensor>`, and getitem reads it through one
  `torch.prim.ListUnpack`.

- A graph input written in place (`copy_(input, value)`, as aot_autograd keeps inference input
  mutations) becomes a function result after the graph's outputs, and the argument's
  `spyre.aliasing_output` names it (torch-mlir writes `torch.overwrite.tensor.contents` into a
  non-value `!torch.tensor` instead; a value-semantics function with an aliasing result keeps
  the whole pipeline on `!torch.vtensor`).

Anything outside this (symbolic shapes, a target that is not an `OpOverload`, a dtype with no
torch-mlir spelling, a non-tensor graph input or output) raises `UnsupportedGraphError`, whose
message names the node and the reason.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.fx
from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from spyre_mlir.diagnostics import Unsupported
from spyre_mlir.dialects.spyre import ALIASING_OUTPUT
from spyre_mlir.dialects.torch import (
    BoolType,
    ConstantBoolOp,
    ConstantDeviceOp,
    ConstantFloatOp,
    ConstantIntOp,
    ConstantNoneOp,
    ConstantStrOp,
    FloatType,
    IntType,
    ListType,
    OptionalType,
    PrimListConstructOp,
    StrType,
    TorchContext,
    TorchType,
    ValueTensorLiteralOp,
    ValueTensorType,
    is_valid_subtype,
    make_context,
    numpy_to_resource,
    torch_op_class,
)


class UnsupportedGraphError(Unsupported):
    """The FX graph uses something the importer cannot express; the message names the node."""


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: its FX node name, dtype and static shape."""

    name: str
    dtype: torch.dtype
    shape: tuple[int, ...]


@dataclass(frozen=True)
class ImportInfo:
    """What the caller needs to feed and read the imported function."""

    inputs: tuple[TensorInfo, ...]
    """One per function argument, in order (the graph's placeholders)."""
    outputs: tuple[TensorInfo, ...]
    """One per graph output, in order: the function's first results."""
    mutations: tuple[int, ...]
    """The graph inputs written in place, by argument index: the function's results after the
    outputs, in this order, are their new contents (`spyre.aliasing_output`)."""
    ctx: TorchContext = field(repr=False, compare=False)
    """The context that holds the module's `dense_resource` blobs."""


_ELEMENT_TYPES: dict[torch.dtype, IntegerType | AnyFloat | ComplexType] = {
    torch.float32: f32,
    torch.float16: f16,
    torch.bfloat16: bf16,
    torch.float64: f64,
    torch.complex64: ComplexType(f32),
    torch.complex128: ComplexType(f64),
    torch.int64: IntegerType(64, Signedness.SIGNED),
    torch.int32: IntegerType(32, Signedness.SIGNED),
    torch.int16: IntegerType(16, Signedness.SIGNED),
    torch.int8: IntegerType(8, Signedness.SIGNED),
    torch.uint8: IntegerType(8, Signedness.UNSIGNED),
    torch.bool: i1,
}
"""torch dtype -> dtype of `!torch.vtensor` (torch-mlir's TORCH_DTYPE_TO_MLIR_TYPE_ASM)."""

_ENUM_CODES: dict[Any, int] = {
    # c10::ScalarType
    torch.uint8: 0,
    torch.int8: 1,
    torch.int16: 2,
    torch.int32: 3,
    torch.int64: 4,
    torch.float16: 5,
    torch.float32: 6,
    torch.float64: 7,
    torch.complex64: 9,
    torch.complex128: 10,
    torch.bool: 11,
    torch.bfloat16: 15,
    # c10::Layout
    torch.strided: 0,
    torch.sparse_coo: 1,
    torch.sparse_csr: 2,
    torch.sparse_csc: 3,
    torch.sparse_bsr: 4,
    torch.sparse_bsc: 5,
    # c10::MemoryFormat
    torch.contiguous_format: 0,
    torch.preserve_format: 1,
    torch.channels_last: 2,
    torch.channels_last_3d: 3,
}
"""The int torch-mlir passes for a dtype, layout or memory-format argument."""

_TENSOR_TO_SCALAR_OP = {
    "torch.aten.add.Tensor": "torch.aten.add.Scalar",
    "torch.aten.sub.Tensor": "torch.aten.sub.Scalar",
    "torch.aten.mul.Tensor": "torch.aten.mul.Scalar",
    "torch.aten.div.Tensor": "torch.aten.div.Scalar",
    "torch.aten.floor_divide": "torch.aten.floor_divide.Scalar",
}

_LIST_ELEMENT_TYPES: dict[type, TorchType] = {
    torch.IntType: IntType(),
    torch.FloatType: FloatType(),
    torch.StringType: StrType(),
    torch.BoolType: BoolType(),
    torch.TensorType: ValueTensorType(None, None),
}
"""Schema list element type -> torch type of the list's elements (`!torch.list<vtensor>`)."""


def _op_name(schema: torch.FunctionSchema) -> str:
    namespace, _, name = schema.name.partition("::")
    return f"torch.{namespace}.{name}" + (f".{schema.overload_name}" if schema.overload_name else "")


def _overload(op_name: str) -> torch._ops.OpOverload:
    """The OpOverload of a `torch.<namespace>.<name>.<overload>` op name."""
    _, namespace, name, overload = op_name.split(".")
    return getattr(getattr(getattr(torch.ops, namespace), name), overload)


class _GraphImporter:
    """Imports one graph into one function, node by node."""

    def __init__(self, gm: torch.fx.GraphModule, ctx: TorchContext):
        self.gm = gm
        self.ctx = ctx
        self.block = Block()
        self.builder = Builder(InsertPoint.at_end(self.block))
        self.values: dict[torch.fx.Node, SSAValue | tuple[SSAValue, ...]] = {}
        self.constants: dict[Hashable, SSAValue] = {}
        self.list_unpacks: dict[torch.fx.Node, tuple[SSAValue, ...]] = {}
        self.inputs: list[TensorInfo] = []
        self.outputs: list[TensorInfo] = []
        self.results: list[SSAValue] = []
        self.mutations: dict[int, SSAValue] = {}
        """Graph inputs written in place (`copy_` into a placeholder): argument index -> new contents."""
        self.placeholders: dict[torch.fx.Node, int] = {}
        self.order = {node: i for i, node in enumerate(gm.graph.nodes)}
        """Each node's place in the graph."""

    # region Nodes

    def run(self, func_name: str) -> FuncOp:
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self.import_placeholder(node)
            elif node.op == "get_attr":
                self.import_get_attr(node)
            elif node.op == "call_function" and node.target is operator.getitem:
                self.import_getitem(node)
            elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
                self.import_overload(node)
            elif node.op == "call_function":
                raise _unsupported(node, f"target {node.target} is not a torch OpOverload")
            elif node.op == "output":
                self.import_output(node)
            else:
                raise _unsupported(node, f"'{node.op}' nodes are not supported")
        arg_attrs: list[dict[str, Attribute]] = [{} for _ in self.block.args]
        for j, value in sorted(self.mutations.items()):
            arg_attrs[j][ALIASING_OUTPUT] = IntegerAttr(len(self.results), 64)
            self.results.append(value)
        self.builder.insert(ReturnOp(*self.results))
        function_type = ([a.type for a in self.block.args], [r.type for r in self.results])
        fn = FuncOp(func_name, function_type, Region(self.block))
        if self.mutations:
            fn.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in arg_attrs])
        return fn

    def import_placeholder(self, node: torch.fx.Node) -> None:
        val = _meta_val(node)
        if isinstance(val, torch.SymInt | torch.SymFloat | torch.SymBool):
            raise _unsupported(node, f"symbolic graph input {val} (dynamic shapes are not supported)")
        if not isinstance(val, torch.Tensor):
            raise _unsupported(node, f"graph input is a {type(val).__name__}, not a tensor")
        arg = self.block.insert_arg(self.tensor_type(node, val), len(self.block.args))
        arg.name_hint = f"arg{len(self.inputs)}"
        self.placeholders[node] = len(self.inputs)
        self.inputs.append(TensorInfo(node.name, val.dtype, tuple(val.shape)))
        self.values[node] = arg

    def import_get_attr(self, node: torch.fx.Node) -> None:
        value = graph_attribute(self.gm, str(node.target))
        if not isinstance(value, torch.Tensor):
            raise _unsupported(node, f"attribute is a {type(value).__name__}, not a tensor")
        self.values[node] = self.tensor_literal(node, value)

    def import_getitem(self, node: torch.fx.Node) -> None:
        source, index = node.args
        assert isinstance(source, torch.fx.Node) and isinstance(index, int)
        value = self.values[source]
        if isinstance(value, tuple):
            self.values[node] = value[index]
            return
        if not isinstance(value.type, ListType):
            raise _unsupported(node, f"getitem on a {value.type}, which is neither a tuple nor a list")
        if source not in self.list_unpacks:
            types = [self.value_type(source, v) for v in _meta_val(source)]
            unpack = self.insert(torch_op_class("torch.prim.ListUnpack").create(operands=[value], result_types=types))
            self.list_unpacks[source] = tuple(unpack.results)
        self.values[node] = self.list_unpacks[source][index]

    def import_overload(self, node: torch.fx.Node) -> None:
        target, args, kwargs = node.target, node.args, node.kwargs
        assert isinstance(target, torch._ops.OpOverload)
        if target is torch.ops.aten._assert_async.msg:
            return
        if target is torch.ops.aten.copy_.default and args and args[0] in self.placeholders:
            self.import_input_mutation(node)
            return
        if target is torch.ops.aten.lift_fresh_copy.default:
            target, args, kwargs = torch.ops.aten.clone.default, args[:1], {"memory_format": None}
        schema = target._schema
        name = _op_name(schema)
        if name in _TENSOR_TO_SCALAR_OP and len(args) > 1 and isinstance(args[1], int | float):
            name = _TENSOR_TO_SCALAR_OP[name]
            schema = _overload(name)._schema

        if len(schema.returns) == 1:
            result_types = [self.value_type(node, _meta_val(node))]
        else:
            result_types = [self.value_type(node, v) for v in _meta_val(node)] if schema.returns else []

        operands: list[SSAValue] = []
        for i, argument in enumerate(schema.arguments):
            if i < len(args):
                operands.append(self.argument(node, args[i], argument.type))
            elif argument.name in kwargs:
                operands.append(self.argument(node, kwargs[argument.name], argument.type))
            elif argument.has_default_value():
                operands.append(self.argument(node, argument.default_value, argument.type))
            else:
                raise _unsupported(node, f"argument '{argument.name}' is missing and has no default")

        op = self.insert(torch_op_class(name).create(operands=operands, result_types=result_types))
        if len(schema.returns) == 1:
            self.values[node] = op.results[0]
        else:
            for i, (result, ret) in enumerate(zip(op.results, schema.returns)):
                result.name_hint = ret.name or f"result{i}"  # torch-mlir's result names
            self.values[node] = tuple(op.results)

    def import_input_mutation(self, node: torch.fx.Node) -> None:
        """`copy_(input, value)`, as aot_autograd writes a graph input's new contents
        (keep_inference_input_mutations): `value` becomes a function result, and the argument's
        `spyre.aliasing_output` names it, and so does the copy's own value (the input, written). The
        input must not be read after."""
        dest, value = node.args[0], node.args[1]
        assert isinstance(dest, torch.fx.Node)
        if not isinstance(value, torch.fx.Node):
            raise _unsupported(node, f"copies {value!r} into graph input '{dest.name}', not a graph value")
        new, old = _meta_val(value), _meta_val(dest)
        if not isinstance(new, torch.Tensor) or new.dtype != old.dtype or tuple(new.shape) != tuple(old.shape):
            raise _unsupported(
                node,
                f"writes graph input '{dest.name}' ({old.dtype}, {tuple(old.shape)}) with a value of another dtype or shape",
            )
        later = [u for u in dest.users if self.order[u] > self.order[node]]
        if later:
            raise _unsupported(node, f"graph input '{dest.name}' is read by '{later[0].name}' after it is written")
        self.mutations[self.placeholders[dest]] = self.values[node] = self.node_value(node, value)

    def import_output(self, node: torch.fx.Node) -> None:
        outputs = node.args[0]
        for i, out in enumerate(outputs if isinstance(outputs, tuple | list) else (outputs,)):
            if not isinstance(out, torch.fx.Node):
                raise _unsupported(node, f"output {i} is {out!r}, not a graph value")
            value = self.node_value(node, out)
            val = _meta_val(out)
            if not isinstance(value.type, ValueTensorType) or not isinstance(val, torch.Tensor):
                raise _unsupported(node, f"output {i} ('{out.name}') is a {value.type}, not a tensor")
            self.outputs.append(TensorInfo(out.name, val.dtype, tuple(val.shape)))
            self.results.append(value)

    # endregion
    # region Types

    def tensor_type(self, node: torch.fx.Node, val: torch.Tensor) -> ValueTensorType:
        if not all(isinstance(d, int) for d in val.shape):
            raise _unsupported(node, f"symbolic shape {tuple(val.shape)} (dynamic shapes are not supported)")
        if val.layout != torch.strided:
            raise _unsupported(node, f"layout {val.layout}")
        if (element := _ELEMENT_TYPES.get(val.dtype)) is None:
            raise _unsupported(node, f"dtype {val.dtype} has no !torch.vtensor spelling here")
        return ValueTensorType(tuple(val.shape), element)

    def value_type(self, node: torch.fx.Node, val: object) -> TorchType:
        """The torch type of a node result described by `val` (a `meta["val"]` entry)."""
        if isinstance(val, torch.Tensor):
            return self.tensor_type(node, val)
        if isinstance(val, list) and all(isinstance(v, torch.Tensor) for v in val):
            return ListType(ValueTensorType(None, None))
        if isinstance(val, bool):
            return BoolType()
        if isinstance(val, int):
            return IntType()
        if isinstance(val, float):
            return FloatType()
        raise _unsupported(node, f"result of type {type(val).__name__} ({val!r})")

    # endregion
    # region Arguments

    def insert(self, op: Operation) -> Operation:
        return self.builder.insert(op)

    def node_value(self, user: torch.fx.Node, node: torch.fx.Node) -> SSAValue:
        value = self.values.get(node)
        if value is None:
            raise _unsupported(user, f"uses '{node.name}', which has no value")
        if isinstance(value, tuple):
            raise _unsupported(user, f"uses the multi-result node '{node.name}' without getitem")
        return value

    def argument(self, node: torch.fx.Node, arg: object, schema_type: torch._C.JitType) -> SSAValue:
        """The operand for one schema argument."""
        if isinstance(arg, torch.fx.Node):
            value = self.node_value(node, arg)
        elif isinstance(arg, list | tuple):
            value = self.list_argument(node, arg, schema_type)
        elif isinstance(schema_type, torch.TensorType) and not isinstance(arg, torch.Tensor):
            value = self.scalar_as_tensor(node, arg)
        else:
            value = self.literal(node, arg)
        if isinstance(value.type, BoolType):
            if isinstance(schema_type, torch.FloatType):
                return self.convert(value, "torch.aten.Float.bool", FloatType())
            if isinstance(schema_type, torch.IntType | torch.NumberType):
                return self.convert(value, "torch.aten.Int.bool", IntType())
        return value

    def convert(self, value: SSAValue, op_name: str, result_type: Attribute) -> SSAValue:
        return self.insert(torch_op_class(op_name).create(operands=[value], result_types=[result_type])).results[0]

    def list_argument(self, node: torch.fx.Node, items: Sequence[object], schema_type: torch._C.JitType) -> SSAValue:
        list_type = schema_type.getElementType() if isinstance(schema_type, torch.OptionalType) else schema_type
        if not isinstance(list_type, torch.ListType):
            raise _unsupported(node, f"list {items!r} passed for schema type {schema_type}")
        element = list_type.getElementType()
        optional = isinstance(element, torch.OptionalType)
        if optional:
            element = element.getElementType()
        if (element_type := _LIST_ELEMENT_TYPES.get(type(element))) is None:
            raise _unsupported(node, f"lists of {element} are not supported")
        expected = OptionalType(element_type) if optional else element_type
        values: list[SSAValue] = []
        for item in items:
            value = self.node_value(node, item) if isinstance(item, torch.fx.Node) else self.literal(node, item)
            if not is_valid_subtype(value.type, expected):
                raise _unsupported(node, f"heterogeneous list {items!r}: {value.type} in a list of {expected}")
            values.append(value)
        return self.insert(PrimListConstructOp(values, ListType(expected))).results[0]

    def scalar_as_tensor(self, node: torch.fx.Node, arg: object) -> SSAValue:
        """A Python number passed where the schema wants a Tensor: a 0-d tensor of it."""
        if not isinstance(arg, int | float):
            raise _unsupported(node, f"{arg!r} passed for a Tensor argument")
        result_type = self.tensor_type(node, torch.tensor(arg))
        number = self.literal(node, arg)
        return self.convert(number, "torch.prim.NumToTensor.Scalar", result_type)

    def literal(self, node: torch.fx.Node, value: object) -> SSAValue:
        """A constant for a Python value, shared by all its uses in the function."""
        make: Callable[[], Operation]
        key: tuple[Hashable, ...]
        if value is None:
            key, make = ("none",), ConstantNoneOp
        elif isinstance(value, bool):
            key, make = ("bool", value), lambda: ConstantBoolOp(value)
        elif isinstance(value, int):
            key, make = ("int", value), lambda: ConstantIntOp(value)
        elif isinstance(value, float):
            key, make = ("float", struct.pack("<d", value)), lambda: ConstantFloatOp(value)
        elif isinstance(value, str):
            key, make = ("str", value), lambda: ConstantStrOp(value)
        elif isinstance(value, torch.dtype | torch.layout | torch.memory_format):
            if (code := _ENUM_CODES.get(value)) is None:
                raise _unsupported(node, f"argument {value} has no torch-mlir int code")
            return self.literal(node, code)
        elif isinstance(value, torch.device):
            key, make = ("device", str(value)), lambda: ConstantDeviceOp(str(value))
        elif isinstance(value, torch.Tensor):
            return self.tensor_literal(node, value)
        else:
            raise _unsupported(node, f"argument {value!r} of type {type(value).__name__}")
        if (result := self.constants.get(key)) is None:
            result = self.constants[key] = self.insert(make()).results[0]
        return result

    def tensor_literal(self, node: torch.fx.Node, tensor: torch.Tensor) -> SSAValue:
        """`torch.vtensor.literal` of a constant tensor: a blob, or `dense<...>` for one element."""
        if isinstance(tensor, torch._subclasses.FakeTensor):
            raise _unsupported(node, "constant tensor has no data (FakeTensor)")
        if tensor.dtype == torch.bool:
            as_bytes = self.tensor_literal(node, tensor.to(torch.uint8))
            convert = torch_op_class("torch.prims.convert_element_type").create(
                operands=[as_bytes, self.literal(node, torch.bool)],
                result_types=[self.tensor_type(node, tensor)],
            )
            return self.insert(convert).results[0]
        if tensor.is_complex():  # (no dense<...> or blob spelling here; complex values are the host's)
            raise _unsupported(node, f"constant tensor of dtype {tensor.dtype} (no literal spelling)")
        result_type = self.tensor_type(node, tensor)
        element, shape = _ELEMENT_TYPES[tensor.dtype], result_type.get_shape()
        assert not isinstance(element, ComplexType)
        value: DenseIntOrFPElementsAttr | DenseResourceAttr
        if tensor.numel() == 1:  # dense<...>, as torch-mlir spells a one-element literal
            if isinstance(element, IntegerType):
                value = DenseIntOrFPElementsAttr.from_list(TensorType(element, shape), [int(tensor.item())])
            else:
                value = DenseIntOrFPElementsAttr.from_list(TensorType(element, shape), [float(tensor.item())])
        else:
            data = tensor.detach().cpu().contiguous()
            array = data.view(torch.int16).numpy().view(np.uint16) if element == bf16 else data.numpy()
            name = f"torch_tensor_{'_'.join(str(d) for d in shape)}_{tensor.dtype}"
            value = numpy_to_resource(self.ctx, name, array, element)
        return self.insert(ValueTensorLiteralOp(value, result_type)).results[0]

    # endregion


def _meta_val(node: torch.fx.Node) -> Any:
    if "val" not in node.meta:
        raise _unsupported(node, "no meta['val'] (run the graph through aot_autograd/fake tensors)")
    return node.meta["val"]


def _unsupported(node: torch.fx.Node, reason: str) -> UnsupportedGraphError:
    return UnsupportedGraphError(f"cannot import node '{node.name}' ({node.format_node()}): {reason}")


def graph_attribute(gm: torch.nn.Module, target: str) -> Any:
    """The attribute a `get_attr` node's dotted `target` names in `gm`."""
    value: Any = gm
    for attr in target.split("."):
        value = getattr(value, attr)
    return value


def import_fx_graph(
    gm: torch.fx.GraphModule, *, func_name: str = "main", ctx: TorchContext | None = None
) -> tuple[ModuleOp, ImportInfo]:
    """Import an aot_autograd inference graph as `func.func @<func_name>` in the torch dialect.

    Constant tensors are stored as blobs in `ctx` (a fresh `make_context()` by default), which is
    returned as `ImportInfo.ctx`; print the module with `printer.print_metadata(ctx.loaded_dialects)`
    to keep them. Raises `UnsupportedGraphError` for anything the torch dialect cannot express."""
    ctx = make_context() if ctx is None else ctx
    importer = _GraphImporter(gm, ctx)
    module = ModuleOp([importer.run(func_name)])
    module.verify()
    return module, ImportInfo(tuple(importer.inputs), tuple(importer.outputs), tuple(sorted(importer.mutations)), ctx)
