"""The probe's network jobs on a fake tree: per-device hccn_tool queries keyed by the
contract's command lines, the driver's hccn_tool before one on PATH, optical only where a
link is not UP, and the host's `ip` listings."""

from __future__ import annotations

import os
from pathlib import Path

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.remote import probe
from tests.remote.test_probe import BASE, run_probe, write

# What the fake hccn_tool answers: the real outputs of tests/data/hccn_*/ (device 1 has no
# address and a DOWN link, as the real samples there show).
FAKE_HCCN = r"""#!/bin/sh
echo "$*" >> {calls}
case "$*" in
  "-i 0 -ip -g") printf 'ipaddr:10.20.0.11\nnetmask:255.255.255.0\n' ;;
  "-i 1 -ip -g") echo "Get ipconf failed, because no ip was preset there!"; exit 1 ;;
  "-i 0 -link -g") echo "link status: UP" ;;
  "-i 1 -link -g") echo "link status: DOWN" ;;
  *" -link_stat -g") printf '[devid 0]link up count   : 3\n[devid 0]link down count : 2\n' ;;
  "-i 0 -net_health -g") echo "net health status: Success" ;;
  "-i 1 -net_health -g") echo "net health status: Fault" ;;
  *" -netdetect -g") echo "netdetect address: 10.20.0.1" ;;
  *" -gateway -g") echo "default gateway:10.20.0.1, Iface:eth0" ;;
  *" -optical -g") echo "present              : not present" ;;
  *) echo "something hccn_tool never prints" ;;
esac
"""
FAKE_IP = """#!/bin/sh
case "$*" in
  "-o addr show") cat {out}/addr ;;
  "-o link show") cat {out}/link ;;
esac
"""
IP_ADDR_OUT = ("1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n"
               "2: eth0    inet 192.168.1.5/24 brd 192.168.1.255 scope global eth0\\"
               "       valid_lft forever\n")
IP_LINK_OUT = ("2: eth0: <BROADCAST,UP> mtu 1500 qdisc mq state UP mode DEFAULT\\    link/ether x\n"
               "3: eth1: <BROADCAST> mtu 1500 state DOWN mode DEFAULT\\    link/ether y\n")


def _tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "root"
    for name in ("davinci0", "davinci1", "davinci_manager"):
        write(root, f"/dev/{name}", "")
    write(root, f"{BASE}{probe.HCCN_TOOL}", FAKE_HCCN.format(calls=tmp_path / "calls"), 0o755)
    bin_dir = tmp_path / "bin"
    write(bin_dir, "/ip", FAKE_IP.format(out=tmp_path), 0o755)
    write(tmp_path, "/addr", IP_ADDR_OUT)
    write(tmp_path, "/link", IP_LINK_OUT)
    # A decoy on PATH: the driver's own hccn_tool must be the one that runs.
    write(bin_dir, "/hccn_tool", "#!/bin/sh\necho decoy >> %s\n" % (tmp_path / "calls"), 0o755)
    return root, dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")


def test_per_device_queries_are_run_and_keyed(tmp_path: Path) -> None:
    root, env = _tree(tmp_path)
    capture = run_probe("--root", str(root), env=env)
    calls = sorted((tmp_path / "calls").read_text().splitlines())
    queries = [key.split()[3] for key in probe.HCCN_QUERIES]
    assert calls == sorted([f"-i {dev} {q} -g" for dev in (0, 1) for q in queries]
                           + ["-i 1 -optical -g"])  # only device 1's link is DOWN
    for dev in (0, 1):
        for key in probe.HCCN_QUERIES:
            record = capture.commands[key.format(dev=dev)]
            assert record.argv[0] == str(root) + BASE + probe.HCCN_TOOL
    assert probe.HCCN_OPTICAL.format(dev=0) not in capture.commands
    assert capture.paths[BASE + probe.HCCN_TOOL].type == "file"
    assert probe.IP_ADDR in capture.commands and probe.IP_LINK in capture.commands

    network = facts_from_capture(capture).network
    assert network.captured and network.hccn_tool
    zero, one = network.devices[0], network.devices[1]
    assert (zero.address, zero.netmask, zero.link, zero.health) == (
        "10.20.0.11", "255.255.255.0", "UP", "Success")
    assert (zero.gateway, zero.netdetect, zero.optical_present) == ("10.20.0.1", "10.20.0.1", None)
    assert (one.address, one.ip_error, one.link, one.health) == (
        None, "no ip was preset", "DOWN", "Fault")
    assert one.optical_present is False
    # The fake's -lldp and -tls answers are in no form hccn_tool prints: kept raw.
    assert one.unparsed == {"hccn_tool -i 1 -lldp -g": "something hccn_tool never prints",
                            "hccn_tool -i 1 -tls -g": "something hccn_tool never prints"}
    assert network.nics_captured
    assert [(n.name, n.addresses, n.state) for n in network.nics] == [
        ("lo", ["127.0.0.1/8"], None), ("eth0", ["192.168.1.5/24"], "UP"), ("eth1", [], "DOWN")]


def test_hccn_tool_on_path_when_the_driver_has_none(tmp_path: Path) -> None:
    root, env = _tree(tmp_path)
    (root / BASE.lstrip("/") / probe.HCCN_TOOL.lstrip("/")).unlink()
    capture = run_probe("--root", str(root), env=env)
    assert capture.commands[probe.HCCN_IP.format(dev=0)].argv[0].endswith("/bin/hccn_tool")
    network = facts_from_capture(capture).network
    assert network.captured and network.hccn_tool
    assert network.devices[0].unparsed  # the decoy prints nothing


def test_no_hccn_tool_runs_no_device_query(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "/dev/davinci0", "")
    env = dict(os.environ, PATH="/usr/bin:/bin")
    capture = run_probe("--root", str(root), env=env)
    assert not any(key.startswith("hccn_tool") for key in capture.commands)
    network = facts_from_capture(capture).network
    assert network.captured and not network.hccn_tool and network.devices == {}
