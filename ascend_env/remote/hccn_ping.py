#!/usr/bin/env python3
"""Ping peers' NPUs from this host's NPUs: over RoCE, `hccn_tool -i DEV -ping -g address A pkt
N`; over A3's HCCS, `hccn_tool -i DEV -hccs_ping -g sdid S` (the peer die's SDID).

Runs ON a target with only the standard library, Python 3.8+:
`python3 hccn_ping.py --hccn-tool PATH [--pair DEV:ADDRESS ...] [--hccs DEV:SDID ...]
[--pkt N] [--jobs N]`. All pairs run at once (a bounded pool: each ping waits on the wire, not
on this host's CPU); prints one JSON document {"schema", "results": [{device, via, address or
sdid, rc, answered, received, transmitted, stdout}]}.

hccn_tool's answers (Huawei's open-sourced source prints "device %d PING %s" and the replies;
a multi-node guide quotes `recv seq=0,time=0.067000ms` ... `3 packets transmitted, 3 received,
0.00% packet loss`, and `recv time out seq=0` for a packet lost; its HCCS ping, per packet
"This pkt ping success!" and `recv seq 0, time = ...us`, then `N packets transmitted, M
received, X% packets loss`): the summary line decides; without one the pair is "unknown",
never answered.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Sequence

SCHEMA = "ascend-env/hccn-ping/v1"
SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) received")
TIMEOUT_S = 30.0


def parse(stdout: str) -> Dict[str, Any]:
    """transmitted/received from the summary line; answered None when there is none."""
    match = SUMMARY.search(stdout)
    if match is None:
        return {"answered": None, "transmitted": None, "received": None}
    sent, got = int(match.group(1)), int(match.group(2))
    return {"answered": sent > 0 and got == sent, "transmitted": sent, "received": got}


def ping(tool: str, device: str, via: str, target: str, pkt: int) -> Dict[str, Any]:
    """One pair: RoCE to an address (`pkt` packets), or HCCS to an SDID (hccn_tool's default
    count: its `pkt` there is the packet size)."""
    if via == "hccs":
        argv = [tool, "-i", device, "-hccs_ping", "-g", "sdid", target]
        result: Dict[str, Any] = {"device": int(device), "via": via, "sdid": target}
    else:
        argv = [tool, "-i", device, "-ping", "-g", "address", target, "pkt", str(pkt)]
        result = {"device": int(device), "via": via, "address": target}
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        result.update(rc=None, answered=False, transmitted=None, received=None,
                      stdout=f"no answer within {TIMEOUT_S:g}s")
        return result
    except OSError as exc:
        result.update(rc=None, answered=None, transmitted=None, received=None,
                      stdout=f"cannot run {tool}: {exc.strerror or exc}")
        return result
    stdout = done.stdout.decode("utf-8", "replace")[-4000:]
    result.update(rc=done.returncode, stdout=stdout, **parse(stdout))
    return result


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="hccn_ping.py", allow_abbrev=False,
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hccn-tool", required=True)
    parser.add_argument("--pair", action="append", default=[], metavar="DEV:ADDRESS")
    parser.add_argument("--hccs", action="append", default=[], metavar="DEV:SDID")
    parser.add_argument("--pkt", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=32)
    args = parser.parse_args(argv)
    pairs: List[List[str]] = []
    shapes = (("roce", args.pair, r"[0-9.]{7,15}"), ("hccs", args.hccs, r"\d{1,10}"))
    for via, given, shape in shapes:
        for pair in given:
            device, sep, target = pair.partition(":")
            if not sep or not device.isdigit() or not re.fullmatch(shape, target):
                parser.error(f"{pair!r}: DEV:" + ("IPv4ADDRESS" if via == "roce" else "SDID"))
            pairs.append([device, via, target])
    with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(pairs) or 1))) as pool:
        results = list(pool.map(lambda p: ping(args.hccn_tool, p[0], p[1], p[2], args.pkt),
                                pairs))
    sys.stdout.write(json.dumps({"schema": SCHEMA, "results": results}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
