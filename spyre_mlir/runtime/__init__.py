"""The host side of running a compiled graph: its host ops, transfers and launches on the
device model (host.Executable), what the executor knows of a graph before it runs it
(host_program.HostProgram), the device copies it keeps between calls (resident.py), and ATen's
operators as the torch dialect names them (aten.py)."""
