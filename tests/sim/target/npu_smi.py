#!/usr/bin/python3 -S
"""Fake npu-smi: every call answered from the simulated host's files, read afresh.

The fake driver installs this file as /usr/local/bin/npu-smi inside a host. Only the
standard library.
Hardware comes from the host's state file; driver and firmware versions from the files the
installers wrote, as a real npu-smi reads them from the driver. Table shapes are those of
the published outputs in tests/data/real (each with its source).
"""

from __future__ import annotations

import json
import os
import sys

# Start-up stays lean (python -S, no pathlib, no typing at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATE = "/var/lib/ascend-sim/state.json"
INSTALL_INFO = "/etc/ascend_install.info"

# Sample values from the published outputs, cycled per NPU so that a two-NPU host prints
# exactly the published samples (vllm-ascend #198, #1047; Syllo/nvtop #421).
POWER = ("102.8", "97.6", "99.1", "101.5", "98.3", "100.2", "96.9", "103.4")
TEMP = (55, 54, 53, 56, 52, 55, 54, 53)
HBM_USED = (3338, 3337, 3339, 3336, 3338, 3337, 3340, 3335)
DDR_USED_910 = ((2387, 13553), (1840, 15665))
POWER_910 = ("78.0", "75.8", "77.2", "76.4", "78.9", "75.1", "77.7", "76.0")
TEMP_910 = (38, 38, 37, 39, 38, 37, 39, 38)
HBM_910 = (18, 8, 12, 10, 16, 9, 11, 14)
MEM_310P = ((45, 1529, 44280), (43, 1412, 43693))
PROC_HEAD = "Process name             | Process memory(MB)"


