"""Precision and recall of `envport audit` over the labelled corpus in tests/audit_corpus.

Each corpus file labels its expected findings in comments (see audit_corpus/README.md);
this test audits the whole corpus, compares, prints a precision/recall table per
severity, and requires 100% of both.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

from envport.audit import Severity, audit_paths

CORPUS = Path(__file__).parent / "audit_corpus"
MIN_CORPUS_FILES = 30


@dataclass(frozen=True, order=True)
class Label:
    file: str
    line: int
    severity: str
    call: str


@dataclass(frozen=True)
class CorpusFile:
    name: str
    labels: frozenset[Label]
    expects_none: bool


def read_corpus_file(path: Path) -> CorpusFile:
    labels: set[Label] = set()
    expects_none = False
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT or "expect:" not in token.string:
            continue
        text = token.string.split("expect:", 1)[1].strip()
        for entry in filter(None, (part.strip() for part in text.split(";"))):
            if entry == "none":
                expects_none = True
                continue
            severity, _, call = entry.partition(" ")
            assert severity in {s.value for s in Severity}, f"{path.name}: bad label {entry!r}"
            assert call, f"{path.name}:{token.start[0]}: label {entry!r} names no call"
            labels.add(Label(path.name, token.start[0], severity, call.strip()))
    return CorpusFile(path.name, frozenset(labels), expects_none)


def _ratio(numerator: int, denominator: int) -> float:
    # No findings and nothing expected is perfect agreement, not 0%.
    return numerator / denominator if denominator else 1.0


def score_table(expected: set[Label], found: set[Label]) -> tuple[str, float, float]:
    header = f"{'severity':<10}{'labelled':>9}{'found':>7}{'TP':>5}{'FP':>5}{'FN':>5}"
    header += f"{'precision':>11}{'recall':>8}"
    rows = [header]
    groups = [(s.value, {s.value}) for s in Severity]
    groups.append(("total", {s.value for s in Severity}))
    precision = recall = 1.0
    for name, severities in groups:
        want = {label for label in expected if label.severity in severities}
        got = {label for label in found if label.severity in severities}
        tp, fp, fn = len(want & got), len(got - want), len(want - got)
        precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
        rows.append(
            f"{name:<10}{len(want):>9}{len(got):>7}{tp:>5}{fp:>5}{fn:>5}"
            f"{precision:>11.1%}{recall:>8.1%}"
        )
    # The loop ends on the total row, whose scores are the ones asserted.
    return "\n".join(rows), precision, recall


@pytest.fixture(scope="module")
def corpus() -> list[CorpusFile]:
    return [read_corpus_file(path) for path in sorted(CORPUS.glob("*.py"))]


def test_corpus_is_large_and_fully_labelled(corpus: list[CorpusFile]) -> None:
    assert len(corpus) >= MIN_CORPUS_FILES
    unlabelled = [f.name for f in corpus if not f.labels and not f.expects_none]
    contradictory = [f.name for f in corpus if f.labels and f.expects_none]
    assert not unlabelled, f"corpus files without labels: {unlabelled}"
    assert not contradictory, f"files labelled both none and with findings: {contradictory}"
    positives = sum(1 for f in corpus if f.labels)
    assert positives >= 10 and len(corpus) - positives >= 10
    # Every severity is exercised, so a per-severity 100% is not vacuous.
    assert {label.severity for f in corpus for label in f.labels} == {s.value for s in Severity}


def test_precision_and_recall_are_perfect(
    corpus: list[CorpusFile], capsys: pytest.CaptureFixture[str]
) -> None:
    report = audit_paths([CORPUS])
    assert len(report.files) == len(corpus)
    expected = {label for f in corpus for label in f.labels}
    found = {
        Label(Path(finding.path).name, finding.line, finding.severity.value, finding.call)
        for finding in report.findings
    }
    table, precision, recall = score_table(expected, found)
    negatives = sum(1 for f in corpus if f.expects_none)
    title = f"audit corpus: {len(corpus)} files ({len(corpus) - negatives} positive, "
    title += f"{negatives} negative), {len(expected)} labelled findings"
    with capsys.disabled():
        print(f"\n{title}\n{table}")
    false_positives = "\n".join(f"  FP {label}" for label in sorted(found - expected))
    false_negatives = "\n".join(f"  FN {label}" for label in sorted(expected - found))
    assert (precision, recall) == (1.0, 1.0), (
        f"\n{title}\n{table}\n{false_positives}\n{false_negatives}"
    )
