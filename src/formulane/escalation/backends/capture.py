"""Streaming output capture that keeps a bounded head and tail of a stream of any size.

Contract: `StreamCapture.feed` accepts chunks of any size in O(chunk) time and never holds more
than ``keep`` bytes (half head, half tail); it hashes every byte it was fed and counts them.
`over_budget` turns true once more than ``kill_after`` bytes were fed: the supervisor then stops
reading and kills the job (``output_limit``), so a 1 GB flood costs a bounded read, not 1 GB.
`record()` renders a `StreamRecord` (UTF-8 with replacement characters; bytes stay hashed).
"""

from __future__ import annotations

import hashlib

from ..contract import StreamRecord


class StreamCapture:
    def __init__(self, keep: int, kill_after: int) -> None:
        if keep < 2 or kill_after < keep:
            raise ValueError("capture needs keep >= 2 and kill_after >= keep")
        self.head_cap = keep // 2
        self.tail_cap = keep - self.head_cap
        self.kill_after = kill_after
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.hash = hashlib.sha256()
        self.eof = False

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            self.eof = True
            return
        self.total += len(chunk)
        self.hash.update(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
            if not chunk:
                return
        if len(chunk) >= self.tail_cap:
            self.tail = bytearray(chunk[-self.tail_cap:])
        else:
            self.tail += chunk
            excess = len(self.tail) - self.tail_cap
            if excess > 0:
                del self.tail[:excess]

    @property
    def over_budget(self) -> bool:
        return self.total > self.kill_after

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail) or not self.eof

    def record(self) -> StreamRecord:
        kept = len(self.head) + len(self.tail)
        return StreamRecord(
            head=bytes(self.head).decode("utf-8", "replace"),
            tail=bytes(self.tail).decode("utf-8", "replace"),
            total_bytes=self.total,
            kept_bytes=kept,
            truncated=self.total > kept or not self.eof,
            sha256=self.hash.hexdigest(),
            read_to_end=self.eof,
        )

    def text(self) -> str:
        """Everything kept, joined (for classification of short outputs)."""
        return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")

    def tail_text(self, size: int = 8192) -> str:
        data = bytes(self.head) + bytes(self.tail) if self.total <= self.head_cap + \
            self.tail_cap else bytes(self.tail)
        return data[-size:].decode("utf-8", "replace")
