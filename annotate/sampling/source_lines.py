"""Where a drawn row sits in its JSON Lines or CSV file: the line an error names. Read only
on the error path of a draw in place (annotate.sampling.sources), one file at a time."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping


def file_lines(path: str, fmt: str, id_column: str, ids: Mapping[int, str]) -> dict[int, int]:
    """{our row number: the file's line} for JSON Lines and CSV rows, found by trace id.
    Only on the error path: a scan of the one file that holds a bad drawn row."""
    wanted = {trace_id: index for index, trace_id in ids.items()}
    found: dict[int, int] = {}
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        if fmt == "csv":
            reader = csv.DictReader(fh)
            for row in reader:
                index = wanted.get(str(row.get(id_column)))
                if index is not None:
                    found.setdefault(index, reader.line_num)
            return found
        for number, line in enumerate(fh, start=1):
            if not any(trace_id in line for trace_id in wanted):
                continue
            try:
                data = json.loads(line)
            except ValueError:
                continue
            index = wanted.get(str(data.get(id_column))) if isinstance(data, dict) else None
            if index is not None:
                found.setdefault(index, number)
    return found
