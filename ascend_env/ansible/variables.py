"""The variables ascend-env hands to its playbooks: one pydantic model per playbook.

`SiteVars` is what `install` sends to site.yml, `FixVars` what `doctor --fix` sends to
fix.yml; `model_dump(mode="json")` of either is the run's `-e @extra-vars.json`. Each role
declares what it reads in its `meta/argument_specs.yml`, which Ansible checks before the
role's first task (https://docs.ansible.com/ansible/latest/playbook_guide/playbooks_reuse_roles.html#role-argument-validation);
tests/ansible/test_argument_specs.py keeps these models and those specs in agreement.

Extra vars outrank every inventory variable, so what an inventory may set per host (the
install path, the running user) is sent under the spec's name (`ascend_spec_install_path`,
`ascend_spec_user`) and becomes the default of `ascend_install_path`/`ascend_user` in the
ascend role (playbooks/roles/ascend/defaults/main.yml), below every inventory variable.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ascend_env.spec.envspec import Threads
from ascend_env.spec.matrix import Arch

# The CANN packages the install roles know; the spec's `kernels` is sent as `ops`.
CannPackage = Literal["toolkit", "ops", "nnal", "nnae", "nnrt"]


class _Vars(BaseModel):
    # A misspelt variable would reach no role: refused here, as Ansible refuses it in a role.
    model_config = ConfigDict(extra="forbid")


class Targets(_Vars):
    """What this run installs (null: that component is not part of the run)."""

    driver: str | None = Field(None, description="HDK version of the driver installer")
    firmware: str | None = Field(None, description="version of the firmware installer")
    cann: str | None = Field(None, description="CANN release")
    packages: list[CannPackage] = Field(default_factory=list,
                                       description="the CANN packages of the spec")
    min_driver: str | None = Field(None, description="the oldest HDK this CANN runs on")


class Installers(_Vars):
    """One value per installer of the run, by plan component (paths, or their sha256)."""

    driver: str | None = None
    firmware: str | None = None
    toolkit: str | None = None
    ops: str | None = None
    nnal: str | None = None
    nnae: str | None = None
    nnrt: str | None = None


class PythonVars(_Vars):
    """The frameworks' virtual environment and the wheels it is made from."""

    version: str = Field(pattern=r"^3\.\d+$", description="the spec's python.version")
    venv: str = Field(description="the virtual environment's folder on the host")
    requirements: list[str] = Field(description="the pinned frameworks and CANN's Python "
                                    "dependencies, as pip requirements")
    offline: bool = Field(description="the repository holds the whole closure: pip runs "
                          "with --no-index")
    closure: dict[str, str] | None = Field(
        None, description="offline: every distribution and version the venv must hold")
    hashes: list[str] | None = Field(
        None, description="offline: `name==version --hash=sha256:...` for --require-hashes")
    bundle: str | None = Field(None, description="the archive of the repository's wheels")
    bundle_id: str | None = Field(None, description="the archive's name without suffix")


class OsPackagesVars(_Vars):
    """The OS packages this run may install (the prerequisites role), from the repository's
    folder for the spec's OS key; package names may hold `{kernel}`, the running kernel."""

    key: str = Field(description="the spec's OS key, <distribution>-<version>-<arch>")
    name: str = Field(description="the OS's name, for messages")
    manager: Literal["dnf", "yum", "apt"] = Field(description="the OS's package manager")
    driver_build: list[str] = Field(description="what the driver's build needs")
    python_version: str | None = Field(None, description="the spec's python.version")
    venv: bool = Field(False, description="the run makes the frameworks' virtual environment")
    python_shipped: list[str] = Field(default_factory=list,
                                      description="the Pythons the OS ships as packages")
    python: list[str] = Field(default_factory=list, description="the spec's Python's packages "
                              "(empty where the OS does not ship it)")
    cann_prerequisites: list[str] = Field(default_factory=list,
                                          description="OS packages CANN needs")
    module: list[str] = Field(default_factory=list, description="what Ansible's package module "
                              "needs on the host")
    repository: list[str] = Field(description="the package names the repository holds")
    kernels: list[str] = Field(description="the kernels whose devel packages it holds")
    bundle: str = Field(description="the archive of the repository's OS folder")
    bundle_sha256: str = Field(description="its sha256, checked on the host")


class ThreadVars(_Vars):
    """What the env role needs to write the doctor's thread settings (doctor/threads.py)."""

    spec: Threads = Field(description="the spec's threads section")
    devices: int | None = Field(None, ge=1, description="NPUs per host; null: as many as "
                                "the host has")


