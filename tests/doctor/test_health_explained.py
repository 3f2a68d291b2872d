"""devices.health names the knowledge base's entry for an NPU's fault codes, with the handling
level `ascend-env explain` reads for them: the doctor and explain give one answer."""

from __future__ import annotations

from ascend_env.doctor.run import DoctorOptions, evaluate
from ascend_env.explain.match import default_matcher
from ascend_env.targets.collect import Captured
from tests.facts.captures import host_910b, sample


def test_a_health_alarm_links_to_the_explain_entry_of_its_codes() -> None:
    # NPU 1 of this host shows the real chip-alarm page (tests/data/npu_smi_health).
    report = evaluate([Captured(name="h", capture=host_910b())], DoctorOptions())[0]
    check = next(c for c in report.checks if c.id == "devices.health")
    assert check.status == "fail"
    page = sample("npu_smi_health", "chip-alarm-tabs")
    hit = next(h for h in default_matcher().scan([("page", page)]).hits
               if "A4025021" in h.line)
    assert f"[{hit.signature.id}, fault level {hit.numbers['level']};" in check.message
    assert check.evidence is not None
    (entry,) = check.evidence["explained"]["1"]
    assert entry["id"] == hit.signature.id and entry["numbers"]["level"] == hit.numbers["level"]