def _read(path: str) -> bytes | None:
    """The file's bytes; None when it is not there (as os.path.isfile would say)."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def load_state() -> dict[str, Any]:
    raw = _read(STATE)
    if raw is None:
        open(STATE).close()  # raises what reading it raises (FileNotFoundError: see main)
    data: dict[str, Any] = json.loads(raw or b"")
    return data


def kv_file(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    raw = _read(path)
    if raw is not None:
        for line in raw.decode().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def install_path() -> str:
    return kv_file(INSTALL_INFO).get("Driver_Install_Path_Param", "/usr/local/Ascend")


def driver_version() -> str:
    info = kv_file(os.path.join(install_path(), "driver", "version.info"))
    return info.get("Version", "NA")


def firmware_version() -> str:
    fw = kv_file(os.path.join(install_path(), "firmware", "version.info"))
    return fw.get("Version", "NA")


def compatibility() -> str:
    drv = kv_file(os.path.join(install_path(), "driver", "version.info"))
    fw = firmware_version()
    rng = drv.get("compatible_version_fw", "")
    if fw == "NA" or not rng.startswith("["):
        return "UNKNOWN"
    low, _, high = rng.strip("[]").partition(",")

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) if p.isdigit() else 0 for p in v.split("."))

    return "OK" if key(low)[:3] <= key(fw)[:3] <= key(high)[:3] else "NOK"


def present(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in state["npus"] if n.get("fault") != "missing"]


def health_of(npu: dict[str, Any]) -> str:
    fault = npu.get("fault")
    if fault == "health-alarm":
        return "Alarm"
    if fault == "not-started":
        return "UNKNOWN"
    return "OK"


def row(cells: list[str], widths: list[int]) -> str:
    return "|" + "|".join(" " + c.ljust(w - 1) for c, w in zip(cells, widths, strict=True)) + "|"


def rule(widths: list[int], ch: str) -> str:
    return "+" + "+".join(ch * w for w in widths) + "+"


def title(widths: list[int], split: int) -> str:
    inner = sum(widths) + len(widths) - 1
    v = driver_version()
    text = f"npu-smi {v}".ljust(split) + f"Version: {v}"
    return rule([inner], "-") + "\n" + "| " + text.ljust(inner - 1) + "|"


def fmt_pair(used: object, total: object, left: int, right: int) -> str:
    return f"{used}".ljust(left) + "/ " + f"{total}".ljust(right)


def phy_id_column(state: dict[str, Any]) -> bool:
    """A3's tables (two dies per NPU id in the training layout) name each die's Phy-ID."""
    return state["layout"] == "train" and int(state["chips_per_npu"]) > 1


def info_table(state: dict[str, Any]) -> str:
    if state["layout"] == "infer":
        return info_table_infer(state)
    widths = [27, 15, 52]
    # A training table with DDR beside HBM is the first generation's (910ProB, vllm-ascend #1047).
    first_gen = int(state.get("ddr_mb", 0)) > 0
    lines = [title(widths, 33), rule(widths, "-")]
    head1 = "Power(W)    Temp(C)           Hugepages-Usage(page)"
    lines.append(row(["NPU   Name", "Health", head1], widths))
    # A3 (two dies per NPU id) names the die's physical id in a second column, prints the
    # second die's power as "-" and parts the dies by a full-width rule (tests/data/real/a3-*).
    dies = phy_id_column(state)
    lines.append(row(["Chip  Phy-ID" if dies else "Chip", "Bus-Id",
                      "AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)"], widths))
    lines.append(rule(widths, "="))
    inner = sum(widths) + len(widths) - 1
    for i, npu in enumerate(present(state)):
        j = i % 8
        for chip in range(state["chips_per_npu"]):
            health = health_of(npu)
            if first_gen:
                power, temp, hbm = POWER_910[j], str(TEMP_910[j]), HBM_910[j]
                ddr_used, ddr_total = DDR_USED_910[i % 2]
            else:
                power, temp, hbm = POWER[j], str(TEMP[j]), HBM_USED[j]
                ddr_used, ddr_total = 0, 0
            hbm += sum(int(p.get("memory_mb", 0)) for p in npu.get("processes", []))
            hbm_total = state["hbm_mb"]
            if dies and chip > 0:
                power = "-"
            if health == "UNKNOWN":
                power, temp = "NA", "NA"
            ids = f"{chip}".ljust(6) + f"{npu['device_base'] + chip}" if dies else f"{chip}"
            lines.append(row([
                f"{npu['npu_id']}".ljust(6) + state["npu_name"],
                health,
                power.ljust(12) + temp.ljust(18) + fmt_pair(0, 0, 5, 14),
            ], widths))
            lines.append(row([
                ids,
                (npu.get("bus_ids") or [npu["bus_id"]] * (chip + 1))[chip],
                "0".ljust(12) + fmt_pair(ddr_used, ddr_total, 5, 11)
                + fmt_pair(hbm, hbm_total, 5, 14),
            ], widths))
            last = chip == state["chips_per_npu"] - 1
            lines.append(rule(widths, "=") if last else rule([inner], "-"))
    lines += process_table(state, widths)
    return "\n".join(lines)


def process_table(state: dict[str, Any], widths: list[int]) -> list[str]:
    """The process table under either layout: a row per process, or the idle line per NPU."""
    idle_width = sum(widths) + len(widths) - 2  # the line spans every column and separator
    lines = [rule(widths, "-"), row(["NPU     Chip", "Process id", PROC_HEAD], widths),
             rule(widths, "=")]
    for npu in present(state):
        procs = npu.get("processes", [])
        if not procs:
            idle = f"No running processes found in NPU {npu['npu_id']}"
            lines.append("| " + idle.ljust(idle_width) + "|")
        for p in procs:
            lines.append(row([
                f"{npu['npu_id']}".ljust(8) + f"{p.get('chip', 0)}",
                f"{p['pid']}",
                f"{p['name']}".ljust(25) + "| " + f"{p['memory_mb']}",
            ], widths))
        lines.append(rule(widths, "="))
    return lines


def info_table_infer(state: dict[str, Any]) -> str:
    widths = [31, 17, 54]
    lines = [title(widths, 49), rule(widths, "-")]
    head1 = "Power(W)     Temp(C)           Hugepages-Usage(page)"
    lines.append(row(["NPU     Name", "Health", head1], widths))
    lines.append(row(["Chip    Device", "Bus-Id", "AICore(%)    Memory-Usage(MB)"], widths))
    lines.append(rule(widths, "="))
    cpn = state["chips_per_npu"]
    for npu in present(state):
        health = health_of(npu)
        for chip in range(cpn):
            temp, used, total = MEM_310P[chip % 2]
            used += sum(int(p.get("memory_mb", 0)) for p in npu.get("processes", [])
                        if int(p.get("chip", 0)) == chip)
            lines.append(row([
                f"{npu['npu_id']}".ljust(8) + state["npu_name"],
                health,
                "NA".ljust(13) + (f"{temp}" if health != "UNKNOWN" else "NA").ljust(18)
                + fmt_pair(0, 0, 6, 14),
            ], widths))
            lines.append(row([
                f"{chip}".ljust(8) + f"{npu['device_base'] + chip}",
                npu["bus_id"],
                "0".ljust(13) + fmt_pair(used, total, 5, 33),
            ], widths))
            lines.append(rule(widths, "=" if chip == cpn - 1 else "-"))
    lines += process_table(state, widths)
    return "\n".join(lines)


def kv(key: str, value: object, indent: str = "        ") -> str:
    return f"{indent}{key.ljust(31)}: {value}"


def info_list(state: dict[str, Any]) -> str:
    npus = present(state)
    out = [kv("Total Count", len(npus)), ""]
    for npu in npus:
        out += [kv("NPU ID", npu["npu_id"]), kv("Chip Count", state["chips_per_npu"]), ""]
    return "\n".join(out).rstrip("\n")


def chip_map(state: dict[str, Any]) -> str:
    """`npu-smi info -m`: a tab, then columns 31 wide, as a real 910B3 host prints it; A3
    adds `Chip Phy-ID` (tests/data/npu_smi_map/). Each board's Mcu has no logic id."""
    a3 = phy_id_column(state)
    name = state["npu_name"] if state["npu_name"].startswith("Ascend") \
        else f"Ascend {state['npu_name']}"
    rows = [["NPU ID", "Chip ID", "Chip Logic ID", *(["Chip Phy-ID"] if a3 else []), "Chip Name"]]
    per = int(state.get("chips_per_npu", 1))
    for npu in present(state):
        for chip in range(per):
            device = str(npu["device_base"] + chip)
            rows.append([str(npu["npu_id"]), str(chip), device, *([device] if a3 else []), name])
        rows.append([str(npu["npu_id"]), str(per), "-", *(["-"] if a3 else []), "Mcu"])
    return "\n".join("\t" + "".join(c.ljust(31) for c in row[:-1]) + row[-1] for row in rows)


