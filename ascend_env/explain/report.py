"""The `ascend-env/explain/v1` document: what was read, each known signature found (with,
for a host, the confirming checks' results and each cause's verdict), and the error-looking
lines no signature explains."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ascend_env.core.errors import EXIT_CANNOT_RUN, EXIT_NOT_RIGHT
from ascend_env.explain.confirm import HostChecks, involved_packages, verdict
from ascend_env.explain.match import Hit, Scan

if TYPE_CHECKING:
    from ascend_env.explain.plog import Inputs

EXPLAIN_SCHEMA = "ascend-env/explain/v1"
MAX_UNKNOWN_JSON = 500


@dataclass
class Explanation:
    inputs: Inputs
    scan: Scan
    hosts: list[HostChecks] = field(default_factory=list)

    @property
    def unreachable(self) -> list[HostChecks]:
        return [h for h in self.hosts if not h.reachable]

    def exit_code(self) -> int:
        """0 every error-looking line explained and every log's cause found; 1 some line not
        known or a log whose errors only report one it does not show; 2 a host could not be
        checked."""
        if self.unreachable:
            return EXIT_CANNOT_RUN
        if self.scan.unknown or not all(c.cause_found for c in self.scan.chains):
            return EXIT_NOT_RIGHT
        return 0

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": EXPLAIN_SCHEMA,
            "inputs": [{"name": s.name, "lines": len(s.text.splitlines()),
                        "note": s.note} for s in self.inputs.sources],
            "skipped": [{"path": p, "reason": r} for p, r in self.inputs.skipped],
            "hosts": [host_json(h) for h in self.hosts],
            "summary": {"lines": self.scan.lines, "matches": len(self.scan.hits),
                        "occurrences": sum(h.count for h in self.scan.hits),
                        "unknown": len(self.scan.unknown)},
            "chains": [{"file": c.lead.source, "cause": c.lead.signature.id,
                        "cause_found": c.cause_found, "catch_all": c.catch_all,
                        "echoes": [e.signature.id for e in c.echoes]}
                       for c in self.scan.chains],
            "matches": [match_json(hit, self.hosts) for hit in self.scan.hits],
            "unknown": [{"line": u.line, "file": u.source, "line_number": u.line_number,
                         "count": u.count} for u in self.scan.unknown[:MAX_UNKNOWN_JSON]],
        }


def host_json(host: HostChecks) -> dict[str, Any]:
    """A host: reached or why not, the involved packages' versions and the matrix's word."""
    return {"host": host.host, "reachable": host.reachable, "error": host.error,
            "installed": [{"name": i.name, "version": i.version, "state": i.state}
                          for i in host.installed],
            "pairings": [{"packages": list(p.packages), "check": p.check, "verdict": p.verdict,
                          "message": p.message} for p in host.pairings],
            "unpaired": host.unpaired}


def match_json(hit: Hit, hosts: list[HostChecks]) -> dict[str, Any]:
    s = hit.signature
    causes = []
    for cause in s.causes:
        item: dict[str, Any] = {"id": cause.id, "text": cause.text,
                                "checks": list(cause.checks)}
        if hosts:
            item["verdict"] = {h.host: verdict(cause, h) for h in hosts}
        causes.append(item)
    document: dict[str, Any] = {
        "id": s.id, "family": s.family, "severity": s.severity, "line": hit.line,
        "file": hit.source, "line_number": hit.line_number, "count": hit.count,
        "meaning": s.meaning, "causes": causes, "fix": s.fix.as_json(), "source": s.source,
        "match": hit.kind, "role": hit.role, "echo_of": hit.echo_of, "numbers": hit.numbers,
        "packages": list(involved_packages([hit]))}
    if hosts:
        document["checks"] = [
            {"host": h.host, "id": check_id, "status": h.results[check_id].status,
             "message": h.results[check_id].message}
            for h in hosts for check_id in s.checks if check_id in h.results]
    return document
