"""Terminal and JSON renderings of profiles, specs, validations, the matrix and plans."""

from __future__ import annotations

from typing import TYPE_CHECKING

import yaml
from rich.markup import escape
from rich.table import Table

from ascend_env.cli.terminal import console, print_json
from ascend_env.core.errors import UsageError
from ascend_env.core.versions import InvalidVersionError, parse
from ascend_env.spec.envspec import load_spec, profile_names
from ascend_env.spec.matrix import load_chips, load_matrix

if TYPE_CHECKING:
    from ascend_env.spec.envspec import EnvSpec
    from ascend_env.spec.plan import Plan
    from ascend_env.spec.validate import ValidationResult


def render_profiles(*, as_json: bool) -> None:
    """The shipped profiles, one line each."""
    specs = [load_spec(profile=name) for name in profile_names()]
    if as_json:
        print_json({"schema": "ascend-env/profiles/v1", "profiles": [
            {"name": s.name, "description": s.description, "chip": s.hardware.chip,
             "arch": s.hardware.arch, "devices": s.hardware.devices,
             "driver": s.driver.version.raw, "cann": s.cann.version.raw,
             "torch_npu": s.frameworks.torch.torch_npu if s.frameworks.torch else None,
             "mindspore": s.frameworks.mindspore.version if s.frameworks.mindspore else None}
            for s in specs]})
        return
    table = Table("profile", "chip", "arch", "devices", "HDK", "CANN", "torch_npu", "MindSpore",
                  box=None)
    for s in specs:
        table.add_row(s.name, s.hardware.chip, s.hardware.arch, str(s.hardware.devices or "-"),
                      s.driver.version.raw, s.cann.version.raw,
                      s.frameworks.torch.torch_npu if s.frameworks.torch else "-",
                      s.frameworks.mindspore.version if s.frameworks.mindspore else "-")
    console.print(table)


def render_spec(spec: EnvSpec, *, as_json: bool, as_yaml: bool) -> None:
    """A complete spec, defaults filled in."""
    document = spec.model_dump(mode="json")
    if as_json:
        print_json({"schema": "ascend-env/spec/v1", "digest": spec.digest(), "spec": document})
    elif as_yaml:
        print(yaml.safe_dump(document, sort_keys=False), end="")
    else:
        console.print(f"[bold]{escape(spec.name)}[/bold]  {escape(spec.description)}")
        chip = load_chips().get(spec.hardware.chip)
        devices = spec.hardware.devices or (chip.devices.default if chip else "?")
        lines = [
            ("hardware", f"{devices} x {chip.family if chip else spec.hardware.chip}, "
                         f"{spec.hardware.arch}"),
            ("os", f"{spec.os.family} {spec.os.version}"),
            ("driver (HDK)", spec.driver.version.raw),
            ("firmware", spec.firmware.version.raw if spec.firmware.version
             else "as shipped with the HDK"),
            ("CANN", f"{spec.cann.version.raw} ({', '.join(spec.cann.packages)})"),
            ("python", f"{spec.python.version} in {spec.python.venv}"),
        ]
        if spec.frameworks.torch:
            lines.append(("torch", f"{spec.frameworks.torch.version} + torch_npu "
                                   f"{spec.frameworks.torch.torch_npu}"))
        if spec.frameworks.mindspore:
            lines.append(("mindspore", spec.frameworks.mindspore.version))
        lines.append(("install", f"{spec.install.path} as {spec.install.user}"))
        for key, value in lines:
            console.print(f"  {key:<14}{escape(str(value))}")
        console.print(f"  {'digest':<14}{spec.digest()[:16]}")


def render_validation(result: ValidationResult, *, as_json: bool) -> None:
    """Every problem of a spec file, errors first."""
    if as_json:
        print_json(result.model_dump(mode="json", by_alias=True))
        return
    errors = [p for p in result.problems if p.severity == "error"]
    warnings = [p for p in result.problems if p.severity == "warning"]
    for problem in errors:
        console.print(f"[red]error[/red]   {escape(problem.render())}")
    for problem in warnings:
        console.print(f"[yellow]warning[/yellow] {escape(problem.render())}")
    if result.valid:
        console.print(f"[green]valid[/green]: {result.file} (spec {result.spec}, "
                      f"{len(warnings)} warning(s))")
    else:
        console.print(f"[red]invalid[/red]: {result.file}: {len(errors)} error(s), "
                      f"{len(warnings)} warning(s)")


