"""`spyre-opt`: xdsl-opt with the spyre-mlir dialects and passes.

spyre-opt model.mlir -p spyre-pipeline                 # torch -> spyre_isa
spyre-opt model.mlir -p convert-torch-to-spyre,spyre-propagate-layouts
spyre-opt bad.mlir --verify-diagnostics --split-input-file

The passes compile for the device the module names, `builtin.module attributes
{spyre.target = #spyre.target<cores = 8>} {...}` (docs/passes.md, "The target"); `-p` options
are the passes' own switches, never the device.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import re
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from spyre_mlir.diagnostics import (
    REMARKS,
    InternalCompilerError,
    LocatingParser,
    diagnostic_text,
    internal_error,
    verify_dominance,
    verify_resources,
)
from spyre_mlir.dialects.torch import make_context
from spyre_mlir.target.config import DeviceConfig


def make_tool_context():
    """make_context() (torch-aware, own blob store) plus every upstream xDSL dialect, lazily."""
    from xdsl.universe import Universe

    ctx = make_context()
    known = set(ctx.registered_dialect_names) | {d.name for d in ctx.loaded_dialects}
    for name, factory in Universe.get_multiverse().all_dialects.items():
        if name not in known:
            ctx.register_dialect(name, factory)
    return ctx


class SpyreOptMain(xDSLOptMain):
    version_format = "spyre-opt (xdsl {xdsl_version})"

    def register_all_dialects(self) -> None:
        self.ctx = make_tool_context()

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from spyre_mlir.passes import get_all_passes

        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-remarks",
            action="store_true",
            help="print optimisation remarks (why a transformation was or was not applied) to stderr",
        )

    def setup_pipeline(self) -> None:
        """xDSL's, with a pass or option it does not know reported as the user's error; an option
        that is a device parameter points to the module's target, where the passes read it."""
        try:
            super().setup_pipeline()
        except ValueError as e:
            device = {f.name for f in dataclasses.fields(DeviceConfig)}
            given = sorted(set(re.findall(r"[{\s]([A-Za-z_]\w*)=", self.args.passes or "")) & device)
            hint = (
                f"; {', '.join(given)}: a device parameter, which the passes read from the module's target: "
                f'builtin.module attributes {{spyre.target = #spyre.target<{given[0]} = ...>}} (docs/passes.md, "The target")'
                if given
                else ""
            )
            raise DiagnosticException(f"spyre-opt: error: -p {self.args.passes}: {e}{hint}") from None

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if (self.args.frontend or file_extension) == "mlir":  # located errors (LocatingParser)
            return LocatingParser(self.ctx, chunk.read(), self.get_input_name()).parse_module(
                not self.args.no_implicit_module
            )
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp) -> None:
        """xDSL's pipeline, plus: the input is checked for dominance too, and a pass that fails
        other than with a diagnostic, or leaves IR that does not verify, is an internal error
        naming the pass (spyre_mlir.diagnostics). With --print-remarks, the passes' remarks
        (the `spyre_mlir.remarks` logger) go to stderr."""
        if self.args.print_remarks:
            if not REMARKS.handlers:
                handler = logging.StreamHandler(sys.stderr)
                handler.setFormatter(logging.Formatter("remark: %(message)s"))
                REMARKS.addHandler(handler)
            REMARKS.setLevel(logging.INFO)
        verify = self.pipeline.callback
        current: list[ModulePass | None] = [self.pipeline.passes[0] if self.pipeline.passes else None]

        def callback(prev: ModulePass | None, module: ModuleOp, nxt: ModulePass | None) -> None:
            if prev is None:  # the input: its errors are the user's
                if verify is not None:
                    verify(prev, module, nxt)
                    if not self.args.disable_verify:
                        verify_dominance(module)
                        verify_resources(module, self.ctx)
            elif verify is not None:
                try:
                    verify(prev, module, nxt)
                    if not self.args.disable_verify:
                        verify_dominance(module)
                except DiagnosticException as e:
                    raise InternalCompilerError(
                        f"the IR after the pass does not verify: {diagnostic_text(e)}", f"pass {prev.name}"
                    ) from e
            current[0] = nxt

        try:
            PassPipeline(self.pipeline.passes, callback).apply(self.ctx, prog)
        except (DiagnosticException, ParseError, InternalCompilerError):
            raise
        except Exception as e:
            raise internal_error(e, f"pass {current[0].name}" if current[0] is not None else None) from e


def main(args: Sequence[str] | None = None) -> None:
    try:
        SpyreOptMain(args=args).run()
    except (DiagnosticException, ParseError) as e:  # never a traceback for bad input
        print(diagnostic_text(e), file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f"spyre-opt: error: {e.strerror}: {e.filename}", file=sys.stderr)
        sys.exit(1)
    except InternalCompilerError as e:  # a bug: the pass and op it happened in
        print(f"spyre-opt: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # last resort (outside any pass: parsing, printing)
        print(f"spyre-opt: {internal_error(e)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
