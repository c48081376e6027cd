"""The device model: a simulated Spyre card that executes `spyre_isa` programs with DL16
numerics and prices them in simulated time (interpreter.DeviceModel; docs/architecture.md)."""
