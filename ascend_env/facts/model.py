"""The Facts model: everything the checks read about one host, and its JSON form.

The area modules beside this one (installed, cann, npu_smi, ...) parse a capture into these
classes; facts.assemble.facts_from_capture puts one host's parts together.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Literal

from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.remote import probe
from ascend_env.spec.matrix import ChipName

FACTS_SCHEMA = "ascend-env/facts/v1"

# Facts are plain dataclasses, not pydantic models: only our parsers make them, so there is
# nothing to validate. slots: assigning a misspelt field fails, as it did under pydantic.


@dataclass(kw_only=True, slots=True)
class VersionRange:
    """One `[low,high]` (or `[code]`) item of a compatible_version* value; bounds inclusive.

    A high bound ending in `.` (`[23.0.0,23.0.0.]`) reads "this prefix and its patch
    releases" (our reading of the firmware version.info in
    https://github.com/Ascend/mind-cluster; not documented); `7.5.99` likewise admits
    `7.5.99.x`.
    """

    low: str
    high: str

    def contains(self, version: AscendVersion | str) -> bool | None:
        """Whether `version` is in the range; None when a bound is not a version (codes)."""
        parsed = version if isinstance(version, AscendVersion) else try_parse(version)
        low = try_parse(self.low.rstrip("."))
        high_text = self.high.rstrip(".")
        high = try_parse(high_text)
        if parsed is None or low is None or high is None:
            return None
        if parsed < low:
            return False
        return parsed <= high or parsed.raw.lower().startswith(high_text.lower() + ".")


def any_range_contains(ranges: Iterable[VersionRange], version: AscendVersion | str
                       ) -> bool | None:
    """True if one range holds `version`, False if none does, None if none could tell."""
    answers = [r.contains(version) for r in ranges]
    if any(a is True for a in answers):
        return True
    return False if any(a is False for a in answers) else None


@dataclass(kw_only=True, slots=True)
class AscendInstallRecord:
    """/etc/ascend_install.info: who runs the driver and where it is (sample: https://github.com/liguodongiot/llm-action/blob/main/docs/llm_localization/ascend910-env-install.md)."""

    user_name: str | None = None
    user_group: str | None = None
    driver_install_type: str | None = None
    driver_install_path: str | None = None
    driver_install_for_all: bool | None = None
    driver_install_mode: str | None = None
    firmware_install_type: str | None = None
    firmware_install_path: str | None = None
    values: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class NpuProcess:
    """A process row of `npu-smi info`: something is running on that NPU."""

    npu_id: int | None = None
    chip_id: int | None = None
    pid: int | None = None
    name: str | None = None
    memory_mb: int | None = None


@dataclass(kw_only=True, slots=True)
class IdInfo:
    """Who a user is, as `id` prints it."""

    uid: int | None = None
    user: str | None = None
    gid: int | None = None
    group: str | None = None
    groups: dict[str, int] = field(default_factory=dict)  # group name -> gid


@dataclass(kw_only=True, slots=True)
class PasswdEntry:
    """A user of `getent passwd`."""

    name: str
    uid: int | None = None
    gid: int | None = None
    home: str | None = None
    shell: str | None = None


@dataclass(kw_only=True, slots=True)
class GroupEntry:
    """A group of `getent group`, with its listed members."""

    name: str
    gid: int | None = None
    members: list[str] = field(default_factory=list)


SelinuxMode = Literal["enforcing", "permissive", "disabled"]


@dataclass(kw_only=True, slots=True)
class PythonEnv:
    """The framework interpreter and its installed distributions (names PEP 503-normalised)."""

    executable: str | None = None
    version: str | None = None
    prefix: str | None = None
    distributions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class OsFacts:
    """The distribution (os-release) and the running kernel."""

    id: str | None = None
    id_like: list[str] = field(default_factory=list)
    version_id: str | None = None
    pretty_name: str | None = None
    kernel: str | None = None
    # Every os-release KEY=value as read (VERSION, VERSION_CODENAME, PLATFORM_ID...): what
    # spec.os_keys.match_os recognises the OS by.
    release: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class PciCard:
    """A Huawei PCI function with its chip family and product from chips.yaml."""

    address: str
    device: str | None = None
    subsystem: str | None = None  # '<subsystem vendor>:<subsystem device>'
    class_code: str | None = None
    chip: ChipName | None = None
    product: str | None = None
    numa_node: int | None = None
    kernel_driver: str | None = None  # driver bound in sysfs, if any


@dataclass(kw_only=True, slots=True)
class DriverFacts:
    """The installed driver: version.info, and what it says it works with."""

    version: AscendVersion | None = None
    version_raw: str | None = None
    package_version: str | None = None
    inner_version: str | None = None
    install_path: str
    complete: bool  # driver/tools/upgrade-tool present (ascend-deployer's test, https://pypi.org/project/ascend-deployer/26.0.0/)
    compatible_firmware: list[VersionRange] = field(default_factory=list)
    compatible_cann: list[VersionRange] = field(default_factory=list)
    # "version.info", or "npu-smi" where npu-smi answers but version.info is not visible (a
    # container with the host's driver mounted): then `not_visible` names what was not seen.
    source: Literal["version.info", "npu-smi"] = "version.info"
    not_visible: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class FirmwareFacts:
    """The installed firmware: version.info, and the drivers it works with."""

    version: AscendVersion | None = None
    version_raw: str | None = None
    package_version: str | None = None
    install_path: str
    compatible_driver: list[VersionRange] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CannPackage:
    """One installed CANN package: toolkit, kernels (<= 8.3) or ops (8.5+), nnal, nnae..."""

    name: str
    version: str | None = None
    path: str | None = None
    arch: str | None = None
    source: str  # the file the version was read from


@dataclass(kw_only=True, slots=True)
class CannFacts:
    """The active CANN: version, layout, folders and packages."""

    version: AscendVersion | None = None
    version_raw: str | None = None
    layout: Literal["old", "new"]
    install_path: str
    home: str  # the active toolkit folder, links resolved
    arch: str | None = None
    packages: dict[str, CannPackage] = field(default_factory=dict)
    installed_versions: list[str] = field(default_factory=list)
    # version.cfg installed version per component
    components: dict[str, str] = field(default_factory=dict)
    # opp/.../tbe/kernel/<soc> folders (ops/kernels)
    kernel_socs: list[str] = field(default_factory=list)
    set_env: str | None = None  # the documented set_env.sh, if present
    # The toolkit's install info: its inner release code and the driver inner codes it
    # states it runs on (`compatible_version=[V100R001C15],...`, https://github.com/vllm-project/vllm-ascend/issues/1047).
    inner_version: str | None = None
    compatible_driver: list[VersionRange] = field(default_factory=list)
    # Reached through its layout's link (`cann` from 8.5, else `ascend-toolkit/latest`),
    # which set_env.sh's paths go through; None when the capture does not say.
    linked: bool | None = None


@dataclass(kw_only=True, slots=True)
class NpuSmiFacts:
    """Whether npu-smi ran, and what it said overall."""

    available: bool = False
    rc: int | None = None
    error: str | None = None
    tool_version: str | None = None
    driver_version: str | None = None
    listed_ids: list[int] = field(default_factory=list)
    # Lines of the `npu-smi info` table the parser could not read, verbatim: a device may hide
    # in one, so checks that judge every device do not pass while any is left.
    unparsed: list[str] = field(default_factory=list)
    # `npu-smi info` printed its process table (or "No running processes found"): only then
    # does an NPU without a listed process count as free.
    process_table: bool = False


@dataclass(kw_only=True, slots=True)
class NpuDevice:
    """One chip as npu-smi reports it, with its board and health pages merged in."""

    npu_id: int
    chip_id: int | None = None
    device_id: int | None = None
    phy_id: int | None = None  # A3 tables: `Chip  Phy-ID`, the die's physical id
    name: str | None = None
    chip: ChipName | None = None
    health: str | None = None
    health_status: str | None = None  # chip-level `Health Status`
    # Cells of this device's rows the parser could not read, as `<column> '<raw text>'`.
    unparsed: list[str] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)
    error_information: list[str] = field(default_factory=list)
    bus_id: str | None = None
    hbm_used_mb: int | None = None
    hbm_total_mb: int | None = None
    memory_used_mb: int | None = None
    memory_total_mb: int | None = None
    compatibility: str | None = None
    software_version: str | None = None
    firmware_version: str | None = None
    processes: list[NpuProcess] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DeviceNode:
    """One /dev node of the driver, lstat as captured."""

    path: str
    type: str
    mode: str | None = None
    owner: str | None = None
    group: str | None = None
    uid: int | None = None
    gid: int | None = None
    rdev: str | None = None
    label: str | None = None


