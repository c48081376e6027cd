"""Ten Hugging Face architectures as real torch-mlir output run on the device model and match eager PyTorch.

The fixtures in test/fixtures/models/ were made by test/fixtures/make_torch_mlir_models.py
(torch-mlir's `fx.export_and_import(..., output_type="torch")` of tiny 2-layer models, weights
in dense_resource blobs; its docstring gives the configs and inputs). Each ARCH.mlir is run the
way `spyre-run ARCH.mlir --input ...` runs it: parsed with the tool context, compiled with the
spyre-pipeline (ops the device cannot run stay on the CPU), executed on the device model with
the inputs of ARCH.npz (token ids stay int64), and its output compared with the npz's eager
PyTorch output under the model criterion of spyre_mlir.testing.criteria
(`compare_model_outputs`: cosine >= 0.999 and max error <= 16 u (layers + 1) of the output's scale, u = 2^-10). The share of the
module's torch ops that ran on the device is printed (pytest -s) and recorded.

torch-mlir is not needed here. Unlike torch.compile(backend="spyre"), which receives
aot_autograd graphs with core-ATen decompositions, these modules went through torch-mlir's
own decompositions (layer norm and softmax arrive as sums, divisions and rsqrt; layer norm's
variance is computed in f64), so they exercise different device paths.

To reproduce one case by hand:

    python -c "import numpy as np; np.save('/tmp/x.npy', np.load('test/fixtures/models/bert.npz')['input_ids'])"
    spyre-run test/fixtures/models/bert.mlir --input /tmp/x.npy --save-output /tmp/y.npy
"""

import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from xdsl.parser import Parser

from spyre_mlir.lowering.convert_torch_to_spyre import host_ops
from spyre_mlir.pipeline import run_pipeline
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.testing.criteria import compare_model_outputs
from spyre_mlir.tools.spyre_opt import make_tool_context

pytestmark = pytest.mark.slow  # ten models compiled and run: make test, not make quick

MODELS = Path(__file__).resolve().parents[2] / "fixtures" / "models"
LAYERS = 2
OUTPUT = "eager_output"

ARCHITECTURES = [
    "bert",
    "roberta",
    "distilbert",
    "t5-encoder",
    "vit",
    "gpt2",
    "llama",
    "qwen3",
    "granite",
    "gemma3-text",
]


def load(name: str) -> tuple[list[np.ndarray], np.ndarray]:
    """The inputs (argument order) and eager PyTorch's output of a fixture."""
    with np.load(MODELS / f"{name}.npz") as data:
        inputs = [data[k] for k in data.files if k != OUTPUT]
        return inputs, data[OUTPUT]


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_torch_mlir_model_matches_eager(name, record_property):
    inputs, eager = load(name)
    assert inputs, f"{name}.npz holds no inputs"
    if name != "vit":
        assert inputs[0].dtype == np.int64, f"token ids must stay int64, got {inputs[0].dtype}"

    start = time.perf_counter()
    ctx = make_tool_context()
    module = Parser(ctx, (MODELS / f"{name}.mlir").read_text(), name=f"{name}.mlir").parse_module()
    module.verify()
    torch_ops = len(host_ops(module.walk()))
    config = DeviceConfig()
    run_pipeline(ctx, module, config)
    placed = host_ops(module.walk())
    device = DeviceModel(config)
    outputs = Executable(module, ctx, device, "main")(*inputs)
    seconds = time.perf_counter() - start

    assert len(outputs) == 1, f"{name}: {len(outputs)} outputs, expected one"
    result = compare_model_outputs(torch.from_numpy(np.asarray(outputs[0])), torch.from_numpy(eager), LAYERS)
    on_host = len(placed)
    on_cpu = Counter(op.name.removeprefix("torch.aten.") for op, _, by_design in placed if not by_design)
    fraction = 1 - on_host / torch_ops if torch_ops else 1.0
    record_property("device_fraction", round(fraction, 4))
    record_property("max_error", result.max_error)
    record_property("cosine", result.cosine)
    print(
        f"\n{name}: {result}; {torch_ops - on_host} of {torch_ops} torch ops on the device ({fraction:.0%}), "
        f"CPU fallback {dict(on_cpu) or 'none'}; {len(device.profile.kernels)} launches, "
        f"{device.profile.total_time_s * 1e6:.0f} us simulated; {seconds:.1f} s"
    )
    assert result.passed, f"{name}: {result}"
