"""What a run cost in simulated device time: one record per kernel launch, and a table."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class KernelRecord:
    """One kernel launch on the device model."""

    name: str
    time_s: float
    """Simulated time: launch overhead + the slowest core's instruction time."""
    cycles: float
    cores: int
    """Cores that ran at least one instruction."""
    instructions: int
    """Instructions issued, summed over cores."""
    ddr_read_bytes: int
    ddr_write_bytes: int
    macs: int
    engine_cycles: dict[str, float] = field(default_factory=dict)
    """Busy cycles per engine, summed over cores."""

    @property
    def ddr_bytes(self) -> int:
        return self.ddr_read_bytes + self.ddr_write_bytes


@dataclass
class Profile:
    """Kernel records of one or more runs, in launch order."""

    kernels: list[KernelRecord] = field(default_factory=list)
    transfers_bytes: int = 0
    """Host <-> device bytes (weights are transferred once and cached)."""

    @property
    def total_time_s(self) -> float:
        return sum(k.time_s for k in self.kernels)

    @property
    def total_ddr_bytes(self) -> int:
        return sum(k.ddr_bytes for k in self.kernels)

    def table(self, sort_by_time: bool = True) -> str:
        rows = sorted(self.kernels, key=lambda k: -k.time_s) if sort_by_time else list(self.kernels)
        head = f"{'kernel':<24}{'time (us)':>11}{'cores':>7}{'instrs':>8}{'DDR read':>12}{'DDR write':>12}{'MACs':>14}"
        lines = [head, "-" * len(head)]
        for k in rows:
            lines.append(
                f"{k.name:<24}{k.time_s * 1e6:>11.2f}{k.cores:>7}{k.instructions:>8}"
                f"{k.ddr_read_bytes:>12}{k.ddr_write_bytes:>12}{k.macs:>14}"
            )
        lines.append("-" * len(head))
        lines.append(
            f"{'total (' + str(len(rows)) + ' launches)':<24}{self.total_time_s * 1e6:>11.2f}{'':>7}"
            f"{sum(k.instructions for k in rows):>8}{sum(k.ddr_read_bytes for k in rows):>12}"
            f"{sum(k.ddr_write_bytes for k in rows):>12}{sum(k.macs for k in rows):>14}"
        )
        return "\n".join(lines)
