"""`ascend-env image run-args`: the container arguments that give a container its NPUs.

Plain docker/podman get every device node and the host's driver files (the run line in the
README of https://github.com/Ascend/cann-container-image); the Ascend Docker Runtime gets
`ASCEND_VISIBLE_DEVICES` and mounts the nodes itself (component/ascend-docker-runtime of
https://github.com/Ascend/mind-cluster). Everything the host provides is mounted read-only;
with SELinux enforcing the mounts are relabelled with `:z` (shared, never `:Z`, which would
take the files from the host, https://docs.docker.com/storage/bind-mounts/#configure-the-selinux-label).
"""

from __future__ import annotations

import grp
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ascend_env.core.errors import UsageError
from ascend_env.core.numbers import parse_device_list
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import load_chips

RUN_ARGS_SCHEMA = "ascend-env/run-args/v1"
Runtime = Literal["docker", "podman", "ascend-docker-runtime"]
SelinuxMode = Literal["auto", "on", "off"]
RUNTIMES: tuple[Runtime, ...] = ("docker", "podman", "ascend-docker-runtime")

# Management nodes every NPU container needs besides its davinciN
# (component/ascend-docker-runtime/runtime/process/process.go of https://github.com/Ascend/mind-cluster).
CONTROL_NODES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
DCMI = "/usr/local/dcmi"
NPU_SMI = "/usr/local/bin/npu-smi"
INSTALL_INFO = "/etc/ascend_install.info"
# Mounted when the host has them: HCCL's RoCE configuration and the device logs (MindSpore's
# docker guide, https://github.com/mindspore-ai/docs/blob/r2.7.1/install/mindspore_ascend_install_docker_en.md).
# A missing host path would become an empty directory.
OPTIONAL_FILES = ("/etc/hccn.conf",)
DEFAULT_INSTALL_PATH = "/usr/local/Ascend"
DEFAULT_USER = "HwHiAiUser"


class RunArgs(BaseModel):
    """The arguments for `docker run` / `podman run`, and why each is there."""

    schema_: str = Field(RUN_ARGS_SCHEMA, alias="schema")
    runtime: Runtime
    devices: list[int] = Field(description="the NPU (davinci) device numbers given to the "
                               "container")
    args: list[str] = Field(description="arguments to put before the image name")
    env: dict[str, str] = Field(default_factory=dict)
    selinux_relabel: bool
    notes: list[str] = Field(default_factory=list)

    model_config = {"populate_by_name": True}

    def command_argv(self, image: str = "IMAGE") -> list[str]:
        """The runtime's `run` with the arguments and the image, one argv item each."""
        tool = "podman" if self.runtime == "podman" else "docker"
        # IMAGE is the placeholder a reader replaces, not a reference to check.
        shown = image if image == "IMAGE" else check_image_reference(image)
        return [tool, "run", *self.args, shown]

    def command_line(self, image: str = "IMAGE") -> str:
        """A shell line for a terminal: every item quoted, so a shell splits it back into
        command_argv() and nothing in it runs as a command of its own."""
        return shlex.join(self.command_argv(image))

    def paste_lines(self) -> list[str]:
        """The arguments as lines to paste (an option with its value on one line), each
        quoted; joined with ` \\` + newline they are the same argv to a shell."""
        lines: list[str] = []
        args = list(self.args)
        while args:
            pair = [args.pop(0)]
            if pair[0].startswith("-") and "=" not in pair[0] and args and \
                    not args[0].startswith("-"):
                pair.append(args.pop(0))
            lines.append(shlex.join(pair))
        return lines


