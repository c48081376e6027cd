"""Same-level rewrites, one pass per file (file = snake_case twin of the pass name);
level-crossing conversions live in `spyre_mlir.lowering`, the pass registry in
`spyre_mlir.passes`."""
