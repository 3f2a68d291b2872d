#!/bin/sh
# Fake lsmod for a simulated host: lists the /sys/module entries the fake driver created.
#
# The hosts share one kernel (without /proc/modules), so module state lives in the host's
# fake sysfs; the output keeps lsmod's real column layout. Shell builtins only (a Python
# start costs ~10 ms): the probe runs lsmod on every host of a simulated fleet, and the hosts
# share the test machine's CPUs.
LC_ALL=C
export LC_ALL
echo "Module                  Size  Used by"
for dir in /sys/module/*; do
    [ -f "$dir/initstate" ] || continue
    size=0
    refs=0
    users=
    if [ -f "$dir/coresize" ]; then read -r size < "$dir/coresize" || true; fi
    if [ -f "$dir/refcnt" ]; then read -r refs < "$dir/refcnt" || true; fi
    for holder in "$dir"/holders/*; do
        if [ -e "$holder" ]; then users="${users:+$users,}${holder##*/}"; fi
    done
    if [ -n "$users" ]; then
        printf '%-19s %8s  %s %s\n' "${dir##*/}" "$size" "$refs" "$users"
    else
        printf '%-19s %8s  %s\n' "${dir##*/}" "$size" "$refs"
    fi
done
