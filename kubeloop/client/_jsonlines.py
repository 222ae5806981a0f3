"""Split a byte stream into lines without a length cap and without buffering more than one line.

aiohttp's `readline()` fails on lines over its buffer size (large objects in a watch), so the watch
path feeds raw chunks here. Only the unfinished tail of the last chunk is kept between feeds; a very
long line is collected as a list of parts and joined once.
"""

from __future__ import annotations


class LineSplitter:
    """Sans-IO newline splitter: `feed(chunk)` returns the complete non-empty lines in `chunk`."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            if chunk:
                self._parts.append(chunk)
            return []
        if self._parts:
            self._parts.append(chunk)
            chunk = b"".join(self._parts)
            self._parts = []
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if tail:
            self._parts.append(tail)
        return [line for line in lines if line]

    def pending(self) -> int:
        """Bytes held for the unfinished line."""
        return sum(len(p) for p in self._parts)

    def flush(self) -> bytes | None:
        """The unterminated last line at end of stream, if any (blank is None)."""
        rest = b"".join(self._parts)
        self._parts = []
        return rest if rest.strip() else None
