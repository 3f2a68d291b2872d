"""What the install playbook must do on one host, decided from that host's current state.

The playbook's preflight role runs the doctor's probe on the host; through a filter plugin,
`read_host` reads that capture with the doctor's own facts and `decide` acts on the result, so
install and doctor cannot disagree about what is installed, and the vendor's ordering and
downgrade rules live in one typed, unit-tested place instead of in Jinja conditions
(CANN 8.5.0 install guide,
https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html;
driver and firmware order,
https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/softwareinst/instg/instg_0005.html).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ascend_env.ansible.variables import Targets
from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture
from ascend_env.facts.model import Facts
from ascend_env.spec.cann_layout import NEW_LAYOUT
from ascend_env.spec.matrix import load_matrix

HdkAction = Literal["none", "full", "upgrade"]
CannAction = Literal["none", "install", "upgrade"]


@dataclass
class Actions:
    """The per-host decisions, as plain data for Ansible."""

    driver: HdkAction = "none"
    firmware: HdkAction = "none"
    firmware_first: bool = False
    toolkit: CannAction = "none"
    ops: CannAction = "none"
    nnal: CannAction = "none"
    # A rollback's (install/going_back.py): the release uninstalled before the older one
    # goes in, or the older release, still installed side by side, `latest` goes back to.
    cann_uninstall: str | None = None
    cann_switch: str | None = None
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """A dictionary for the playbook (filters must return plain data)."""
        return asdict(self)


class Installed(BaseModel):
    """What of the spec's software a host has under its install path (raw version strings)."""

    driver: str | None = None
    driver_complete: bool = False
    firmware: str | None = None
    toolkit: str | None = None
    toolkit_home: str | None = None
    # None: the capture does not say whether the `cann`/`latest` links exist.
    toolkit_linked: bool | None = None
    ops: str | None = None
    nnal: str | None = None
    cann_elsewhere: str | None = Field(None, description="a CANN outside the install path")
    toolkits: list[str] = Field(default_factory=list,
                                description="every toolkit release installed side by side")


class PciCard(BaseModel):
    """One Huawei PCI device of the host."""

    model_config = ConfigDict(populate_by_name=True)

    address: str
    device: str
    class_code: str | None = Field(None, alias="class")


class NpuHolder(BaseModel):
    """A process npu-smi lists on an NPU."""

    npu: int | None = None
    pid: int | None = None
    name: str | None = None


class HostReading(BaseModel):
    """read_host's answer: it travels through Ansible (preflight_host) back to decide()."""

    # preflight adds the boot id and the reboot marker beside it (roles/preflight/tasks).
    model_config = ConfigDict(extra="ignore")

    arch: str | None = None
    kernel: str | None = None
    pci: list[PciCard] = Field(default_factory=list)
    user_exists: bool = False
    installed: Installed = Field(default_factory=Installed)
    # npu-smi's process table: a driver or firmware change is refused while it lists one.
    npu_processes: list[NpuHolder] = Field(default_factory=list)


def read_host(capture: Capture, *, install_path: str, user: str, group: str) -> HostReading:
    """What preflight, decide() and the roles read about one host, from the doctor's facts of
    its capture (a probe run with `--user USER`: `id USER` says the account and its groups)."""
    facts = facts_from_capture(capture)
    account = facts.users.others.get(user)
    users = facts.users
    group_known = (account is not None and group in account.groups) or (
        users.driver_group == group and users.driver_group_entry is not None)
    return HostReading(
        arch=facts.arch, kernel=facts.os.kernel if facts.os else None,
        pci=[PciCard(address=card.address, device=card.device, class_code=card.class_code)
             for card in facts.pci],
        user_exists=account is not None and group_known,
        installed=_installed(facts, install_path.rstrip("/") or "/"),
        npu_processes=[NpuHolder(npu=device.npu_id, pid=process.pid, name=process.name)
                       for device in facts.devices for process in device.processes])


def _installed(facts: Facts, install_path: str) -> Installed:
    cann = facts.cann
    # CANN elsewhere (a user's ~/Ascend) is not the spec's; ops and NNAL need the toolkit in
    # their own path (https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html).
    here = cann if cann is not None and cann.install_path == install_path else None
    ops = (here.packages.get("ops") or here.packages.get("kernels")) if here else None
    nnal = here.packages.get("nnal") if here else None
    return Installed(
        driver=facts.driver.version_raw if facts.driver else None,
        driver_complete=facts.driver.complete if facts.driver else False,
        firmware=facts.firmware.version_raw if facts.firmware else None,
        toolkit=here.version_raw if here else None,
        toolkit_home=here.home if here else None,
        toolkit_linked=here.linked if here else None,
        ops=ops.version if ops else None,
        nnal=nnal.version if nnal else None,
        cann_elsewhere=cann.install_path if cann is not None and here is None else None,
        toolkits=list(here.installed_versions) if here else [])


def _version(value: str | None) -> AscendVersion | None:
    return try_parse(value) if value else None


