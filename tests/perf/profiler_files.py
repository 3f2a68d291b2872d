"""Where the real profiler output lies (read in place, never copied: ../shared/fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

# Real vendor output from msprof-analyze's own tests; ../shared/fixtures/profiler/README.md
# names each file's source.
FIXTURES = Path(__file__).resolve().parents[2] / "../shared/fixtures/profiler"
TRACE_VIEW = FIXTURES / "ut__advisor__timeline_advice__trace_view.json"
KERNEL_DETAILS = FIXTURES / "ut__advisor__compute_advice__data__kernel_details.csv"
CLUSTER_STEPS = FIXTURES / "resource__advisor__cluster_analysis_output__cluster_step_trace_time.csv"
CLUSTER_COMM = FIXTURES / "resource__advisor__cluster_analysis_output__cluster_communication.json"

# A user's clone has no ../shared beside it: the tests that read these files skip there, saying
# which folder they need; CI, which has it, runs them.
needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(),
    reason=f"needs the vendor's profiler files in ../shared/fixtures/profiler ({FIXTURES}), "
           "which this clone does not have beside it")
