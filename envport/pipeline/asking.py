"""The driver's model I/O: a request rendered from the run state, asked once and re-asked
once with the parse error quoted, every prompt and answer recorded.

The model is the user's, wrapped in `AccountedModel` (response cache, budget, ledger);
what earlier sessions paid comes from the journal, so a resumed run keeps its bill.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from envport.llm import AccountedModel, Budget, Message, Model, ModelRequest, Purpose
from envport.llm.types import ModelResponse
from envport.pipeline.prompting import PromptBuilder
from envport.pipeline.recorder import Recorder
from envport.pipeline.session import Session
from envport.repair.edits import EditParseError
from envport.runs.journal import Spending
from envport.runs.layout import RunDir
from envport.runs.state import Limits, RunState

T = TypeVar("T")
TEMPERATURE = 0.0


class Asker:
    def __init__(
        self,
        run: RunDir,
        limits: Limits,
        model: Model,
        builder: PromptBuilder,
        recorder: Recorder,
        session: Session,
        note: Callable[[str], None],
        time_left: Callable[[], float | None],
    ) -> None:
        self.builder = builder
        self.recorder = recorder
        self.session = session
        self.note = note
        # What earlier sessions paid is in the journal, including calls a kill cut short.
        self.spending = Spending.from_journal(run.transcript)
        capped = limits.budget_usd is not None or limits.budget_tokens is not None
        # No caps, no Budget: the model layer then has nothing to price (and nothing to warn
        # about for a model without a price).
        budget = (
            Budget(
                budget_usd=limits.budget_usd,
                budget_tokens=limits.budget_tokens,
                spent_usd=self.spending.cost_usd,
                spent_tokens=self.spending.usage.total,
            )
            if capped
            else None
        )
        self.model = AccountedModel(
            model,
            cache_dir=run.cache,
            budget=budget,
            journal=recorder.journal,
            time_left=time_left,
        )

    def ask(
        self,
        state: RunState,
        purpose: Purpose,
        task: str,
        parse: Callable[[str], T],
        *,
        required: list[str],
        plan: bool = False,
        edits: bool = False,
    ) -> tuple[T | None, str | None]:
        """Ask; an unusable answer gets one re-ask that quotes the parse error. `edits`: the
        answer may use search/replace edits, and the re-ask says so."""
        messages = [Message(role="user", text=task)]
        response = self._call(state, self._request(state, purpose, messages))
        try:
            return parse(response.text), None
        except EditParseError as error:
            self._parse_error(state, purpose, str(error))
            reask = self.builder.reask(str(error), response.truncated, required, plan, edits)
        messages += [
            Message(role="assistant", text=response.text),
            Message(role="user", text=reask),
        ]
        again = Purpose(
            phase=f"{purpose.phase}-reask", module=purpose.module, iteration=purpose.iteration
        )
        response = self._call(state, self._request(state, again, messages))
        try:
            return parse(response.text), None
        except EditParseError as error:
            self._parse_error(state, again, str(error))
            return None, str(error)

    def _request(self, state: RunState, purpose: Purpose, messages: list[Message]) -> ModelRequest:
        return ModelRequest(
            system=self.builder.system(),
            stable_prefix=self.builder.context(state),
            messages=messages,
            max_tokens=state.limits.answer_tokens,
            temperature=TEMPERATURE,
            purpose=purpose,
        )

    def _call(self, state: RunState, request: ModelRequest) -> ModelResponse:
        prefix_sha = hashlib.sha256(request.stable_prefix.encode()).hexdigest()
        self.recorder.prompt(state.step, request, prefix_sha)
        self.note(f"asking {self.model.name} ({request.purpose.label()})")
        recorded = len(self.model.ledger.calls)
        try:
            response = self.session.run(self.model.complete(request))
        finally:
            # Every record the call left, answered or refused as malformed: all were paid.
            for call in self.model.ledger.calls[recorded:]:
                self.spending.add(call)
        self.recorder.answer(state.step, request, response)
        return response

    def _parse_error(self, state: RunState, purpose: Purpose, error: str) -> None:
        self.recorder.parse_error(state.step, purpose.model_dump(), error)
        self.note(f"answer unusable ({purpose.label()}): {error}")
