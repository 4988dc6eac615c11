"""What chapter 13 shows of the sink-and-window sweep, in one language: the figures its text quotes, tables and
chart dicts.

Streamlit-free; reads the sweep that course.translation.sinks ships (a dict), so the page computes nothing slow.
"""

import pandas as pd

from course.common import charts
from course.common.i18n import t

from .sinks import Window, find

MASK_LENGTH = 10  # positions in the drawn mask: <bos> and 9 characters, about a mean test sentence with its <bos>


def listed(items, lang):
    """Items as one phrase: '1, 2 and 3' / '1、2 和 3' (one item alone as it is)."""
    words = [str(item) for item in items]
    if len(words) == 1:
        return words[0]
    if lang == "zh":
        return "、".join(words[:-1]) + " 和 " + words[-1]
    return ", ".join(words[:-1]) + " and " + words[-1]


def window_of(size, keep_sink):
    """The Window the page's slider and toggle choose."""
    return Window(size, sinks=1 if keep_sink else 0)


def slider_sizes(found):
    """The window sizes the slider offers: every measured size whose next size was measured too (its control)."""
    sizes = sorted({row["size"] for row in found["settings"] if row["size"] is not None})
    return [s for s in sizes if s + 1 in sizes]


def sink_mean(row):
    """The weight on <bos> averaged over the decoder's layers."""
    return sum(row["sink"]) / len(row["sink"])


def loss(found, window):
    """The teacher-forced loss of one measured setting."""
    return find(found, window)["loss"]


def recovered_share(found, size):
    """How much of the loss a window of `size` adds over the unrestricted model keeping <bos> takes back:
    (window - window with the sink) / (window - unrestricted)."""
    plain, kept, full = (loss(found, w) for w in (window_of(size, False), window_of(size, True), Window()))
    return (plain - kept) / (plain - full)


def claims(found, lang):
    """{name: formatted figure} that chapter 13's findings text quotes, all read from the sweep."""
    full, no_bos = find(found, Window()), find(found, Window(evict_first=True))
    sizes = slider_sizes(found)
    first, last = sizes[0], sizes[-1]
    sink_wins = [s for s in sizes if loss(found, window_of(s, True)) < loss(found, Window(s + 1))]
    key_wins = [s for s in sizes if s not in sink_wins]
    worse_bleu = [s for s in sizes if find(found, window_of(s, True))["bleu"] < find(found, window_of(s, False))["bleu"]]
    example = worse_bleu[0] if worse_bleu else first
    recovered = [recovered_share(found, s) for s in sizes]
    kept_first = find(found, window_of(first, True))
    return {
        "sentences": f"{found['sentences']:,}", "mean_length": f"{found['mean_length']:.1f}",
        "max_length": found["max_length"], "all_positions": found["max_length"] + 1,
        "full_loss": f"{full['loss']:.3f}", "full_ppl": f"{full['perplexity']:.2f}", "full_bleu": f"{full['bleu']:.1f}",
        "full_sink": listed([f"{x:.2f}" for x in full["sink"]], lang),
        "no_bos_loss": f"{no_bos['loss']:.3f}", "no_bos_ppl": f"{no_bos['perplexity']:.2f}",
        "no_bos_bleu": f"{no_bos['bleu']:.1f}",
        "first": first, "last": last,
        "first_loss": f"{loss(found, window_of(first, False)):.3f}",
        "first_sink_loss": f"{kept_first['loss']:.3f}",
        "last_loss": f"{loss(found, window_of(last, False)):.3f}",
        "last_sink_loss": f"{loss(found, window_of(last, True)):.3f}",
        "key_wins": listed(key_wins, lang) if key_wins else "–", "sink_wins": listed(sink_wins, lang) if sink_wins else "–",
        "worse_bleu": listed(worse_bleu, lang) if worse_bleu else "–", "example": example,
        "example_bleu": f"{find(found, window_of(example, False))['bleu']:.1f}",
        "example_sink_bleu": f"{find(found, window_of(example, True))['bleu']:.1f}",
        "first_sink_mass": listed([f"{x:.2f}" for x in kept_first["sink"]], lang),
        "recovered_lo": f"{100 * min(recovered):.0f}%", "recovered_hi": f"{100 * max(recovered):.0f}%",
    }


def readout(found, size, keep_sink):
    """(the chosen setting's row, the unrestricted model's row) of the sweep."""
    return find(found, window_of(size, keep_sink)), find(found, Window())


def sink_view(found, size, keep_sink, lang):
    """Table: per decoder layer, the weight on <bos> with the chosen window and with none."""
    row, full = readout(found, size, keep_sink)
    return pd.DataFrame({
        t("ch13.table.col_layer", lang): list(range(1, len(row["sink"]) + 1)),
        t("ch13.table.col_chosen", lang): [round(x, 3) for x in row["sink"]],
        t("ch13.table.col_full", lang): [round(x, 3) for x in full["sink"]],
    })


def mask_spec(size, keep_sink, lang, length=MASK_LENGTH):
    """Heatmap dict of the chosen window's mask on `length` target positions: 1 where a row's position sees a
    column's, 0 where it does not (rows: queries, columns: keys; position 0 is <bos>)."""
    visible = window_of(size, keep_sink).mask(0, length).int().tolist()  # (length, length)
    labels = ["<bos>"] + [str(i) for i in range(1, length)]
    return charts.heatmap(visible, labels, labels, t("ch13.mask.title", lang, size=size), show_values=True,
                          value_format=".0f", x_title=t("ch13.mask.x", lang), y_title=t("ch13.mask.y", lang),
                          domain=[0, 1], cell_size=36).to_dict()


def sweep_frame(found, metric, lang):
    """Long table (size, value, series) of `metric` against the window size: without the sink, with it, and the
    unrestricted model as a flat line."""
    sizes = slider_sizes(found)
    full = find(found, Window())[metric]
    rows = []
    for series, keep in (("window", False), ("window_sink", True)):
        rows += [{"size": s, "value": find(found, window_of(s, keep))[metric], "series": t(f"ch13.series.{series}", lang)}
                 for s in sizes]
    rows += [{"size": s, "value": full, "series": t("ch13.series.full", lang)} for s in sizes]
    return pd.DataFrame(rows)


def sweep_spec(found, metric, lang):
    """Line chart dict of `metric` ("loss" or "bleu") against the window size, one line per series."""
    frame = sweep_frame(found, metric, lang)
    return charts.line_chart(frame, "size", "value", "series", title=t(f"ch13.chart.{metric}_title", lang),
                             x_title=t("ch13.chart.x", lang), y_title=t(f"ch13.chart.{metric}_y", lang),
                             color_title=t("ch13.chart.series", lang), points=True).to_dict()
