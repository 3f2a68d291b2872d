"""A rollback's decisions on one host: older driver and firmware as an upgrade, firmware
first; CANN back by `latest` where the older release is still beside the newer one, else an
uninstall of the installed release (from 8.5.0) and an install of the older one."""

from __future__ import annotations

from ascend_env.ansible.variables import RollbackVars, Targets
from ascend_env.install.actions import HostReading, Installed, NpuHolder, decide
from ascend_env.install.going_back import decide_rollback

BACK = Targets(driver="25.3.rc1", firmware="7.8.0.3.225", cann="8.3.RC1",
               packages=["toolkit", "ops"])
UNINSTALL = RollbackVars(uninstall_cann="8.5.0", uninstaller="/repo/toolkit_8.5.0.run",
                         uninstaller_sha256="a" * 64)


def reading(**installed: object) -> HostReading:
    base = {"driver": "25.5.0", "driver_complete": True, "firmware": "7.8.0.5.225",
            "toolkit": "8.5.0", "toolkit_linked": True, "ops": "8.5.0",
            "toolkits": ["8.5.0"]}
    return HostReading(installed=Installed.model_validate({**base, **installed}))


def test_from_8_5_the_installed_release_is_uninstalled_then_the_older_one_installed() -> None:
    actions = decide_rollback(reading(), BACK, UNINSTALL)
    assert actions.errors == []
    assert (actions.driver, actions.firmware, actions.firmware_first) == (
        "upgrade", "upgrade", True)
    assert (actions.cann_uninstall, actions.toolkit, actions.ops) == ("8.5.0", "install",
                                                                     "install")
    assert actions.cann_switch is None
    # An install of the same older spec is refused: that is what a rollback is for.
    refused = decide(reading(), BACK)
    assert any("refusing a downgrade" in error for error in refused.errors)
    assert any("going back needs `--uninstall`" in error for error in refused.errors)


def test_without_the_installed_releases_installer_the_host_is_refused() -> None:
    actions = decide_rollback(reading(), BACK, RollbackVars(uninstall_cann="8.5.1",
                                                            uninstaller="/repo/x.run"))
    assert actions.cann_uninstall is None and actions.toolkit == "none"
    assert "must be uninstalled before 8.3.RC1" in actions.errors[0]
    assert "brought the installer of 8.5.1" in actions.errors[0]


def test_before_8_5_latest_goes_back_to_a_release_still_beside_the_newer_one() -> None:
    older = Targets(cann="8.2.RC1", packages=["toolkit", "ops"])
    side_by_side = reading(toolkit="8.3.RC1", ops="8.3.RC1", toolkits=["8.2.RC1", "8.3.RC1"])
    actions = decide_rollback(side_by_side, older, RollbackVars())
    assert (actions.cann_switch, actions.toolkit, actions.cann_uninstall) == (
        "8.2.RC1", "none", None)
    assert actions.errors == []
    # Not beside it any more: installed beside the newer one, `latest` moves.
    alone = decide_rollback(reading(toolkit="8.3.RC1", ops="8.3.RC1", toolkits=["8.3.RC1"]),
                            older, RollbackVars())
    assert (alone.cann_switch, alone.toolkit) == (None, "install")


def test_a_host_already_on_the_state_changes_nothing() -> None:
    there = reading(driver="25.3.rc1", firmware="7.8.0.3.225", toolkit="8.3.RC1",
                    ops="8.3.RC1", toolkits=["8.3.RC1"])
    actions = decide_rollback(there, BACK, UNINSTALL)
    assert (actions.driver, actions.firmware, actions.toolkit, actions.ops,
            actions.cann_uninstall, actions.cann_switch) == (
        "none", "none", "none", "none", None, None)


def test_npu_smis_processes_travel_with_the_reading() -> None:
    host = HostReading(npu_processes=[NpuHolder(npu=0, pid=436712, name="python3")])
    again = HostReading.model_validate(host.model_dump(by_alias=True))
    assert again.npu_processes[0].pid == 436712
