"""`spyre-opt`: xdsl-opt with the spyre-mlir dialects and passes.

    spyre-opt model.mlir -p spyre-pipeline                 # torch -> spyre_isa
    spyre-opt model.mlir -p convert-torch-to-spyre,spyre-propagate-layouts
    spyre-opt bad.mlir --verify-diagnostics --split-input-file
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from spyre_mlir.dialects.torch import make_context


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
        from spyre_mlir.transforms import get_all_passes

        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)


def main(args: Sequence[str] | None = None) -> None:
    try:
        SpyreOptMain(args=args).run()
    except (DiagnosticException, ParseError) as e:  # never a traceback for bad input
        print(e, file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f"spyre-opt: error: {e.strerror}: {e.filename}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