def render_matrix(*, cann: str | None, framework: str | None, as_json: bool) -> None:
    """The matrix tables, optionally for one CANN release and one framework."""
    matrix = load_matrix()
    wanted = None
    if cann is not None:
        try:
            wanted = parse(cann)
        except InvalidVersionError as exc:
            raise UsageError(f"--cann: {exc}") from exc
        if matrix.cann_row(wanted) is None:
            raise UsageError(f"--cann {cann}: not a CANN release in the matrix; known: "
                             + ", ".join(row.cann.raw for row in matrix.cann))
    cann_rows = [r for r in matrix.cann if wanted is None or r.cann == wanted.release()]
    torch_rows = matrix.torch_rows(wanted) if framework in (None, "torch") else []
    ms_rows = matrix.mindspore_rows(wanted) if framework in (None, "mindspore") else []
    if as_json:
        print_json({
            "schema": "ascend-env/matrix/v1",
            "cann": [r.model_dump(mode="json") for r in cann_rows] if framework is None else [],
            "hdk_files": [r.model_dump(mode="json") for r in matrix.hdk_files],
            "torch": [r.model_dump(mode="json") for r in torch_rows],
            "mindspore": [r.model_dump(mode="json") for r in ms_rows],
            "conflicts": [c.model_dump(mode="json") for c in matrix.conflicts],
        })
        return
    if framework is None:
        table = Table("CANN", "HDK", "also works with", "sources", title="CANN -> HDK")
        for row in cann_rows:
            # The version its files and npu-smi print, where it is not the release's name.
            files = matrix.hdk().file_version(row.hdk) if row.hdk else ""
            hdk = (row.hdk.raw + ("" if files == row.hdk.lower() else f" (files {files})")
                   if row.hdk else "not confirmed")
            table.add_row(row.cann.raw, hdk,
                          ", ".join(f"{line}.x" for line in row.hdk_compatible),
                          ", ".join(row.sources))
        console.print(table)
    if torch_rows:
        table = Table("CANN", "torch_npu", "torch", "Python", "status", "sources",
                      title="torch_npu")
        for t in torch_rows:
            table.add_row(t.cann.raw, t.torch_npu, t.torch, str(t.python),
                          t.status + (f" (#{t.conflict})" if t.conflict else ""),
                          ", ".join(t.sources))
        console.print(table)
    if ms_rows:
        table = Table("CANN", "MindSpore", "Python", "HDK", "status", "sources",
                      title="MindSpore")
        for m in ms_rows:
            table.add_row(m.cann.raw, m.mindspore, str(m.python) if m.python else "?",
                          m.hdk.raw if m.hdk else "?",
                          m.status + (f" (#{m.conflict})" if m.conflict else ""),
                          ", ".join(m.sources))
        console.print(table)


def render_plan(plan: Plan, *, as_json: bool) -> None:
    """The install plan: steps, files, digests, then warnings."""
    if as_json:
        print_json(plan.model_dump(mode="json", by_alias=True))
        return
    console.print(f"[bold]plan for {plan.spec}[/bold]: {plan.devices} x {plan.chip}, "
                  f"{plan.arch}, into {plan.install_path} (spec digest {plan.digest[:16]})")
    # One block per step rather than a table: file names and digests are long and must be
    # printed whole, also when the output is piped or narrower than the names.
    for item in plan.items:
        console.print(f"{item.step:>3}  {item.component:<10} {item.version:<12} {item.file}")
        if item.archive:
            console.print(f"{'':>27}in {item.archive}")
        console.print(f"{'':>27}sha256 {item.sha256 or '[red]unknown[/red]'}")
    for item in plan.items:
        if item.note:
            console.print(f"  note {item.step}: {escape(item.note)}")
    for problem in plan.warnings:
        console.print(f"[yellow]warning[/yellow] {escape(problem.render())}")
