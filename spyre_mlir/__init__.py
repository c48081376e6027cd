"""spyre-mlir: an open MLIR-style compiler for IBM's Spyre accelerator, on xDSL, with a
reference device model.

    torch.compile(model, backend="spyre")          # the backend (registered as an entry point)
    with spyre_mlir.profile() as prof: model(x)    # simulated time per kernel and core
    prof.table(); prof.export_chrome_trace("trace.json")
    spyre_mlir.report(model, x)                    # the explorer report: one HTML file (docs/report.md)
"""

from spyre_mlir.sim.profile import Profile, profile

__all__ = ["Profile", "profile"]


def __getattr__(name: str) -> object:
    """`spyre_mlir.report`, the report package (callable: `spyre_mlir.report(model, x)`), imported
    when first asked for (PEP 562)."""
    if name == "report":
        import importlib

        return importlib.import_module("spyre_mlir.report")
    raise AttributeError(f"module 'spyre_mlir' has no attribute {name!r}")
