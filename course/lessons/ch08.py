"""Chapter 8 data: the 2014-2017 timeline, the score-function table, the papers and the code map.

Streamlit-free. Facts (years, authors, arXiv ids, formulas) live here; the prose that explains
them lives in the text catalogs under `ch08.`.
"""

import ast
from dataclasses import dataclass

import altair as alt
import pandas as pd

from course.common import exercise_index
from course.common.i18n import t
from course.common.paths import PROJECT_ROOT
from course.lessons.ch03 import parameter_counts

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


def defined_names(path):
    """Top-level function and class names defined in a project file."""
    tree = ast.parse((PROJECT_ROOT / path).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def code_map_frame(lang):
    """The source-code reading map: file, what to look for, what it implements, its chapter."""
    rows = code_map_rows()
    return pd.DataFrame({
        t("ch08.col_file", lang): [path for path, _, _ in rows],
        t("ch08.col_names", lang): [", ".join(names) for _, names, _ in rows],
        t("ch08.col_implements", lang): [t(f"ch08.code.{path.split('/')[-1][:-3]}", lang) for path, _, _ in rows],
        t("ch08.col_chapter", lang): [t(f"nav.{chapter}", lang) for _, _, chapter in rows],
    })
