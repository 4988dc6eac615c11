"""The demo pages (AppTest, both languages, tiny checkpoints), their logic, and the learner's child run.

Expected attention rows and next-character probabilities are derived here by
stepping the model directly (encode / decode_step), not through course.translation.decoding.
"""

import functools
import json
import re
import shutil
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from app_helpers import errors_of, open_page, page_dataframes, widgets
from sandbox_helpers import leave_grandchild, pid_gone

from course.app import demo_runner, progress
from course.common import pages_index
from course.common import i18n, paths
from course.translation import demos
from course.translation.checkpoint import load_checkpoint
from course.translation.models import MODEL_NAMES
from course.translation.vocab import BOS_ID, EOS_ID, PAD_ID, tokenize_en

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("tiny_env")]  # a fresh progress home; the tiny checkpoints

ROOT = Path(__file__).resolve().parent.parent
DEMO_PAGES = [p for p in pages_index.PAGES if p.section == "demos"]
TRANSLATE, BOTTLENECK, INSIDE, MINE = (pages_index.get(k).path for k in
                                       ("demo_translate", "demo_bottleneck", "demo_inside", "demo_mine"))
SENTENCE = "tom is a teacher."


@pytest.fixture(scope="module")
def solutions_copy(tmp_path_factory):
    """A learner's folder whose files are correct (copies of the references)."""
    target = tmp_path_factory.mktemp("learner")
    for path in (ROOT / "solutions").glob("ex*.py"):
        shutil.copy(path, target / path.name)
    return target


def manual_steps(name, sentence):
    """Greedy decoding by hand: per step (cross-attention row or None, softmax probabilities, chosen id)."""
    loaded = load_checkpoint(demos.checkpoint_path(name))
    ids = loaded.src_vocab.encode_words(tokenize_en(sentence))
    src, lens = torch.tensor([ids]), torch.tensor([len(ids)])
    steps = []
    with torch.no_grad():
        state = loaded.model.encode(src, lens)
        token = BOS_ID
        for _ in range(2 * len(ids) + 10):
            logits, state, attn = loaded.model.decode_step(torch.tensor([[token]]), state)
            probs = torch.softmax(logits[0], dim=-1)
            masked = logits[0].clone()
            masked[[PAD_ID, BOS_ID]] = float("-inf")
            token = int(masked.argmax())
            cross = attn.get("cross")
            if cross is not None and cross.dim() == 4:  # Transformer: last layer, mean over heads
                cross = cross[:, -1].mean(dim=1)
            steps.append((None if cross is None else cross[0].numpy(), probs.numpy(), token))
            if token == EOS_ID:
                break
    return steps, loaded.tgt_vocab


def frame_with(at, column):
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with column {column!r}")


# ---- pages ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", DEMO_PAGES, ids=lambda p: p.key)
def test_demo_pages_render_in_both_languages(page, lang):
    at = open_page(page.path, lang=lang)
    assert errors_of(at) == [], page.path
    assert at.title[0].value == i18n.t(f"demos.nav.{page.key.removeprefix('demo_')}", lang)
    bad = [(w.type, w.key) for w in widgets(at._tree) if not (w.key or "").startswith((page.widget_prefix, "app_"))]
    assert bad == []


