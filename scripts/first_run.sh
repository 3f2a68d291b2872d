#!/usr/bin/env bash
# The README's first Quick start command: set ascend-env up and show its main job, `install`
# and `doctor`, on a SIMULATED Atlas 800T A2 host, through the commands an operator types
# against real hosts. The host is the test harness's (tests/sim: a Debian root reached over
# real ssh on 127.0.0.N, a fake npu-smi, fake vendor installers honouring the real ones' flags
# and layout), the vendor files come from its fake vendor repository served on 127.0.0.1.
# No real NPU, driver or firmware is involved. Needs root (the simulated host mounts and
# chroots) on Debian/Ubuntu; it installs the system packages it lacks.
#
#   bash scripts/first_run.sh [--keep]     --keep leaves the simulated host up afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
keep=0
for arg in "$@"; do
    case $arg in
        --keep) keep=1 ;;
        *) echo "usage: bash scripts/first_run.sh [--keep]" >&2; exit 2 ;;
    esac
done
if [ "$(id -u)" != 0 ]; then
    echo "first_run.sh: the simulated host needs root (mounts, mknod, an sshd chroot); run it" \
         "as root, or set ascend-env up alone: python3 -m venv .venv && .venv/bin/pip install ." >&2
    exit 2
fi

. scripts/system_packages.sh
install_missing "the simulated host's system packages" python3-venv debootstrap \
    openssh-server openssh-client makeself gcc libc6-dev kmod pciutils

venv=${ASCEND_ENV_VENV:-.venv}
echo "== setting up ascend-env in $venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
venv=$(cd "$venv" && pwd)
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q .
export PATH="$venv/bin:$PATH"
python=$venv/bin/python
repo=$PWD
# The harness lives in the checkout (tests/sim), not in the installed package.
sim() { (cd "$repo" && "$python" -m tests.sim "$@"); }

work=${ASCEND_ENV_FIRST_RUN_DIR:-$PWD/.first-run}
fleet=${ASCEND_ENV_FIRST_RUN_FLEET:-first-run}
rm -rf "$work"
mkdir -p "$work"
server=""
finish() {
    status=$?
    [ -z "$server" ] || kill "$server" 2>/dev/null || true
    if [ "$keep" = 0 ]; then
        sim down --fleet "$fleet" >/dev/null 2>&1 || true
    fi
    exit "$status"
}
trap finish EXIT

# Each step an operator would type is shown with its `$`.
step() {
    echo
    echo "\$ $*"
    "$@"
}

cat <<EOF

== SIMULATED hardware from here on. The host "sim1" is the test harness's simulated Atlas
   800T A2 (8 x 910B): a Debian root reached over ssh, a fake npu-smi, fake vendor installers.
   The vendor files come from the harness's fake vendor repository on 127.0.0.1.
EOF
# The 910b profile on this machine's arch, Debian release and Python (the simulated host's).
debian=$(cut -d. -f1 /etc/debian_version 2>/dev/null || echo 12)
pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cat >"$work/lab-a2.yaml" <<EOF
# The 910b profile adjusted to the simulated host (scripts/first_run.sh).
extends: 910b
name: 910b-sim
hardware: {arch: $(uname -m)}
os: {family: debian, version: "$debian"}
python: {version: "$pyver"}
EOF
# The frameworks' real wheels are gigabytes and a simulated NPU cannot run them: the harness
# gives stand-ins with the pinned names, versions and dependencies (tests/wheels.py), served
# beside the vendor files, the rest of their closure from a stand-in index.
sim repo --profile 910b --dest "$work/vendor" --wheels-for "$work/lab-a2.yaml"
sim up --hosts 1 --fleet "$fleet" --inventory "$work/hosts.ini"
# exec: $! is then the server itself, which finish() stops.
(cd "$repo" && exec "$python" -m tests.sim serve --dir "$work/vendor" \
    --url-file "$work/vendor-url" --index-url-file "$work/index-url") \
    >"$work/vendor-server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    [ -s "$work/vendor-url" ] || ! kill -0 "$server" 2>/dev/null || sleep 0.1
done
[ -s "$work/vendor-url" ] || { cat "$work/vendor-server.log" >&2; exit 2; }
mirror=$(cat "$work/vendor-url")
index=$(cat "$work/index-url")

cd "$work"
step ascend-env fetch --spec lab-a2.yaml --repo ascend-repo --mirror "$mirror" \
    --catalogue vendor/catalogue-overlay.json --python-wheels --index-url "$index"
step ascend-env install --spec lab-a2.yaml --inventory hosts.ini --repo ascend-repo \
    --catalogue vendor/catalogue-overlay.json --allow-reboot
step ascend-env doctor --spec lab-a2.yaml --inventory hosts.ini

cat <<EOF

== Done: the simulated host was installed (driver, firmware, CANN, the managed environment,
   the frameworks' stand-ins), rebooted (simulated) and checked by the doctor.
   The files are in $work.
   On real hosts, the same commands, with your inventory and the vendor's download site:

     ascend-env profiles show 910b --yaml > lab-a2.yaml    # then edit: devices, versions...
     ascend-env fetch --spec lab-a2.yaml --repo ascend-repo --python-wheels
     ascend-env install --spec lab-a2.yaml --inventory hosts.ini --repo ascend-repo --check
     ascend-env install --spec lab-a2.yaml --inventory hosts.ini --repo ascend-repo --allow-reboot
     ascend-env doctor --spec lab-a2.yaml --inventory hosts.ini

   (ascend-env is in $venv/bin.)
EOF
if [ "$keep" = 1 ]; then
    echo "   The simulated host is still up: $work/hosts.ini reaches it;"
    echo "   (cd $repo && $python -m tests.sim down --fleet $fleet) removes it."
fi
