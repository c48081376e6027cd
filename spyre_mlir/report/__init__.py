"""The explorer report of a compiled model, and design-space sweeps (docs/report.md)."""
