"""The doctor: collect captures, run the check suite, report, fix."""
