"""bench/runtime.py's arithmetic: a model's call composed from a 2-layer run, and the fit of
the host runtime's parameters to published ratios."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from spyre_mlir.report.sweep import load_bench
from spyre_mlir.sim.host_timeline import Launch, schedule
from spyre_mlir.target.config import RUNTIME_MODES, DeviceConfig


def _llama(layers: int) -> LlamaForCausalLM:
    cfg = LlamaConfig(
        vocab_size=256,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,  # (head dim 64: docs/llm.md, known gaps)
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


@pytest.mark.full  # 1-, 2- and 4-layer decoders compiled and their decode calls recorded
def test_a_calls_layers_are_composed_from_one():
    """A 4-layer decoder's decode call, composed from its 1-layer twin's (the layer's launches
    told from the call's by the 1- and 2-layer calls), is the 4-layer call measured within a
    launch per added layer, and costs what it costs in every runtime mode within 3% (a
    layer's boundary kernels differ a little from the next layer's)."""
    bench = load_bench("runtime")
    ids = torch.randint(0, 256, (1, 8))
    one, two, four = (bench.generate_calls(_llama(n), ids)["decode"] for n in (1, 2, 4))
    composed = bench.compose(one, [one, two], layers=4)
    measured, _ = bench.parse(four)
    launches = [sum(isinstance(s, Launch) for s in c) for c in (bench.parse(one)[0], composed, measured)]
    assert launches[0] < launches[2] and abs(launches[1] - launches[2]) <= 3, launches
    cfg = DeviceConfig()
    for mode in RUNTIME_MODES:
        assert schedule(composed, cfg, mode).total_s == pytest.approx(schedule(measured, cfg, mode).total_s, rel=0.03)


def test_the_fit_recovers_the_parameters_that_made_the_ratios():
    """Ratios computed with known host runtime parameters, handed to the fit as the targets,
    give those parameters back."""
    bench = load_bench("runtime")
    known = DeviceConfig(graph_kernel_s=30e-6, graph_tensor_s=5e-6, patch_address_s=20e-9)

    def call(kernel_s, instructions):
        return [
            bench.Transfer(4096, "argument", True),
            *(
                Launch(
                    f"k{i}",
                    kernel_s * (1 + i % 3),
                    1e-6 if i == 0 else 0.2e-6,
                    3 + i % 4,
                    instructions // 8 * (1 + i % 2),
                    instructions,
                    i == 0,
                    False,
                )
                for i in range(40)
            ),
            bench.Transfer(512, "result", False),
        ]

    phases = {"prefill": call(400e-6, 40_000), "decode": call(60e-6, 4_000)}
    targets = {}
    for name, steps in phases.items():
        r = bench.ratios(steps, known)
        targets[f"{name}_speedup_total"] = r["speedup_total"]
        targets[f"{name}_gain_off_transfer_path"] = r["gain_off_transfer_path"]
    fitted = bench.fit(phases, DeviceConfig(), targets)
    for name in bench.FITTED:
        assert fitted[name] == pytest.approx(getattr(known, name), rel=1e-6)


def test_equal_tensor_nodes_tie_the_two_gains_to_the_phases_times():
    """The identity docs/hardware.md argues from: when two phases build as many tensor nodes at
    the same cost, their published ratios fix the prefill's time over the decode step's once the
    runtime is optimised (`implied_prefill_over_decode`)."""
    bench = load_bench("runtime")
    cfg = DeviceConfig(graph_kernel_s=30e-6, graph_tensor_s=5e-6, patch_address_s=20e-9)

    def call(kernel_s, addresses):
        return [
            bench.Transfer(4096, "argument", True),
            *(Launch(f"k{i}", kernel_s, 1e-6, 2 + i % 3, addresses, 8 * addresses, i == 0, False) for i in range(30)),
            bench.Transfer(512, "result", False),
        ]

    phases = {"prefill": call(900e-6, 5_000), "decode": call(70e-6, 300)}
    figures = {}
    for name, steps in phases.items():
        r = bench.ratios(steps, cfg)
        figures[f"{name}_gain_off_transfer_path"] = r["gain_off_transfer_path"]
        figures[f"{name}_speedup_total"] = r["speedup_total"]
    once = {name: schedule(steps, cfg, RUNTIME_MODES[2]).total_s for name, steps in phases.items()}
    assert bench.implied_prefill_over_decode(figures) == pytest.approx(once["prefill"] / once["decode"], rel=1e-9)
    assert figures["prefill_gain_off_transfer_path"] < figures["decode_gain_off_transfer_path"]
