"""The pass registry: every spyre-mlir pass by name (`spyre-opt -p <name>`), each imported
only when it is asked for (fast `spyre-opt` start-up).

Same-level rewrites live in `spyre_mlir.transforms` (file = snake_case twin of the pass name);
level-crossing conversions in `spyre_mlir.lowering`; the named pipelines in `spyre_mlir.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def spyre_track_origins():
        from spyre_mlir.transforms.spyre_track_origins import SpyreTrackOriginsPass

        return SpyreTrackOriginsPass

    def torch_adapt():
        from spyre_mlir.transforms.torch_adapt import TorchAdaptPass

        return TorchAdaptPass

    def convert_torch_to_spyre():
        from spyre_mlir.lowering.convert_torch_to_spyre import ConvertTorchToSpyrePass

        return ConvertTorchToSpyrePass

    def spyre_fold_infinity_tests():
        from spyre_mlir.transforms.spyre_fold_infinity_tests import SpyreFoldInfinityTestsPass

        return SpyreFoldInfinityTestsPass

    def spyre_propagate_layouts():
        from spyre_mlir.transforms.spyre_propagate_layouts import SpyrePropagateLayoutsPass

        return SpyrePropagateLayoutsPass

    def spyre_fuse():
        from spyre_mlir.transforms.spyre_fuse import SpyreFusePass

        return SpyreFusePass

    def spyre_divide_work():
        from spyre_mlir.transforms.spyre_divide_work import SpyreDivideWorkPass

        return SpyreDivideWorkPass

    def spyre_resident_chains():
        from spyre_mlir.transforms.spyre_resident_chains import SpyreResidentChainsPass

        return SpyreResidentChainsPass

    def spyre_onchip_relayout():
        from spyre_mlir.transforms.spyre_onchip_relayout import SpyreOnchipRelayoutPass

        return SpyreOnchipRelayoutPass

    def spyre_plan_scratchpad():
        from spyre_mlir.transforms.spyre_plan_scratchpad import SpyrePlanScratchpadPass

        return SpyrePlanScratchpadPass

    def convert_spyre_to_isa():
        from spyre_mlir.lowering.convert_spyre_to_isa import ConvertSpyreToIsaPass

        return ConvertSpyreToIsaPass

    def spyre_mark_gather_tables():
        from spyre_mlir.transforms.spyre_mark_gather_tables import SpyreMarkGatherTablesPass

        return SpyreMarkGatherTablesPass

    def spyre_pipeline():
        from spyre_mlir.pipeline import SpyrePipelinePass

        return SpyrePipelinePass

    return {
        "spyre-track-origins": spyre_track_origins,
        "torch-adapt": torch_adapt,
        "convert-torch-to-spyre": convert_torch_to_spyre,
        "spyre-fold-infinity-tests": spyre_fold_infinity_tests,
        "spyre-propagate-layouts": spyre_propagate_layouts,
        "spyre-fuse": spyre_fuse,
        "spyre-resident-chains": spyre_resident_chains,
        "spyre-divide-work": spyre_divide_work,
        "spyre-onchip-relayout": spyre_onchip_relayout,
        "spyre-plan-scratchpad": spyre_plan_scratchpad,
        "convert-spyre-to-isa": convert_spyre_to_isa,
        "spyre-mark-gather-tables": spyre_mark_gather_tables,
        "spyre-pipeline": spyre_pipeline,
    }
