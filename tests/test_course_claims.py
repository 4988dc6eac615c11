"""Claims in the course text that were once wrong: each is checked against the catalogs in both
languages, so a regression in either language fails here."""

import re

import pytest

from course.common import i18n

LANGS = i18n.LANGS


def texts(lang):
    """Every catalog string of a language, by key."""
    return {key: value for key, value in i18n.catalog(lang).items() if isinstance(value, str)}


@pytest.mark.parametrize("lang", LANGS)
def test_bahdanau_is_dated_2014_and_iclr_2015_is_said_once(lang):
    for key, text in texts(lang).items():
        for match in re.finditer(r"Bahdanau", text):
            nearby = text[match.start(): match.start() + 40]
            assert "2015" not in nearby, f"{key}: {nearby!r}"
    iclr = [key for key, text in texts(lang).items() if "ICLR" in text]
    assert iclr == ["ch04.intro"] and "1409.0473" in texts(lang)["ch04.intro"]
    assert "2014" in texts(lang)["ch04.intro"] and "2014" in texts(lang)["ch03.scorers_body"]


@pytest.mark.parametrize("lang", LANGS)
def test_deep_output_is_called_a_simplification_of_maxout(lang):
    body = texts(lang)["ch04.steps_body"]
    assert "maxout" in body and ("simplification" in body if lang == "en" else "简化" in body)


@pytest.mark.parametrize("lang", LANGS)
def test_relative_positions_are_the_papers_hypothesis(lang):
    body = texts(lang)["ch06.relative_after"]
    words = ("hypothesised", "does not test") if lang == "en" else ("假设", "没有加以检验")
    assert all(word in body for word in words)


@pytest.mark.parametrize("lang", LANGS)
def test_beam_search_is_not_a_remedy_for_exposure_bias(lang):
    body = texts(lang)["ch01.seq2seq.exposure_text"]
    if lang == "en":
        assert "Beam search is not one of them" in body and "beam search reduce" not in body
    else:
        assert "束搜索则不在其列" in body and "束搜索等办法" not in body


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_8_points_at_the_chapter_4_heatmap_and_says_its_scores_are_illustrative(lang):
    body = texts(lang)["ch08.papers.bahdanau"]
    assert ("heatmap" in body and "illustrative" in body) if lang == "en" else ("热力图" in body and "示意" in body)


@pytest.mark.parametrize("name", ["seq2seq", "bahdanau", "transformer"])
def test_the_shipped_models_get_the_chapter_4_sentence_wrong_as_its_heatmap_text_says(name):
    from course.common.paths import PROJECT_ROOT
    from course.translation.checkpoint import load_checkpoint
    from course.translation.decoding import translate

    path = PROJECT_ROOT / "checkpoints" / f"{name}.pt"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    loaded = load_checkpoint(path)
    result = translate(loaded.model, "The black cat sat on the mat.", loaded.src_vocab, loaded.tgt_vocab)
    assert result.text.rstrip("。") != "黑猫坐在垫子上"  # ch04.heatmap.body says they do not translate it correctly
