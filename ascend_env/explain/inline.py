"""The knowledge base applied where ascend-env shows a failure log of its own: a smoke
workload's log tail, a failed install task's message, a failed image build's output.

Compact on purpose: the id, the line, what it means, the fix and the source; the full entry
(causes, confirming checks) is `ascend-env explain`'s.
"""

from __future__ import annotations

from typing import Any

from ascend_env.explain.areas import AREA
from ascend_env.explain.match import default_matcher
from ascend_env.explain.signatures import SignatureError

MAX_EXPLAINED = 8  # a view lists the first few; a full log goes to `ascend-env explain`


def explain_text(*texts: str | None) -> list[dict[str, Any]]:
    """The known signatures in the texts, most severe first, as JSON-ready dicts (an area
    only says where an unknown line belongs: a view lists what is known)."""
    present = [(f"text{i}", t) for i, t in enumerate(texts) if t]
    if not present:
        return []
    try:
        scan = default_matcher().scan(present)
    except SignatureError:
        # A broken knowledge base is a packaging bug that its tests catch; a view of an
        # install or a build must still show the run's own result.
        return []
    known = [h for h in scan.hits if not h.signature.id.startswith(AREA)]
    return [{"id": hit.signature.id, "severity": hit.signature.severity, "line": hit.line,
             "count": hit.count, "meaning": hit.signature.meaning, "numbers": hit.numbers,
             "fix": hit.signature.fix.as_json(), "source": hit.signature.source}
            for hit in known[:MAX_EXPLAINED]]


def explained_lines(explained: list[dict[str, Any]], indent: str = "  ") -> list[str]:
    """Terminal lines for a view: what each known line means and its fix."""
    out = []
    for item in explained:
        times = f" (x{item['count']})" if item.get("count", 1) > 1 else ""
        out.append(f"{indent}explained: {item['id']}{times}: {item['meaning']}")
        fix = item["fix"]
        by_id = f"ascend-env doctor --fix ({fix['id']}), or " if fix.get("id") else ""
        out.append(f"{indent}  fix: {by_id}{fix['command']}")
    if explained:
        out.append(f"{indent}  (ascend-env explain FILE shows causes and checks them with "
                   "--host)")
    return out
