"""HTTP routes, one module per area."""
