"""Refresh ascend_env/data/wheel_index.json: which Python and platform every framework build
ships wheels for, with their sha256 and download URLs.

Two sources, both the vendors' own:

* the package index's JSON API (`https://pypi.org/pypi/<name>/json`, its `releases` file
  lists: file name, sha256, size), for torch-npu and mindspore;
* the vendor manifests the shipped catalogue holds (ascend-deployer 26.0.0's download lists,
  ascend_env/data/catalogue.json): the same wheels on the vendor's mirror, and the torch
  build each torch_npu release is shipped beside (`torch-2.9.0+cpu-...`).

A file both sources name should carry the same sha256 in both. Where they differ (a few old
builds were rebuilt on one side: torch_npu 2.1.0.post13's aarch64 wheels, for one), both
digests are kept under `disagreements` and each is listed with its source, so that a wheel
from either place can be verified and the report can say which one it is.

    python scripts/refresh_wheel_index.py                 # live index, writes the data file
    python scripts/refresh_wheel_index.py --pypi torch-npu=tests/data/wheel_index/torch-npu.json

Only the releases the compatibility matrix names are kept (the data answers "does this build
have a wheel for that Python", for builds ascend-env can pair).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from packaging.utils import InvalidWheelFilename, canonicalize_version, parse_wheel_filename

from ascend_env.spec.catalogue import load_catalogue
from ascend_env.spec.matrix import load_matrix

SCHEMA = "ascend-env/wheel-index/v1"
INDEX = "https://pypi.org/pypi/{name}/json"
FILES = "https://files.pythonhosted.org/packages/"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "ascend_env" / "data" / "wheel_index.json"
# distribution as the index spells it -> as the catalogue and the spec spell it
DISTRIBUTIONS = {"torch-npu": "torch_npu", "mindspore": "mindspore"}


class RefreshError(Exception):
    """The sources disagree or cannot be read."""


def index_document(name: str, recorded: Path | None) -> dict[str, Any]:
    if recorded is not None:
        document: dict[str, Any] = json.loads(recorded.read_text(encoding="utf-8"))
        return document
    with urllib.request.urlopen(INDEX.format(name=name), timeout=60) as response:
        loaded: dict[str, Any] = json.load(response)
        return loaded


def canonical_url(name: str, url: str) -> str:
    """The file's address on files.pythonhosted.org (a proxy in front of the index may hand out
    relative `../../packages/packages/xx/yy/...` links: the path after `packages/` is the same)."""
    absolute = urllib.parse.urljoin(INDEX.format(name=name), url)
    path = urllib.parse.urlsplit(absolute).path
    tail = path.rsplit("/packages/", 1)[-1]
    return FILES + tail.lstrip("/")


def wanted_versions() -> dict[str, set[str]]:
    matrix = load_matrix()
    return {"torch_npu": {canonicalize_version(r.torch_npu) for r in matrix.torch},
            "mindspore": {canonicalize_version(r.mindspore) for r in matrix.mindspore}}


def _file_entry(filename: str, sha256: str, size: int | None, url: str, source: str
                ) -> dict[str, Any] | None:
    try:
        _name, _version, _build, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None
    platforms = sorted({tag.platform for tag in tags})
    interpreters = sorted({tag.interpreter for tag in tags})
    python = next((f"3.{i[3:]}" for i in interpreters if i.startswith("cp3")), None)
    arch = next((a for a in ("x86_64", "aarch64") if any(p.endswith(a) for p in platforms)),
                "any")
    return {"filename": filename, "python": python, "interpreters": interpreters,
            "abis": sorted({tag.abi for tag in tags}), "platforms": platforms, "arch": arch,
            "sha256": sha256, "size": size, "urls": [url], "sources": [source]}


def _merge(files: dict[str, dict[str, Any]], entry: dict[str, Any],
           disagreements: list[dict[str, str]]) -> None:
    known = files.get(entry["filename"])
    if known is None:
        files[entry["filename"]] = entry
        return
    if known["sha256"] != entry["sha256"]:
        disagreements.append({"filename": entry["filename"],
                              known["sources"][0]: known["sha256"],
                              entry["sources"][0]: entry["sha256"]})
        known.setdefault("other_sha256", {})[entry["sources"][0]] = entry["sha256"]
    known["urls"] += [u for u in entry["urls"] if u not in known["urls"]]
    known["sources"] += [s for s in entry["sources"] if s not in known["sources"]]
    known["size"] = known["size"] or entry["size"]


def build_index(recorded: dict[str, Path], today: str) -> dict[str, Any]:
    wanted = wanted_versions()
    builds: dict[str, dict[str, dict[str, Any]]] = {"torch_npu": {}, "mindspore": {},
                                                    "torch": {}}
    sources: dict[str, str] = {}
    disagreements: list[dict[str, str]] = []
    for index_name, distribution in DISTRIBUTIONS.items():
        document = index_document(index_name, recorded.get(index_name))
        sources[distribution] = str(recorded.get(index_name) or INDEX.format(name=index_name))
        for version, uploads in document.get("releases", {}).items():
            key = canonicalize_version(version)
            if key not in wanted[distribution]:
                continue
            files: dict[str, dict[str, Any]] = {}
            for upload in uploads:
                if upload.get("packagetype") != "bdist_wheel" or upload.get("yanked"):
                    continue
                entry = _file_entry(upload["filename"], upload["digests"]["sha256"],
                                    upload.get("size"),
                                    canonical_url(index_name, upload["url"]), "pypi")
                if entry is not None:
                    _merge(files, entry, disagreements)
            if files:
                builds[distribution].setdefault(version, {"files": {}})["files"].update(files)
    catalogue = load_catalogue()
    sources["vendor"] = f"ascend_env/data/catalogue.json ({catalogue.source})"
    for vendor in catalogue.files.values():
        if vendor.kind != "wheel" or vendor.distribution not in builds or not vendor.sha256:
            continue
        version = vendor.file_version or vendor.version
        made = _file_entry(vendor.filename, vendor.sha256, None, vendor.url or "", "vendor")
        if made is None:
            continue
        build = builds[vendor.distribution].setdefault(version, {"files": {}})
        _merge(build["files"], made, disagreements)
        if vendor.distribution == "torch_npu":
            # The torch build the vendor ships beside this torch_npu (its Requires-Dist pin).
            torch = next((t for t in catalogue.find(component=vendor.component,
                                                    version=vendor.version, distribution="torch")
                          if t.file_version), None)
            if torch is not None:
                build["torch"] = torch.file_version
    for per_version in builds.values():
        for done in per_version.values():
            done["files"] = sorted(done["files"].values(), key=lambda f: f["filename"])
    return {"schema": SCHEMA, "refreshed": today, "sources": sources,
            "disagreements": sorted(disagreements, key=lambda d: d["filename"]),
            "builds": {name: dict(sorted(versions.items()))
                       for name, versions in builds.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pypi", action="append", default=[], metavar="NAME=FILE",
                        help="read the index's JSON for NAME from FILE (recorded) instead")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    recorded = {}
    for item in args.pypi:
        name, _, path = item.partition("=")
        if not path:
            parser.error(f"--pypi {item!r}: expected NAME=FILE")
        recorded[name] = Path(path)
    try:
        index = build_index(recorded, args.date)
    except (RefreshError, OSError, ValueError, KeyError) as exc:
        print(f"refresh_wheel_index: {exc}", file=sys.stderr)
        return 1
    args.out.write_text(json.dumps(index, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    counts = {name: len(versions) for name, versions in index["builds"].items()}
    print(f"wrote {args.out}: {counts}")
    for disagreement in index["disagreements"]:
        print(f"warning: the sources disagree on {disagreement}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
