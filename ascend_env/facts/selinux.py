"""SELinux: the current mode (getenforce, sysfs, sestatus), its config, and path labels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.facts.model import SelinuxFacts, SelinuxMode
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import parse_kv
from ascend_env.remote import probe


def parse_getenforce(text: str) -> SelinuxMode | None:
    """`Enforcing`/`Permissive`/`Disabled` -> the mode; None for anything else."""
    word = text.strip().lower()
    return word if word in ("enforcing", "permissive", "disabled") else None  # type: ignore[return-value]


def parse_sestatus(text: str) -> dict[str, str]:
    """sestatus `Key:   value` lines, keys lower-cased."""
    return {k.lower(): v for k, v in parse_kv(text, ":").items()}


def parse_ls_labels(text: str) -> dict[str, str]:
    """`ls -Zd PATH...` lines: `<label> <path>`; `?` means no label."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        label, sep, path = line.strip().partition(" ")
        if sep and label != "?" and path.startswith("/"):
            out[path.strip()] = label
    return out


def read_selinux(r: CaptureReader) -> SelinuxFacts:
    """The mode from the best source captured; labels from lstat and `ls -Zd`, root stripped."""
    mode = parse_getenforce(r.output(probe.GETENFORCE) or "")
    enforce = (r.file("/sys/fs/selinux/enforce") or "").strip()
    if mode is None and enforce in ("0", "1"):
        mode = "enforcing" if enforce == "1" else "permissive"
    status = parse_sestatus(r.output(probe.SESTATUS) or "")
    if mode is None and status.get("selinux status") == "disabled":
        mode = "disabled"
    config = parse_kv(r.file("/etc/selinux/config") or "")
    labels = {p: i.label for p, i in r.capture.paths.items() if i.label}
    ls = r.capture.commands.get(probe.LS_LABELS)
    if ls and ls.ok:
        root = r.capture.root.rstrip("/")
        for path, label in parse_ls_labels(ls.stdout).items():
            labels.setdefault(path[len(root):] if root and path.startswith(root) else path,
                              label)
    return SelinuxFacts(mode=mode, config_mode=config.get("SELINUX") or None,
                        config_type=config.get("SELINUXTYPE") or None,
                        labels=dict(sorted(labels.items())))


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "getenforce": parse_getenforce,
    "sestatus": parse_sestatus,
    "ls_labels": parse_ls_labels,
}
