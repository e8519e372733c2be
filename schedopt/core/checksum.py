"""The checksum that names an instance: what a benchmark row, a suite recipe and a tuning
checkpoint record, so that figures of two different instances are never compared."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel


def instance_checksum(instance: BaseModel) -> str:
    """SHA-256 of the instance's canonical JSON (sorted keys, no spaces)."""
    doc = instance.model_dump(mode="json")
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


__all__ = ["instance_checksum"]
