"""`--serial`: Ansible's batch sizes (`2`, or a list such as `1,10%,25%`) and the batches they
cut a fleet into, by Ansible's own rules.

Ansible's `serial` keyword takes a number, a percentage or a list of either; each batch takes
the next size, the last one repeating, a percentage of the whole play's hosts rounded down
and at least one host (https://docs.ansible.com/ansible/latest/playbook_guide/playbooks_strategies.html#setting-the-batch-size-with-serial).
A gated roll runs one playbook per batch (workflows/roll.py), so the batches are cut here, with
Ansible's own percentage helper; tests/install/test_serial.py checks them against the
batches ansible-playbook itself runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ascend_env.core.errors import UsageError

_SIZE = re.compile(r"^(?P<number>[0-9]{1,6})(?P<percent>%?)$")
MAX_HOSTS = 100_000


@dataclass(frozen=True)
class Serial:
    """Batch sizes as Ansible reads them: ints and `N%` strings."""

    sizes: tuple[int | str, ...]

    @property
    def single(self) -> int | None:
        """The one number of the old `--serial N` form, else None."""
        if len(self.sizes) == 1 and isinstance(self.sizes[0], int):
            return self.sizes[0]
        return None

    def __str__(self) -> str:
        return ",".join(str(size) for size in self.sizes)

    def batches(self, hosts: list[str]) -> list[list[str]]:
        """The hosts, in their order, cut as Ansible's serial cuts a play's hosts."""
        from ansible.utils.helpers import pct_to_int  # noqa: PLC0415 - a roll only

        left, out, index = list(hosts), [], 0
        while left:
            size = pct_to_int(self.sizes[index], len(hosts))
            out.append(left[:size])
            left = left[size:]
            index = min(index + 1, len(self.sizes) - 1)
        return out


def parse_serial(text: str) -> Serial:
    """`2`, `25%` or `1,10%,25%` (ASCII digits; a number of hosts >= 1, a percentage 1-100);
    anything else is a usage error naming the item."""
    items = [item.strip() for item in text.split(",")]
    sizes: list[int | str] = []
    for item in items:
        match = _SIZE.match(item)
        number = int(match["number"]) if match else 0
        if match is None or number < 1 or (match["percent"] and number > 100) or (
                not match["percent"] and number > MAX_HOSTS):
            raise UsageError(f"--serial {text!r:.60}: {item!r:.40} is not a batch size; give "
                             f"a number of hosts (1-{MAX_HOSTS}) or a percentage (1%-100%), or "
                             "a list of them such as 1,10%,25%")
        sizes.append(f"{number}%" if match["percent"] else number)
    return Serial(tuple(sizes))
