"""Device lists: bounded before they are expanded, and nothing silently fixed."""

from __future__ import annotations

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.core.numbers import parse_device_list


def test_lists_and_ranges() -> None:
    assert parse_device_list("0,1") == [0, 1]
    assert parse_device_list("0-3") == [0, 1, 2, 3]
    assert parse_device_list(" 4 , 0-1 ,") == [0, 1, 4]
    assert parse_device_list("7", count=8) == [7]


@pytest.mark.parametrize(("text", "message"), [
    ("0-999999999", "not a device number"),  # a billion integers if expanded first
    ("9" * 5000, "not a device number"),  # past int()'s 4300-digit limit: a ValueError
    ("\u0663", "not a device number"),  # ARABIC-INDIC DIGIT THREE: int() would take it
    ("\uff11", "not a device number"),  # FULLWIDTH DIGIT ONE
    ("3-1", "runs backwards"),
    ("0,0", "named twice"),
    ("0-3,2", "named twice"),
    ("true", "not a device number"),
    ("-1", "not a device number"),
    ("64", "device 64 does not exist"),
    ("", "is empty"),
    (",", "is empty"),
])
def test_bad_lists_are_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        parse_device_list(text)
    assert caught.value.exit_code == 2
    assert len(str(caught.value)) < 200  # a 5000-digit input is not echoed whole


def test_the_chips_count_bounds_the_numbers() -> None:
    with pytest.raises(UsageError, match="device 8 does not exist; there are 8"):
        parse_device_list("0-8", count=8)
