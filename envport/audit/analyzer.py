"""Audit one module: from every `async def`, follow sync helpers breadth-first and turn
what the scanner finds into findings with their call chain."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import deque

from envport.audit.catalog import Rule
from envport.audit.index import FunctionInfo, build_index
from envport.audit.model import ChainStep, Finding
from envport.audit.resolve import Resolver
from envport.audit.scanner import Hit, Scan, scan_function

ALLOW_MARKER = "envport: allow-blocking"


def audit_source(source: str, path: str) -> list[Finding]:
    """Findings for one module's source text, sorted by position.

    Raises SyntaxError when `source` does not parse; `audit_paths` turns that into a
    one-line usage error.
    """
    tree = ast.parse(source, filename=path)
    return audit_tree(tree, source, path)


def audit_tree(tree: ast.Module, source: str, path: str) -> list[Finding]:
    index = build_index(tree)
    resolver = Resolver(index)
    allowed = allowed_lines(source)
    # ast counts lines by \n, \r\n and \r only; str.splitlines also splits on \f etc.
    lines = re.split(r"\r\n|\r|\n", source)
    scans: dict[FunctionInfo, Scan] = {}
    expanded: set[FunctionInfo] = set()
    findings: dict[tuple[int, int, str, str], Finding] = {}

    def scan_of(fn: FunctionInfo) -> Scan:
        if fn not in scans:
            scans[fn] = scan_function(resolver, fn)
        return scans[fn]

    for entry in index.all_functions:
        if not entry.is_async:
            continue
        # Breadth-first so each finding gets the shortest chain; each helper is expanded
        # once, for the first entry point that reaches it.
        queue: deque[tuple[FunctionInfo, list[ChainStep], ast.Call | None]] = deque(
            [(entry, [ChainStep(function=entry.qualname, line=entry.node.lineno)], None)]
        )
        while queue:
            fn, chain, first_call = queue.popleft()
            scan = scan_of(fn)
            for hit in scan.hits:
                if _is_allowed(hit.node, allowed):
                    continue
                finding = _finding(hit, path, lines, chain, first_call)
                key = (finding.line, finding.col, finding.rule, finding.call)
                findings.setdefault(key, finding)
            for helper_call in scan.helper_calls:
                helper = helper_call.function
                if helper in expanded or _is_allowed(helper_call.node, allowed):
                    continue
                expanded.add(helper)
                step = ChainStep(function=helper.qualname, line=helper_call.node.lineno)
                queue.append((helper, [*chain, step], first_call or helper_call.node))
    return sorted(findings.values(), key=lambda finding: (finding.line, finding.col))


def allowed_lines(source: str) -> set[int]:
    """Lines carrying a `# envport: allow-blocking` comment (comments only, not strings)."""
    allowed: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and ALLOW_MARKER in token.string:
                allowed.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        # Only reachable for sources ast accepted but tokenize did not; fall back to text.
        allowed = {n for n, line in enumerate(source.splitlines(), 1) if ALLOW_MARKER in line}
    return allowed


def _is_allowed(node: ast.expr | ast.stmt, allowed: set[int]) -> bool:
    # A long call can carry the comment on its first or its last line.
    return node.lineno in allowed or node.end_lineno in allowed


def _finding(
    hit: Hit,
    path: str,
    lines: list[str],
    chain: list[ChainStep],
    first_call: ast.Call | None,
) -> Finding:
    node = hit.node
    end_line = node.end_lineno or node.lineno
    end_offset = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return Finding(
        path=path,
        line=node.lineno,
        col=_column(lines, node.lineno, node.col_offset),
        end_line=end_line,
        end_col=_column(lines, end_line, end_offset),
        rule=hit.rule.id,
        severity=hit.rule.severity,
        call=hit.call,
        message=f"`{hit.call}` {hit.rule.summary}",
        fix=_fix(hit.rule, first_call),
        chain=chain,
    )


def _fix(rule: Rule, first_call: ast.Call | None) -> str:
    if first_call is None:
        return rule.fix
    helper = ast.unparse(first_call.func)
    return (
        f"{rule.fix}; or offload the sync helper at line {first_call.lineno}: "
        f"`await asyncio.to_thread({helper}, ...)`"
    )


def _column(lines: list[str], line: int, byte_offset: int) -> int:
    """1-based character column from ast's 0-based UTF-8 byte offset."""
    if not 1 <= line <= len(lines):
        return byte_offset + 1
    prefix = lines[line - 1].encode("utf-8")[:byte_offset]
    return len(prefix.decode("utf-8", errors="replace")) + 1
