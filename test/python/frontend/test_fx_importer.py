"""The FX importer against aot_autograd graphs, and the torch dialect against real torch-mlir output."""

import io
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer

from spyre_mlir.dialects.torch import (
    AtenAddmmOp,
    AtenAddTensorOp,
    AtenGeluOp,
    AtenMmOp,
    AtenMulScalarOp,
    AtenPermuteOp,
    ConstantIntOp,
    ValueTensorLiteralOp,
    ValueTensorType,
    constant_float_value,
    constant_int_value,
    constant_list_ints,
    constant_str_value,
    make_context,
    resource_to_numpy,
)
from spyre_mlir.frontend.fx_importer import UnsupportedGraphError, import_fx_graph

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def capture(model: torch.nn.Module, *inputs: torch.Tensor, dynamic: bool = False) -> torch.fx.GraphModule:
    """The aot_autograd inference graph (core-ATen decompositions) that a backend would receive."""
    graphs: list[torch.fx.GraphModule] = []

    def fw_compiler(gm: torch.fx.GraphModule, _inputs):
        graphs.append(gm)
        return gm.forward

    backend = aot_autograd(fw_compiler=fw_compiler, decompositions=core_aten_decompositions())
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=backend, dynamic=dynamic)(*inputs)
    assert len(graphs) == 1
    return graphs[0]


def mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).eval()


def print_with_resources(module: ModuleOp, ctx: Context) -> str:
    out = io.StringIO()
    printer = Printer(stream=out)
    printer.print_op(module)
    printer.print_metadata(ctx.loaded_dialects)
    return out.getvalue()


def body_ops(module: ModuleOp) -> list[Operation]:
    func = module.body.block.first_op
    assert isinstance(func, FuncOp)
    return list(func.body.block.ops)


@pytest.fixture(scope="module")
def mlp_graph() -> torch.fx.GraphModule:
    return capture(mlp(), torch.randn(4, 256))


def test_mlp_import(mlp_graph: torch.fx.GraphModule):
    module, info = import_fx_graph(mlp_graph)
    module.verify()
    ops = body_ops(module)
    compute = [op for op in ops if op.name.startswith("torch.aten.")]
    assert [op.name for op in compute] == [
        "torch.aten.permute",
        "torch.aten.addmm",
        "torch.aten.gelu",
        "torch.aten.permute",
        "torch.aten.addmm",
    ]
    assert all(isinstance(op, cls) for op, cls in zip(compute, (AtenPermuteOp, AtenAddmmOp, AtenGeluOp) * 2))
    # every schema argument is an operand: addmm(self, mat1, mat2, *, beta=1, alpha=1), gelu(self, *, approximate="none")
    assert [len(op.operands) for op in compute] == [2, 5, 2, 2, 5]
    addmm = compute[1]
    assert isinstance(addmm, AtenAddmmOp)
    assert constant_int_value(addmm.beta) == constant_int_value(addmm.alpha) == 1
    assert addmm.beta is addmm.alpha  # constants are shared, as in torch-mlir's output
    assert isinstance(compute[0], AtenPermuteOp) and constant_list_ints(compute[0].dims) == [1, 0]
    assert isinstance(compute[2], AtenGeluOp) and constant_str_value(compute[2].approximate) == "none"
    assert sum(isinstance(op, ConstantIntOp) for op in ops) == 2  # %int1, %int0
    assert addmm.results[0].type == ValueTensorType((4, 512), compute[0].results[0].type.dtype)

    # parameters are lifted to placeholders: weight, bias, input, weight, bias
    assert [(i.name, i.shape, i.dtype) for i in info.inputs] == [
        ("arg0_1", (512, 256), torch.float32),
        ("arg1_1", (512,), torch.float32),
        ("arg2_1", (4, 256), torch.float32),
        ("arg3_1", (256, 512), torch.float32),
        ("arg4_1", (256,), torch.float32),
    ]
    assert [(o.shape, o.dtype) for o in info.outputs] == [((4, 256), torch.float32)]
    assert str(module.body.block.first_op.function_type).startswith("(!torch.vtensor<[512,256],f32>,")


def test_mlp_text_reparses_identically(mlp_graph: torch.fx.GraphModule):
    module, info = import_fx_graph(mlp_graph)
    text = print_with_resources(module, info.ctx)
    assert (
        "%3 = torch.aten.gelu %2, %str : !torch.vtensor<[4,512],f32>, !torch.str -> !torch.vtensor<[4,512],f32>" in text
    )
    ctx = make_context()
    reparsed = Parser(ctx, text).parse_module()
    reparsed.verify()
    assert print_with_resources(reparsed, ctx) == text