# docker run's reference: "--shm-size: the format is <number><unit>; number must be greater
# than 0; unit is optional and can be b, k, m or g" (docs.docker.com/reference/cli/docker/
# container/run/); docker's parser (go-units RAMInBytes) also takes kb, mb, gb. Anything else,
# a sign, a space or `;` included, is refused before it reaches a printed line.
_SHM_SIZE = re.compile(r"(?P<number>[0-9]{1,15})(?P<unit>[bkmg]|[kmg]b)?", re.IGNORECASE)
# An image reference as distribution/reference's grammar has it (reference.go): a name of at
# most 255 characters (components of [a-z0-9] with . _ - separators, an optional registry host
# and port), an optional tag [\w][\w.-]{0,127}, an optional digest. No leading dash (docker
# would read it as an option), nothing a shell or terminal treats specially.
_IMAGE_NAME = re.compile(r"(?:[A-Za-z0-9.-]+(?::[0-9]{1,5})?/)?"
                         r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
                         r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_IMAGE_TAG = re.compile(r"[\w][\w.-]{0,127}")
_IMAGE_DIGEST = re.compile(r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}")


def check_shm_size(value: str) -> str:
    """The --shm-size value as docker and podman accept it, or a UsageError saying why not."""
    match = _SHM_SIZE.fullmatch(value)
    if match is None or int(match.group("number")) == 0:
        raise UsageError(f"--shm-size {value!r}: give a size above 0 like 16g, 512m or "
                         "1073741824 (a number, then b, k, m or g)")
    return value


def check_image_reference(value: str) -> str:
    """An image name, tag or digest, or a UsageError (a leading `-` would be an option)."""
    rest, _, digest = value.partition("@")
    name, tag = rest, ""
    if ":" in rest.rsplit("/", 1)[-1]:
        name, tag = rest.rsplit(":", 1)
    if (_IMAGE_NAME.fullmatch(name) is None or len(name) > 255 or name.startswith("-")
            or ("@" in value and _IMAGE_DIGEST.fullmatch(digest) is None)
            or (tag and _IMAGE_TAG.fullmatch(tag) is None) or rest.endswith(":")):
        raise UsageError(f"--image {value!r}: not an image reference (like "
                         "ascend-env/910b:8.5.0 or registry.example/ns/img@sha256:...)")
    return value


@dataclass(frozen=True)
class HostView:
    """What run-args reads from the host; tests give a fake one."""

    root: Path = Path("/")

    def exists(self, path: str) -> bool:
        return (self.root / path.lstrip("/")).exists()

    def davinci_numbers(self) -> list[int]:
        found = []
        for node in (self.root / "dev").glob("davinci*"):
            match = re.fullmatch(r"davinci(\d+)", node.name)
            if match:
                found.append(int(match.group(1)))
        return sorted(found)

    def selinux_enforcing(self) -> bool:
        enforce = self.root / "sys/fs/selinux/enforce"
        try:
            return enforce.read_text().strip() == "1"
        except OSError:
            return False

    def group_gid(self, name: str) -> int | None:
        if self.root != Path("/"):
            return _gid_from_file(self.root / "etc/group", name)
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            return None


def _gid_from_file(path: Path, name: str) -> int | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(":")
        if len(fields) >= 3 and fields[0] == name and fields[2].isdigit():
            return int(fields[2])
    return None


@dataclass(frozen=True)
class RunArgsRequest:
    """What the user asked for."""

    devices: str = "all"  # "all" or a comma list of NPU numbers
    runtime: Runtime = "docker"
    selinux: SelinuxMode = "auto"
    spec: EnvSpec | None = None
    shm_size: str | None = None  # None: --ipc=host (HCCL and dataloaders share memory)


def _parse_numbers(text: str) -> list[int]:
    # Bounded before expansion (`0-999999999`, a 5000-digit number); the spec's count below.
    return parse_device_list(text, option="--device")


def select_devices(request: RunArgsRequest, host: HostView) -> tuple[list[int], list[str]]:
    """The davinci device numbers, and notes on how they were chosen.

    The numbers are those of /dev/davinciN and of ASCEND_VISIBLE_DEVICES: one per chip, so
    an NPU card with two chips (Atlas 300I Duo, A3) is two devices (chips data).
    """
    notes: list[str] = []
    spec = request.spec
    chip = load_chips().get(spec.hardware.chip) if spec else None
    if request.devices.strip().lower() != "all":
        numbers = _parse_numbers(request.devices)
        if spec is not None and chip is not None:
            count = spec.hardware.devices or chip.devices.default
            beyond = [n for n in numbers if n >= count]
            if beyond:
                raise UsageError(f"--device {request.devices}: {spec.name} has {count} "
                                 f"devices (0-{count - 1}); {beyond} do not exist there")
        return numbers, notes
    if spec is not None and chip is not None:
        count = spec.hardware.devices or chip.devices.default
        if chip.chips_per_card > 1:
            notes.append(f"{chip.family}: {chip.chips_per_card} chips per card, each its own "
                         f"davinci device ({count} devices for "
                         f"{count // chip.chips_per_card} cards)")
        return list(range(count)), notes
    present = host.davinci_numbers()
    if not present:
        raise UsageError("--device all: this host has no /dev/davinciN; name the devices "
                         "(--device 0,1) or the spec (--profile/--spec) whose devices to use")
    notes.append(f"devices found on this host: /dev/davinci{{{','.join(map(str, present))}}}")
    return present, notes


def _relabel(request: RunArgsRequest, host: HostView) -> bool:
    if request.selinux == "auto":
        return host.selinux_enforcing()
    return request.selinux == "on"


def run_args(request: RunArgsRequest, host: HostView | None = None) -> RunArgs:
    """The exact arguments for the runtime, device selection and host."""
    host = host or HostView()
    if request.shm_size is not None:
        check_shm_size(request.shm_size)  # before the devices: a usage error is told first
    devices, notes = select_devices(request, host)
    relabel = _relabel(request, host)
    spec = request.spec
    install_path = (spec.install.path if spec else DEFAULT_INSTALL_PATH).rstrip("/")
    user = spec.install.user if spec else DEFAULT_USER
    driver = f"{install_path}/driver"

    def volume(path: str) -> str:
        return f"{path}:{path}:ro" + (",z" if relabel else "")

    args: list[str] = []
    env: dict[str, str] = {}
    if request.runtime == "ascend-docker-runtime":
        # The runtime's hook adds the device nodes, driver/lib64, dcmi and npu-smi itself
        # (its base.list); HCCL also needs the rest of the driver folder (topology files,
        # hccn_tool), which base.list leaves out
        # (https://github.com/vllm-project/recipes/issues/907; https://github.com/Ascend/mind-cluster).
        visible = ",".join(map(str, devices))
        env["ASCEND_VISIBLE_DEVICES"] = visible
        args += ["--runtime", "ascend", "-e", f"ASCEND_VISIBLE_DEVICES={visible}"]
        mounts = [driver, INSTALL_INFO]
        notes.append("the Ascend Docker Runtime mounts the device nodes, driver/lib64, dcmi and "
                     "npu-smi; the whole driver folder is added for HCCL")
    else:
        for number in devices:
            args += ["--device", f"/dev/davinci{number}"]
        for node in CONTROL_NODES:
            args += ["--device", node]
        mounts = [driver, DCMI, NPU_SMI, INSTALL_INFO]
    for optional in OPTIONAL_FILES:
        if host.exists(optional):
            mounts.append(optional)
    for path in mounts:
        args += ["-v", volume(path)]
    if request.shm_size is not None:
        args.append(f"--shm-size={check_shm_size(request.shm_size)}")
    else:
        args.append("--ipc=host")
    gid = host.group_gid(user)
    if gid is not None:
        # The device nodes belong to this group (crw-rw----): a non-root container user needs
        # the host's gid, whatever the group is called inside the image.
        args += ["--group-add", str(gid)]
    else:
        notes.append(f"no group {user} on this host: without the driver's group only root in "
                     "the container can open the devices")
    if request.runtime == "podman":
        # Rootless podman maps groups away; keep-groups passes the caller's own groups on.
        notes.append("rootless podman: add --group-add keep-groups (crun) if the caller is in "
                     f"the {user} group")
    if relabel:
        notes.append("SELinux is enforcing: mounts are relabelled shared (:z); devices need "
                     "the container-selinux policy or --security-opt label=disable")
    return RunArgs(runtime=request.runtime, devices=devices, args=args, env=env,
                   selinux_relabel=relabel, notes=notes)
