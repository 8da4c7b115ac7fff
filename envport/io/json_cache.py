"""One JSON file per key, `<directory>/<key>.json`: the store under every cache of a run.

The model's answers, the verifier's reports and the bench's comparisons are all kept this
way: the caller computes the key (a hash of whatever determines the value), the cache
stores one pydantic model per key, written atomically. An entry that cannot be read is a
miss with a warning, never a crash: a damaged entry costs the work again, nothing more.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from envport.io.atomic import write_atomically

Value = TypeVar("Value", bound=BaseModel)

log = logging.getLogger("envport.io")


class JsonCache(Generic[Value]):
    """Values of type `kind` by key; `label` names the cache in a warning."""

    def __init__(self, directory: Path | str, kind: type[Value], label: str) -> None:
        self.directory = Path(directory)
        self.kind = kind
        self.label = label

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> Value | None:
        path = self.path(key)
        try:
            return self.kind.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, ValidationError) as error:
            log.warning("ignoring unreadable %s entry %s: %s", self.label, path, error)
            return None

    def put(self, key: str, value: Value, *, indent: int | None = None) -> None:
        write_atomically(self.path(key), value.model_dump_json(indent=indent))
