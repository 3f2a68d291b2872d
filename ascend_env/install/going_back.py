"""What a rollback does on one host: install's own decisions (install/actions.py) for going
back to a recorded state, where the vendor's rules for going back differ from installing.

- Driver and firmware: the older pair goes in with `--upgrade`, firmware first, as any upgrade
  of a host that has both (rollback is the same procedure with the old packages).
- CANN before 8.5.0: releases live side by side under `ascend-toolkit/latest`; where the older
  one is still installed, `latest` goes back to it, else it is installed beside the newer one.
- CANN from 8.5.0 on: going back is an uninstall of the installed release, then an install of
  the older one, and its operator package with it (the CANN 8.5.0 install guide,
  https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0030.html).
"""

from __future__ import annotations

from ascend_env.ansible.variables import RollbackVars, Targets
from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.install.actions import Actions, HostReading, decide
from ascend_env.spec.cann_layout import NEW_LAYOUT


def _version(value: str | None) -> AscendVersion | None:
    return try_parse(value) if value else None


def decide_rollback(host: HostReading, target: Targets, rollback: RollbackVars) -> Actions:
    """Every component's action for taking this host back to `target`."""
    # Older driver and firmware are allowed (force); CANN is decided below.
    actions = decide(host, target.model_copy(update={"cann": None}), force=True)
    cann = _version(target.cann)
    if cann is None:
        return actions
    installed = host.installed
    now = _version(installed.toolkit) if installed.toolkit_linked is not False else None
    wanted = set(target.packages)
    if "toolkit" in wanted:
        if now is None:
            actions.toolkit = "install"
        elif now != cann:
            _back(host, now, cann, rollback, actions)
    elif now != cann and wanted & {"ops", "nnal"}:
        actions.errors.append(f"the operator/NNAL packages of CANN {cann.raw} need the "
                              f"toolkit {cann.raw}; installed toolkit: "
                              f"{now.raw if now else 'none'}")
    reinstalled = actions.toolkit != "none" or actions.cann_switch is not None
    if "ops" in wanted and (reinstalled or _version(installed.ops) != cann):
        actions.ops = "install"
    if "nnal" in wanted and (reinstalled or _version(installed.nnal) != cann):
        actions.nnal = "install"
    return actions


def _back(host: HostReading, now: AscendVersion, cann: AscendVersion, rollback: RollbackVars,
          actions: Actions) -> None:
    if max(now, cann).release() < NEW_LAYOUT:
        side_by_side = {v for v in map(_version, host.installed.toolkits) if v is not None}
        if cann in side_by_side:
            actions.cann_switch = cann.raw
        else:
            actions.toolkit = "install"  # beside the newer one; `latest` moves to it
        return
    given = _version(rollback.uninstall_cann)
    if given != now or rollback.uninstaller is None:
        actions.errors.append(
            f"CANN {now.raw} is installed and must be uninstalled before {cann.raw} goes back "
            f"in, but this rollback brought the installer of "
            f"{given.raw if given else 'no release'}; roll this host back on its own "
            "(ascend-env rollback --limit HOST)")
        return
    actions.cann_uninstall = now.raw
    actions.toolkit = "install"