def spod_info(state: dict[str, Any], npu: dict[str, Any], chip: int) -> str:
    """spod-info's four lines (hicann/shmem's A3 example); the SDIDs are the sim's own
    (tests/sim/network.py sdid_of), kept in the state."""
    pod = state["superpod"]
    sdid = pod["sdids"].get(str(npu["device_base"] + chip), 0)
    return "\n".join([f"SDID : {sdid}", f"Super Pod Size : {pod['size']}",
                      f"Super Pod ID : {pod['super_pod_id']}",
                      f"Server Index : {pod['server_index']}"])


def board(state: dict[str, Any], npu: dict[str, Any]) -> str:
    return "\n".join([
        kv("NPU ID", npu["npu_id"]),
        kv("Software Version", driver_version()),
        kv("Firmware Version", firmware_version()),
        kv("Compatibility", compatibility()),
        kv("Board ID", "0x02"),
        kv("PCB ID", "A"),
        kv("BOM ID", "1"),
        kv("PCIe Bus Info", npu["bus_id"].lower()),
        kv("Slot ID", npu["npu_id"]),
        kv("Class ID", "NA"),
        kv("PCI Vendor ID", "0x19e5"),
        kv("PCI Device ID", f"0x{state['pci_device']:04X}"),
        kv("Subsystem Vendor ID", f"0x{state['subsystem_vendor']:04x}"),
        kv("Subsystem Device ID", f"0x{state['subsystem_device']:04x}"),
        kv("Chip Count", state["chips_per_npu"]),
    ])


