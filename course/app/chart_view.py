"""show_chart: the one way a chart reaches Streamlit, as a Vega-Lite dict (what the lessons' builders return).

Every chart gets its text alternative here (course.common.chart_text): a one-sentence summary under it, in
the learner's language, which is also the chart's accessible description, and its numbers as a table in an
expander that the keyboard reaches (Tab, then Enter)."""

import hashlib
import json
import re

import pyarrow as pa
import streamlit as st

from course.app.ui import current_lang
from course.common import chart_text
from course.common.i18n import t

MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]<>()#+!|~$])")
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
    """A digest of a Vega-Lite dict (its JSON, keys sorted): the cache key of its text alternative. Streamlit's own
    argument hashing walks the spec's inline data value by value, which cost most of a chart page's rerun."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@st.cache_data(max_entries=256, show_spinner=False, hash_funcs={pa.Table: _arrow_fingerprint})
def _alternative(digest, _spec, data, lang):
    """(title, summary sentence, table) of the chart whose spec_digest is `digest`, cached: pages rerun on every
    widget move (`_spec` is not hashed: its digest stands for it)."""
    return chart_text.title(_spec, lang), chart_text.summary(_spec, lang, data), chart_text.table(_spec, lang, data)


def show_chart(where, spec, *, data=None, width=None, key=None, describe=True):
    """Draw the Vega-Lite `spec` in `where` (st, a column, a slot); `data` is a table passed beside the spec.
    With `describe` (the default), the summary sentence and the table follow it; a caller that shows its own
    sentence and tables (the Practice page's weight diff) passes describe=False."""
    if not isinstance(spec, dict):
        raise TypeError(f"show_chart takes a Vega-Lite dict (chart.to_dict()), not {type(spec).__name__}")
    if not describe:
        return where.vega_lite_chart(data, spec, width=width, key=key)
    lang = current_lang()
    title, sentence, numbers = _alternative(spec_digest(spec), spec, data, lang)
    if sentence is None:
        return where.vega_lite_chart(data, spec, width=width, key=key)
    box = where.container()  # one element in `where`: a slot (st.empty) keeps chart, sentence and table together
    chart = box.vega_lite_chart(data, {**spec, "description": sentence}, width=width, key=key)
    box.caption(plain(sentence))
    with box.expander(t("charts.table", lang, title=plain(title)), key=f"{key}_table" if key else None):
        if numbers.size > BIG_TABLE:
            st.dataframe(numbers, key=f"{key}_grid" if key else None)
        else:
            st.table(numbers)
    return chart
