"""Engines do the work behind the tools: paths, text I/O, search, git, processes, language servers."""
