"""Where a CANN release installs under the install path: the layout changed with 8.5.0.

From CANN 8.5.0 the toolkit lives in cann-<version>/ with a `cann` link to it, before in
ascend-toolkit/<version>/ with `latest`; going back across the change needs an uninstall of
the newer release first (the vendor's 8.5.0 release notes,
https://www.hiascend.com/document/detail/zh/canncommercial/850/releasenote).
Install, doctor and images all read the layout from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_env.core.versions import AscendVersion
from ascend_env.spec.envspec import EnvSpec

NEW_LAYOUT = AscendVersion.parse("8.5.0")


@dataclass(frozen=True)
class CannLayout:
    """Where one CANN release lives inside the image."""

    install_path: str
    version: str
    new: bool  # 8.5.0+: cann-<ver>/ with cann -> cann-<ver>; before: ascend-toolkit/<ver>

    @property
    def home(self) -> str:
        """ASCEND_TOOLKIT_HOME as the official images of this era set it."""
        if self.new:
            return f"{self.install_path}/cann-{self.version}"
        return f"{self.install_path}/ascend-toolkit/latest"

    @property
    def set_env(self) -> str:
        """The documented toolkit environment script of this era (8.5+: the CANN 8.5.0 install
        guide, https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html;
        before: https://hiascend.com/document/detail/zh/CANNCommunityEdition/800alpha001/apiref/envref/envref_07_0002.html)."""
        if self.new:
            return f"{self.install_path}/cann/set_env.sh"
        return f"{self.install_path}/ascend-toolkit/set_env.sh"

    @property
    def nnal_set_env(self) -> str:
        return f"{self.install_path}/nnal/atb/set_env.sh"

    @property
    def driver(self) -> str:
        return f"{self.install_path}/driver"


def cann_layout(spec: EnvSpec) -> CannLayout:
    """The layout the spec's CANN release installs into."""
    version = spec.cann.version
    return CannLayout(install_path=spec.install.path.rstrip("/") or "/", version=version.raw,
                      new=version.release() >= NEW_LAYOUT)


