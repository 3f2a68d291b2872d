"""cann.linked on probe captures: a toolkit left without its `cann` / `latest` link fails,
a linked one passes, one whose link the capture does not show warns."""

from __future__ import annotations

from pathlib import Path

from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.report import CheckResult
from ascend_env.doctor.suite import DoctorContext, DoctorPlugin, Target, run_suite
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture
from tests.facts.captures import BASE, cann_tree, probe_tree, sample

DRIVER = sample("version_info", "driver-23.0.7")


def verdicts(captures: dict[str, Capture]) -> dict[str, CheckResult]:
    """cann.linked's row on each capture, as `doctor --only cann.linked` runs it."""
    targets = [Target(name=name, facts=facts_from_capture(capture), source="capture")
               for name, capture in captures.items()]
    plugin = DoctorPlugin(DoctorContext(targets=targets, only=("cann.linked",)))
    run_suite(shipped_dir("checks"), plugin)
    rows = {name: plugin.results[name] for name in captures}
    assert all(len(found) == 1 for found in rows.values()), rows
    return {name: found[0] for name, found in rows.items()}


def host(root: Path, layout: str, links: tuple[str, ...]) -> Capture:
    (root / BASE.lstrip("/") / "driver").mkdir(parents=True)
    (root / BASE.lstrip("/") / "driver/version.info").write_text(DRIVER)
    cann_tree(root, layout, links)
    return probe_tree(root)


def test_a_toolkit_without_its_link_fails_and_a_linked_one_passes(tmp_path: Path) -> None:
    captures = {f"{layout}-{state}": host(tmp_path / f"{layout}-{state}", layout, links)
                for layout, state, links in (
                    ("old", "linked", ("ascend-toolkit/latest",)), ("old", "unlinked", ()),
                    ("new", "linked", ("cann", "ascend-toolkit/latest")),
                    ("new", "unlinked", ()))}
    rows = verdicts(captures)
    assert {name: row.status for name, row in rows.items()} == {
        "old-linked": "pass", "old-unlinked": "fail", "new-linked": "pass",
        "new-unlinked": "fail"}
    assert rows["new-linked"].observed == f"{BASE}/cann -> {BASE}/cann-8.5.0"
    assert rows["old-linked"].observed == \
        f"{BASE}/ascend-toolkit/latest -> {BASE}/ascend-toolkit/8.1.RC1"
    new, old = rows["new-unlinked"], rows["old-unlinked"]
    assert new.observed is not None and f"{BASE}/cann missing" in new.observed
    assert new.expected == \
        f"{BASE}/cann -> {BASE}/cann-8.5.0 (the toolkit's installer makes it last)"
    assert new.why is not None and f"source {BASE}/cann/set_env.sh" in new.why
    assert old.why is not None and f"ASCEND_HOME_PATH={BASE}/ascend-toolkit/latest" in old.why
    assert old.message == (f"CANN 8.1.RC1 in {BASE}/ascend-toolkit/8.1.RC1 has no "
                           f"{BASE}/ascend-toolkit/latest link: its install stopped before "
                           "the end")
    # No playbook of fix.yml makes the link: re-running the install does.
    assert new.fix is not None and new.fix.id is None
    assert new.fix.command is not None and "ascend-env install" in new.fix.command


def test_a_link_the_capture_does_not_show_is_a_warning() -> None:
    info = sample("install_info", "toolkit-8.1.RC1-aarch64")
    capture = Capture(
        options={"install_paths": [BASE]},
        files={f"{BASE}/driver/version.info": DRIVER,
               f"{BASE}/ascend-toolkit/8.1.RC1/aarch64-linux/ascend_toolkit_install.info": info},
        listings={f"{BASE}/ascend-toolkit": ["8.1.RC1", "latest", "set_env.sh"]})
    row = verdicts({"unseen": capture})["unseen"]
    assert row.status == "warn", row
    assert row.message == f"cannot tell whether {BASE}/ascend-toolkit/latest leads to CANN 8.1.RC1"
