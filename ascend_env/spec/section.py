"""The base of every spec section."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    # Unknown keys are errors: a typo must never silently fall back to a default.
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
