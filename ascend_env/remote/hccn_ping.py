#!/usr/bin/env python3
"""Ping peers' NPU addresses from this host's NPUs: `hccn_tool -i DEV -ping -g address A pkt N`.

Runs ON a target with only the standard library, Python 3.8+:
`python3 hccn_ping.py --hccn-tool PATH --pair DEV:ADDRESS [--pair ...] [--pkt N] [--jobs N]`.
All pairs run at once (a bounded pool: each ping waits on the wire, not on this host's CPU);
prints one JSON document {"schema", "results": [{device, address, rc, answered, received,
transmitted, stdout}]}.

hccn_tool's answer (Huawei's open-sourced source prints "device %d PING %s" and the replies;
a multi-node guide quotes `recv seq=0,time=0.067000ms` ... `3 packets transmitted, 3 received,
0.00% packet loss`, and `recv time out seq=0` for a packet lost): the summary line decides;
without one the pair is "unknown", never answered.
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


def ping(tool: str, device: str, address: str, pkt: int) -> Dict[str, Any]:
    argv = [tool, "-i", device, "-ping", "-g", "address", address, "pkt", str(pkt)]
    result: Dict[str, Any] = {"device": int(device), "address": address}
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
    parser.add_argument("--pkt", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=32)
    args = parser.parse_args(argv)
    pairs: List[List[str]] = []
    for pair in args.pair:
        device, sep, address = pair.partition(":")
        if not sep or not device.isdigit() or not re.fullmatch(r"[0-9.]{7,15}", address):
            parser.error(f"--pair {pair!r}: DEV:IPv4ADDRESS")
        pairs.append([device, address])
    with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(pairs) or 1))) as pool:
        results = list(pool.map(lambda p: ping(args.hccn_tool, p[0], p[1], args.pkt), pairs))
    sys.stdout.write(json.dumps({"schema": SCHEMA, "results": results}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
