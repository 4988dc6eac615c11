"""Chapter 12: the key/value cache and grouped-query attention.

Streamlit-free arithmetic and charts. A decoder that keeps every layer's keys and values for the positions it
has seen holds 2 x layers x kv_heads x d_head x T numbers per sequence (`cache_bytes`); grouped-query
attention (Ainslie et al. 2023) lowers kv_heads below the number of query heads. The timings and BLEU scores
themselves come from the shipped Transformer (course.translation.kv_study, which this package may not import);
here are the memory rows and charts, the published model sizes the chart compares with, and what a timing
shows (`timing_claims`).
"""

import statistics
from dataclasses import dataclass

import altair as alt
import pandas as pd

from course.common import charts

STRATEGIES = ("recompute", "inputs", "kv")  # course.translation.kv_study.STRATEGIES, in the chart's order
TIME_STEPS = 128  # positions decoded in the page's timing
TIME_REPEATS = 3  # runs per strategy; each position's time is the median over them
TAIL = 8  # the last TAIL positions' times are averaged for the ratios the text states (one step is noisy)
CLEAR_RATIO = 1.2  # a strategy counts as slower than another when its tail time is at least this many times
KIB, MIB, GIB = 2**10, 2**20, 2**30


@dataclass(frozen=True)
class ModelSize:
    """What sizes a decoder's key/value cache: per layer kv_heads heads of d_head numbers, bytes_per each."""

    name: str
    layers: int
    heads: int  # query heads
    kv_heads: int  # key/value heads (== heads: multi-head attention)
    d_head: int
    bytes_per: int  # bytes of one cached number (4: float32, 2: float16/bfloat16)
    context: int  # the longest sequence the model was trained for
    window: int | None = None  # a sliding window caps the cache at this many positions (None: no cap)
    source: str | tuple = ""  # where its sizes come from: text, or (first author, year, table of the paper)


# Published sizes, read from each paper's table of model sizes; served in 16-bit floats.
PUBLISHED = (
    ModelSize("GPT-3 175B", 96, 96, 96, 128, 2, 2048, source=("Brown", 2020, "2.1")),
    ModelSize("LLaMA 7B", 32, 32, 32, 128, 2, 2048, source=("Touvron", 2023, "2")),
    ModelSize("LLaMA 65B", 80, 64, 64, 128, 2, 2048, source=("Touvron", 2023, "2")),
    ModelSize("Mistral 7B", 32, 32, 8, 128, 2, 8192, window=4096, source=("Jiang", 2023, "1")),
)


def cache_bytes(layers, kv_heads, d_head, positions, bytes_per=4, batch=1):
    """Bytes of a key/value cache: 2 (keys and values) x layers x kv_heads x d_head x positions x bytes_per x
    batch."""
    return 2 * layers * kv_heads * d_head * positions * bytes_per * batch


def model_bytes(size, positions, batch=1):
    """Bytes of `size`'s self-attention cache after `positions` positions (capped at its window, if any)."""
    kept = positions if size.window is None else min(positions, size.window)
    return cache_bytes(size.layers, size.kv_heads, size.d_head, kept, size.bytes_per, batch)