class RollbackVars(_Vars):
    """A run that takes hosts back to a recorded state (`ascend-env rollback`, a roll's
    `--on-fail rollback`): older driver, firmware and CANN go in as the vendor allows."""

    uninstall_cann: str | None = Field(
        None, description="the CANN release the hosts have now, uninstalled before an older "
        "one goes in (from 8.5.0 the vendor allows no other way back)")
    uninstaller: str | None = Field(None, description="that release's toolkit installer on "
                                    "the controller")
    uninstaller_sha256: str | None = Field(None, description="its sha256, checked on the "
                                           "host before it runs")


class SiteVars(_Vars):
    """site.yml's variables, as `ascend-env install` sends them."""

    ascend_spec_name: str = Field(description="the spec's name, written into managed files")
    ascend_spec_digest: str = Field(description="the spec's digest, written into managed "
                                    "files")
    ascend_spec_document: dict[str, Any] = Field(
        default_factory=dict, description="the whole spec, recorded with each host's installed "
        "state so that a rollback can install it again")
    ascend_arch: Arch = Field(description="the hosts' CPU architecture")
    ascend_chip_family: str = Field(description="the chip family's name, for messages")
    ascend_pci_device_id: str = Field(pattern=r"^0x[0-9a-f]{4}$",
                                      description="the chip's PCI device id (vendor 19e5)")
    ascend_pci_expected: int = Field(ge=0, description="Ascend cards each host must have")
    ascend_spec_install_path: str = Field(description="the spec's install.path: each host's "
                                          "ascend_install_path unless its inventory sets one")
    ascend_spec_user: str = Field(description="the spec's install.user: each host's "
                                  "ascend_user unless its inventory sets one")
    ascend_cann_set_env: str = Field(description="the toolkit's set_env.sh, relative to the "
                                     "install path (the layout changed with CANN 8.5.0)")
    ascend_cann_home: str = Field(description="the toolkit's home, relative to the install "
                                  "path")
    ascend_force: bool = Field(False, description="allow downgrades and mixes the matrix "
                               "forbids")
    ascend_allow_reboot: bool = Field(False, description="reboot through Ansible after a "
                                      "driver or firmware change")
    ascend_targets: Targets
    ascend_files: Installers = Field(description="each installer's path on the controller")
    ascend_digests: Installers = Field(description="each installer's sha256, checked on the "
                                       "host before it runs")
    ascend_python: PythonVars | None = Field(None, description="null: no python component")
    ascend_os_packages: OsPackagesVars | None = Field(
        None, description="null: the repository holds no OS packages (the prerequisites role "
        "installs nothing, preflight only checks the kernel headers)")
    ascend_threads: ThreadVars
    ascend_serial: int = Field(0, ge=0, description="hosts per batch; 0: all at once")
    ascend_max_fail_percentage: int = Field(100, ge=0, le=100,
                                            description="a batch with more failed hosts "
                                            "stops the roll")
    ascend_rollback: RollbackVars | None = Field(
        None, description="null: an install; else a rollback to a recorded state")


class FixTargets(_Vars):
    """The CANN a host really has, as the env role reads it."""

    cann: str | None = Field(None, description="the installed CANN release")
    packages: list[str] = Field(default_factory=list,
                                description="the installed CANN packages")


class NetworkPort(_Vars):
    """One NPU port's planned settings (gateway and detect address: null leaves them)."""

    device: int = Field(ge=0)
    address: str
    netmask: str
    gateway: str | None = None
    netdetect: str | None = None


class FixHostVars(_Vars):
    """What fix.yml's roles need for one host, worked out from that host's facts."""

    spec_name: str
    spec_digest: str
    install_path: str = Field(description="where the host's driver and CANN are installed")
    set_env: str
    toolkit_home: str
    targets: FixTargets
    driver_user: str
    driver_group: str
    device_nodes: list[str] = Field(description="the NPU device nodes the host has")
    run_users: list[str] = Field(description="accounts that run jobs and exist on the host")
    python: str = Field(description="the framework interpreter")
    python_packages: list[str] = Field(description="CANN's Python dependencies it lacks")
    omp_num_threads: int = Field(ge=1)
    cpu_affinity_conf: str
    threads_basis: str
    selinux_paths: list[str]
    network_tool: str = Field(description="hccn_tool under the host's install path")
    network_ports: list[NetworkPort]


class FixVars(_Vars):
    """fix.yml's variables, as `doctor --fix` sends them: one entry per host to fix."""

    ascend_fix_hosts: dict[str, FixHostVars] = Field(
        description="by inventory name; fix.yml hands each host's entry to its roles")
