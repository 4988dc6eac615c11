"""The Pieces, beams and BLEU page in AppTest, in both languages: on the shipped checkpoints (skipped when
absent) and on the tiny test checkpoints (one model reading whole words). Expected pieces come from the
tokenizer library, expected BLEU from sacrebleu, the shipped sentences from the BLEU report."""

import json

import pytest
import sacrebleu
from app_helpers import errors_of, markdown_text, open_page

from course.common import i18n, pages_index
from course.common.paths import PROJECT_ROOT
from course.translation.decoding_views import DEFAULT_SENTENCE

pytestmark = pytest.mark.usefixtures("lab_home")
PAGE = pages_index.get("demo_decoding").path
SHIPPED = PROJECT_ROOT / "checkpoints"


def needs_shipped():
    """Skip unless the shipped Transformer and its report are here."""
    if not (SHIPPED / "transformer.pt").is_file() or not (SHIPPED / "transformer.bleu.json").is_file():
        pytest.skip("no shipped Transformer checkpoint")


def metric_values(at):
    """{label: value} of the page's metrics."""
    return {m.label: m.value for m in at.metric}


def frame(at, lang, *columns):
    """The data frame shown with exactly these catalog column headers."""
    labels = [i18n.t(c, lang) for c in columns]
    hits = [d.value for d in at.dataframe if list(d.value.columns) == labels]
    assert len(hits) == 1, (labels, [list(d.value.columns) for d in at.dataframe])
    return hits[0]


PIECES = ["decoding.pieces.col_" + c for c in ("word", "pieces", "count", "merges", "unknown")]
MERGES = ["decoding.pieces.col_" + c for c in ("step", "merged", "pieces")]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_shows_pieces_beam_and_a_bleu_equal_to_sacrebleus(lang):
    needs_shipped()
    at = open_page(PAGE, lang=lang)
    assert not errors_of(at)
    assert [h.value for h in at.header] == [i18n.t(f"decoding.{s}.header", lang) for s in ("pieces", "beam", "bleu")]
    pieces = frame(at, lang, *PIECES)
    assert list(pieces.iloc[:, 1]) == ["i", "love", "a ##i", "."]
    metrics = metric_values(at)
    assert metrics[i18n.t("decoding.bleu.ours", lang)] == metrics[i18n.t("decoding.bleu.sacrebleu", lang)] == "83.20"
    report = json.loads((SHIPPED / "transformer.bleu.json").read_text(encoding="utf-8"))
    examples = [ex for bucket in report["examples"].values() for ex in bucket]
    hyps, refs = [ex["greedy"] for ex in examples], [ex["reference"] for ex in examples]
    corpus = f"{sacrebleu.corpus_bleu(hyps, [refs], tokenize='zh').score:.2f}"
    assert metrics[i18n.t("decoding.corpus.sacrebleu", lang)] == corpus
    assert [v for k, v in metrics.items() if k.startswith(i18n.t("decoding.corpus.ours", lang, bp="")[:8])] == [corpus]
    example = next(ex for ex in examples if ex["en"] == DEFAULT_SENTENCE)
    text = markdown_text(at)
    assert example["greedy"] in text and example["beam"] in text
    assert i18n.t("demos.common.alpha_source.validation_edge", lang) in text  # 2.2: the largest alpha tried


@pytest.mark.slow
def test_typing_a_word_shows_the_librarys_pieces_and_beam_size_1_writes_greedys_output():
    needs_shipped()
    from course.translation.checkpoint import load_checkpoint

    vocab = load_checkpoint(SHIPPED / "transformer.pt").src_vocab
    lang = "en"
    at = open_page(PAGE, lang=lang)
    at.text_input(key="demo_decoding_words").set_value("Unbelievably simple.").run()
    assert not errors_of(at)
    assert frame(at, lang, *PIECES).iloc[0, 1] == " ".join(vocab.pieces_by_word(["unbelievably"])[0])
    merges = frame(at, lang, *MERGES)
    assert merges.iloc[-1, 2] == " ".join(vocab.pieces_by_word(["unbelievably"])[0]) and len(merges) > 5
    at.select_slider(key="demo_decoding_beam").set_value(1).run()
    lines = [m.value for m in at.markdown if m.value.startswith(("**Greedy**", "**Beam search"))]
    assert len(lines) == 2 and lines[0].split("\n")[0].split(": ", 1)[1] == lines[1].split("\n")[0].split(": ", 1)[1]
    at.radio(key="demo_decoding_output").set_value("beam").run()
    assert not errors_of(at)
    metrics = metric_values(at)
    assert metrics["BLEU, step by step"] == metrics["BLEU from sacrebleu.sentence_bleu"]


@pytest.mark.usefixtures("tiny_env")
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_the_page_runs_on_other_checkpoints_and_says_when_a_model_reads_whole_words(lang):
    at = open_page(PAGE, lang=lang)
    assert not errors_of(at)
    metrics = metric_values(at)
    assert metrics[i18n.t("decoding.bleu.ours", lang)] == metrics[i18n.t("decoding.bleu.sacrebleu", lang)]
    at.radio(key="demo_decoding_model").set_value("seq2seq").run()
    assert not errors_of(at)
    assert i18n.t("decoding.pieces.whole_words", lang) in [i.value for i in at.info]


@pytest.mark.slow
def test_the_chapter_4_walk_through_links_to_the_page_that_explains_its_ai_split():
    if not (SHIPPED / "bahdanau.pt").is_file():
        pytest.skip("no shipped Bahdanau checkpoint")
    at = open_page(pages_index.get("ch04").path, lang="zh")
    assert not errors_of(at)
    links = {link.proto.page: link.proto.label for link in at.get("page_link")}
    assert links.get("pieces-beams-bleu") == i18n.t("trained.links.demo_decoding", "zh")
