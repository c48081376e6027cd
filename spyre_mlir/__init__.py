"""spyre-mlir: an open MLIR-style compiler for IBM's Spyre accelerator, on xDSL, with a
reference device model.

    torch.compile(model, backend="spyre")          # the backend (registered as an entry point)
    with spyre_mlir.profile() as prof: model(x)    # simulated time per kernel and core
    prof.table(); prof.export_chrome_trace("trace.json")
"""

from spyre_mlir.sim.profile import Profile, profile

__all__ = ["Profile", "profile"]
