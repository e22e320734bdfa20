"""Artifacts copied out of sandboxes into storage the application owns, with provenance.

Contract: `ArtifactStore.put` stores bytes content-addressed (``sha256:<hex>``; identical bytes
are stored once) and appends one provenance record per put (job, attempt, path in the
workspace, code and environment digests, receipt-independent facts). `get` re-hashes what it
reads and refuses a blob whose bytes no longer match its name. The store outlives every
workspace: a workspace is a scratchpad, never the only copy of anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import EscalationError

_REF = re.compile(r"^sha256:([0-9a-f]{64})$")


class ArtifactStore:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        (self.root / "blobs").mkdir(parents=True, exist_ok=True)
        (self.root / "provenance").mkdir(exist_ok=True)
        self._lock = threading.Lock()

    def _blob(self, digest: str) -> Path:
        return self.root / "blobs" / digest[:2] / digest

    def put(self, data: bytes, *, provenance: dict[str, Any]) -> str:
        digest = hashlib.sha256(data).hexdigest()
        blob = self._blob(digest)
        if not blob.exists():
            blob.parent.mkdir(exist_ok=True)
            tmp = blob.with_name(f".{digest}.{uuid.uuid4().hex}")
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, blob)
        record = {"sha256": digest, "size": len(data),
                  "stored_at": datetime.now(timezone.utc).isoformat(), **provenance}
        line = json.dumps(record, sort_keys=True, default=str) + "\n"
        with self._lock, open(self.root / "provenance" / f"{digest}.jsonl", "a") as f:
            f.write(line)
        return f"sha256:{digest}"

    def get(self, ref: str) -> bytes:
        match = _REF.match(ref)
        if not match:
            raise EscalationError(f"artifact reference {ref!r} is not sha256:<hex>", code="E603")
        digest = match.group(1)
        try:
            data = self._blob(digest).read_bytes()
        except FileNotFoundError:
            raise EscalationError(f"artifact {ref} is not in the store", code="E603") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise EscalationError(f"artifact {ref} is corrupted: its bytes no longer match",
                                  code="E901")
        return data

    def provenance(self, ref: str) -> list[dict[str, Any]]:
        match = _REF.match(ref)
        if not match:
            raise EscalationError(f"artifact reference {ref!r} is not sha256:<hex>", code="E603")
        path = self.root / "provenance" / f"{match.group(1)}.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