@dataclass(kw_only=True, slots=True)
class ModuleFacts:
    """The Ascend driver's loaded kernel modules."""

    source: str | None = None  # /proc/modules, lsmod or /sys/module
    loaded: list[str] = field(default_factory=list)
    driver_loaded: bool | None = None


@dataclass(kw_only=True, slots=True)
class EnvFacts:
    """The probe's environment: what a job started the same way would get."""

    vars: dict[str, str] = field(default_factory=dict)
    ld_library_path: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    ascend_home_path: str | None = None
    toolkit_home: str | None = None
    opp_path: str | None = None
    sourced: bool = False  # a CANN set_env.sh was sourced (ASCEND_* set)
    # what `bash -l` gets (allow-listed); None = not captured
    login_vars: dict[str, str] | None = None
    login_sourced: bool | None = None
    threads: dict[str, str] = field(default_factory=dict)
    profile_files: dict[str, dict[str, str]] = field(default_factory=dict)
    set_env_scripts: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class LibraryFacts:
    """Where one soname is: the loader cache, LD_LIBRARY_PATH, the Ascend folders."""

    soname: str
    ldconfig: list[str] = field(default_factory=list)
    ld_library_path: list[str] = field(default_factory=list)
    on_disk: list[str] = field(default_factory=list)
    resolvable: bool = False


