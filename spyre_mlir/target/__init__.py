"""The Spyre hardware described once, for the compiler and the device model alike.

    constants.py   the stick, the PT array, the transpose block, the instruction format
    config.py      DeviceConfig: every parameter a study may vary, each with its source
    cycles.py      the engine cycle formulas the cost model (analysis/cost.py) and the timing
                   model (sim/timing.py) share

This package imports nothing of the project but itself.
"""
