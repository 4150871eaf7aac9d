"""What a workspace is made of: project types, modules of a monorepo, and declared dependencies.

Everything comes from manifest files, read with real parsers (``json``, ``tomllib``,
``packaging`` for PEP 508 requirements, ``xml.etree`` for Maven) and a few tiny line parsers
where the format is a small DSL (``go.mod``, ``go.work``, ``pnpm-workspace.yaml``,
``settings.gradle``).

Modules: ``manifests`` (which files are manifests, the bounded walk, reading one through the
sandbox), ``layout`` (project types and modules), ``monorepos`` (workspace roots and members),
``extensions`` (recommended VS Code extensions), ``dependencies`` (every manifest of a folder,
parsed) with ``deps`` (the Deps shape) and one module an ecosystem: ``node``, ``python``, ``go``,
``cargo``, ``maven``.
"""

from .dependencies import dependencies_of
from .extensions import recommended_extensions
from .layout import layout
from .manifests import MAX_DEPTH, MAX_MODULES

__all__ = [
    "MAX_DEPTH",
    "MAX_MODULES",
    "dependencies_of",
    "layout",
    "recommended_extensions",
]
