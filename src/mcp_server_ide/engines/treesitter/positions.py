"""Tree-sitter counts UTF-8 bytes; VS Code and LSP count UTF-16 code units: the conversion."""

from __future__ import annotations


class Positions:
    """Byte (row, column) points to (line, UTF-16 character)."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self._lines: list[bytes] | None = None

    def char(self, point: tuple[int, int]) -> tuple[int, int]:
        row, col = point
        if col == 0:
            return row, 0
        if self._lines is None:
            self._lines = self.src.split(b"\n")
        line = self._lines[row] if row < len(self._lines) else b""
        prefix = line[:col]
        if prefix.isascii():
            return row, col
        text = prefix.decode("utf-8", errors="replace")
        return row, len(text.encode("utf-16-le")) // 2


def utf16_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2
