"""`spyre-run FILE.mlir`: run a module on the device model.

The module may be at any level: torch (it is compiled with the spyre-pipeline first),
spyre, or spyre_isa. Inputs are seeded random normals, or `.npy` files in argument order.
The device is the module's `spyre.target` (the default device where it states none), with
the fields `--config` gives changed; the module is compiled for it and run on it.

    spyre-run mlp.mlir                        # outputs' summary and the profile table
    spyre-run mlp.mlir --input x.npy --save-output y.npy
    spyre-run mlp.mlir --reference            # torch level: compare with the numpy reference
    spyre-run mlp.mlir --config cores=8 --config numerics=ieee-fp16
    spyre-run mlp.mlir --trace trace.json    # per core and engine, for Perfetto
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.exceptions import DiagnosticException, ParseError

from spyre_mlir.diagnostics import InternalCompilerError, LocatingParser, diagnostic_text, internal_error, verify_module
from spyre_mlir.dialects import spyre
from spyre_mlir.pipeline import run_pipeline
from spyre_mlir.reference.evaluate import ReferenceError
from spyre_mlir.runtime.host import Executable
from spyre_mlir.sim.interpreter import DeviceModel
from spyre_mlir.sim.memory import DeviceError
from spyre_mlir.sim.numerics import get_numerics
from spyre_mlir.target.config import DeviceConfig
from spyre_mlir.tools.spyre_opt import make_tool_context


def _entry(module: ModuleOp, name: str) -> func.FuncOp:
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name), None)
    if fn is None:
        raise DeviceError(f"no function @{name} in the module")
    return fn


def input_types(fn: func.FuncOp) -> list[tuple[tuple[int, ...], str]]:
    """(shape, element type) of each argument (torch-level functions take !torch.vtensor)."""
    types = []
    for t in fn.function_type.inputs.data:
        if isinstance(t, TensorType):
            types.append((t.get_shape(), str(t.element_type)))
        elif hasattr(t, "get_shape") and hasattr(t, "get_dtype"):
            types.append((t.get_shape(), str(t.get_dtype())))
        else:
            raise DeviceError(f"@{fn.sym_name.data} takes {t}; spyre-run feeds tensors only")
    return types


def _check_results(fn: func.FuncOp) -> None:
    for t in fn.function_type.outputs.data:
        if not isinstance(t, TensorType) and not (hasattr(t, "get_shape") and hasattr(t, "get_dtype")):
            raise DeviceError(f"@{fn.sym_name.data} returns {t}; spyre-run returns tensors only")


def random_input(rng: np.random.Generator, shape: tuple[int, ...], element: str) -> np.ndarray:
    """Standard normal floats; integers in [0, 10) (valid indices for small tables); random booleans."""
    if element == "i1":
        return rng.random(shape) < 0.5
    if element.startswith(("si", "ui", "i")):
        return rng.integers(0, 10, shape).astype(np.int64 if "64" in element else np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def _host_available_bytes() -> int | None:
    """MemAvailable of /proc/meminfo (Linux), else free physical pages; None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _summary(name: str, y: np.ndarray) -> str:
    flat = y.reshape(-1)
    head = ", ".join(f"{v:.6g}" for v in flat[:4])
    return (
        f"{name}: shape {tuple(y.shape)} {y.dtype}  min {flat.min():.6g}  max {flat.max():.6g}  "
        f"mean {flat.mean():.6g}  [{head}{', ...' if flat.size > 4 else ''}]"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="spyre-run", description=__doc__.splitlines()[0])
    ap.add_argument("file", help="an .mlir module (torch, spyre or spyre_isa level)")
    ap.add_argument("--input", action="append", default=[], help=".npy input, once per function argument")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    ap.add_argument("--entry", default="main", help="function to run (default main)")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="device parameter override")
    ap.add_argument("--reference", action="store_true", help="compare with the numpy reference (torch-level input)")
    ap.add_argument("--save-output", action="append", default=[], help=".npy file per output")
    ap.add_argument("--no-profile", action="store_true", help="do not print the profile table")
    ap.add_argument("--trace", metavar="FILE", help="write a Chrome trace (Perfetto, chrome://tracing) of the run")
    args = ap.parse_args(argv)
    stage = "setup"  # ValueErrors here and in "inputs" are the user's (--config, .npy files)
    try:
        ctx = make_tool_context()
        with open(args.file) as f:
            text = f.read()
        module = LocatingParser(ctx, text, name=args.file).parse_module()
        stage = "verification"
        verify_module(module, ctx)
        stage = "setup"
        config = DeviceConfig.from_overrides(args.config, spyre.module_target(module))
        fn = _entry(module, args.entry)
        types = input_types(fn)
        _check_results(fn)
        stage = "inputs"
        if args.input:
            if len(args.input) != len(types):
                raise DeviceError(f"@{args.entry} takes {len(types)} inputs, {len(args.input)} given")
            inputs = [np.load(p) for p in args.input]
        else:
            rng = np.random.default_rng(args.seed)
            for i, (s, e) in enumerate(types):  # before any allocation: a shape no memory holds is refused
                n = math.prod(s)
                if n * 4 > config.ddr_usable_bytes:
                    raise DeviceError(
                        f"@{args.entry} argument {i}: a random input of shape {tuple(s)} ({e}) has {n} elements, "
                        f"{n * 4} bytes at 4 per element, more than the device's usable DDR "
                        f"({config.ddr_usable_bytes} bytes): it could not run; use smaller shapes"
                    )
            sizes = [math.prod(s) for s, _ in types]
            need = 6 * sum(sizes) + 8 * max(sizes, default=0)  # f32 arrays and DL16 copies; the largest drawn as f64
            have = _host_available_bytes()
            if have is not None and need > have:
                raise DeviceError(
                    f"@{args.entry}: random inputs of shapes {[tuple(s) for s, _ in types]} need about {need} bytes of "
                    f"host memory (float64 draws, float32 arrays, their DDR copies), more than the {have} bytes "
                    f"this machine has available: use smaller shapes or --input"
                )
            inputs = [random_input(rng, s, e) for s, e in types]
        torch_level = any(op.name.startswith("torch.") for op in module.walk())
        reference = None
        range_notes: list[str] = []
        if args.reference:
            if not torch_level:
                raise DeviceError("--reference needs a torch-level module")
            from spyre_mlir.reference.evaluate import evaluate

            stage = "the reference"
            reference = evaluate(module, inputs, get_numerics(config.numerics), ctx, args.entry, range_notes)
        stage = "spyre-pipeline"
        run_pipeline(ctx, module, config)
        stage = "the device model"
        model = DeviceModel(config)
        outputs = Executable(module, ctx, model, args.entry)(*inputs)
    except (DiagnosticException, ParseError, DeviceError, ReferenceError, OSError) as e:
        print(f"spyre-run: error: {diagnostic_text(e)}", file=sys.stderr)
        return 1
    except ValueError as e:
        if stage not in ("setup", "inputs"):
            print(f"spyre-run: {internal_error(e, stage)}", file=sys.stderr)
            return 1
        print(f"spyre-run: error: {e}", file=sys.stderr)
        return 1
    except InternalCompilerError as e:
        print(f"spyre-run: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # last resort: a bug, named with the stage and op it happened in
        print(f"spyre-run: {internal_error(e, stage)}", file=sys.stderr)
        return 1
    for i, y in enumerate(outputs):
        print(_summary(f"output {i}", y))
        if i < len(args.save_output):
            np.save(args.save_output[i], y)
    status = 0
    if reference is not None:
        values, bounds = reference
        for i, (y, ref, bound) in enumerate(zip(outputs, values, bounds)):
            with np.errstate(invalid="ignore"):
                err = np.abs(y.astype(np.float64) - ref)
                # equal (infinities too), or NaN where the exact answer is NaN
                within = (err <= bound) | (y == ref) | (np.isnan(ref) & np.isnan(y))
            ok = bool(np.all(within))
            shown, bshown = err[~np.isnan(err)], bound[~np.isnan(bound)]  # NaN where the exact answer is NaN
            print(
                f"output {i} vs reference: max |error| {shown.max() if shown.size else 0.0:.3g}, "
                f"max bound {bshown.max() if bshown.size else 0.0:.3g}, "
                f"within the {config.numerics} bound: {'yes' if ok else 'NO'}"
            )
            status |= 0 if ok else 2
        if status and range_notes:
            print(
                f"note: exact values leave the {config.numerics} range (|x| > {get_numerics(config.numerics).max_value:.3g}) at "
                f"{', '.join(range_notes)}: the device saturates there, which the bound does not cover"
            )
    if not args.no_profile:
        print(model.profile.table())
    if args.trace:
        model.profile.export_chrome_trace(args.trace)
        print(f"trace: {args.trace}")
    return status


if __name__ == "__main__":
    sys.exit(main())
