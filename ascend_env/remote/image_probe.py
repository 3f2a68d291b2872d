#!/usr/bin/env python3
"""What validation needs from inside an image beyond the host probe: run IN the image.

Standard library only, Python 3.8+, as probe.py. Records, raw:
- the environment the image's ENV gives a process, and what the toolkit's (and NNAL's)
  set_env.sh export when sourced in a clean shell: the reference the ENV lines must match;
- the real path of every entry of both, so links (cann -> cann-<ver>) compare equal;
- installer files left anywhere in the image, and any part of an NPU driver baked in;
- how far the frameworks load without a device: `import torch` with backend autoload off,
  and the shared libraries of torch_npu/MindSpore that the loader cannot find;
- the spec a previous `image build` stored in the image.
"""

# Runs inside images, like probe.py: plain os.path over a walk of the whole file system.
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

SCHEMA = "ascend-env/image-capture/v1"
SPEC_FILE = "/etc/ascend-env/spec.json"
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Variables worth comparing; set_env.sh may export more, they are all recorded.
ENV_PREFIXES = ("ASCEND_", "ATB_", "LCCL_", "HCCL_", "TOOLCHAIN_", "CMAKE_PREFIX_PATH",
                "LD_LIBRARY_PATH", "PYTHONPATH", "PATH", "VIRTUAL_ENV", "BISHENG_")
INSTALLER = re.compile(r"^(Ascend|Atlas)-.*\.(run|zip)$")
DRIVER_FILES = re.compile(r"^(libascend_hal\.so.*|libdrvdsmi_host\.so.*|npu-smi)$")
SKIP_DIRS = ("/proc", "/sys", "/dev", "/run", "/tmp/ascend-env-probe")
NNAL_SCRIPT = "nnal/atb/set_env.sh"
WALK_LIMIT = 400_000  # files; a CANN install has ~100k, stop rather than run for minutes
TIMEOUT_S = 60.0

SHARED_OBJECTS = (
    "import importlib.util, json, os, sys\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    spec = importlib.util.find_spec(name)\n"
    "    out[name] = list(spec.submodule_search_locations or []) if spec else None\n"
    "print(json.dumps(out))\n"
)


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                              env=env, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return 127, "", f"{type(exc).__name__}: {exc}"
    return done.returncode, done.stdout, done.stderr


def _wanted(name: str) -> bool:
    return name.startswith(ENV_PREFIXES)