def _hdk_action(name: str, installed: AscendVersion | None, target: AscendVersion | None,
                force: bool, actions: Actions) -> HdkAction:
    if target is None:
        return "none"
    if installed is None:
        return "full"
    # One HDK identity (matrix hdk_files): 25.0.rc1.1 installed is the spec's 25.0.RC1.
    hdk = load_matrix().hdk()
    if hdk.same(installed, target):
        return "none"
    if hdk.release_of(target) < hdk.release_of(installed) and not force:
        actions.errors.append(
            f"{name} {installed.raw} is installed and the spec asks for the older "
            f"{target.raw}; refusing a downgrade (rerun with --force to allow it)")
        return "none"
    return "upgrade"


def decide(host: HostReading, target: Targets, *, force: bool = False) -> Actions:
    """Decide every component's action for one host: `host` is read_host's answer, `target`
    what this run installs (SiteVars' ascend_targets; null components are not in the run)."""
    actions = Actions()
    installed = host.installed
    wanted: set[str] = set(target.packages)
    if installed.cann_elsewhere:
        actions.notes.append(f"CANN in {installed.cann_elsewhere} is not in the spec's "
                             "install path; it is left alone")

    driver_now = _version(installed.driver)
    firmware_now = _version(installed.firmware)
    if driver_now is not None and not installed.driver_complete:
        # version.info without tools/upgrade-tool: an install that stopped half-way
        # (ascend-deployer's check, https://pypi.org/project/ascend-deployer/26.0.0/).
        actions.notes.append(f"driver {driver_now.raw} is installed incompletely; reinstalling")
        driver_now = None
    actions.driver = _hdk_action("driver", driver_now, _version(target.driver), force, actions)
    actions.firmware = _hdk_action("firmware", firmware_now, _version(target.firmware), force,
                                   actions)
    # Fresh host: driver, then firmware. Both present: firmware first (https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/softwareinst/instg/instg_0005.html).
    actions.firmware_first = driver_now is not None and firmware_now is not None

    min_driver = _version(target.min_driver)
    effective_driver = _version(target.driver) if actions.driver != "none" else driver_now
    if min_driver is not None and target.cann:
        if effective_driver is None:
            actions.errors.append(
                f"CANN {target.cann} needs an NPU driver >= {min_driver.raw} and none is "
                "installed; include the driver component")
        elif load_matrix().hdk().release_of(effective_driver) < min_driver and not force:
            actions.errors.append(
                f"CANN {target.cann} needs driver >= {min_driver.raw}; driver "
                f"{effective_driver.raw} would remain; install the driver too")

    cann = _version(target.cann)
    if cann is not None:
        _decide_cann(installed, cann, wanted, force, actions)
    return actions


def _decide_cann(installed: Installed, cann: AscendVersion, wanted: set[str], force: bool,
                 actions: Actions) -> None:
    toolkit_now = _version(installed.toolkit)
    linked = installed.toolkit_linked
    # Its installer makes the link last, so a toolkit not known to be linked is installed again.
    if toolkit_now is not None and not linked:
        where = f"CANN toolkit {toolkit_now.raw} in {installed.toolkit_home}"
        actions.notes.append(
            f"{where} has no `cann` or `ascend-toolkit/latest` link (its install stopped "
            "before the end); reinstalling" if linked is False else
            f"the capture does not say whether {where} has its `cann` or "
            "`ascend-toolkit/latest` link; reinstalling")
        toolkit_now = None
    if "toolkit" in wanted:
        if toolkit_now is None:
            actions.toolkit = "install"
        elif toolkit_now == cann:
            actions.toolkit = "none"
        elif cann < toolkit_now:
            if not force or max(cann, toolkit_now).release() >= NEW_LAYOUT:
                actions.errors.append(
                    f"CANN {toolkit_now.raw} is installed and the spec asks for the older "
                    f"{cann.raw}; going back needs `--uninstall` of {toolkit_now.raw} first "
                    "(the toolkit's --upgrade cannot downgrade)")
            else:
                actions.toolkit = "install"
        elif cann.release() >= NEW_LAYOUT:
            actions.toolkit = "upgrade"  # 8.5+ refuses to install beside an older toolkit
        else:
            actions.toolkit = "install"  # old layout: versions side by side, `latest` moves
    toolkit_after = cann if actions.toolkit != "none" or toolkit_now == cann else toolkit_now
    ops_now = _version(installed.ops)
    # Ops must match the toolkit of the same version in the same path (https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html).
    if "ops" in wanted and (actions.toolkit != "none" or ops_now != cann):
        actions.ops = "install"
    if "nnal" in wanted:
        nnal_now = _version(installed.nnal)
        if actions.toolkit != "none" or nnal_now != cann:
            actions.nnal = "install"
    if toolkit_after != cann and "toolkit" not in wanted and (actions.ops != "none"
                                                               or actions.nnal != "none"):
        found = toolkit_now.raw if toolkit_now else "none"
        actions.errors.append(f"the operator/NNAL packages of CANN {cann.raw} need the toolkit "
                              f"{cann.raw} in the same path; installed toolkit: {found}")
