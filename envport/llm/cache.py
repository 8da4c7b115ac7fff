"""Answers by request hash, so a resumed run never pays twice for the same request."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import BaseModel

from envport.io import JsonCache
from envport.llm.types import ModelRequest, ModelResponse


def request_key(model_name: str, request: ModelRequest) -> str:
    """sha256 of what determines the answer: provider and model, prompt, sampling params.

    The purpose is left out: the same prompt asked again (after a crash, in another
    iteration) gets the answer already paid for.
    """
    material = {
        "model": model_name,
        "system": request.system,
        "stable_prefix": request.stable_prefix,
        "messages": [[m.role, m.text] for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedAnswer(BaseModel):
    """One cache file: the answer, with the key and model it answers (for a reader)."""

    key: str = ""
    model: str = ""
    response: ModelResponse


class ResponseCache:
    """One JSON file per answer, `<dir>/<key>.json`, written atomically (envport.io)."""

    def __init__(self, directory: Path | str) -> None:
        self.store = JsonCache(directory, CachedAnswer, "cache")
        self.directory = self.store.directory

    def path(self, key: str) -> Path:
        return self.store.path(key)

    def get(self, key: str) -> ModelResponse | None:
        # A damaged entry is a miss: it costs one paid call, never a crashed run.
        entry = self.store.get(key)
        return entry.response if entry is not None else None

    def put(self, key: str, model_name: str, response: ModelResponse) -> None:
        self.store.put(key, CachedAnswer(key=key, model=model_name, response=response), indent=2)
