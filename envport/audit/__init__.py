"""Static audit of async code for calls that block the event loop.

Environment servers run every rollout on one event loop, so one synchronous call stalls
them all. `audit_paths` walks Python files, finds every `async def` and the same-module
sync helpers it calls (transitively), and reports each blocking call with a severity and
a one-line fix.
"""

from envport.audit.analyzer import audit_source
from envport.audit.model import AuditReport, ChainStep, Finding, Severity
from envport.audit.sources import audit_paths

__all__ = ["AuditReport", "ChainStep", "Finding", "Severity", "audit_paths", "audit_source"]
