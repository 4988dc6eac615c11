"""Tables and chart specs in the Arrow form Streamlit sends as it is, so cached page values cost no conversion."""

import pyarrow as pa


def arrow_table(frame, index=None):
    """A DataFrame as a pyarrow Table, its index first as a column named `index` (unless None).

    Pages cache these: Streamlit sends an Arrow table as it is, while it converts a DataFrame
    again on every rerun (milliseconds each).
    """
    if index is not None:
        frame = frame.rename_axis(index).reset_index()
    return pa.Table.from_pandas(frame, preserve_index=False)


def arrow_spec(chart):
    """chart.to_dict() with its datasets as Arrow IPC bytes, the form Streamlit sends unchanged."""
    spec = chart.to_dict()
    for name, records in spec.get("datasets", {}).items():
        table = pa.Table.from_pylist(records)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        spec["datasets"][name] = sink.getvalue().to_pybytes()
    return spec
