"""The run's events file is followed while ansible-playbook writes it: an event is read once
its whole line is there (the callback's buffer reaches the file in pieces when an event is
longer than the buffer), and a line the writer never finished is not an event."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from ascend_env.ansible.runner import _tail


def test_an_event_written_in_two_pieces_is_read_once_whole(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first = {"event": "result", "host": "sim1", "stdout": "x" * 20000}
    second = {"event": "stats", "hosts": {"sim1": {"ok": 1}}}
    line = json.dumps(first) + "\n"
    seen: list[dict[str, Any]] = []
    stop = threading.Event()
    with path.open("w", encoding="utf-8") as out:
        follower = threading.Thread(target=_tail, args=(path, stop, seen.append))
        follower.start()
        out.write(line[:8192])
        out.flush()
        time.sleep(0.3)  # the follower polls every 0.1 s: it meets the half line
        out.write(line[8192:] + json.dumps(second) + "\n" + '{"event": "res')
        out.flush()
        time.sleep(0.3)
        stop.set()
        follower.join(timeout=10)
    assert not follower.is_alive()
    assert seen == [first, second]
