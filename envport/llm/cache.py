"""Answers by request hash, so a resumed run never pays twice for the same request."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from envport.llm.types import ModelRequest, ModelResponse

log = logging.getLogger("envport.llm")


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


class ResponseCache:
    """One JSON file per answer, `<dir>/<key>.json`, written atomically."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return ModelResponse.model_validate(data["response"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
            # A damaged entry costs one paid call, never a crashed run.
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None

    def put(self, key: str, model_name: str, response: ModelResponse) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        payload = {"key": key, "model": model_name, "response": response.model_dump(mode="json")}
        write_atomically(self.path(key), json.dumps(payload, indent=2, ensure_ascii=False))


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a kill leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
