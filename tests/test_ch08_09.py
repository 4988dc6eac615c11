"""Chapters 8 and 9 logic: the timeline and paper data, the code map, review cards and progress.

Facts are checked against the published papers (arXiv ids, years); parameter counts against the
layer shapes; the code map by importing each file and looking the names up.
"""

import ast
import importlib

import pytest

from course.common import pages_index
from course.common import exercise_index, i18n
from course.lessons import ch08, ch09

ALL = {ex.id: "passed" for ex in exercise_index.EXERCISES}


def test_papers_have_the_right_arxiv_ids_and_links():
    ids = {p.key: (p.arxiv, p.year) for p in ch08.PAPERS}
    assert ids == {"sutskever": ("1409.3215", 2014), "bahdanau": ("1409.0473", 2014),
                   "luong": ("1508.04025", 2015), "vaswani": ("1706.03762", 2017)}
    assert ch08.BY_KEY["vaswani"].url == "https://arxiv.org/abs/1706.03762"
    assert ch08.BY_KEY["cho"].url == "https://arxiv.org/abs/1406.1078"


def test_citations():
    assert ch08.cite("sutskever") == "Sutskever et al. (2014)"
    assert ch08.cite("vaswani") == "Vaswani et al. (2017)"
    assert ch08.cite("bahdanau") == "Bahdanau et al. (2014)"


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_timeline_is_in_order_and_fully_described(lang):
    years = [year for year, _, _ in ch08.TIMELINE]
    assert years == sorted(years) and {2014, 2015, 2017} <= set(years)
    frame = ch08.timeline_frame(lang)
    assert frame.iloc[:, 0].tolist() == [str(y) for y in years]
    for _, key, papers in ch08.TIMELINE:
        assert all(p in ch08.BY_KEY for p in papers)
        for part in ("name", "path", "detail"):
            assert i18n.t(f"ch08.timeline.{key}.{part}", lang).strip()
    spec = ch08.timeline_spec(lang)
    labels = [row["label"] for data in spec["datasets"].values() for row in data]
    assert i18n.t("ch08.timeline.transformer.name", lang) in labels


@pytest.mark.parametrize(("d", "h"), [(1, 1), (10, 7), (64, 128)])
def test_score_table_counts_parameters_by_the_formulas(d, h):
    table = ch08.score_table("en", d, h)
    assert table["score function"].tolist() == ["additive", "dot product", "general (bilinear)", "scaled dot product"]
    assert table["count at your d, h"].tolist() == [h * (d + d) + h, 0, d * d, 0]
    assert table["proposed in"].tolist()[1:] == ["Luong et al. (2015)", "Luong et al. (2015)", "Vaswani et al. (2017)"]


