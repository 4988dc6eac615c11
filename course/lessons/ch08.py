"""Chapter 8 data: the 2014-2017 timeline, the score-function table, the papers and the code map,
and the local-attention experiment (sliding-window and graph masks, solutions.ex08).

Streamlit-free. Facts (years, authors, arXiv ids, formulas) live here; the prose that explains
them lives in the text catalogs under `ch08.`.
"""

from dataclasses import dataclass

import altair as alt
import pandas as pd

import torch

from course.common import charts, exercise_index
from course.common.i18n import t
from course.lessons.ch03 import parameter_counts
from solutions.ex01_softmax import masked_softmax
from solutions.ex08_structured_masks import MaskedDotProductAttention, graph_mask, sliding_window_mask, softmax_with_mask

ARXIV = "https://arxiv.org/abs/{}"


@dataclass(frozen=True)
class Paper:
    key: str  # catalog key under ch08.papers
    authors: str
    year: int  # year of the arXiv version
    title: str
    arxiv: str  # arXiv identifier

    @property
    def url(self):
        """The paper's arXiv abstract page."""
        return ARXIV.format(self.arxiv)


PAPERS = (
    Paper("sutskever", "Sutskever, Vinyals, Le", 2014, "Sequence to Sequence Learning with Neural Networks",
          "1409.3215"),
    Paper("bahdanau", "Bahdanau, Cho, Bengio", 2014,
          "Neural Machine Translation by Jointly Learning to Align and Translate", "1409.0473"),
    Paper("luong", "Luong, Pham, Manning", 2015,
          "Effective Approaches to Attention-based Neural Machine Translation", "1508.04025"),
    Paper("vaswani", "Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez, Kaiser, Polosukhin", 2017,
          "Attention Is All You Need", "1706.03762"),
)
CHO = Paper("cho", "Cho, van Merriënboer, Gulcehre, Bahdanau, Bougares, Schwenk, Bengio", 2014,
            "Learning Phrase Representations using RNN Encoder-Decoder for Statistical Machine Translation",
            "1406.1078")
BY_KEY = {p.key: p for p in PAPERS + (CHO,)}

# (year, milestone key, papers behind it)
TIMELINE = (
    (2014, "fixed", ("sutskever", "cho")),
    (2014, "soft", ("bahdanau",)),
    (2015, "global_local", ("luong",)),
    (2017, "transformer", ("vaswani",)),
)

# Score functions: (key, formula as plain text, parameter formula, paper key)
SCORES = (
    ("additive", "vᵀ tanh(W_q q + W_k k)", "h·(d_q + d_k) + h", "bahdanau"),
    ("dot", "qᵀ k", "0", "luong"),
    ("general", "qᵀ W k", "d_q·d_k", "luong"),
    ("scaled", "qᵀ k / √d", "0", "vaswani"),
)


def cite(key):
    """'Authors (year)' with 'et al.' for more than two authors."""
    paper = BY_KEY[key]
    names = [a.strip() for a in paper.authors.split(",")]
    who = names[0] + " et al." if len(names) > 2 else " & ".join(names)
    return f"{who} ({paper.year})"


def timeline_frame(lang):
    """The timeline as a table: year, milestone, papers, what changed in the information path."""
    return pd.DataFrame({
        t("ch08.col_year", lang): [str(year) for year, _, _ in TIMELINE],
        t("ch08.col_milestone", lang): [t(f"ch08.timeline.{key}.name", lang) for _, key, _ in TIMELINE],
        t("ch08.col_papers", lang): ["; ".join(cite(p) for p in papers) for _, _, papers in TIMELINE],
        t("ch08.col_path", lang): [t(f"ch08.timeline.{key}.path", lang) for _, key, _ in TIMELINE],
    })


def timeline_spec(lang):
    """Vega-Lite dict: milestones as labelled points on a year axis (the page caches it)."""
    frame = pd.DataFrame({
        "year": [year for year, _, _ in TIMELINE],
        "lane": [i % 2 for i in range(len(TIMELINE))],  # alternate rows so labels of one year do not collide
        "label": [t(f"ch08.timeline.{key}.name", lang) for _, key, _ in TIMELINE],
    })
    x = alt.X("year:Q", scale=alt.Scale(domain=[2013.5, 2017.8]),
              axis=alt.Axis(format="d", values=[2014, 2015, 2016, 2017], title=None))
    y = alt.Y("lane:O", axis=None)
    color = alt.Color("label:N", legend=None, scale=alt.Scale(domain=list(frame["label"])))
    points = alt.Chart(frame).mark_circle(size=160).encode(x=x, y=y, color=color)
    labels = alt.Chart(frame).mark_text(align="left", dx=10, fontSize=13).encode(x=x, y=y, text="label:N")
    return (points + labels).properties(height=110, width="container").to_dict()


