"""Names in ``rg --files --null`` output (``./a/b.py\\0./c.txt\\0``): split, and found by a text.

:func:`candidates` finds the names that may contain a text without decoding the output: one C-speed
``bytes.find`` scan instead of a ``str`` and a test per name. It returns a superset; :func:`contains`
is the exact test, run on the candidates only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

_NON_ASCII = re.compile(rb"[\x80-\xff]")


def split_names(out: bytes, *, cut: bool = False) -> list[str]:
    """The names, relative (no ``./``), decoded as ``os`` decodes them; ``cut``: the output was stopped
    early, so a last name without its NUL is dropped."""
    if not out:
        return []
    end = out.rfind(b"\x00") + 1 if cut else len(out)
    # Decoding the whole output at once equals decoding each name (NUL never belongs to a UTF-8
    # sequence, so no error spans two names), and is one call instead of one per name.
    text = out[:end].decode("utf-8", "surrogateescape")
    if text.endswith("\x00"):
        text = text[:-1]
    if not text:
        return []
    # Every name's "./" goes in one pass over the text, not a test and a slice per name.
    if text.startswith("./"):
        text = text[2:]
    return text.replace("\x00./", "\x00").split("\x00")


class NameStream:
    """Splits ``rg --files --null`` output as it arrives, a chunk at a time, into the names
    :func:`split_names` would give for the whole, handing each chunk's whole names to ``sink``."""

    def __init__(self, sink: Callable[[list[str]], None]) -> None:
        self._sink = sink
        self._rest = b""

    def feed(self, chunk: bytes) -> None:
        data = self._rest + chunk if self._rest else chunk
        end = data.rfind(b"\x00") + 1
        self._rest = data[end:]
        if end:
            self._sink(split_names(data[:end]))

    def end(self, *, cut: bool) -> None:
        """The output ended (``cut``: it was stopped early, so a last name without its NUL is dropped)."""
        rest, self._rest = self._rest, b""
        if rest and not cut:
            self._sink(split_names(rest))


def contains(rel: str, text: str, *, case_sensitive: bool, on_path: bool, prefix: str = "") -> bool:
    """Whether the name of ``rel`` (with ``on_path``: ``prefix + rel``) contains ``text``, compared
    with ``str.casefold`` unless ``case_sensitive``."""
    subject = prefix + rel if on_path else rel.rpartition("/")[2]
    if case_sensitive:
        return text in subject
    return text.casefold() in subject.casefold()


def candidates(out: bytes, text: str, *, case_sensitive: bool, on_path: bool) -> list[bytes]:
    """The NUL-ended records of ``out`` whose name (``on_path``: whole path) may contain ``text``: every
    one that does, maybe more (records with non-ASCII bytes are always candidates, since a
    case-insensitive match there needs ``str.casefold``)."""
    needle = _needle(text, case_sensitive)
    if needle is None:
        return records(out)
    haystack = out if case_sensitive else out.lower()  # bytes.lower: ASCII letters only
    spans: dict[int, int] = {}
    end_of_last = 0
    if needle:  # an ASCII needle (case-insensitive), or any needle's bytes (case-sensitive)
        # In the file's own name: no "/" between the text and the NUL that ends the name. The
        # expression starts with a literal, which the engine looks for at memory speed.
        pattern = re.escape(needle) if on_path else re.escape(needle) + rb"(?=[^/\x00]*\x00)"
        find, rfind = haystack.find, haystack.rfind
        for hit in re.finditer(pattern, haystack):
            at = hit.start()
            if at < end_of_last:
                continue  # the same name again
            start = rfind(b"\x00", 0, at) + 1
            end = find(b"\x00", at)
            if end < 0:
                break
            spans[start] = end
            end_of_last = end
        end_of_last = 0
    if not case_sensitive:
        for at in _non_ascii(out):
            if at < end_of_last:
                continue
            start = out.rfind(b"\x00", 0, at) + 1
            end = out.find(b"\x00", at)
            if end < 0:
                break
            spans[start] = end
            end_of_last = end
    return [out[start:end] for start, end in sorted(spans.items())]


_CHUNK = 1 << 16


def _non_ascii(out: bytes) -> Iterator[int]:
    """Offsets of bytes >= 0x80 in ``out``. ``bytes.isascii`` rules out a 64 KB chunk at memory speed;
    the regular expression (~50 MB/s) runs only in chunks that hold one."""
    for base in range(0, len(out), _CHUNK):
        if out[base : base + _CHUNK].isascii():
            continue
        for hit in _NON_ASCII.finditer(out, base, base + _CHUNK):
            yield hit.start()


def _needle(text: str, case_sensitive: bool) -> bytes | None:
    """The bytes every candidate record contains; b"": only records with non-ASCII bytes can match;
    None: no shortcut (every record is a candidate)."""
    if text == "":
        return None
    if case_sensitive:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return None
    folded = text.casefold()
    if not folded.isascii():
        return b""  # an ASCII name folds to ASCII: only non-ASCII names can hold this text
    return folded.encode("ascii")


def records(out: bytes) -> list[bytes]:
    """Every NUL-ended record of ``out``."""
    parts = out.split(b"\x00")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts
