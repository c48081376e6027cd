"""The numpy references: a torch-dialect module evaluated exactly (float64) with the device's
error bounds (evaluate.py), and a torch model's reference through the same graph the backend
compiles (model.py)."""