def shipped_size(config, name, bytes_per=4, kv_heads=None, source=""):
    """The ModelSize of a Transformer config (num_layers, num_heads, num_hiddens, max_len): its decoder's
    self-attention cache in float32, with kv_heads key/value heads (None: every head)."""
    heads = int(config["num_heads"])
    return ModelSize(name, int(config["num_layers"]), heads, heads if kv_heads is None else int(kv_heads),
                     int(config["num_hiddens"]) // heads, bytes_per, int(config["max_len"]), source=source)


def positions_grid(context, start=16):
    """start, 2 start, 4 start, ... up to context (context itself last)."""
    grid, t = [], start
    while t < context:
        grid.append(t)
        t *= 2
    return grid + [context]


def memory_rows(sizes):
    """Long rows (model, positions, mib) of each size's cache for one sequence, up to its own context."""
    return [(size.name, t, model_bytes(size, t) / MIB) for size in sizes for t in positions_grid(size.context)]


def memory_spec(rows, texts):
    """Log-log line chart dict of cache MiB against positions, one line per model.

    rows: tuple of (model, positions, mib); texts: title, x, y, model.
    """
    frame = pd.DataFrame(rows, columns=["model", "positions", "mib"])
    chart = charts.line_chart(frame, "positions", "mib", color="model", title=texts["title"], x_title=texts["x"],
                              y_title=texts["y"], color_title=texts["model"], log_y=True, points=True, height=340)
    chart.encoding.x.scale = alt.Scale(type="log", base=2)  # positions double from point to point
    return chart.configure_legend(orient="top", direction="horizontal", title=None).to_dict()


def timing_spec(rows, texts):
    """Line chart dict of milliseconds per step against the position T, one line per strategy.

    rows: tuple of (strategy, T, ms); texts: title, x, y, strategy and the display name of each strategy.
    """
    frame = pd.DataFrame(rows, columns=["strategy", "T", "ms"])
    frame["strategy"] = frame["strategy"].map(lambda s: texts[s])
    chart = charts.line_chart(frame, "T", "ms", color="strategy", title=texts["title"], x_title=texts["x"],
                              y_title=texts["y"], color_title=texts["strategy"], height=320)
    return chart.configure_legend(orient="top", direction="horizontal", title=None).to_dict()


def tail_ms(seconds, tail=TAIL):
    """Mean milliseconds of the last `tail` steps of a list of per-step seconds."""
    return 1000 * statistics.fmean(seconds[-tail:])


def timing_claims(times, tail=TAIL):
    """What a timing ({strategy: [seconds per step]}) shows, for the text: the last position T, each strategy's
    mean ms over the last `tail` steps and over the first `tail`, the ratios recompute / kv and inputs / kv at
    the end, and the verdict: "ordered" when at the end recomputing is at least CLEAR_RATIO times re-projecting,
    which is at least CLEAR_RATIO times the cached step, and the cached step grew by a smaller factor from the
    first steps than recomputing did; "mixed" otherwise (a busy machine can blur the order)."""
    end = {s: tail_ms(times[s], tail) for s in STRATEGIES}
    start = {s: 1000 * statistics.fmean(times[s][:tail]) for s in STRATEGIES}
    growth = {s: end[s] / start[s] for s in STRATEGIES}
    ordered = (end["recompute"] >= CLEAR_RATIO * end["inputs"] and end["inputs"] >= CLEAR_RATIO * end["kv"]
               and growth["kv"] < growth["recompute"])
    return {"T": len(times["kv"]), "tail": tail, **{f"{s}_ms": end[s] for s in STRATEGIES},
            **{f"{s}_first_ms": start[s] for s in STRATEGIES},
            "recompute_ratio": end["recompute"] / end["kv"], "inputs_ratio": end["inputs"] / end["kv"],
            "verdict": "ordered" if ordered else "mixed"}


def timing_rows(times):
    """Long rows (strategy, T, ms) of a timing, T counted from 1."""
    return tuple((s, t + 1, 1000 * sec) for s in STRATEGIES for t, sec in enumerate(times[s]))


def readable_bytes(n):
    """Bytes as 'x KiB', 'x MiB' or 'x GiB' (3 significant digits), or 'n B' below a KiB."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def memory_claims(sizes):
    """One dict per ModelSize for the text: its sizes and source, the cache per position and at its context
    length (capped at its window), both as readable text."""
    return [{"name": size.name, "source": size.source, "layers": size.layers, "heads": size.heads,
             "kv_heads": size.kv_heads, "d_head": size.d_head, "bytes_per": size.bytes_per, "context": size.context,
             "window": size.window, "per": readable_bytes(model_bytes(size, 1)),
             "full": readable_bytes(model_bytes(size, size.context))} for size in sizes]


def gqa_figures(size, results, kv_heads):
    """The figures the page states for kv_heads key/value heads: the group size, the self-attention cache per
    target position with them and with every head (readable), the share kept (%), the shipped BLEU of each scope
    ("self": decoder self-attention shared; "both": cross-attention too) and with every head."""
    heads = int(results["num_heads"])
    bleu = results["bleu"]
    return {"kv_heads": int(kv_heads), "heads": heads, "group": heads // int(kv_heads),
            "cache": readable_bytes(cache_bytes(size.layers, kv_heads, size.d_head, 1, size.bytes_per)),
            "full_cache": readable_bytes(cache_bytes(size.layers, heads, size.d_head, 1, size.bytes_per)),
            "kept": f"{100 * int(kv_heads) / heads:.0f}",
            "bleu_self": float(bleu["self"][str(kv_heads)]), "bleu_both": float(bleu["both"][str(kv_heads)]),
            "bleu_full": float(bleu["self"][str(heads)])}


def gqa_table(size, results):
    """Rows (key/value heads, query heads per group, cache per position, BLEU self, BLEU both) for every head
    count of the results, the fewest first."""
    rows = []
    for kv_heads in sorted(int(g) for g in results["bleu"]["self"]):
        f = gqa_figures(size, results, kv_heads)
        rows.append((kv_heads, f["group"], f["cache"], f"{f['bleu_self']:.1f}", f"{f['bleu_both']:.1f}"))
    return rows
