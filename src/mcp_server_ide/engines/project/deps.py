"""Deps: what one manifest declares (the shape get_project_dependencies returns per manifest)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Deps:
    type: str
    manifest: str
    dependencies: dict[str, str] = field(default_factory=dict)
    devDependencies: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "manifest": self.manifest,
            "dependencies": self.dependencies,
            "devDependencies": self.devDependencies,
            **self.extra,
        }


DEV_NAMES = re.compile(
    r"(^|[-_.])(dev|devel|develop|test|tests|testing|lint|linting|docs?|ci|typing|types|check)([-_.]|$)", re.I
)


def str_map(value: object) -> dict[str, str]:
    """A JSON object as ``name -> text`` (non-string values as their JSON); {} for anything else."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
