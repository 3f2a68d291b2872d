#!/usr/bin/env bash
# Set up and run the whole test suite: system packages (as root), a virtual environment with a
# non-editable install of ascend-env, then ruff, mypy and pytest. Any failure fails the script;
# pytest's "collected nothing" (exit 5) fails it too.
set -euo pipefail
cd "$(dirname "$0")/.."

# The simulated Ascend hosts (tests/sim) need debootstrap, sshd, makeself and gcc; images need
# buildah; the bare RPM hosts' stand-in packages rpm (rpmbuild) and createrepo-c, and fetch of
# OS packages dnf with its download plugin (dnf-plugins-core) or apt-ftparchive (apt-utils).
# Installed only when missing, and only as root (elsewhere those tests skip).
if [ "$(id -u)" = 0 ]; then
    . scripts/system_packages.sh
    install_missing "system packages" python3-venv debootstrap openssh-server openssh-client \
        makeself gcc libc6-dev buildah fuse-overlayfs kmod pciutils zip unzip \
        rpm createrepo-c dnf python3-dnf dnf-plugins-core apt-utils
fi

venv=${ASCEND_ENV_VENV:-.venv}
echo "== virtual environment $venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
venv=$(cd "$venv" && pwd)
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q ".[dev]"
# The smoke workloads train for real on the CPU. Pinned: the CPU wheel of this release is
# what these machines carry; an unpinned `torch` would pull a multi-GB CUDA build.
"$venv/bin/python" -m pip install -q "torch==2.13.0"
# MindSpore's unified wheel trains on the CPU too (its smoke tests skip, saying so, without it).
"$venv/bin/python" -m pip install -q "mindspore==2.10.0"
# Non-editable on purpose, and rebuilt every run so the tools see this tree's code.
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps .

echo "== ruff"
"$venv/bin/ruff" check ascend_env tests benchmarks playbooks checks
echo "== mypy"
"$venv/bin/mypy"
echo "== ansible-lint (production profile)"
(cd playbooks && "$venv/bin/ansible-lint" --profile production --nocolor -q .)
echo "== pytest"
"$venv/bin/python" -m pytest "$@"
