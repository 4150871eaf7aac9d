"""Tools, one module per seed category; each ``@tool`` function registers itself."""
