"""What fetch gathered of the OS packages (repository/os_packages.py), as its result reports it."""

from __future__ import annotations

from pydantic import BaseModel, Field


class OsPackages(BaseModel):
    """What fetch gathered of the OS packages for one OS key."""

    key: str
    manager: str
    folder: str = Field(description="inside the repository: os/<key>")
    wanted: list[str] = Field(description="the packages the OS data names, kernels put in")
    missing: list[str] = Field(description="wanted packages no mirror has")
    kernels: list[str] = Field(description="kernels whose devel packages the folder holds")
    files: list[str] = Field(description="the package files, the closure beyond the baseline")
    complete: bool
    message: str = ""
