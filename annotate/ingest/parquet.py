"""The Parquet reader: row groups streamed in batches, nested lists and structs as Python
objects, binary values taken as the text they hold or refused on their row.

Validation of the fields is not done here: see annotate.traces.parse_record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from annotate.errors import InputError
from annotate.traces import Record, RowError
from annotate.traces.limits import text_of_bytes

ROWS_KEPT = "The rows before it were kept"  # said where a reader stops


def read_parquet(fh: IO[bytes]) -> Iterator[Record | RowError]:
    """Parquet, streamed in row batches; nested lists and structs arrive as Python objects."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(fh)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(
            f"the file is not a readable Parquet file ({exc}); it may be cut short: export it again"
        ) from None
    binary = binary_columns(parquet.schema_arrow)
    columns = frozenset(parquet.schema_arrow.names)
    number = 0
    try:  # row group by row group, so damage in one keeps every row before it
        for group in range(parquet.num_row_groups):
            for batch in parquet.iter_batches(batch_size=2048, row_groups=[group]):
                for row in _batch_rows(batch):
                    number += 1
                    yield parquet_record(row, number, binary, columns)
    except (pa.ArrowException, OSError) as exc:
        problem = " ".join(str(exc).split())[:200]
        message = f"the Parquet file cannot be read past row {number} ({problem}). {ROWS_KEPT}: "
        yield RowError(number + 1, "", message + "export the file again", unit="row")


def binary_columns(schema: Any) -> frozenset[str]:
    """The columns whose type holds binary values anywhere (a list of binary, a struct field)."""
    return frozenset(field.name for field in schema if _holds_binary(field.type))


def _holds_binary(kind: Any) -> bool:
    import pyarrow as pa

    types = pa.types
    binary_view = getattr(types, "is_binary_view", lambda _: False)
    if types.is_binary(kind) or types.is_large_binary(kind) or types.is_fixed_size_binary(kind):
        return True
    if binary_view(kind):
        return True
    if types.is_struct(kind):
        return any(_holds_binary(kind.field(i).type) for i in range(kind.num_fields))
    if types.is_map(kind):
        return _holds_binary(kind.key_type) or _holds_binary(kind.item_type)
    if types.is_dictionary(kind):
        return _holds_binary(kind.value_type)
    value_type = getattr(kind, "value_type", None)  # list, large list, fixed-size list
    return value_type is not None and _holds_binary(value_type)


def _batch_rows(batch: Any) -> list[dict[str, Any] | RowError]:
    """Rows as dicts; a row holding a value Python cannot represent becomes its error."""
    try:
        return list(batch.to_pylist())
    except (ValueError, OverflowError):
        return [_one_row(batch, index) for index in range(batch.num_rows)]


def _one_row(batch: Any, index: int) -> dict[str, Any] | RowError:
    row: dict[str, Any] = {}
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        try:
            row[name] = column.slice(index, 1).to_pylist()[0]
        except (ValueError, OverflowError) as exc:
            message = (
                f"holds a value Python cannot represent ({exc}); dates must be in years 1-9999"
            )
            return RowError(0, name, message, unit="row")
    return row


class _Binary(Exception):
    def __init__(self, path: str, message: str) -> None:
        self.path, self.message = path, message


def parquet_record(
    row: dict[str, Any] | RowError,
    number: int,
    binary: frozenset[str] | None = None,
    columns: frozenset[str] | None = None,
) -> Record | RowError:
    """One row without its null fields (`columns`, the file's, say which it had; None: the
    row's own keys). Bytes in the `binary` columns (in every column when None: rows read by
    DuckDB) become the text they hold, or the row's error naming the column."""
    if isinstance(row, RowError):
        return RowError(number, row.field, row.message, unit="row")
    fields: dict[str, Any] = {}
    for key, value in row.items():
        if value is None:
            continue
        if binary is None or key in binary:
            try:
                value = _as_text(value, str(key))
            except _Binary as exc:
                return RowError(number, exc.path, exc.message, unit="row")
        fields[key] = value
    return Record(
        number, fields, unit="row", columns=frozenset(row) if columns is None else columns
    )


def _as_text(value: Any, path: str) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        try:
            return text_of_bytes(bytes(value))
        except ValueError as exc:
            raise _Binary(path, str(exc)) from None
    if isinstance(value, dict):
        return {key: _as_text(item, f"{path}.{key}") for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [_as_text(item, f"{path}[{index}]") for index, item in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    return value
