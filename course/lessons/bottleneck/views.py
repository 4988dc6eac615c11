"""What the Bottleneck page shows, in one language: texts with computed figures, charts, tables.

Pure functions of results dicts (no Streamlit), so the page caches a whole view in
one st.cache_data call keyed on plain values. Every figure in a text is read
from the results it describes.
"""

import altair as alt

from course.common import charts
from course.common.i18n import t
from course.lessons.bottleneck import charts as bottleneck_charts
from course.lessons.bottleneck import task


def copy_task_view(results, lang):
    """The Bottleneck page's synthetic experiment: body text and the two accuracy charts."""
    m, c = results["models"], results["config"]
    names = tuple((n, t(f"demos.bottleneck.synthetic.model_{n}", lang)) for n in task.MODELS)
    return {
        "body": t("demos.bottleneck.synthetic.body", lang, vocab=c["vocab_size"], min_len=c["min_len"],
                  max_len=c["max_len"], params_fixed=m["fixed"]["parameters"],
                  params_attention=m["attention"]["parameters"], h_fixed=m["fixed"]["num_hiddens"],
                  h_attention=m["attention"]["num_hiddens"], steps=c["steps"], batch=c["batch_size"],
                  per_length=c["eval_per_length"]),
        "charts": [bottleneck_charts.accuracy_spec(results, measure, t(f"demos.bottleneck.synthetic.{measure}", lang),
                                                   t("demos.bottleneck.synthetic.x_title", lang), names, chance)
                   for measure, chance in (("token_acc", t("demos.bottleneck.synthetic.chance", lang)),
                                           ("seq_acc", None))],  # guessing a whole sequence: 10^-length
        "seed": c["seed"],
        "seconds": f"{sum(x['train_seconds'] for x in m.values()):.0f}",
    }


def tatoeba_reading_text(table, lang):
    """The reading of the BLEU-by-length table with its figures, or only the pointer when it cannot be read."""
    f = bottleneck_charts.tatoeba_reading(table)
    pointer = t("demos.bottleneck.reading_pointer", lang)
    if f is None:
        return pointer
    drops = t("demos.bottleneck.reading_separator", lang).join(
        f"{t(f'demos.models.{m}', lang)} {d:.0f}%" for m, d in f["drops"].items())
    verdict = "reading_gap_wider" if f["gap_last"] > f["gap_first"] else "reading_gap_not_wider"
    reading = t("demos.bottleneck.reading", lang, first=f["first"], last=f["last"], drops=drops,
                count=f["count_last"], gap_first=f"{f['gap_first']:.1f}", gap_last=f"{f['gap_last']:.1f}")
    return "\n\n".join((reading, t(f"demos.bottleneck.{verdict}", lang), pointer))


def methods_table(frame, lang):
    """An overall/long BLEU table (models x greedy/beam) with its headers in `lang`."""
    names = {m: t(f"demos.bottleneck.methods.{m}", lang) for m in ("greedy", "beam")}
    return frame.rename(index=lambda n: t(f"demos.models.{n}", lang), columns=names).rename_axis(
        index=t("demos.bottleneck.color_title", lang), columns=None)


def tatoeba_view(table, bucket_labels, lang):
    """Tatoeba BLEU by length (model, bucket, bleu, count): BLEU and drop chart dicts, BLEU table, reading."""
    table = bottleneck_charts.bleu_drop(table)
    shown = table.assign(model=table["model"].map(lambda n: t(f"demos.models.{n}", lang)))
    legend = alt.Legend(orient="bottom", columns=1, labelLimit=400)  # long model names, half-width charts
    models = list(dict.fromkeys(shown["model"]))  # report order: each model keeps its colour and row in en and zh
    specs = []
    for field, title, y_title in (("bleu", "chart_title", "y_title"), ("drop_pct", "drop_title", "drop_y_title")):
        chart = charts.bar_chart(shown, "bucket", field, title=t(f"demos.bottleneck.{title}", lang),
                                 x_title=t("demos.bottleneck.x_title", lang),
                                 y_title=t(f"demos.bottleneck.{y_title}", lang), sort=list(bucket_labels), labels=False)
        specs.append(chart.encode(xOffset=alt.XOffset("model:N", sort=models), color=alt.Color(
            "model:N", title=None, legend=legend, scale=alt.Scale(domain=models)))
                     .properties(height=380).to_dict())
    bleu = (shown.pivot(index="model", columns="bucket", values="bleu").reindex(index=models, columns=list(bucket_labels))
            .rename_axis(index=t("demos.bottleneck.color_title", lang), columns=None))
    return specs, bleu, tatoeba_reading_text(table, lang)
