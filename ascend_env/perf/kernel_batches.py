"""A kernel table read in blocks by Apache Arrow's CSV reader, each block grouped by kernel
signature before the next is read: memory holds one block and the signatures, never the table.

Why Arrow and not the csv module: a million kernels with CANN 8's full header is a 400 MB
file of 46 columns, of which the summary needs eight. The csv module makes a Python string of
every cell of every row (benchmarks/perf_scale.py measured it at most of perf's time and
0.07 of msprof-analyze's); Arrow parses in C++, keeps only the eight columns, and sums in C++.

A row with the wrong number of cells is skipped and counted; a duration that is not a number
fails the file (what a parser does not understand is never a pass); an empty or `N/A`
duration is a row without a duration, counted. Cells are read as bytes, so a file that is
not UTF-8 is still summed (its names decoded with replacement characters).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ascend_env.core.inputs import InputError
from ascend_env.perf.tables import Table, open_regular

# The file is parsed a block at a time (on as many threads as blocks in flight, a few dozen
# blocks at most); a block is also the longest a single row may be.
BLOCK = 1024 * 1024
_NO_TYPE = pa.array([b"", b"N/A", b"NA"], pa.binary())
_KEYS = ("type", "core", "input_shapes", "input_dtypes")
_FIRSTS = ("name", "output_shapes", "output_dtypes")

Group = tuple[tuple[bytes, ...], int, float, float, tuple[bytes | None, ...]]


@dataclass
class Batch:
    """One block's kernels: (signature, count, total us, longest us, first name and outputs)."""

    rows: int
    skipped: int
    groups: list[Group]


def kernel_batches(path: Path, table: Table) -> Iterator[Batch]:
    """TABLE's file (its header already read) block by block; an InputError when a block
    cannot be parsed."""
    column = {f: f"c{i}" for f, i in table.index.items()}
    wanted = [column[f] for f in (*_KEYS, *_FIRSTS, "duration") if f in column]
    types = {c: pa.binary() for c in wanted}
    types[column["duration"]] = pa.float64()
    invalid = [0]

    def skip(_row: Any) -> str:
        invalid[0] += 1
        return "skip"

    handle = open_regular(path, what="kernel table")
    # Arrow reads the file itself (through a Python file object it would buffer blocks ahead
    # as Python bytes): the descriptor checked to be a regular file, reopened through /proc.
    fd_path = Path(f"/proc/self/fd/{handle.fileno()}")
    try:
        source = pa.OSFile(str(fd_path if fd_path.exists() else path))
    except (OSError, pa.ArrowException) as exc:
        handle.close()
        raise InputError(f"cannot read kernel table {path}: {exc}") from exc
    try:
        reader = pcsv.open_csv(
            source,
            read_options=pcsv.ReadOptions(block_size=BLOCK, use_threads=True, skip_rows=1,
                                          column_names=[f"c{i}" for i in range(table.width)]),
            parse_options=pcsv.ParseOptions(newlines_in_values=True, invalid_row_handler=skip),
            convert_options=pcsv.ConvertOptions(
                include_columns=wanted, column_types=types, null_values=["", "N/A", "NA"],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
        for block in reader:
            seen = invalid[0]
            invalid[0] = 0
            yield _group(block, column, seen)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        if "straddl" in str(exc):  # a row longer than a block
            raise InputError(f"kernel table {path}: a row longer than {BLOCK} bytes: not a "
                             "profiler table") from exc
        raise InputError(f"kernel table {path}: not a kernel table ({exc})") from exc
    finally:
        source.close()
        handle.close()


def _group(block: pa.RecordBatch, column: dict[str, str], invalid: int) -> Batch:
    duration = block.column(column["duration"])
    usable = pc.and_(pc.is_finite(duration), pc.greater_equal(duration, 0.0))
    kept = block.filter(usable)
    rows = kept.num_rows
    skipped = block.num_rows - rows + invalid

    def cells(field_name: str) -> pa.Array:
        if field_name in column:
            return kept.column(column[field_name])
        return pa.nulls(rows, pa.binary())

    kind = cells("type") if "type" in column else cells("name")
    if "type" in column and "name" in column:  # Level0 writes no type: such kernels by name
        named = pc.binary_join_element_wise(pa.scalar(b"\0"), cells("name"), pa.scalar(b""))
        kind = pc.if_else(pc.is_in(kind, value_set=_NO_TYPE), named, kind)
    frame = pa.table({"k0": kind, "k1": cells("core"), "k2": cells("input_shapes"),
                      "k3": cells("input_dtypes"), "f0": cells("name"),
                      "f1": cells("output_shapes"), "f2": cells("output_dtypes"),
                      "d": kept.column(column["duration"])})
    summed = frame.group_by(["k0", "k1", "k2", "k3"], use_threads=False).aggregate(
        [("d", "sum"), ("d", "count"), ("d", "max"), ("f0", "first"), ("f1", "first"),
         ("f2", "first")]).to_pydict()
    groups: list[Group] = [
        ((k0 or b"", k1 or b"", k2 or b"", k3 or b""), count, total, longest, (f0, f1, f2))
        for k0, k1, k2, k3, total, count, longest, f0, f1, f2 in zip(
            summed["k0"], summed["k1"], summed["k2"], summed["k3"], summed["d_sum"],
            summed["d_count"], summed["d_max"], summed["f0_first"], summed["f1_first"],
            summed["f2_first"], strict=True)]
    return Batch(block.num_rows + invalid, skipped, groups)
