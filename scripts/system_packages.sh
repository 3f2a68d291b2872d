# Sourced by scripts/test.sh and scripts/first_run.sh: install_missing PACKAGE... installs,
# with apt-get and without questions, those of the Debian packages named that are missing
# (nothing at all, not even `apt-get update`, when every one is there). WHAT names them in
# the progress line.
install_missing() {
    local what=$1
    shift
    command -v apt-get >/dev/null || return 0
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" \
            || missing+=("$package")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "== installing $what: ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" </dev/null
    fi
}
