"""Doors: the ways in (stdio, Streamable HTTP + the seed REST interface, the reference page)."""
