"""Where the real profiler output lies (read in place, never copied: ../shared/fixtures)."""

from __future__ import annotations

from pathlib import Path

# Real vendor output from msprof-analyze's own tests; ../shared/fixtures/profiler/README.md
# names each file's source.
FIXTURES = Path(__file__).resolve().parents[2] / "../shared/fixtures/profiler"
TRACE_VIEW = FIXTURES / "ut__advisor__timeline_advice__trace_view.json"
KERNEL_DETAILS = FIXTURES / "ut__advisor__compute_advice__data__kernel_details.csv"
CLUSTER_STEPS = FIXTURES / "resource__advisor__cluster_analysis_output__cluster_step_trace_time.csv"
CLUSTER_COMM = FIXTURES / "resource__advisor__cluster_analysis_output__cluster_communication.json"
