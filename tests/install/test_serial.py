"""`--serial`: the sizes it accepts, and batches cut exactly as ansible-playbook cuts them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from ascend_env.ansible.runner import ansible_playbook
from ascend_env.core.errors import UsageError
from ascend_env.install.serial import Serial, parse_serial

PLAYBOOKS = Path(__file__).resolve().parents[2] / "playbooks"


def test_the_old_number_and_the_list_form() -> None:
    assert parse_serial("2") == Serial((2,))
    assert parse_serial("2").single == 2
    assert parse_serial("1,10%,25%") == Serial((1, "10%", "25%"))
    assert parse_serial(" 1 , 50% ").single is None
    assert str(parse_serial("1,50%")) == "1,50%"


@pytest.mark.parametrize("bad", ["0", "-1", "x", "", "1,", "1,,2", "٣", "1_0", "0x10",
                                 "101%", "0%", "9" * 400, "1.5", "50 %", "nan", "%"])
def test_what_is_not_a_batch_size_is_refused_naming_it(bad: str) -> None:
    with pytest.raises(UsageError, match="is not a batch size") as caught:
        parse_serial(bad)
    assert caught.value.exit_code == 2


CASES = [("1,50%", 4), ("1,10%,25%", 20), ("2", 5), ("30%", 7), ("1,2", 3), ("100%", 3),
         ("3,1", 8)]


def ansible_batches(tmp_path: Path, serial: str, hosts: int) -> list[list[str]]:
    """The batches ansible-playbook itself runs for `serial` over `hosts` local hosts, read
    from ascend-env's events callback (one run_once debug per batch)."""
    names = [f"h{index:02d}" for index in range(1, hosts + 1)]
    inventory = tmp_path / f"hosts-{hosts}.ini"
    inventory.write_text("[all]\n" + "".join(f"{name} ansible_connection=local\n"
                                             for name in names))
    playbook = tmp_path / "batches.yml"
    playbook.write_text(yaml.safe_dump([{
        "hosts": "all", "gather_facts": False, "serial": list(parse_serial(serial).sizes),
        "tasks": [{"ansible.builtin.debug": {"msg": "{{ ansible_play_batch | join(',') }}"},
                   "run_once": True}]}]))
    events = tmp_path / f"events-{serial}-{hosts}.jsonl"
    env = {**os.environ, "ASCEND_ENV_EVENTS": str(events),
           "ANSIBLE_CALLBACKS_ENABLED": "ascend_env_events",
           "ANSIBLE_CALLBACK_PLUGINS": str(PLAYBOOKS / "callback_plugins")}
    done = subprocess.run([ansible_playbook(), "-i", str(inventory), str(playbook)],
                          capture_output=True, text=True, env=env, check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    return [line["message"].split(",") for line in lines
            if line["event"] == "result" and line.get("message")]


@pytest.mark.parametrize(("serial", "hosts"), CASES)
def test_batches_are_ansibles_own(tmp_path: Path, serial: str, hosts: int) -> None:
    names = [f"h{index:02d}" for index in range(1, hosts + 1)]
    ours = parse_serial(serial).batches(names)
    assert ours == ansible_batches(tmp_path, serial, hosts)
    assert [host for batch in ours for host in batch] == names


def test_a_canary_then_half_of_four_hosts() -> None:
    assert parse_serial("1,50%").batches(["a", "b", "c", "d"]) == [["a"], ["b", "c"], ["d"]]