def defined_names(path):
    """Top-level function and class names defined in a project file."""
    tree = ast.parse((pages_index.PROJECT_ROOT / path).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def test_code_map_points_at_files_that_define_the_names():
    rows = ch08.code_map_rows()
    paths = [path for path, _, _ in rows]
    assert {f"solutions/{ex.filename}" for ex in exercise_index.EXERCISES} <= set(paths)
    chapters = {p.key for p in pages_index.chapters()}
    for path, names, chapter in rows:
        assert (pages_index.PROJECT_ROOT / path).is_file(), path
        module = importlib.import_module(path[:-3].replace("/", "."))
        for name in names:
            assert callable(getattr(module, name, None)), f"{path} has no {name}"
            assert name in defined_names(path)
        assert chapter in chapters
    for lang in i18n.LANGS:
        frame = ch08.code_map_frame(lang)
        assert len(frame) == len(rows) and frame.iloc[:, 2].str.len().min() > 5


def test_status_counts_and_bad_status():
    statuses = dict(ALL, ex03="failed", ex05="not_graded", ex06="not_graded", ex07="not_written")
    assert ch09.status_counts(statuses) == {"passed": len(ALL) - 4, "failed": 1, "not_written": 1, "error": 0,
                                            "blocked": 0, "not_graded": 2}
    with pytest.raises(ValueError, match="unknown exercise status"):
        ch09.status_counts({"ex00": "done"})


@pytest.mark.parametrize(("statuses", "expected"), [
    ({}, "ex00"),
    ({"ex00": "passed", "ex01": "passed"}, "ex02"),
    ({"ex00": "passed", "ex01": "failed", "ex06": "passed"}, "ex01"),
    (dict(ALL, ex03="failed", ex07="not_graded"), "ex03"),
    (dict(ALL, ex04="failed", ex01="not_graded"), "ex01"),  # ex04 needs ex01: fix that first
    (ALL, None),
])
def test_next_exercise_respects_prerequisites(statuses, expected):
    assert ch09.next_exercise(statuses) == expected


def test_progress_frame_rows_scores_and_filter():
    statuses = {ex.id: "not_graded" for ex in exercise_index.EXERCISES} | {"ex01": "passed", "ex03": "failed"}
    results = {"ex01": {"passed": True, "score": 1.0}, "ex03": {"passed": False, "score": 0.375}}
    frame = ch09.progress_frame(statuses, results, "en", label=str.upper)
    assert frame["exercise"].tolist() == [ex.id for ex in exercise_index.EXERCISES]
    by_id = frame.set_index("exercise")
    assert by_id.loc["ex01", "last score"] == 100.0 and by_id.loc["ex03", "last score"] == 37.5
    assert by_id["last score"].isna().sum() == len(exercise_index.EXERCISES) - 2
    assert by_id.loc["ex03", "status"] == "FAILED" and by_id.loc["ex07", "chapter"] == i18n.t("nav.ch07", "en")
    open_only = ch09.progress_frame(statuses, results, "zh", only_open=True)
    assert "ex01" not in open_only.iloc[:, 0].tolist() and len(open_only) == len(exercise_index.EXERCISES) - 1
    assert open_only.iloc[0, 3] == i18n.t("app.status.not_graded", "zh")


def test_cards_link_to_registered_chapters_and_have_text():
    chapters = [p.key for p in pages_index.chapters()]
    assert [c.key for c in ch09.CARDS] == ["problem", "mechanism", "computation", "learning", "evolution", "limits"]
    for card in ch09.CARDS:
        assert card.pages and set(card.pages) <= set(chapters)
        for lang in i18n.LANGS:
            assert i18n.t(f"ch09.cards.{card.key}.title", lang) and i18n.t(f"ch09.cards.{card.key}.body", lang)
    assert ch09.card_links(ch09.CARDS[5], ["ch01", "ch06"]) == ["ch06", "ch01"]
    assert ch09.card_links(ch09.CARDS[0], []) == []


def test_interview_numbers_match_their_formulas():
    numbers = ch09.interview_numbers(d=64, n=1000, width=512, heads=8, dense_n=50)
    assert numbers["var_unscaled"] == pytest.approx(64, rel=0.15)
    assert numbers["var_scaled"] == pytest.approx(1, rel=0.15)
    assert numbers["max_unscaled"] > numbers["max_scaled"]
    assert numbers["additive_params"] == 64 * (64 + 64) + 64 and numbers["dot_params"] == 0
    assert numbers["attention_ops"] == 1000**2 * 512 and numbers["rnn_ops"] == 1000 * 512**2
    assert numbers["attention_params"] == 4 * 64 * 64  # W_q, W_k, W_v, W_o without biases, any head count
    assert numbers["dense_params"] == (50 * 64) ** 2 + 50 * 64
    chapters = [p.key for p in pages_index.chapters()]
    assert [c.key for c in ch09.INTERVIEW] == ["sqrt_dk", "additive_vs_dot", "quadratic", "versus_dense"]
    for card in ch09.INTERVIEW:
        assert card.pages and set(card.pages) <= set(chapters)
        for lang in i18n.LANGS:
            assert i18n.t(f"ch09.interview.{card.key}.question", lang).endswith(("?", "？"))
            i18n.t(f"ch09.interview.{card.key}.answer", lang, **numbers)  # every field is provided
