"""perf: a profiler's output summarised (where a step's time goes), and profiling around a job."""
