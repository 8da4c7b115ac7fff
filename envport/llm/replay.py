"""`replay:<dir>`: answers from a recorded session instead of a live model.

On disk a session is a directory with `session.json` and one Markdown file per answer:

    <dir>/session.json
        {
          "format": "envport-replay/1",
          "entries": [
            {"phase": "generate", "module": "physics", "iteration": 0,
             "answer_file": "000-generate-physics.md",
             "prompt_sha256": "<sha256 of the rendered prompt, see prompt_sha256()>",
             "source": "recorded", "model": "anthropic:claude-sonnet-4-5",
             "stop_reason": "end"}
          ]
        }
    <dir>/000-generate-physics.md      the answer text, verbatim

Entries are keyed by purpose (phase, module, iteration); a key may appear once. `source` is
"recorded" for answers captured from a live model by SessionRecorder and "hand-written"
otherwise (the default, so an entry a person adds without the field is labelled honestly).
`prompt_sha256` is optional: when present and the prompt rendered now hashes differently,
replay still answers but logs a warning, since the answer was written for another prompt.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ValidationError, model_validator

from envport.errors import EnvportError
from envport.io import write_atomically
from envport.llm.types import STOP_END, Model, ModelRequest, ModelResponse, Purpose

log = logging.getLogger("envport.llm")

SESSION_FILE = "session.json"
SESSION_FORMAT: Final = "envport-replay/1"

Source = Literal["recorded", "hand-written"]


class SessionEntry(BaseModel):
    phase: str
    module: str | None = None
    iteration: int = 0
    answer_file: str
    prompt_sha256: str | None = None
    source: Source = "hand-written"
    model: str | None = None
    stop_reason: str = STOP_END

    @property
    def key(self) -> tuple[str, str | None, int]:
        return (self.phase, self.module, self.iteration)


class Session(BaseModel):
    format: Literal["envport-replay/1"] = SESSION_FORMAT
    entries: list[SessionEntry] = []

    @model_validator(mode="after")
    def _one_answer_per_purpose(self) -> Session:
        seen: set[tuple[str, str | None, int]] = set()
        for entry in self.entries:
            if entry.key in seen:
                raise ValueError(f"two entries for {describe_key(entry.key)}")
            seen.add(entry.key)
        return self

    def find(self, purpose: Purpose) -> SessionEntry | None:
        key = purpose_key(purpose)
        return next((e for e in self.entries if e.key == key), None)

    def upsert(self, entry: SessionEntry) -> None:
        self.entries = [e for e in self.entries if e.key != entry.key] + [entry]


def purpose_key(purpose: Purpose) -> tuple[str, str | None, int]:
    return (purpose.phase, purpose.module, purpose.iteration)


def describe_key(key: tuple[str, str | None, int]) -> str:
    phase, module, iteration = key
    return f"phase={phase} module={module or '-'} iteration={iteration}"


def prompt_sha256(request: ModelRequest) -> str:
    """Hash of the rendered prompt (system, stable prefix, messages), not of sampling params."""
    material = {
        "system": request.system,
        "stable_prefix": request.stable_prefix,
        "messages": [[m.role, m.text] for m in request.messages],
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def answer_file_name(purpose: Purpose) -> str:
    # Iteration first so a directory listing reads in the order the run asked.
    parts = [f"{purpose.iteration:03d}", purpose.phase]
    if purpose.module:
        parts.append(purpose.module)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts)) + ".md"


def read_session(directory: Path) -> Session:
    path = directory / SESSION_FILE
    if not path.is_file():
        raise EnvportError(f"replay session {directory} has no {SESSION_FILE}")
    try:
        return Session.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        problem = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc)
        raise EnvportError(f"replay session {path} is invalid: {problem}") from None


class ReplayModel:
    """Answers each request with the session's answer for its purpose. Costs nothing."""

    provider = "replay"

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.model_id = str(self.directory)
        self.name = f"{self.provider}:{self.directory}"
        self.session = read_session(self.directory)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        # Reading the answer file and hashing the prompt are disk and CPU work: off the loop.
        return await asyncio.to_thread(self._answer, request)

    def _answer(self, request: ModelRequest) -> ModelResponse:
        entry = self.session.find(request.purpose)
        if entry is None:
            raise EnvportError(
                f"replay session {self.directory} has no answer for "
                f"{describe_key(purpose_key(request.purpose))}; add an entry to "
                f"{SESSION_FILE} or record the session again"
            )
        answer_path = self.directory / entry.answer_file
        try:
            text = answer_path.read_text(encoding="utf-8")
        except OSError:
            raise EnvportError(
                f"replay session {self.directory}: answer file {entry.answer_file} for "
                f"{describe_key(entry.key)} cannot be read"
            ) from None
        if entry.prompt_sha256 and entry.prompt_sha256 != prompt_sha256(request):
            log.warning(
                "replay %s: the prompt for %s differs from the recorded one; "
                "answering with the %s answer anyway",
                self.directory,
                describe_key(entry.key),
                entry.source,
            )
        return ModelResponse(
            text=text,
            stop_reason=entry.stop_reason,
            raw_stop_reason=entry.stop_reason,
            model=entry.model or self.name,
        )


class SessionRecorder:
    """Wraps a live model and writes every answer into a replay session directory.

    It keeps the inner model's name, so wrapping does not change response-cache keys.
    """

    def __init__(self, inner: Model, directory: Path | str) -> None:
        self.inner = inner
        self.directory = Path(directory)
        self.name = inner.name
        self.provider = inner.provider
        self.model_id = inner.model_id
        # Passed through so AccountedModel prices the budget by the live model's rates.
        self.prices = getattr(inner, "prices", None)
        existing = self.directory / SESSION_FILE
        self.session = read_session(self.directory) if existing.is_file() else Session()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.complete(request)
        await asyncio.to_thread(self._save, request, response)
        return response

    def _save(self, request: ModelRequest, response: ModelResponse) -> None:
        name = answer_file_name(request.purpose)
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.directory / name, response.text)
        self.session.upsert(
            SessionEntry(
                phase=request.purpose.phase,
                module=request.purpose.module,
                iteration=request.purpose.iteration,
                answer_file=name,
                prompt_sha256=prompt_sha256(request),
                source="recorded",
                model=self.inner.name,
                stop_reason=response.stop_reason,
            )
        )
        write_atomically(
            self.directory / SESSION_FILE, self.session.model_dump_json(indent=2) + "\n"
        )
