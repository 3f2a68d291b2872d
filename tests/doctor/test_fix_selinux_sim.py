"""The selinux-context fix on a simulated host with stand-in SELinux tools.

SELinux cannot run here (the hosts share this machine's kernel), so getenforce, semanage and
restorecon are small scripts that record their calls and keep the rules in a file. What is
tested is the role's logic: nothing without SELinux, check mode changes nothing, a real run
adds one persistent rule per path and relabels, and a second run adds nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible.runner import PlaybookRun, run_playbook
from tests.sim.fixtures import FleetFactory, SimFleet

pytestmark = [pytest.mark.sim, pytest.mark.slow]

PATHS = ["/usr/local/Ascend", "/data/models"]
TOOLS = {
    "getenforce": "#!/bin/sh\ncat /etc/selinux-mode 2>/dev/null || echo Disabled\n",
    "semanage": """#!/bin/sh
echo "semanage $*" >> /root/selinux.log
if [ "$2" = "--list" ]; then cat /root/fcontext.rules 2>/dev/null; exit 0; fi
if [ "$2" = "--add" ]; then
  echo "$5  all files  system_u:object_r:$4:s0" >> /root/fcontext.rules
fi
""",
    "restorecon": """#!/bin/sh
echo "restorecon $*" >> /root/selinux.log
for p; do case "$p" in -*) ;; *) grep -q "^$p(" /root/fcontext.rules 2>/dev/null && \\
  ! grep -qx "$p" /root/relabelled 2>/dev/null && echo "Relabeled $p" && \\
  case " $* " in *" -n "*) ;; *) echo "$p" >> /root/relabelled ;; esac ;; esac; done
exit 0
""",
}


def _host(fleet: SimFleet, mode: str | None) -> Path:
    root = fleet.root("sim1")
    for name, text in TOOLS.items():
        tool = root / "usr/local/sbin" / name
        tool.write_text(text)
        tool.chmod(0o755)
    if mode:
        (root / "etc/selinux-mode").write_text(mode + "\n")
    (root / "data/models").mkdir(parents=True, exist_ok=True)
    return root


def _run(fleet: SimFleet, tmp_path: Path, *, check: bool) -> list[dict[str, Any]]:
    variables = {"ascend_fix_hosts": {"sim1": {"selinux_paths": PATHS}}}
    rc, log, events = run_playbook(variables, PlaybookRun(
        inventory=fleet.inventory, tags=["selinux-context"], check=check,
        log_dir=tmp_path / "logs"), playbook="fix.yml")
    assert rc == 0, log.read_text()[-3000:]
    return [e for e in events if e.get("event") == "result"]


def _log(root: Path) -> list[str]:
    log = root / "root/selinux.log"
    return log.read_text().splitlines() if log.exists() else []


def test_selinux_context_fix(sim_private_fleet: FleetFactory, tmp_path: Path) -> None:
    fleet = sim_private_fleet(hosts=1, state="bare", devices=1)
    root = _host(fleet, None)
    _run(fleet, tmp_path, check=False)
    assert _log(root) == []  # SELinux off: nothing is touched

    (root / "etc/selinux-mode").write_text("Enforcing\n")
    results = _run(fleet, tmp_path, check=True)
    assert not any(line.startswith("semanage fcontext --add") for line in _log(root))
    assert not (root / "root/fcontext.rules").exists()
    assert all("-n" in line.split() for line in _log(root) if line.startswith("restorecon"))
    assert any("Show the file-context rules" in r["task"] and r["changed"]
               for r in results)

    results = _run(fleet, tmp_path, check=False)
    adds = [line for line in _log(root) if line.startswith("semanage fcontext --add")]
    assert adds == [f"semanage fcontext --add --type container_ro_file_t {p}(/.*)?"
                    for p in PATHS]
    assert (root / "root/relabelled").read_text().split() == PATHS
    assert any(r["changed"] for r in results)

    results = _run(fleet, tmp_path, check=False)  # idempotent: no new rule, no relabel
    assert len([line for line in _log(root) if "--add" in line]) == len(PATHS)
    assert not any(r["changed"] for r in results), [r["task"] for r in results
                                                    if r["changed"]]