@dataclass(kw_only=True, slots=True)
class FrameworkFacts:
    """The frameworks the framework interpreter has installed."""

    python: PythonEnv | None = None
    torch: str | None = None
    torch_npu: str | None = None
    mindspore: str | None = None
    mindspore_dist: str | None = None  # 'mindspore' or the old 'mindspore-ascend'
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class SelinuxFacts:
    """SELinux mode (current and configured) and the labels of Ascend paths."""

    mode: SelinuxMode | None = None  # current mode; None = unknown
    config_mode: str | None = None
    config_type: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class CpuFacts:
    """CPU topology, NUMA nodes, and the CPUs the probe may use."""

    logical_cpus: int | None = None
    online: list[int] = field(default_factory=list)
    physical_cores: int | None = None
    sockets: int | None = None
    threads_per_core: int | None = None
    numa_nodes: dict[int, list[int]] = field(default_factory=dict)
    affinity: list[int] | None = None  # CPUs the probe may run on
    cgroup_cpus: float | None = None  # cpu.max quota in CPUs; None = none
    source: str | None = None


@dataclass(kw_only=True, slots=True)
class UserFacts:
    """The driver's user and group, and whether the invoking user may use the NPUs."""

    driver_user: str = probe.DRIVER_USER
    driver_group: str = probe.DRIVER_USER
    driver_user_entry: PasswdEntry | None = None
    driver_group_entry: GroupEntry | None = None
    invoking: IdInfo | None = None
    invoking_in_driver_group: bool | None = None
    others: dict[str, IdInfo] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class ContainerFacts:
    """Whether the probe ran in a container, and what kind."""

    in_container: bool = False
    kind: str | None = None
    mounts: list[str] = field(default_factory=list)  # Ascend-related mount points


