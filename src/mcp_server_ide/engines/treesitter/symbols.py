"""An outline's Symbol and the seed's shape of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Symbol:
    name: str
    kind: str
    start: tuple[int, int]
    end: tuple[int, int]
    sel_start: tuple[int, int]
    sel_end: tuple[int, int]
    detail: str = ""
    children: list[Symbol] = field(default_factory=list)
    start_byte: int = 0
    end_byte: int = 0

    def to_seed(self) -> dict[str, Any]:
        """The seed's shape: ``{name, kind, range, text, detail, children?}``."""
        out: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "range": {
                "startLine": self.start[0],
                "startCharacter": self.start[1],
                "endLine": self.end[0],
                "endCharacter": self.end[1],
            },
            "selectionRange": {
                "startLine": self.sel_start[0],
                "startCharacter": self.sel_start[1],
                "endLine": self.sel_end[0],
                "endCharacter": self.sel_end[1],
            },
            "text": self.name,
            "detail": self.detail,
        }
        if self.children:
            out["children"] = [c.to_seed() for c in self.children]
        return out
