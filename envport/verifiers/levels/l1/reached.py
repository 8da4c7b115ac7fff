"""L1 reached: the port steps from every state of the `[state.reached]` episodes at once.

L1's other checks draw a few dozen start states from the thousands the reference passed
through in its `[state.reached]` episodes (envport.verifiers.draws.reached), so a rule
that decides one step in a few hundred (a chess en passant capture, castling past an
attacked square, an underpromotion) is met in a draw only by chance. Here every step of
those episodes is a row: the state before it, the action played from it, and the answer
the reference gave while it played (recorded then, so not one reference step more). The
port answers all rows in one batch, a cheap request next to the reference's steps, and
each row is compared as L1's transition check compares its examples; the first that
differs is reported with its state and action. More episodes in `[state.reached]` buy
more rare states at the reference's cost alone; its `book` reaches those play never meets
(envport.verifiers.draws.book)."""

from __future__ import annotations

from envport.verifiers.draws.reached import reached_steps
from envport.verifiers.levels.l1.examples import L1Run, rows_check
from envport.verifiers.levels.l1.rows import judge_rows
from envport.verifiers.reporting.divergence import LevelResult

MODE = "reached"


def applies(run: L1Run) -> bool:
    return run.spec.state.reached is not None


def check_reached(run: L1Run, entry: str) -> LevelResult:
    def build() -> list:
        return list(reached_steps(run.spec, run.reference))

    def judge(level: LevelResult, rows: list) -> None:
        judge_rows(
            run,
            entry,
            level,
            rows,
            MODE,
            "a step the reference played in a `[state.reached]` episode",
        )

    return rows_check(run, entry, MODE, build, judge)
