"""Prompt tokens of every example's replay runs: per call and per run.

    python benchmarks/prompt_tokens.py [--label after] [--only cartpole/jax]

Replays each session under `examples/<name>/replay/<target>/` offline, as a user would
(`envport translate examples/<name> --target <target> --model replay:<session>`, the
examples as shipped), then reads every prompt back from the run's transcript: the system
text and messages of each `prompt` event and the stable prefix its `context` event holds.
A replay answer reports no usage, so each prompt's input tokens are counted with envport's
own estimate, the one the budget reserves with (`estimate_input_tokens`: characters / 3 plus
a few per message); the figures compare prompt sizes, not any one provider's bill.

Prints a table (example, target, calls, prompt tokens per call and per run, whether the run
verified) and writes benchmarks/results/prompt_tokens.json under `--label` (before, after),
keeping the other labels, so one file holds the figures before and after a prompt change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from envport.llm import estimate_input_tokens
from envport.llm.types import Message, ModelRequest
from envport.runs.events import ContextEvent, PromptEvent, read_events

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "prompt_tokens.json"
# A replay run must not find a key and must not reach a live endpoint.
KEY_ENVS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


def sessions() -> list[tuple[str, str, Path]]:
    found = sorted((ROOT / "examples").glob("*/replay/*/session.json"))
    return [(s.parent.parent.parent.name, s.parent.name, s.parent) for s in found]


def replay(example: str, target: str, session: Path, out: Path) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in KEY_ENVS}
    words = ["translate", str(ROOT / "examples" / example), "--target", target]
    words += ["--model", f"replay:{session}", "--out", str(out)]
    result = subprocess.run(
        [sys.executable, "-m", "envport", *words],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )
    runs = sorted(out.iterdir())
    if len(runs) != 1:
        raise SystemExit(f"{example}/{target}: no run directory\n{result.stdout}{result.stderr}")
    return runs[0]


def prompt_calls(run: Path) -> list[dict[str, Any]]:
    """Each prompt of the run with its estimated input tokens, in the order asked."""
    prefixes: dict[str, str] = {}
    calls = []
    for event in read_events(run / "transcript.jsonl"):
        if isinstance(event, ContextEvent):
            prefixes[event.sha256] = event.text
        elif isinstance(event, PromptEvent):
            request = ModelRequest(
                system=event.system,
                stable_prefix=prefixes[event.stable_prefix_sha256],
                messages=[Message(role=m.role, text=m.text) for m in event.messages],
                max_tokens=event.max_tokens,
                purpose=event.purpose,
            )
            chars = len(request.system) + len(request.stable_prefix)
            chars += sum(len(m.text) for m in request.messages)
            calls.append(
                {
                    "purpose": event.purpose.label(),
                    "prompt_tokens": estimate_input_tokens(request),
                    "chars": chars,
                    "stable_prefix_chars": len(request.system) + len(request.stable_prefix),
                }
            )
    return calls


def measure(example: str, target: str, session: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="envport-prompt-tokens-") as tmp:
        run = replay(example, target, session, Path(tmp))
        calls = prompt_calls(run)
        status = json.loads((run / "run.json").read_text())["status"]
    per_run = sum(c["prompt_tokens"] for c in calls)
    return {
        "example": example,
        "target": target,
        "status": status,
        "calls": len(calls),
        "prompt_tokens_per_call": round(per_run / len(calls)) if calls else 0,
        "prompt_tokens_per_run": per_run,
        "calls_detail": calls,
    }


def table(label: str, rows: list[dict[str, Any]], before: dict[str, Any] | None) -> Table:
    out = Table(title=f"prompt tokens ({label}; estimated: characters / 3)")
    for column in ("example", "target", "calls", "per call", "per run", "status"):
        out.add_column(column, justify="right" if column.startswith(("per", "calls")) else "left")
    earlier = {(r["example"], r["target"]): r for r in (before or {}).get("rows", [])}
    for row in rows:
        was = earlier.get((row["example"], row["target"]))
        per_call, per_run = (
            f"{row['prompt_tokens_per_call']:,}",
            f"{row['prompt_tokens_per_run']:,}",
        )
        if was and was is not row:
            per_call = f"{was['prompt_tokens_per_call']:,} -> {per_call}"
            per_run = f"{was['prompt_tokens_per_run']:,} -> {per_run}"
        out.add_row(
            row["example"], row["target"], str(row["calls"]), per_call, per_run, row["status"]
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after", help="where the figures go in the JSON")
    parser.add_argument("--only", action="append", help="example/target (repeatable)")
    args = parser.parse_args()
    chosen = [s for s in sessions() if not args.only or f"{s[0]}/{s[1]}" in args.only]
    rows = [measure(example, target, session) for example, target, session in chosen]
    total = sum(r["prompt_tokens_per_run"] for r in rows)
    stored = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    stored[args.label] = {"rows": rows, "total_prompt_tokens": total}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(stored, indent=2) + "\n")
    console = Console()
    before = stored.get("before") if args.label != "before" else None
    console.print(table(args.label, rows, before))
    line = f"total prompt tokens ({args.label}): {total:,}"
    if before and not args.only:
        was = before["total_prompt_tokens"]
        line += f" (before: {was:,}; change {100 * (total - was) / was:+.1f}%)"
    console.print(line)
    if any(r["status"] != "verified" for r in rows):
        raise SystemExit("some replay run did not verify")


if __name__ == "__main__":
    main()
