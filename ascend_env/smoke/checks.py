"""One judged fact of a smoke verdict (shared by the verdict and the parity judgement)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

CheckStatus = Literal["pass", "warn", "fail", "skip"]


class Check(BaseModel):
    """One judged fact."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: CheckStatus
    message: str
    device: str | None = None
