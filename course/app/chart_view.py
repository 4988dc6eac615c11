"""show_chart: the one way a chart reaches Streamlit, as a Vega-Lite dict (what the lessons' builders return).

Every chart gets its text alternative here (course.common.chart_text): a one-sentence summary under it, in
the learner's language, and its numbers as a table in an expander that the keyboard reaches (Tab, then Enter).
The chart's accessible name is its title and where its summary is, words that stay the same while a slider
changes its numbers; with its datasets named by their place in the spec, such a chart's spec stays the same
too, and the browser updates its data in place instead of drawing it anew (chapter 2's 50 x 50 weights took
about 0.2 s a move to draw anew)."""

import hashlib
import pickle
import re
from dataclasses import dataclass

import pyarrow as pa
import streamlit as st
from streamlit import dataframe_util

from course.app.ui import current_lang
from course.common import chart_text
from course.common.i18n import t

MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]<>()#+!|~$])")
INLINE_DATA = "inline-values"  # the dataset name a spec's top-level data.values are sent under
BIG_TABLE = 400  # cells: above this the table is a scrolling grid (st.dataframe), not one long HTML table


def plain(text):
    """`text` escaped so that st.markdown shows it as it is (titles hold _ and $, as in ∂α_i/∂z_j)."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", text)


def _arrow_fingerprint(table):
    """A digest of an Arrow table's buffers (for the cache key)."""
    digest = hashlib.blake2b(table.schema.to_string().encode(), digest_size=16)
    for column in table.columns:
        for chunk in column.chunks:
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(buffer)
    return digest.hexdigest()


def spec_digest(spec):
    """A digest of a Vega-Lite dict (its pickle): the cache key of its prepared form. Streamlit's own argument
    hashing walks the spec's inline data value by value, and a sorted JSON dump cost 0.6 ms a heatmap; a pickle costs
    a seventh of that. Two equal dicts built in another key order get two digests: a second entry, never a wrong one."""
    return hashlib.blake2b(pickle.dumps(spec, protocol=5), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Prepared:
    """A chart ready to send, built once per spec and language: nothing of it is computed again on a rerun."""

    spec: dict  # the Vega-Lite dict as sent: its accessible name set, datasets renamed, inline tables as Arrow
    title: str  # the chart's title, for its table's expander
    sentence: str | None  # the summary under it (None: the chart has no text alternative)
    numbers: object  # its numbers, shown in the expander: the DataFrame of chart_text.table as an Arrow table
    cells: int  # how many numbers (rows x columns)
    hide_index: bool  # the table's row labels are 0, 1, ... (a RangeIndex), which st.table leaves out


def _as_arrow(rows):
    """Inline Vega-Lite rows (a list of dicts) as Arrow IPC bytes, the form Streamlit sends a chart's data in."""
    return dataframe_util.convert_anything_to_arrow_bytes(rows)  # what Streamlit itself does with them


def _renamed(part, names):
    """`part` of a spec (a dict, list or value) with every `data: {"name": old}` reference renamed by `names`."""
    if isinstance(part, list):
        return [_renamed(item, names) for item in part]
    if not isinstance(part, dict):
        return part
    out = {}
    for key, value in part.items():
        if key == "data" and isinstance(value, dict) and value.get("name") in names:
            out[key] = {**value, "name": names[value["name"]]}
        elif key != "datasets":
            out[key] = _renamed(value, names)
        else:
            out[key] = value
    return out


def wire_spec(spec, name):
    """`spec` as it goes to the browser: `name` its accessible description, its datasets named by their place
    (Altair names a dataset by a hash of its rows, so the spec changed with every change of its numbers), its
    inline tables (top-level data.values and the named datasets) as Arrow bytes in `datasets`, so that Streamlit
    does not convert them on every rerun. The same chart: Vega-Lite reads a named dataset as it reads inline values.
    Two specs that differ only in their numbers give two wire specs that differ only in `datasets`' contents."""
    names = {old: f"data-{i}" for i, old in enumerate(spec.get("datasets", {}))}
    wire = {**_renamed(spec, names), "description": name}
    datasets = {names[old]: rows if isinstance(rows, bytes) else _as_arrow(rows)
                for old, rows in spec.get("datasets", {}).items() if isinstance(rows, (list, bytes))}
    data = spec.get("data")
    if isinstance(data, dict) and isinstance(data.get("values"), list) and set(data) == {"values"}:
        datasets[INLINE_DATA] = _as_arrow(data["values"])
        wire["data"] = {"name": INLINE_DATA}
    kept = {names[old]: rows for old, rows in spec.get("datasets", {}).items() if names[old] not in datasets}
    if datasets or kept:
        wire["datasets"] = {**kept, **datasets}
    return wire


@st.cache_resource(max_entries=1024, show_spinner=False, hash_funcs={pa.Table: _arrow_fingerprint})
def _prepared(digest, _spec, data, lang):
    """The Prepared chart whose spec_digest is `digest`, in `lang`; kept in the process (read only, never changed),
    because pages rerun on every widget move (`_spec` is not hashed: its digest stands for it). 1024 entries: every
    page's charts at two settings of one widget, in both languages, are about 750; with 256 the pages in turn
    evicted each other's and every chart was prepared again on every rerun (bench/app.py, ch07 65 -> 41 ms)."""
    sentence = chart_text.summary(_spec, lang, data)
    numbers = chart_text.table(_spec, lang, data)
    title = chart_text.title(_spec, lang)
    spec = _spec if sentence is None else wire_spec(_spec, t("charts.name", lang, title=title))
    cells = 0 if numbers is None else numbers.size
    hide_index = numbers is not None and dataframe_util.has_range_index(numbers)  # st.table would convert to find out
    # Converted once, as Streamlit converts a DataFrame on every call (index and column names travel in its pandas
    # metadata, so the browser shows the same table).
    numbers = None if numbers is None else pa.Table.from_pandas(numbers)
    return Prepared(spec, title, sentence, numbers, cells, hide_index)


def show_chart(where, spec, *, data=None, width=None, key=None, describe=True):
    """Draw the Vega-Lite `spec` in `where` (st, a column, a slot); `data` is a table passed beside the spec.
    With `describe` (the default), the summary sentence and the table follow it; a caller that shows its own
    sentence and tables (the Practice page's weight diff) passes describe=False."""
    if not isinstance(spec, dict):
        raise TypeError(f"show_chart takes a Vega-Lite dict (chart.to_dict()), not {type(spec).__name__}")
    if not describe:
        return where.vega_lite_chart(data, spec, width=width, key=key)
    lang = current_lang()
    prepared = _prepared(spec_digest(spec), spec, data, lang)
    if prepared.sentence is None:
        return where.vega_lite_chart(data, spec, width=width, key=key)
    box = where.container()  # one element in `where`: a slot (st.empty) keeps chart, sentence and table together
    chart = box.vega_lite_chart(data, prepared.spec, width=width, key=key)
    box.caption(plain(prepared.sentence))
    with box.expander(t("charts.table", lang, title=plain(prepared.title)), key=f"{key}_table" if key else None):
        if prepared.cells > BIG_TABLE:
            st.dataframe(prepared.numbers, key=f"{key}_grid" if key else None)
        else:
            st.table(prepared.numbers, hide_index=prepared.hide_index)
    return chart
