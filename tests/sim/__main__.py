"""The simulated Ascend hosts: python -m tests.sim up|down|status|fault|repo|serve."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.sim.layout import SimError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tests.sim", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    up = sub.add_parser("up", help="start N simulated hosts reachable over ssh")
    up.add_argument("--hosts", type=int, default=1)
    up.add_argument("--state", choices=["bare", "provisioned"], default="bare")
    up.add_argument("--chip", default="910b", help="910b, 910, 910_93 or 310p")
    up.add_argument("--devices", type=int, default=8, help="NPUs per host")
    up.add_argument("--cann", default="8.5.0", help="CANN version for --state provisioned")
    up.add_argument("--hdk", default="25.5.0", help="HDK (driver) version for provisioned")
    up.add_argument("--profile", help="take chip, devices and versions from a package profile")
    up.add_argument("--inventory", type=Path, help="also write the Ansible inventory here")
    up.add_argument("--fleet", default="default", help="name of this set of hosts")
    up.add_argument("--root-mode", choices=["overlay", "copy"], default="overlay")
    up.add_argument("--port", type=int, default=22)
    up.add_argument("--no-kernel-headers", action="store_true",
                    help="fault: no /lib/modules/$(uname -r)/build in the hosts")
    up.add_argument("--os", dest="os_name", metavar="NAME",
                    help="bare hosts of this OS, as the vendor's servers arrive: "
                    "openeuler-22.03 (rpm, dnf) or debian-12 (apt) (tests/sim/oshosts.py)")
    up.add_argument("--arch", default=None, choices=["x86_64", "aarch64"],
                    help="the architecture the --os openeuler-22.03 hosts report (default: "
                    "this machine's); their CPU and binaries stay this machine's")

    down = sub.add_parser("down", help="stop and remove simulated hosts")
    down.add_argument("--fleet", default=None, help="only this fleet (default: all)")

    st = sub.add_parser("status", help="list simulated hosts")
    st.add_argument("--json", action="store_true")

    fault = sub.add_parser("fault", help="switch a device fault on a host")
    fault.add_argument("host")
    fault.add_argument("fault", help="health-alarm, not-started, busy, missing, "
                       "health-alarm-after-driver (Alarm at the next driver install) or clear; "
                       "network: link-down, link-flapping, net-fault, no-address, "
                       "duplicate-address, wrong-subnet, ping-drop, network-clear")
    fault.add_argument("--peer", default=None,
                       help="the other host of duplicate-address and ping-drop")
    fault.add_argument("--device", type=int, default=None, help="NPU ID (default 0; clear: all)")
    fault.add_argument("--code", default=None, help="error code for health-alarm")
    fault.add_argument("--fleet", default="default")

    repo = sub.add_parser("repo", help="build a fake vendor repo plus catalogue-overlay.json")
    repo.add_argument("--chip", default="910b")
    repo.add_argument("--cann", default="8.5.0")
    repo.add_argument("--hdk", default="25.5.0")
    repo.add_argument("--firmware", default=None, help="firmware version (default: paired)")
    repo.add_argument("--arch", default=os.uname().machine, choices=["x86_64", "aarch64"])
    repo.add_argument("--profile", help="take chip and versions from a package profile, and "
                      "write spec.yaml (the profile adjusted to the simulated hosts)")
    repo.add_argument("--dest", type=Path, required=True)
    repo.add_argument("--os", dest="os_name", metavar="NAME",
                      help="the hosts' OS (as up --os): spec.yaml names it, and DEST/os/<key>/ "
                      "holds a copy of its (stand-in) package mirror where the harness has one")
    repo.add_argument("--with-previous", action="store_true",
                      help="with --profile: also the release before the profile's (older HDK "
                      "and CANN) and spec-previous.yaml, for upgrades and rollbacks")
    repo.add_argument("--wheels-for", type=Path, metavar="SPEC",
                      help="also stand-in wheels (tests/wheels.py) for this spec: its pinned "
                      "frameworks in the catalogue overlay (tagged for the spec's Python and "
                      "arch, as the real ones), the rest in DEST/index/ (a simple index for "
                      "fetch --python-wheels --index-url)")

    serve = sub.add_parser("serve", help="serve a fake vendor repo on 127.0.0.1 for "
                           "`ascend-env fetch --mirror URL` until stopped")
    serve.add_argument("--dir", type=Path, required=True, help="what `repo --dest` wrote")
    serve.add_argument("--url-file", type=Path, help="also write the base URL here")
    serve.add_argument("--index-url-file", type=Path,
                       help="also serve DIR/index/ as a package index; its URL goes here")

    bi = sub.add_parser("base-image", help="import the cached Debian root into buildah, on "
                        "the storage ascend-env detects (as the image tests do)")
    bi.add_argument("--tag", required=True)
    return p


def _base_image(tag: str) -> int:
    """Commit the cached base root as image TAG in the store `ascend-env image build` uses."""
    if shutil.which("buildah") is None:
        raise SimError("buildah is not installed: apt-get install -y buildah")
    from ascend_env.image.builders import Buildah  # noqa: PLC0415
    from tests.image.stack import import_base  # noqa: PLC0415

    try:
        print(import_base(Buildah().base, tag))
    except subprocess.CalledProcessError as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) \
            else exc.stderr or ""
        raise SimError(f"`{' '.join(map(str, exc.cmd))[:200]}` failed: {err.strip()[-500:]}"
                       ) from exc
    return 0


def _write_url(path: Path | None, url: str) -> None:
    if path is not None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(url + "\n")
        tmp.replace(path)  # whole or absent: a reader never sees half a URL


def _serve(root: Path, url_file: Path | None, index_url_file: Path | None) -> int:
    """The loopback vendor server of the fetch tests (and the stand-in index), in the
    foreground until SIGTERM."""
    import threading  # noqa: PLC0415
    from contextlib import ExitStack  # noqa: PLC0415

    from tests.vendor_server import index_server, vendor_server  # noqa: PLC0415

    if not (root / "catalogue-overlay.json").is_file():
        raise SimError(f"{root} holds no catalogue-overlay.json: run python -m tests.sim repo "
                       f"--dest {root} first")
    if index_url_file is not None and not (root / "index").is_dir():
        raise SimError(f"{root} holds no index/: run python -m tests.sim repo --wheels-for")
    with ExitStack() as stack:
        if index_url_file is not None:
            index = stack.enter_context(index_server(root / "index"))
            _write_url(index_url_file, index)
            print(f"serving the stand-in index {root / 'index'} at {index}", flush=True)
        url, _state = stack.enter_context(vendor_server(root))
        _write_url(url_file, url)  # last: the URL file says both servers are up
        print(f"serving {root} at {url}", flush=True)
        threading.Event().wait()
    return 0


def _stand_in_wheels(dest: Path, spec_file: Path) -> None:
    """The spec's framework pins as stand-in wheels in the catalogue overlay (fetched like
    vendor files, from the same server) and the rest of their closure in dest/index/."""
    from packaging.utils import canonicalize_name  # noqa: PLC0415

    from ascend_env.spec.envspec import load_spec  # noqa: PLC0415
    from tests.sim.packages import OBS  # noqa: PLC0415
    from tests.wheels import (  # noqa: PLC0415
        EXTRA_WHEELS,
        REQUIRES,
        VERSIONS,
        build_wheel,
        framework_overlay,
    )

    spec = load_spec(path=spec_file)
    frameworks = framework_overlay(dest, spec, platform_tagged=True)
    overlay_file = dest / "catalogue-overlay.json"
    overlay = json.loads(overlay_file.read_text())
    for component, versions in json.loads(frameworks.read_text())["components"].items():
        for version, row in versions.items():
            for entry in row["files"]:
                entry["url"] = f"{OBS}/stand-in-wheels/{entry['filename']}"
            overlay["components"].setdefault(component, {})[version] = row
    overlay_file.write_text(json.dumps(overlay, indent=2) + "\n")
    frameworks.unlink()
    for name in EXTRA_WHEELS:
        build_wheel(dest / "index" / canonicalize_name(name), name, VERSIONS.get(name, "1.0"),
                    requires=REQUIRES.get(name, ()))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except SimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if "not installed" in str(exc) or "must be" in str(exc) else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _fault(args: argparse.Namespace) -> int:
    from tests.sim import faults, fleet, network, network_faults  # noqa: PLC0415
    from tests.sim.layout import FleetPaths  # noqa: PLC0415

    loaded = fleet.load(args.fleet)
    if loaded is None:
        raise SimError(f"fleet {args.fleet!r} is not up")
    root = Path(loaded.host(args.host).root)
    if args.fault in network_faults.NETWORK_FAULTS:
        fabric = network.fabric_dir(FleetPaths.for_fleet(args.fleet).base)
        print(network_faults.apply(fabric, root, args.host, args.fault,
                                   device=args.device or 0, peer=args.peer))
        return 0
    msg = faults.apply(root, args.fault, args.device, args.code)
    print(f"{args.host}: {msg}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from tests.sim import fleet  # noqa: PLC0415  (keep --help fast)

    if os.geteuid() != 0:
        raise SimError("the simulated hosts need root (mounts, mknod, sshd chroot)")
    if getattr(args, "profile", None):
        from tests.sim import profiles  # noqa: PLC0415

        prof = profiles.load(args.profile)
        args.chip, args.cann, args.hdk = prof.chip, prof.cann, prof.hdk
        if args.cmd == "up":
            args.devices = prof.devices
        else:
            args.firmware = args.firmware or prof.firmware
    if args.cmd == "up":
        f = fleet.up(
            name=args.fleet,
            hosts=args.hosts,
            state=args.state,
            chip=args.chip,
            devices=args.devices,
            root_mode=args.root_mode,
            port=args.port,
            inventory=args.inventory,
            versions=fleet.Versions(cann=args.cann, hdk=args.hdk),
            kernel_headers=not args.no_kernel_headers,
            os_name=args.os_name,
            arch=args.arch,
        )
        for h in f.hosts:
            print(f"{h.name}\t{h.address}:{h.port}\t{h.chip} x{h.devices}\t{h.state}\tpid {h.pid}")
        print(f"inventory:  {args.inventory or f.inventory}")
        print(f"ssh config: {f.ssh_config}")
        return 0
    if args.cmd == "down":
        removed = fleet.down(args.fleet) if args.fleet else fleet.down_all()
        print(f"removed {len(removed)} host(s)" + (f": {', '.join(removed)}" if removed else ""))
        return 0
    if args.cmd == "status":
        rows = fleet.status()
        if args.json:
            print(json.dumps(rows, indent=2))
        elif not rows:
            print("no simulated hosts")
        for r in [] if args.json else rows:
            print(f"{r['fleet']}/{r['host']}\t{r['address']}\t{r['chip']} x{r['devices']}\t"
                  f"{r['state']}\t{'running' if r['running'] else 'STOPPED'} "
                  f"(pid {r['sshd_pid']})")
        return 0
    if args.cmd == "fault":
        return _fault(args)
    if args.cmd == "repo" and args.with_previous:
        if not args.profile or args.wheels_for:
            raise SimError("--with-previous must be given with --profile (and without "
                           "--wheels-for)")
        from tests.sim import previous  # noqa: PLC0415

        written = previous.write_with_previous(args.profile, args.dest, args.arch)
        print(f"wrote {len(written)} package(s) of two releases, catalogue-overlay.json, "
              f"spec.yaml and spec-previous.yaml to {args.dest}")
        return 0
    if args.cmd == "repo":
        return _repo(args)
    if args.cmd == "serve":
        return _serve(args.dir, args.url_file, args.index_url_file)
    if args.cmd == "base-image":
        return _base_image(args.tag)
    raise SimError(f"unknown command {args.cmd}")


def _repo(args: argparse.Namespace) -> int:
    """`repo`: the fake vendor files, and what --profile, --os and --wheels-for add."""
    from tests.sim import packages  # noqa: PLC0415

    overlay = packages.build_repo(
        args.dest, chip=args.chip, cann=args.cann, hdk=args.hdk, arch=args.arch,
        firmware=args.firmware,
    )
    extra = ""
    if args.profile:
        from tests.sim import profiles  # noqa: PLC0415

        profiles.write_spec(profiles.load(args.profile), args.dest, args.arch,
                            os_name=args.os_name)
        extra = " and spec.yaml"
    if args.os_name:
        from tests.sim import os_repo  # noqa: PLC0415

        extra += os_repo.write(args.dest, args.os_name, args.arch)
    if args.wheels_for:
        _stand_in_wheels(args.dest, args.wheels_for)
        extra += f", stand-in wheels for {args.wheels_for} (and index/)"
    print(f"wrote {len(overlay)} package(s), catalogue-overlay.json{extra} to {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
