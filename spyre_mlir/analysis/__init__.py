"""Analyses shared by passes: host transfers seen through views (views.py), the operands kernels
read as they are (sticks.py), SFP programs (sfp.py), LX buffers (buffers.py) and time estimates
(cost.py). What a kernel's split and chunks mean is the dialect's (dialects/spyre/iteration.py)."""
