"""The capture document: load and save, unknown keys, bad files, redaction."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import (
    Capture,
    CaptureError,
    load_capture,
    parse_capture,
    redact,
    save_captures,
)
from ascend_env.remote import probe
from tests.facts.captures import host_910b, ok, sample


def test_load_one_or_many(tmp_path: Path) -> None:
    one = host_910b()
    single = save_captures(tmp_path / "one.json", [one])
    fleet = save_captures(tmp_path / "fleet.json.gz", [one, Capture(host="node-2")])
    assert load_capture(single)[0] == one
    loaded = load_capture(fleet)
    assert [c.host for c in loaded] == ["node-1.example.com", "node-2"]
    assert gzip.decompress(fleet.read_bytes()).startswith(b"[")


def test_unknown_keys_survive(tmp_path: Path) -> None:
    doc = Capture().to_json() | {"from_a_newer_probe": {"x": 1}}
    capture = parse_capture(json.dumps(doc))
    path = save_captures(tmp_path / "c.json", [capture])
    assert json.loads(path.read_text())["from_a_newer_probe"] == {"x": 1}


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not JSON"), ("[]", "empty list"), ('{"schema": "other"}', "schema is"),
    ('[{"schema": "ascend-env/capture/v1", "commands": {"x": {"rc": "no"}}}]', "commands.x.rc"),
    ("42", "expected a capture object"),
])
def test_bad_capture_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CaptureError, match=message):
        load_capture(path)


def test_missing_capture_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="cannot read capture"):
        load_capture(tmp_path / "absent.json")


def test_redaction() -> None:
    host = host_910b()
    host.files["/etc/hccn.conf"] = "address_0=192.168.10.21\nnetmask_0=255.255.255.0\n"
    host.commands[probe.NPU_SMI_LIST] = ok(sample("npu_smi_list", "card-count-200i-a2")
                                            .replace("Serial Number                  : NA",
                                                     "Serial Number                  : 102A7Q"))
    host.env["HCCL_IF_IP"] = "192.168.10.21"
    host.env["MS_SCHED_HOST"] = "node-1.example.com"
    other = Capture(host="node-2", env={"HCCL_IF_IP": "192.168.10.21"})
    first, second = redact([host, other])
    text = json.dumps(first.to_json())
    for secret in ("192.168.10.21", "102A7Q", "node-1"):
        assert secret not in text
    assert "255.255.255.0" in text  # a netmask identifies nobody
    assert "7.1.0.11.220" in text and "Version: 25.5.0" in text  # versions are not addresses
    assert "0000:c1:00.0" in text.lower()  # PCI bus ids are not IPv6 addresses
    assert first.env["HCCL_IF_IP"] == second.env["HCCL_IF_IP"]  # consistent across the fleet
    assert first.host != second.host and first.host.startswith("<host-")
    facts = facts_from_capture(first)  # a redacted capture still reads the same
    assert str(facts.driver.version if facts.driver else None) == "24.1.rc3"
    assert len(facts.devices) == 2