def _env_of(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split("\0"):
        name, sep, value = item.partition("=")
        if sep:
            out[name] = value
    return out


def set_env_exports(scripts: list[str]) -> dict[str, Any]:
    """What sourcing the scripts, in a clean shell, adds to or changes in the environment."""
    present = [s for s in scripts if os.path.isfile(s)]
    shell = shutil.which("bash") or "/bin/sh"
    clean = {"PATH": CLEAN_PATH, "HOME": "/root"}
    rc, before, err = _run([shell, "-c", "env -0"], env=clean)
    # NNAL's script takes the C++ ABI; the official 8.5/9.x images use 1 (the Dockerfiles of
    # https://github.com/Ascend/cann-container-image).
    sourcing = "; ".join(f". {s}{' --cxx_abi=1' if s.endswith(NNAL_SCRIPT) else ''} "
                         ">/dev/null 2>&1" for s in present)
    rc2, after, err2 = _run([shell, "-c", f"{sourcing}; env -0"], env=clean)
    if rc or rc2:
        return {"scripts": present, "exported": {}, "error": (err or err2).strip()[-500:]}
    base, sourced = _env_of(before), _env_of(after)
    exported = {k: v for k, v in sourced.items() if base.get(k) != v and k not in ("_", "PWD",
                                                                                    "SHLVL")}
    return {"scripts": present, "exported": exported, "error": None}


def _entries(value: str) -> list[str]:
    return [part for part in value.split(":") if part.startswith("/")]


def realpaths(*environments: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for env in environments:
        for value in env.values():
            for entry in _entries(value):
                out.setdefault(entry, os.path.realpath(entry))
    return out


def walk(install_path: str) -> dict[str, Any]:
    """Installers left behind and driver files baked in, anywhere in the image."""
    installers: list[str] = []
    driver: list[str] = []
    seen = 0
    truncated = False
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP_DIRS]
        for name in files:
            seen += 1
            if INSTALLER.match(name):
                installers.append(os.path.join(top, name))
            elif DRIVER_FILES.match(name):
                driver.append(os.path.join(top, name))
        if seen > WALK_LIMIT:
            truncated = True
            break
    for path in (f"{install_path}/driver/version.info", "/etc/ascend_install.info",
                 "/usr/local/dcmi"):
        if os.path.exists(path):
            driver.append(path)
    return {"installers": sorted(installers), "driver": sorted(set(driver)), "files": seen,
            "truncated": truncated}


def _missing_libraries(directory: str, env: dict[str, str]) -> dict[str, list[str]]:
    ldd = shutil.which("ldd")
    if ldd is None:
        return {"(ldd)": ["ldd is not installed in the image"]}
    out: dict[str, list[str]] = {}
    for so in sorted(Path(directory).rglob("*.so*")):
        if not so.is_file():
            continue
        _rc, text, _err = _run([ldd, str(so)], env=env)
        missing = sorted({line.split("=>")[0].strip() for line in text.splitlines()
                          if "not found" in line})
        if missing:
            out[str(so)] = missing
    return out


def frameworks(python: str | None) -> dict[str, Any]:
    """How far the frameworks load here, where no NPU and no driver exist."""
    if not python or not os.access(python, os.X_OK):
        return {"python": python, "available": False}
    result: dict[str, Any] = {"python": python, "available": True, "imports": {},
                              "missing_libraries": {}}
    env = dict(os.environ)
    # torch would autoload torch_npu through its entry point and fail without a driver
    # (https://github.com/pytorch/pytorch/blob/main/torch/__init__.py); with autoload off
    # `import torch` must work.
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    rc, out, err = _run([python, "-c", "import sys; import torch; print(torch.__version__)"],
                        env=env)
    result["imports"]["torch"] = {"rc": rc, "out": out.strip()[-300:],
                                  "err": err.strip()[-800:]}
    rc, out, err = _run([python, "-c", SHARED_OBJECTS, "torch", "torch_npu", "mindspore"],
                        env=env)
    locations: dict[str, Any] = {}
    if rc == 0:
        try:
            locations = json.loads(out)
        except ValueError:
            locations = {}
    result["packages"] = locations
    for name in ("torch_npu", "mindspore"):
        for directory in locations.get(name) or []:
            result["missing_libraries"].update(_missing_libraries(directory, env))
    return result


def stored_spec() -> Any:
    try:
        with open(SPEC_FILE, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def capture(install_path: str, set_env: list[str], python: str | None) -> dict[str, Any]:
    image_env = {k: v for k, v in os.environ.items() if _wanted(k)}
    reference = set_env_exports(set_env)
    return {
        "schema": SCHEMA,
        "install_path": install_path,
        "env": image_env,
        "set_env": reference,
        "realpaths": realpaths(image_env, reference["exported"]),
        "walk": walk(install_path),
        "frameworks": frameworks(python),
        "stored_spec": stored_spec(),
        "user": {"uid": os.getuid(), "gid": os.getgid()},
        "python": sys.version.split()[0],
    }


def default_scripts(install_path: str) -> list[str]:
    """The toolkit's script of whichever era is installed, then NNAL's."""
    scripts = []
    for candidate in (f"{install_path}/cann/set_env.sh",
                      f"{install_path}/ascend-toolkit/set_env.sh"):
        if os.path.isfile(candidate):
            scripts.append(candidate)
            break
    nnal = f"{install_path}/nnal/atb/set_env.sh"
    if os.path.isfile(nnal):
        scripts.append(nnal)
    return scripts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--install-path", default="/usr/local/Ascend")
    parser.add_argument("--set-env", action="append", default=[],
                        help="a set_env.sh to source for the reference (default: found)")
    parser.add_argument("--python", default=None, help="the framework interpreter")
    args = parser.parse_args(argv)
    install_path = args.install_path.rstrip("/") or "/"
    scripts = args.set_env or default_scripts(install_path)
    json.dump(capture(install_path, scripts, args.python), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