def score_table(lang, d, num_hiddens):
    """The four score functions: formula, parameter formula, count for d_q = d_k = d, and who proposed it."""
    counts = parameter_counts(d, d, num_hiddens)  # counted on real modules
    return pd.DataFrame({
        t("ch08.col_score", lang): [t(f"ch08.score_{key}", lang) for key, _, _, _ in SCORES],
        t("ch08.col_formula", lang): [formula for _, formula, _, _ in SCORES],
        t("ch08.col_param_formula", lang): [params for _, _, params, _ in SCORES],
        t("ch08.col_params", lang): [counts[key] for key, _, _, _ in SCORES],
        t("ch08.col_who", lang): [cite(paper) for _, _, _, paper in SCORES],
    })


def code_map_rows():
    """(path, public names, chapter key) for every reference exercise and the course's model files."""
    rows = [(f"solutions/{ex.filename}", ex.names, ex.chapter) for ex in exercise_index.EXERCISES]
    rows += [
        ("course/translation/rnn.py", ("Seq2SeqEncoder", "FixedContextDecoder", "RNNTranslator"), "ch01"),
        ("course/translation/transformer.py", ("TransformerTranslator",), "ch07"),
        ("course/translation/decoding.py", ("greedy_decode", "beam_search"), "ch07"),
        ("course/translation/training.py", ("sequence_loss", "train"), "ch07"),
    ]
    return rows


def code_map_frame(lang):
    """The source-code reading map: file, what to look for, what it implements, its chapter."""
    rows = code_map_rows()
    return pd.DataFrame({
        t("ch08.col_file", lang): [path for path, _, _ in rows],
        t("ch08.col_names", lang): [", ".join(names) for _, names, _ in rows],
        t("ch08.col_implements", lang): [t(f"ch08.code.{path.split('/')[-1][:-3]}", lang) for path, _, _ in rows],
        t("ch08.col_chapter", lang): [t(f"nav.{chapter}", lang) for _, _, chapter in rows],
    })


# --- local attention: which keys a query may read, and how far stacked layers see --------------------

TOKENS = ("the", "black", "cat", "sat", "on", "the", "mat", ".")
# Dependency arcs (head, dependent) of the sentence, Universal Dependencies style: "sat" is the root.
ARCS = ((3, 2), (2, 0), (2, 1), (3, 6), (6, 4), (6, 5), (3, 7))
MASK_KINDS = ("window", "graph")
DEMO_HIDDENS = 16  # width of the seeded random queries and keys


def tree_adjacency(n=len(TOKENS), arcs=ARCS):
    """(n, n) int adjacency of the parse, both directions (a head reads its dependents and back)."""
    A = torch.zeros(n, n, dtype=torch.long)
    for head, dependent in arcs:
        A[head, dependent] = A[dependent, head] = 1
    return A


def chain_arcs(n=len(TOKENS)):
    """Arcs of a chain-shaped parse over n words: each word the dependent of the next, ((1, 0), (2, 1), ...)."""
    return tuple((i + 1, i) for i in range(n - 1))


def graph_diameter(arcs, n=len(TOKENS)):
    """Longest shortest path, in edges, between two of the n words of an undirected, connected parse."""
    neighbours = {i: set() for i in range(n)}
    for head, dependent in arcs:
        neighbours[head].add(dependent)
        neighbours[dependent].add(head)
    longest = 0
    for start in range(n):  # breadth-first search from every word
        distance, frontier = {start: 0}, [start]
        while frontier:
            following = []
            for i in frontier:
                for j in neighbours[i] - distance.keys():
                    distance[j] = distance[i] + 1
                    following.append(j)
            frontier = following
        if len(distance) < n:
            raise ValueError(f"the parse is not connected: word {start} reaches only {len(distance)} of {n}")
        longest = max(longest, max(distance.values()))
    return longest