@dataclass(kw_only=True, slots=True)
class HccnConf:
    """/etc/hccn.conf: the device network settings hccn_tool persists (`address_0=...`)."""

    present: bool = False
    readable: bool = False
    path: str = "/etc/hccn.conf"
    # device index -> {"address", "netmask", "netdetect", "gateway", "send_arp_status", ...}
    devices: dict[int, dict[str, str]] = field(default_factory=dict)
    # Lines it could not read, verbatim: never silently dropped.
    unparsed: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DeviceNetwork:
    """One NPU's network port as `hccn_tool -i <device> -<query> -g` reports it."""

    device: int
    address: str | None = None
    netmask: str | None = None
    ip_error: str | None = None  # e.g. "no ip was preset" (hccn_tool's own words)
    link: str | None = None  # "UP", "DOWN" or the raw word
    # `-link_stat -g`: how often the port went up and down since the driver started.
    link_up_count: int | None = None
    link_down_count: int | None = None
    health: str | None = None  # the raw word: "Success", "Fault", "Init", ...
    netdetect: str | None = None
    gateway: str | None = None
    optical: dict[str, str] = field(default_factory=dict)
    optical_present: bool | None = None  # None = not captured or not told
    lldp: dict[str, str] = field(default_factory=dict)
    tls: dict[str, str] = field(default_factory=dict)
    # A3 SuperPoD (npu-smi info -t spod-info, placed by `npu-smi info -m`): the die's SDID
    # (a rank table's super_device_id), its super pod and its server's index in the pod.
    super_device_id: str | None = None
    super_pod_id: str | None = None
    server_index: str | None = None
    # command key -> the raw text no parser could read: checks never pass on these.
    unparsed: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class HostNic:
    """A host network interface of `ip -o addr show`."""

    name: str
    addresses: list[str] = field(default_factory=list)  # CIDR, e.g. "10.0.0.5/24"
    state: str | None = None


@dataclass(kw_only=True, slots=True)
class NetworkFacts:
    """The NPUs' network ports (hccn_tool, /etc/hccn.conf) and the host's own interfaces."""

    # The capture looked for hccn_tool (older probes did not): without it the
    # device network is "not captured" and the checks that need it skip.
    captured: bool = False
    hccn_tool: bool = False  # found on the host
    hccn_tool_path: str | None = None  # the driver's one the probe ran (level 2 pings use it)
    hccn_conf: HccnConf | None = None
    devices: dict[int, DeviceNetwork] = field(default_factory=dict)
    nics: list[HostNic] = field(default_factory=list)
    nics_captured: bool = False


@dataclass(kw_only=True, slots=True)
class Facts:
    """Everything the checks read about one host. Absent things are None or empty."""

    schema_: str = field(default=FACTS_SCHEMA, metadata={"alias": "schema"})
    host: str = ""
    captured_at: str = ""
    os: OsFacts | None = None
    arch: str | None = None
    container: ContainerFacts = field(default_factory=ContainerFacts)
    pci: list[PciCard] = field(default_factory=list)
    chip: ChipName | None = None  # the chip family, when the cards agree
    install_record: AscendInstallRecord | None = None
    driver: DriverFacts | None = None
    firmware: FirmwareFacts | None = None
    cann: CannFacts | None = None
    npu_smi: NpuSmiFacts = field(default_factory=NpuSmiFacts)
    devices: list[NpuDevice] = field(default_factory=list)
    device_nodes: list[DeviceNode] = field(default_factory=list)
    modules: ModuleFacts = field(default_factory=ModuleFacts)
    env: EnvFacts = field(default_factory=EnvFacts)
    libraries: dict[str, LibraryFacts] = field(default_factory=dict)
    frameworks: FrameworkFacts = field(default_factory=FrameworkFacts)
    selinux: SelinuxFacts = field(default_factory=SelinuxFacts)
    cpu: CpuFacts = field(default_factory=CpuFacts)
    users: UserFacts = field(default_factory=UserFacts)
    network: NetworkFacts = field(default_factory=NetworkFacts)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The facts as JSON data, with `schema` spelled as the other documents spell it."""
        data: dict[str, Any] = _jsonable(self)
        return data


def _jsonable(value: Any) -> Any:
    """Facts as JSON data, the way pydantic dumped them when these were pydantic models:
    versions as their raw spelling, keys made strings, a field's `alias` metadata as its key."""
    if isinstance(value, Enum):
        value = value.value
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, AscendVersion):  # a dataclass too, so before the dataclass case
        return value.raw
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(_jsonable(key)): _jsonable(item) for key, item in value.items()}
    if is_dataclass(value):
        return {f.metadata.get("alias", f.name): _jsonable(getattr(value, f.name))
                for f in fields(value)}
    raise TypeError(f"facts hold a {type(value).__name__}, which has no JSON form")
