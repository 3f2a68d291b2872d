"""The doctor's default terminal view of one host: the report at a glance.

A category without failures or warnings is one line (`✓ driver  7 checks`,
`- cann  skipped: ...`); categories skipped for the same causes share that line; failures and
warnings are expanded with what was seen, what was expected and the fix (`--verbose` adds the
why, and lists every check); a summary line ends it. JSON, JUnit and Prometheus keep every
check: this is a view, the report is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape

from ascend_env.doctor.report import (
    CATEGORIES,
    CheckResult,
    Report,
    Status,
    detail_lines,
    summary_line,
    title_line,
)

GLYPHS: dict[Status, str] = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "-", "error": "✗"}
COLOURS: dict[Status, str] = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "dim",
                              "error": "red"}
PROBLEMS: tuple[Status, ...] = ("fail", "error", "warn")


@dataclass
class _Category:
    """What one category contributes besides its expanded problems."""

    name: str
    passed: int = 0
    problems: list[CheckResult] = field(default_factory=list)
    # skip causes in the order the checks came, with how many checks each skipped
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    """One line of the view: a mark, what it is about, what it says; details expanded under."""

    status: Status
    label: str
    text: str
    details: tuple[str, ...] = ()


def _categories(report: Report) -> list[_Category]:
    found: dict[str, _Category] = {}
    for check in report.checks:
        category = found.setdefault(check.category, _Category(check.category))
        if check.status in PROBLEMS:
            category.problems.append(check)
        elif check.status == "skip":
            cause = check.message or check.title
            category.skipped[cause] = category.skipped.get(cause, 0) + 1
        else:
            category.passed += 1
    order = {name: i for i, name in enumerate(CATEGORIES)}
    return sorted(found.values(), key=lambda c: (order.get(c.name, len(order)), c.name))


def _skips(skipped: dict[str, int]) -> str:
    return "; ".join(skipped)


def glance_rows(report: Report) -> list[Row]:
    """The rows between the title and the summary, in the order an operator fixes things."""
    if not report.reachable:
        return [Row("fail", "not checked", report.error or "")]
    rows: list[Row] = []
    # Categories with nothing but skips, by their causes: one row names them all.
    folded: dict[frozenset[str], int] = {}
    for category in _categories(report):
        for check in category.problems:
            rows.append(Row(check.status, check.id, check.message or check.title,
                            tuple(detail_lines(check, why=False))))
        others = " other" if category.problems else ""
        if category.passed:
            text = f"{category.passed}{others} check{'s' if category.passed > 1 else ''}"
            if category.skipped:
                text += (f", {sum(category.skipped.values())} skipped: "
                         f"{_skips(category.skipped)}")
            rows.append(Row("pass", category.name, text))
        elif category.skipped:
            key = frozenset(category.skipped)
            if key in folded:
                at = folded[key]
                rows[at] = Row("skip", f"{rows[at].label}, {category.name}", rows[at].text)
            else:
                folded[key] = len(rows)
                rows.append(Row("skip", category.name, f"skipped: {_skips(category.skipped)}"))
    return rows


def render_glance(report: Report, console: Console) -> None:
    """Title, one row per category or finding, the summary line."""
    console.print(title_line(report))
    rows = glance_rows(report)
    # Labels of one category line up; a folded row of several names is left as it is.
    width = max((len(row.label) for row in rows if "," not in row.label and
                 row.status not in PROBLEMS), default=0)
    for row in rows:
        colour = COLOURS[row.status]
        if row.status in PROBLEMS:
            head = f"{escape(row.label)}: {escape(row.text)}"
        else:
            head = f"{escape(row.label.ljust(width))}  {escape(row.text)}"
        console.print(f"[{colour}]{GLYPHS[row.status]}[/{colour}] {head}", soft_wrap=True)
        if row.details:
            # Never wrapped by rich: a fix command stays one line to copy.
            console.print(escape("\n".join(f"    {line}" for line in row.details)),
                          soft_wrap=True)
    colour = "red" if report.exit_code() else "green"
    console.print(f"[{colour}]{escape(summary_line(report))}[/{colour}]")