def local_mask(kind, half_width=1, causal=False, n=len(TOKENS)):
    """Boolean (n, n) mask of the reference ex08: a sliding window of half_width, or the parse with self-loops."""
    if kind == "window":
        return sliding_window_mask(n, n, half_width, causal)
    if kind == "graph":
        return graph_mask(tree_adjacency(n))
    raise ValueError(f"kind must be one of {MASK_KINDS}; got {kind!r}")


def reach(mask, layers):
    """Boolean (n, n): True where position i has read position j after `layers` stacked masked layers."""
    step = mask.to(torch.long)  # (n, n): one layer, i reads j
    seen = torch.eye(mask.shape[0], dtype=torch.long)  # zero layers: each position holds itself
    for _ in range(layers):
        seen = ((seen @ step) > 0).to(torch.long)  # (n, n): one more hop through the mask
    return seen.bool()


def layers_to_settle(mask):
    """Fewest layers after which stacking more reads nothing new (the graph's diameter, for a window ceil((n-1)/D))."""
    layers, seen = 1, reach(mask, 1)
    while not torch.equal(seen, reach(mask, layers + 1)):
        layers, seen = layers + 1, reach(mask, layers + 1)
    return layers


def local_weights(mask, seed=0):
    """Weights (n, n) of the reference MaskedDotProductAttention on seeded random queries and keys."""
    gen = torch.Generator().manual_seed(seed)
    n = mask.shape[0]
    queries, keys = (torch.randn(1, n, DEMO_HIDDENS, generator=gen) for _ in range(2))  # (1, n, d) each
    attention = MaskedDotProductAttention(dropout=0.0).eval()
    with torch.no_grad():
        attention(queries, keys, keys, mask)
    return attention.attention_weights[0]  # (n, n)


def causal_gap(n=len(TOKENS), seed=0):
    """max |weights of a causal window as wide as the sentence - ex01's masked_softmax with per-query lengths|."""
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(1, n, n, generator=gen)  # (1, n, n)
    by_mask = softmax_with_mask(scores, sliding_window_mask(n, n, n - 1, causal=True))  # (1, n, n)
    by_lens = masked_softmax(scores, torch.arange(1, n + 1)[None, :])  # (1, n, n): query i keeps keys 0..i
    return float((by_mask - by_lens).abs().max())


def local_stats(kind, half_width, causal, layers):
    """The experiment's numbers: scores kept, what the last token has read after `layers`, layers to settle."""
    mask = local_mask(kind, half_width, causal)
    n = mask.shape[0]
    return {"kept": int(mask.sum()), "total": n * n, "read": int(reach(mask, layers)[-1].sum()), "n": n,
            "settle": layers_to_settle(mask), "all": bool(reach(mask, layers_to_settle(mask)).all())}


def local_claims():
    """The numbers the chapter's text quotes: a window of D = 1 against the parse, and the causal check."""
    window, graph = local_stats("window", 1, False, 1), local_stats("graph", 1, False, 1)
    return {"total": window["total"], "window_kept": window["kept"], "window_settle": window["settle"],
            "graph_kept": graph["kept"], "graph_settle": graph["settle"], "gap": causal_gap(),
            "parse_diameter": graph_diameter(ARCS), "chain_diameter": graph_diameter(chain_arcs())}


def local_view(lang, kind, half_width, causal, layers):
    """{'weights': heatmap dict of one layer's weights, 'reach': heatmap dict after `layers`, 'stats': local_stats}."""
    mask = local_mask(kind, half_width, causal)
    labels = list(TOKENS)  # the heatmap keeps the two "the"s apart (cells are placed by index)
    x, y = t("ch08.local.x", lang), t("ch08.local.y", lang)
    weights = charts.heatmap(local_weights(mask).numpy(), labels, labels, t("ch08.local.weights_title", lang),
                             x_title=x, y_title=y, domain=[0, 1], show_values=True, cell_size=48)
    seen = charts.heatmap(reach(mask, layers).to(torch.float32).numpy(), labels, labels,
                          t("ch08.local.reach_title", lang, layers=layers), x_title=x, y_title=y,
                          domain=[0, 1], show_values=True, value_format=".0f", cell_size=48)
    return {"weights": weights.to_dict(), "reach": seen.to_dict(), "stats": local_stats(kind, half_width, causal, layers)}