def health(state: dict[str, Any], npu: dict[str, Any], chip: int | None) -> str:
    h = health_of(npu)
    if chip is None:
        out = [kv("NPU ID", npu["npu_id"]), kv("Chip Count", state["chips_per_npu"]), ""]
        for c in range(state["chips_per_npu"]):
            out += [kv("Chip ID", c), kv("Health", h), ""]
        out += [kv("Health", "OK"), kv("Chip Name", "MCU")]
        return "\n".join(out)
    if h == "Alarm":
        # Tab-indented with continuation lines, as in the alarm capture
        # component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt
        # of https://github.com/Ascend/mind-cluster.
        code = npu.get("error_code") or "A4025021 8C03A000 8C084E00"
        return "\n".join([
            kv("Health Status", "Alarm", "\t"),
            kv("Error Code", code, "\t"),
            kv("Error Information", "ascend_monitor adda heart beat lost error", "\t"),
            "",
            "\t" + " " * 31 + ": node type=process-manager, sensor type=General Software, "
            "event state=The process start failed or exit abnormally",
            "",
            "\t" + " " * 31 + ": node type=adda, sensor type=Heartbeat Sensor, "
            "event state=Heartbeat Lost.",
        ])
    return "\n".join([kv("Health Status", h), kv("Error Code", "NA"),
                      kv("Error Information", "NA")])


USAGE = """\
Usage: npu-smi info <watch|proc|-h|-m|-l|-t type> [Options...]
       npu-smi info -t <board|health|...> -i <id> [-c <chip_id>]"""


def invalid_id() -> int:
    print("Invalid card id.")
    print("Error parameter of -i")
    print(USAGE)
    return 255


def main(argv: list[str]) -> int:
    state = load_state()
    if not argv or argv[0] != "info":
        print(USAGE)
        return 0 if argv and argv[0] in ("-h", "--help") else 255
    args = argv[1:]
    opts: dict[str, str] = {}
    flags: set[str] = set()
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-t", "-i", "-c") and i + 1 < len(args):
            opts[a] = args[i + 1]
            i += 2
        else:
            flags.add(a)
            i += 1
    if "-l" in flags:
        print(info_list(state))
        return 0
    if "-m" in flags:
        print(chip_map(state))
        return 0
    if not opts and not flags:
        print(info_table(state))
        return 0
    if "-t" in opts and "-i" in opts:
        npu = next((n for n in present(state) if str(n["npu_id"]) == opts["-i"]), None)
        if npu is None:
            return invalid_id()
        if npu.get("fault") == "not-started":
            print(f"dcmi get device {opts['-t']} info failed. ret is -8005")
            return 255
        chip = int(opts["-c"]) if "-c" in opts else None
        if opts["-t"] == "board":
            print(board(state, npu))
            return 0
        if opts["-t"] == "health":
            print(health(state, npu, chip))
            return 0
        if opts["-t"] == "spod-info" and "superpod" in state and chip is not None:
            print(spod_info(state, npu, chip))
            return 0
    print(USAGE)
    return 255


def answer(argv: list[str]) -> tuple[int, bytes]:
    """Exit status and output of one call, computed."""
    import io  # noqa: PLC0415
    from contextlib import redirect_stdout  # noqa: PLC0415

    out = io.StringIO()
    with redirect_stdout(out):
        try:
            rc = main(argv)
        except FileNotFoundError as exc:
            print(f"dcmi module initialize failed. ret is -8001 ({exc.filename} missing)")
            rc = 255
    return rc, out.getvalue().encode(sys.stdout.encoding or "utf-8")


if __name__ == "__main__":
    code, text = answer(sys.argv[1:])
    sys.stdout.buffer.write(text)
    sys.stdout.flush()
    sys.exit(code)