@pytest.mark.parametrize("page", DEMO_PAGES, ids=lambda p: p.key)
def test_missing_checkpoints_give_the_training_command_not_an_error(page, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_CHECKPOINTS", str(tmp_path / "none"))
    at = open_page(page.path, lang="en")
    assert errors_of(at) == []
    commands = [c.value for c in at.code]
    assert any(re.fullmatch(r"python -m course\.translation\.train --model \w+ --data \S+ --minutes \d+ --out \S+ "
                            r"--device cpu --threads \d .*--dropout 0\.\d", c) for c in commands), commands
    assert "55 minutes" in " ".join(str(i.value) for i in at.info)  # the Transformer's shipped recipe, not "15"


def test_translate_shows_every_model_and_the_scrubber_moves_the_row():
    at = open_page(TRANSLATE, lang="en")
    outputs = frame_with(at, i18n.t("demos.translate.col_output", "en"))
    assert len(outputs) == len(MODEL_NAMES)
    at.radio(key="demo_translate_model").set_value("bahdanau").run()
    steps, vocab = manual_steps("bahdanau", i18n.t("demos.common.default_sentence", "en"))
    assert outputs.iloc[1, 1] == "".join(vocab.itos[t] for _, _, t in steps if t != EOS_ID)
    slider = at.slider(key="demo_translate_step")
    assert slider.max == sum(t != EOS_ID for _, _, t in steps)  # one step per character, then <eos>
    shown = {}
    for step in (0, 3):
        at.slider(key="demo_translate_step").set_value(step).run()
        assert errors_of(at) == []
        row = frame_with(at, i18n.t("demos.translate.col_weight", "en"))
        shown[step] = row.iloc[:, 1].to_numpy()
        np.testing.assert_allclose(shown[step], steps[step][0], atol=6e-5)
        top = frame_with(at, i18n.t("demos.translate.col_prob", "en"))
        probs = steps[step][1]
        best = np.argsort(-probs)[: len(top)]
        assert list(top.iloc[:, 0]) == [vocab.itos[i] for i in best]
        np.testing.assert_allclose(top.iloc[:, 1].to_numpy(), probs[best], atol=6e-5)
    assert not np.allclose(shown[0], shown[3])


def test_translate_without_attention_says_so_for_the_fixed_context_model():
    at = open_page(TRANSLATE, lang="zh")
    at.radio(key="demo_translate_model").set_value("seq2seq").run()
    assert any(i.value == i18n.t("demos.translate.no_attention", "zh") for i in at.info)
    assert errors_of(at) == []


def test_translate_rejects_a_sentence_without_words():
    at = open_page(TRANSLATE, lang="en")
    at.text_input(key="demo_translate_sentence").set_value("   ").run()
    assert errors_of(at) == []
    assert [w.value for w in at.warning] == [i18n.t("demos.common.bad_sentence", "en")]


def test_bottleneck_table_shows_the_reports_numbers(tiny):
    at = open_page(BOTTLENECK, lang="en")
    table = next(df.value for df in at.dataframe if "1-4" in df.value.columns)
    for name in MODEL_NAMES:
        report = json.loads((tiny / f"{name}.bleu.json").read_text(encoding="utf-8"))
        label = i18n.t(f"demos.models.{name}", "en")
        for bucket, entry in report["buckets"].items():
            if entry["greedy"] is not None:
                assert table.loc[label, bucket] == pytest.approx(entry["greedy"], abs=0.01)
    assert not any("α" in c.value for c in at.caption)  # the beam note only with beam search
    at.radio(key="demo_bottleneck_method").set_value("beam").run()
    note = next(c.value for c in at.caption if "α" in c.value)
    for name in MODEL_NAMES:  # the fixture's reports: beam 2, the default alpha (given, not chosen)
        assert i18n.t("demos.bottleneck.beam_setting", "en", model=i18n.t(f"demos.models.{name}", "en"),
                      size=2, alpha="0.6") in note
    assert i18n.t("demos.bottleneck.beam_chosen", "en") not in note
    at.select_slider(key="demo_bottleneck_bucket").set_value("1-4").run()
    assert errors_of(at) == []
    examples = next(t.value for t in at.table if i18n.t("demos.bottleneck.col_reference", "en") in t.value.columns)
    assert examples.index.name == i18n.t("demos.bottleneck.col_en", "en")
    assert "i am happy." in list(examples.index)


def test_inside_decoder_self_attention_is_causal_and_heads_differ():
    at = open_page(INSIDE, lang="en")
    at.radio(key="demo_inside_kind").set_value("decoder").run()
    first = page_dataframes(at)[0].value.to_numpy()
    assert np.allclose(np.triu(first, k=1), 0) and np.allclose(first.sum(axis=1), 1, atol=5e-3)
    at.selectbox(key="demo_inside_head").set_value(2).run()
    at.selectbox(key="demo_inside_layer").set_value(2).run()
    second = page_dataframes(at)[0].value.to_numpy()
    assert second.shape == first.shape and not np.allclose(first, second)
    at.radio(key="demo_inside_kind").set_value("cross").run()
    cross = page_dataframes(at)[0].value
    src_vocab = load_checkpoint(demos.checkpoint_path("transformer")).src_vocab  # BPE pieces in the fixture
    assert cross.shape[1] == len(src_vocab.segment(tokenize_en(SENTENCE))) and errors_of(at) == []


def test_beam_settings_say_whether_alpha_was_chosen_on_the_validation_set():
    reports = {
        "bahdanau": {"beam_size": 4, "beam_alpha": 1.8, "bleu": {"greedy": 29.0, "beam": 31.0},
                     "valid_beam_bleu_by_alpha": [{"alpha": 0.6, "bleu": 30.0}, {"alpha": 1.8, "bleu": 31.5}]},
        "seq2seq": {"beam_size": 6, "beam_alpha": 0.6, "bleu": {"greedy": 20.0, "beam": 21.0},
                    "valid_beam_bleu_by_alpha": None},
        "transformer": {"beam_size": 4, "beam_alpha": 0.6, "bleu": {"greedy": 30.0}},  # no beam run
    }
    assert demos.beam_settings(reports) == {"bahdanau": (4, 1.8, True), "seq2seq": (6, 0.6, False)}


def test_head_matrix_rejects_a_missing_head():
    from course.translation.decoding import Translation

    result = Translation(["a"], ["我"], "我", cross_attention_heads=np.zeros((2, 2, 2, 1)))
    with pytest.raises(ValueError, match="2 layers and 2 heads"):
        demos.head_matrix(result, "cross", 2, 0)
    with pytest.raises(ValueError, match="no encoder attention"):
        demos.head_matrix(result, "encoder", 0, 0)


# ---- the learner's run in a child process --------------------------------------------------------


def test_mine_waits_until_the_exercise_passed():
    at = open_page(MINE, lang="en")
    at.radio(key="demo_mine_model").set_value("bahdanau").run()
    assert any("ex04" in i.value for i in at.info) and errors_of(at) == []


def test_mine_runs_a_passing_learner_beside_the_reference(solutions_copy, monkeypatch):
    progress.save_results(paths.PROJECT_ROOT / "exercises", {"ex04": {"passed": True, "score": 1.0}})
    monkeypatch.setattr(demo_runner, "run_learner",
                        functools.partial(demo_runner.run_learner, exercises_dir=solutions_copy))
    at = open_page(MINE, lang="zh")
    at.radio(key="demo_mine_model").set_value("bahdanau").run()
    at.button(key="demo_mine_run").click().run()
    assert errors_of(at) == []
    assert [s.value for s in at.success] == [i18n.t("demos.mine.identical", "zh", tol="0.0001")]


def test_mine_reports_a_broken_module_clearly(solutions_copy, tmp_path, monkeypatch):
    broken = tmp_path / "broken"
    shutil.copytree(solutions_copy, broken)
    path = broken / "ex04_bahdanau.py"
    path.write_text(path.read_text().replace("query = hidden_state[-1].unsqueeze(1)",
                                             "query = hidden_state[-1].unsqueeze(1)[:, :, :3]"))
    progress.save_results(paths.PROJECT_ROOT / "exercises", {"ex04": {"passed": True, "score": 1.0}})
    monkeypatch.setattr(demo_runner, "run_learner", functools.partial(demo_runner.run_learner, exercises_dir=broken))
    at = open_page(MINE, lang="en")
    at.radio(key="demo_mine_model").set_value("bahdanau").run()
    at.button(key="demo_mine_run").click().run()
    assert errors_of(at) == [] and not at.success
    message = at.warning[0].value
    assert "your module raised RuntimeError" in message and "ex04_bahdanau.py, line" in message


def test_run_learner_returns_the_transformers_maps(solutions_copy):
    results = {"ex07": {"passed": True}}
    data = demo_runner.run_learner("transformer", SENTENCE, results=results, exercises_dir=solutions_copy)
    assert data["modules"]["ex07_transformer"] == "learner" and data["modules"]["ex05_multihead"] == "reference"
    steps, vocab = manual_steps("transformer", SENTENCE)
    assert data["tokens"] == [vocab.itos[t] for _, _, t in steps if t != EOS_ID]
    expected = np.stack([s[0] for s in steps])  # (steps, T_src); the page adds an <eos> step when capped
    np.testing.assert_allclose(np.asarray(data["cross_attention"])[: len(expected)], expected, atol=1e-5)
    assert np.asarray(data["decoder_self_attention"]).shape[:2] == (2, 2)


def learner_with(solutions_copy, folder, code):
    """A learner folder of correct files whose ex04_bahdanau.py also runs code when it is imported."""
    shutil.copytree(solutions_copy, folder)
    path = folder / "ex04_bahdanau.py"
    path.write_text(path.read_text() + "\n" + textwrap.dedent(code))
    return folder


@pytest.mark.timing
def test_a_detached_process_holding_the_pipes_does_not_hold_the_translation_and_is_killed(solutions_copy, tmp_path):
    marker = tmp_path / "grandchild.pid"
    learner = learner_with(solutions_copy, tmp_path / "learner",
                           leave_grandchild(marker) + 'raise RuntimeError("after the fork")\n')
    start = time.monotonic()
    with pytest.raises(demo_runner.RunnerError, match="RuntimeError: after the fork"):
        demo_runner.run_learner("bahdanau", SENTENCE, results={"ex04": {"passed": True}}, exercises_dir=learner,
                                timeout=60)
    assert time.monotonic() - start < 45, "the run waited for the detached process's pipes"
    grandchild = int(marker.read_text())
    assert pid_gone(grandchild), "the learner's detached process outlived the run"


@pytest.mark.timing
def test_a_translation_past_its_time_limit_is_stopped(solutions_copy, tmp_path):
    learner = learner_with(solutions_copy, tmp_path / "learner", "while True:\n    pass\n")
    start = time.monotonic()
    with pytest.raises(demo_runner.RunnerError, match="longer than 3 s"):
        demo_runner.run_learner("bahdanau", SENTENCE, results={"ex04": {"passed": True}}, exercises_dir=learner,
                                timeout=3)
    assert time.monotonic() - start < 3 + 10


def test_a_child_that_dies_without_a_result_names_its_last_words(solutions_copy, tmp_path):
    learner = learner_with(solutions_copy, tmp_path / "learner", """
        import os as _os, sys as _sys
        print("printed on stdout", flush=True)
        _sys.stderr.write("last words on stderr\\n")
        _sys.stderr.flush()
        _os._exit(7)
    """)
    with pytest.raises(demo_runner.RunnerError, match=r"exit code 7\) without a result: last words on stderr"):
        demo_runner.run_learner("bahdanau", SENTENCE, results={"ex04": {"passed": True}}, exercises_dir=learner)


def test_run_learner_rejects_bad_requests(tmp_path):
    with pytest.raises(demo_runner.RunnerError, match="no words"):
        demo_runner.run_learner("bahdanau", "  ", results={})
    with pytest.raises(ValueError, match="use one of"):
        demo_runner.learner_modules("seq2seq", results={})
    assert not demo_runner.can_run("transformer", results={"ex04": {"passed": True}})
    assert demo_runner.can_run("transformer", results={"ex06": {"passed": True}})


def test_concurrent_translations_each_get_their_own_attention():
    """Threads sharing one model (as Streamlit sessions do) get the maps of their own sentence."""
    from concurrent.futures import ThreadPoolExecutor

    from course.translation.decoding import translate

    loaded = load_checkpoint(demos.checkpoint_path("bahdanau"))
    sentences = [SENTENCE, "where is the station?", "i am happy.", "my mother can swim."] * 3
    serial = {s: translate(loaded.model, s, loaded.src_vocab, loaded.tgt_vocab) for s in set(sentences)}
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda s: translate(loaded.model, s, loaded.src_vocab, loaded.tgt_vocab), sentences))
    for sentence, result in zip(sentences, results):
        assert result.tokens == serial[sentence].tokens
        np.testing.assert_array_equal(result.cross_attention, serial[sentence].cross_attention)


def test_decoder_self_attention_keys_are_what_the_decoder_was_fed():
    """Keys: <bos> and the characters before each step (never the final <eos>); rows: what each step writes."""
    from course.translation.decoding import Translation

    weights = np.tril(np.ones((1, 1, 3, 3)))  # (L, H, T_out + 1, T_out + 1): two characters, then <eos>
    result = Translation(["a"], ["我", "好"], "我好", decoder_self_attention=weights,
                         cross_attention_heads=np.zeros((1, 1, 3, 1)))
    values, rows, cols = demos.head_matrix(result, "decoder", 0, 0)
    assert rows == ["我", "好", "<eos>"] and cols == ["<bos>", "我", "好"]
    assert values.shape == (len(rows), len(cols))
    assert demos.head_matrix(result, "cross", 0, 0)[1:] == (["我", "好", "<eos>"], ["a"])
