"""The audit report: a static HTML folder to read, compare and overrule every grading decision.

``write_report([run])`` writes ``RUN/report/index.html`` with summary tables and
plots, a filterable item list and a page per item; overrides made in the
browser export as the JSONL that ``groundeval rescore --overrides`` applies.
"""

from groundeval.state.report._cli import report_command
from groundeval.state.report._collect import ReportError
from groundeval.state.report._render import write_report

__all__ = ["ReportError", "report_command", "write_report"]
