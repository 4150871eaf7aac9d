"""The revisions, oldest first: ``0001_core`` (users, tokens, projects)."""
