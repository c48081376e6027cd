"""The host side of running a compiled graph: its host ops, transfers and launches on the
device model (host.Executable), and ATen's operators as the torch dialect names them (aten.py)."""
