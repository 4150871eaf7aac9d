"""Text from bytes and back without damage: encodings, BOMs and line endings.

- Encodings: BOMs (UTF-8, UTF-16, UTF-32), UTF-8, else the Windows-1252 / Latin-1 code page,
  which round-trips every byte. Text that the file's encoding cannot hold is refused, never
  re-encoded lossily. Files with NUL bytes (and no UTF-16/32 BOM) are binary and refused.
- Line endings: a file whose every line break is CRLF (or CR) is edited in ``\\n`` form and
  written back with its own endings; a file with mixed endings is edited as it is.
"""

from __future__ import annotations

import codecs
import hashlib
from dataclasses import dataclass

from ..failures import ToolFailure

MAX_TEXT_BYTES = 16 * 1024 * 1024
BINARY_PROBE = 8192

BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
"""The byte order marks read, longest first (a UTF-32 LE BOM starts like a UTF-16 LE one)."""


@dataclass(frozen=True)
class TextFile:
    """A decoded text file and everything needed to write it back the same way."""

    text: str
    """The content with line endings normalised to ``\\n`` when the file uses one kind of ending."""
    encoding: str
    bom: bytes
    newline: str | None
    """``"\\r\\n"``/``"\\r"`` when every break in the file is that one, ``"\\n"`` for LF files,
    None for mixed endings (then ``text`` keeps them as they are)."""
    raw: bytes
    mode: int
    unsaved: bool = False
    """True when this is the text of an editor's unsaved buffer, not the file's (see :mod:`.buffers`);
    ``raw`` is then what saving the buffer would write."""

    @property
    def hash(self) -> str:
        return content_hash(self.raw)

    @property
    def line_count(self) -> int:
        """How many lines ``text`` has (a last line without a break counts; an empty file has none)."""
        return count_lines(self.text)

    @property
    def encoding_label(self) -> str:
        return self.encoding + ("-bom" if self.bom else "")


def count_lines(text: str) -> int:
    """Lines in ``text``: one per ``\\n``, plus a last line without one; an empty text has none."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def indentation(text: str) -> tuple[int, bool]:
    """How ``text`` indents: (the indent width in columns, True when lines start with tabs).

    The smallest of 2, 4 or 8 spaces that starts a line among the first 400 (4 when none does);
    tabs when more lines start with a tab than with spaces."""
    lines = text.split("\n", 400)[:400]
    tabs = sum(1 for ln in lines if ln.startswith("\t"))
    sizes = [len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.startswith(" ") and ln.strip()]
    size = min((n for n in sizes if n in (2, 4, 8)), default=4)
    return size, tabs > len(sizes)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(raw: bytes, mode: int = 0o644, name: str = "file") -> TextFile:
    """Decode bytes as text, keeping what is needed to encode them back identically."""
    for bom, encoding in BOMS:
        if raw.startswith(bom):
            try:
                text = raw[len(bom) :].decode(encoding, errors="strict")
            except UnicodeDecodeError:
                break  # it only starts like a BOM: read it as the bytes it is, below
            return _with_newlines(text, encoding, bom, raw, mode)
    if b"\x00" in raw[:BINARY_PROBE]:
        raise ToolFailure(
            f"refused: {name!r} is a binary file ({len(raw)} bytes; rule: text tools read and write text only)",
            kind="refused",
        )
    for encoding in ("utf-8", "cp1252", "latin-1"):
        try:
            text = raw.decode(encoding, errors="strict")
        except UnicodeDecodeError:
            continue
        return _with_newlines(text, encoding, b"", raw, mode)
    raise AssertionError("latin-1 decodes every byte string")


def encode(text: str, like: TextFile | None, name: str = "file") -> bytes:
    """Encode ``text`` the way ``like`` was encoded (UTF-8 and LF for a new file)."""
    if like is None:
        return text.encode("utf-8")
    if like.newline in ("\r\n", "\r"):
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", like.newline)
    try:
        return like.bom + text.encode(like.encoding, errors="strict")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ToolFailure(
            f"refused: the new text has {bad!r}, which {name!r}'s encoding ({like.encoding}) cannot hold "
            "(rule: a file is never re-encoded lossily; leave those characters out, or convert the file "
            "to UTF-8 first)",
            kind="refused",
        ) from None


def normalise_input(text: str, like: TextFile | None) -> str:
    """Caller text in the same newline form as ``like.text`` (``\\n`` unless the file has mixed endings)."""
    if like is not None and like.newline is None:
        return text
    return text.replace("\r\n", "\n")


_ASCII_NEWLINES = frozenset({"utf-8", "cp1252", "latin-1"})
"""Encodings in which byte 0x0D is always CR and 0x0A always LF: the raw bytes tell the endings."""


def _with_newlines(text: str, encoding: str, bom: bytes, raw: bytes, mode: int) -> TextFile:
    if encoding in _ASCII_NEWLINES and b"\r" not in raw:  # the common case: an LF file, one memchr
        return TextFile(text, encoding, bom, "\n", raw, mode)
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    kinds = (crlf > 0) + (cr > 0) + (lf > 0)
    if kinds > 1:
        return TextFile(text, encoding, bom, None, raw, mode)
    if crlf:
        return TextFile(text.replace("\r\n", "\n"), encoding, bom, "\r\n", raw, mode)
    if cr:
        return TextFile(text.replace("\r", "\n"), encoding, bom, "\r", raw, mode)
    return TextFile(text, encoding, bom, "\n", raw, mode)