def test_torch_mlir_spelling_of_scalars_constants_and_multiple_results():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(3)

        def forward(self, x):
            return self.norm(x) * 2.0 + 1, torch.tensor([1.0, 2.0, 3.0]) * x

    x = torch.randn(2, 3)
    module, info = import_fx_graph(capture(Model().eval(), x))
    ops = body_ops(module)
    names = [op.name for op in ops if op.name.startswith(("torch.aten.", "torch.vtensor."))]
    # aten.mul/add.Tensor with a Python number become the .Scalar overloads, as in torch-mlir
    assert names[:3] == ["torch.aten.native_layer_norm", "torch.aten.mul.Scalar", "torch.aten.add.Scalar"]
    norm = next(op for op in ops if op.name == "torch.aten.native_layer_norm")
    assert [r.name_hint for r in norm.results] == ["result0", "result1", "result2"]
    mul = next(op for op in ops if isinstance(op, AtenMulScalarOp))
    assert mul.self_ is norm.results[0] and constant_float_value(mul.other) == 2.0

    # the constant tensor becomes a dense_resource literal whose blob survives printing and re-parsing
    literal = next(op for op in ops if isinstance(op, ValueTensorLiteralOp))
    assert str(literal.value) == "dense_resource<torch_tensor_3_torch.float32> : tensor<3xf32>"
    ctx = make_context()
    reparsed = Parser(ctx, print_with_resources(module, info.ctx)).parse_module()
    literal = next(op for op in body_ops(reparsed) if isinstance(op, ValueTensorLiteralOp))
    np.testing.assert_array_equal(resource_to_numpy(ctx, literal.value), [1.0, 2.0, 3.0])
    assert len(info.outputs) == 2


def test_unsupported_target_names_the_node():
    gm = capture(torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.GELU()), torch.randn(2, 8))
    gelu = next(n for n in gm.graph.nodes if n.target is torch.ops.aten.gelu.default)
    gelu.target = F.gelu  # a plain function, not an OpOverload
    with pytest.raises(UnsupportedGraphError, match=r"node 'gelu' .*is not a torch OpOverload"):
        import_fx_graph(gm)


def test_dynamic_shapes_are_unsupported():
    gm = capture(torch.nn.Linear(8, 4), torch.randn(3, 8), dynamic=True)
    with pytest.raises(UnsupportedGraphError, match=r"node 'arg\d+_1' .*dynamic shapes are not supported"):
        import_fx_graph(gm)


def test_cloned_context_still_parses_any_torch_op():
    ctx = make_context().clone()
    module = Parser(
        ctx,
        "func.func @f(%x: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
        "  %0 = torch.aten.sigmoid %x : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>\n"
        "  func.return %0 : !torch.vtensor<[2],f32>\n}",
    ).parse_module()
    module.verify()
    assert body_ops(module)[0].name == "torch.aten.sigmoid"


# region The torch-mlir fixture (made by test/fixtures/make_torch_mlir_mlp.py)


@pytest.fixture(scope="module")
def torch_mlir_mlp() -> tuple[str, Context, ModuleOp]:
    text = (FIXTURES / "mlp_torch_mlir.mlir").read_text()
    ctx = make_context()
    module = Parser(ctx, text, name="mlp_torch_mlir.mlir").parse_module()
    module.verify()
    return text, ctx, module


def test_torch_mlir_fixture_prints_back_as_torch_mlir(torch_mlir_mlp: tuple[str, Context, ModuleOp]):
    text, ctx, module = torch_mlir_mlp
    printed = print_with_resources(module, ctx)

    def op_lines(s: str) -> list[str]:
        return [line for line in s.split("{-#")[0].splitlines() if line.strip() and not line.startswith("//")]

    # identical up to the spelling of the module and return ops (xDSL prints them qualified)
    ours = [line.replace("builtin.module", "module").replace("func.return", "return") for line in op_lines(printed)]
    assert ours == op_lines(text)

    again = make_context()
    assert print_with_resources(Parser(again, printed).parse_module(), again) == printed


def test_torch_mlir_fixture_computes_the_eager_result(torch_mlir_mlp: tuple[str, Context, ModuleOp]):
    """Evaluate the imported module with the weights read from its blobs; compare with eager."""
    _, ctx, module = torch_mlir_mlp
    ref = np.load(FIXTURES / "mlp_torch_mlir_ref.npz")
    func = module.body.block.first_op
    assert isinstance(func, FuncOp)
    env = {func.body.block.args[0]: torch.from_numpy(ref["x"])}
    for op in func.body.block.ops:
        if isinstance(op, ValueTensorLiteralOp):
            env[op.result] = torch.from_numpy(resource_to_numpy(ctx, op.value).copy())
        elif isinstance(op, AtenPermuteOp):
            env[op.result] = env[op.self_].permute(constant_list_ints(op.dims))
        elif isinstance(op, AtenMmOp):
            env[op.result] = env[op.self_] @ env[op.mat2]
        elif isinstance(op, AtenMulScalarOp):
            env[op.result] = env[op.self_] * constant_float_value(op.other)
        elif isinstance(op, AtenAddTensorOp):
            env[op.result] = env[op.self_] + constant_float_value(op.alpha) * env[op.other]
        elif isinstance(op, AtenGeluOp):
            env[op.result] = F.gelu(env[op.self_], approximate=constant_str_value(op.approximate))
        elif isinstance(op, ReturnOp):
            (y,) = (env[v] for v in op.arguments)
        else:
            assert op.name.startswith(("torch.constant.", "torch.prim.ListConstruct")), op.name
    np.testing.assert_allclose(y.numpy(), ref["y"], rtol=1e-5, atol=1e-5)


# endregion
