"""Analyses shared by passes: stick addressing and kernel iteration spaces."""
