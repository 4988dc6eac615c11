"""Claims in the course text that were once wrong: each is checked against the catalogs in both
languages, so a regression in either language fails here."""

import json
import re

import pytest

from course.common import i18n
from course.common.paths import PROJECT_ROOT
from course.translation import demos

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


@pytest.mark.parametrize("name", sorted(demos.shipped_recipes()))
def test_the_missing_checkpoint_command_is_the_recipe_the_shipped_checkpoint_records(name):
    path = PROJECT_ROOT / "checkpoints" / f"{name}.pt"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    from course.translation.checkpoint import read_checkpoint

    def flags(command):
        """{flag: value} of a training command, without the machine-specific ones."""
        words = command.split()[3:]
        pairs = dict(zip(words[0::2], words[1::2]))
        return {k: float(v) if k not in ("--model", "--device") else v for k, v in pairs.items()
                if k not in ("--data", "--out", "--resume-dir")}

    recorded = read_checkpoint(path)["train"]["command"]
    assert flags(demos.shipped_command(name)) == flags(recorded)


# ---- the third audit's fixes: each claim against the numbers the course computes ----------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_self_attention_diagonal_is_the_squared_length_over_sqrt_4(lang):
    import torch

    from course.lessons import ch06

    assert "\\rVert^2 / \\sqrt{4}" in texts(lang)["ch06.example_after"]
    ex = ch06.attend("self")
    x = ch06.example_vectors(ch06.SOURCE)  # (n, 4)
    diagonal = torch.tensor(ex["scores"].to_numpy().diagonal().copy(), dtype=torch.float32)
    torch.testing.assert_close(diagonal, (x ** 2).sum(-1) / 2, atol=1e-3, rtol=0)


@pytest.mark.parametrize("lang", LANGS)
def test_both_d2l_section_numbers_are_named(lang):
    body = texts(lang)["ch03.presets.body"]
    assert "11.3" in body and "10.3" in body


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_1_says_the_recurrent_encoder_keeps_its_long_paths(lang):
    body = texts(lang)["ch01.bottleneck.body"]
    assert "O(n)" in body
    assert ("addresses both at once" not in body) if lang == "en" else ("同时解决了这两个问题" not in body)


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_3_learning_text_follows_the_shipped_losses(lang):
    from course.lessons.ch03 import scaling_task, scaling_views

    results = scaling_task.load_results()
    view = scaling_views.learning_view(results, 16, lang)
    widths = sorted({r["d"] for r in results["runs"]})
    probe = scaling_views.probe_steps(results["config"])[0]
    unscaled = [scaling_task.loss_after(results, d, "unscaled", probe) for d in widths]
    best = widths[unscaled.index(min(unscaled))]
    assert widths[0] < best < widths[-1] and best == 64  # width helps up to 64 without the scale, then hurts
    k = widths.index(best)
    assert unscaled[:k + 1] == sorted(unscaled[:k + 1], reverse=True) and unscaled[k:] == sorted(unscaled[k:])
    assert f"$d = {best}$" in view["summary"]
    peak16 = scaling_task.run_of(results, 16, "unscaled")["gradients_at_init"]["max_weight"]
    assert f"{peak16:.3f}" == "0.716" and "0.716" in view["gradients"]
    assert ("almost one-hot" not in view["gradients"]) if lang == "en" else ("一开始就接近独热" not in view["gradients"])


@pytest.mark.parametrize("lang", LANGS)
def test_the_quadratic_answer_quotes_scores_and_both_products(lang):
    from course.lessons import ch09

    numbers = ch09.interview_numbers()
    assert numbers["attention_ops"] == numbers["n"] ** 2 * numbers["width"]  # the scores alone
    answer = i18n.t("ch09.interview.quadratic.answer", lang, **numbers)
    for key in ("attention_ops", "attention_total", "rnn_ops", "rnn_total"):
        assert f"{numbers[key]:,}" in answer, key
    assert numbers["attention_total"] == 2 * numbers["attention_ops"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_long_sequence_gap_at_the_smallest_n_is_quoted_from_the_shipped_figures(lang):
    import json

    rows = json.loads((PROJECT_ROOT / "course/lessons/data/attention_cost.json").read_text())["rows"]
    at = {r["variant"]: r for r in rows if r["n"] == min(x["n"] for x in rows)}
    time_gap, memory_gap = at["full"]["ms"] / at["linear"]["ms"], at["full"]["mib"] / at["linear"]["mib"]
    after = texts(lang)["ch10.long.after"]
    assert f"{time_gap:.1f}" == "2.6" and round(memory_gap) == 4 and "256" in after
    assert "2.6" in after and "4" in after


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_2_states_the_scarcity_that_chapter_10_refers_to(lang):
    assert ("scarce" in texts(lang)["ch02.cues_body"]) if lang == "en" else ("稀缺" in texts(lang)["ch02.cues_body"])
    assert ("Chapter 2" in texts(lang)["ch10.scarce.body"]) if lang == "en" else ("第 2 章" in texts(lang)["ch10.scarce.body"])


@pytest.mark.parametrize("lang", LANGS)
def test_the_nadaraya_watson_training_text_quotes_the_runs_it_describes(lang):
    from course.lessons import ch02

    data = ch02.default_data()
    mse = lambda w: ch02.mse(ch02.nw_predict(data, w)[0], data.y_truth)  # noqa: E731
    short = list(ch02.train_w_steps(data, epochs=10, lr=0.5, seed=0))[-1][1]
    default = list(ch02.train_w_steps(data, epochs=ch02.DEFAULT_EPOCHS, lr=ch02.DEFAULT_LR, seed=0))[-1][1]
    body = texts(lang)["ch02.train_body"]
    quoted = [f"{short:.2f}", f"{mse(short):.3f}", f"{mse(3.0):.3f}", f"{default:.2f}", f"{mse(default):.3f}"]
    assert quoted == ["1.70", "0.165", "0.056", "3.61", "0.049"]
    assert all(q in body for q in quoted), quoted
    assert mse(default) < mse(3.0)  # the default run now beats the slider's w = 3


@pytest.mark.parametrize("lang", LANGS)
def test_the_missing_checkpoint_note_states_the_shipped_recipe(lang):
    minutes = sorted(r["minutes"] for r in demos.shipped_recipes().values())
    assert "{minutes}" in texts(lang)["demos.common.missing"]
    assert "15" not in texts(lang)["demos.common.missing"] + texts(lang)["demos.common.missing_all"]
    assert f"20 {'to' if lang == 'en' else '到'} 55" in texts(lang)["demos.common.missing_all"]
    assert (minutes[0], minutes[-1]) == (20, 55)


@pytest.mark.parametrize("lang", LANGS)
def test_the_paper_map_and_the_source_map_name_their_targets(lang):
    c = texts(lang)
    assert ("Figure 1" in c["ch08.papers.sutskever"]) if lang == "en" else ("图 1" in c["ch08.papers.sutskever"])
    assert ("sections 1 to 3" in c["ch08.papers.vaswani"]) if lang == "en" else ("第 1 到 3 节" in c["ch08.papers.vaswani"])
    assert all(f in c["ch08.papers.luong"] for f in ("h_t^\\top \\bar h_s", "W_a \\bar h_s", "\\tanh"))
    for url in ("https://github.com/bentrevett/pytorch-seq2seq",
                "https://pytorch.org/tutorials/intermediate/seq2seq_translation_tutorial.html",
                "https://nlp.seas.harvard.edu/annotated-transformer/"):
        assert f"({url})" in c["ch08.code.after"]


@pytest.mark.slow
def test_what_the_trained_attention_texts_say_holds_for_the_shipped_models():
    """ch04's learned alignment (mostly diagonal, spread out, the last steps read the end), the heads of
    chapter 5 (some rest on the full stop) and chapter 7's last-layer cross-attention (most characters on
    the word they translate)."""
    import pandas as pd

    from course.translation import trained_views
    from course.translation.checkpoint import load_checkpoint
    from course.translation.decoding import translate

    if not all((PROJECT_ROOT / "checkpoints" / f"{n}.pt").is_file() for n in ("bahdanau", "transformer")):
        pytest.skip("the shipped checkpoints are not here")
    report = json.loads((PROJECT_ROOT / "checkpoints" / "bahdanau.bleu.json").read_text(encoding="utf-8"))
    example = trained_views.picked_example(report)
    bahdanau = load_checkpoint(PROJECT_ROOT / "checkpoints" / "bahdanau.pt")
    result = translate(bahdanau.model, example["en"], bahdanau.src_vocab, bahdanau.tgt_vocab)
    assert result.text == example["reference"]  # the page's sentence is translated right, as it says
    frame = demos.cross_attention_frame(result)
    tops = trained_views.top_sources(frame)
    assert trained_views.monotone_share(frame) >= 0.8 and [c for _, c, _ in tops[-2:]] == [".", "."]
    assert sum(w < 0.9 for _, _, w in tops) >= len(tops) - 1  # spread over several pieces, not one-hot

    transformer = load_checkpoint(PROJECT_ROOT / "checkpoints" / "transformer.pt")
    result = translate(transformer.model, "i have two brothers.", transformer.src_vocab, transformer.tgt_vocab)
    resting = 0
    for layer in range(3):
        for head in range(4):
            values, rows, cols = demos.head_matrix(result, "cross", layer, head)
            reads = [c for _, c, _ in trained_views.top_sources(pd.DataFrame(values, index=rows, columns=cols))]
            resting += reads.count(".") >= len(reads) / 2
    assert resting >= 1
    mean = sum(demos.head_matrix(result, "cross", 2, h)[0] for h in range(4)) / 4
    _, rows, cols = demos.head_matrix(result, "cross", 2, 0)
    reads = dict((r, c) for r, c, _ in trained_views.top_sources(pd.DataFrame(mean, index=rows, columns=cols)))
    assert [reads[c] for c in "我有两兄"] == ["i", "have", "two", "brothers"]


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_6_says_its_random_cross_attention_is_an_alignment_by_chance(lang):
    from course.lessons import ch06

    weights = ch06.attend("cross")["weights"]
    assert weights.loc["我"].idxmax() != "I" and weights.loc["绿茶"].idxmax() != "green"  # not a translation
    text = i18n.t("ch06.example_after_cross", lang, tops=ch06.top_keys(weights))
    assert ("random" in text and "by chance" in text) if lang == "en" else ("随机" in text and "碰巧" in text)
    assert f"我 → {weights.loc['我'].idxmax()} ({weights.loc['我'].max():.2f})" in text


# ---- the fourth audit's fixes ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_linear_attention_weights_sum_to_1_only_with_the_normaliser_the_text_names(lang):
    import torch

    from course.lessons import ch10

    q, k, v = ch10.random_inputs(6, 4, seed=2)
    phi_q, phi_k = ch10.feature_map(q[0]), ch10.feature_map(k[0])  # (6, 4) each
    sims = phi_q @ phi_k.T  # (6, 6): phi(q_i)^T phi(k_j), not normalised
    normalised = sims / (phi_q @ phi_k.sum(0)).unsqueeze(-1)  # divided by phi(q)^T sum_l phi(k_l)
    torch.testing.assert_close(normalised.sum(-1), torch.ones(6))
    assert (sims.sum(-1) - 1).abs().min() > 0.5  # without the normaliser the rows do not sum to 1
    torch.testing.assert_close(ch10.linear_attention(q, k, v)[0], normalised @ v[0])  # the page's example divides
    c = texts(lang)
    normaliser = "\\phi(q)^\\top \\sum_l \\phi(k_l)"
    assert normaliser in c["ch10.scarce.after"] and "\\phi(q_i)^\\top \\sum_l \\phi(k_l)" in c["ch10.long.body"]
    body = c["ch10.long.body"]
    if lang == "en":
        assert "without the division" in c["ch10.scarce.after"] and "keeps them summing to 1" not in c["ch10.scarce.after"]
        assert "approximates softmax\n  attention itself" in body and "projects the keys and the values" in body
    else:
        assert "如果不除以" in c["ch10.scarce.after"] and "近似的是 softmax 注意力本身" in body and "把键和值都" in body


def _first_step_at(run, level=0.9):
    """The first greedy test step whose sequence accuracy reaches `level` (None if none does)."""
    return next((x["step"] for x in run["tests"] if x["seq_acc"] >= level), None)


@pytest.mark.parametrize("lang", LANGS)
def test_the_one_head_claim_quotes_when_the_shipped_runs_pass_90_percent(lang):
    from course.lessons import training_lab as tl

    if not tl.RESULTS.is_file():
        pytest.skip("no shipped results file")
    results = tl.load_results()
    steps = {(task, variant, seed): _first_step_at(tl.find_run(results, task, variant, seed))
             for task in ("copy", "reverse", "sort") for variant in ("baseline", "one_head") for seed in tl.SEEDS}
    every = results["config"]["snapshot_every"]
    for task in ("copy", "reverse"):  # one greedy test sooner on both seeds
        assert all(steps[(task, "one_head", s)] + every == steps[(task, "baseline", s)] for s in tl.SEEDS), steps
    quoted = [(steps[("copy", "one_head", s)], steps[("copy", "baseline", s)]) for s in tl.SEEDS]
    assert quoted == [(100, 125), (100, 125)] and every == 25
    assert [(steps[("reverse", "one_head", s)], steps[("reverse", "baseline", s)]) for s in tl.SEEDS] == [(100, 125),
                                                                                                       (125, 150)]
    assert [(steps[("sort", "one_head", s)], steps[("sort", "baseline", s)]) for s in tl.SEEDS] == [(150, 125),
                                                                                                 (125, 125)]
    claim = texts(lang)["lab.ablations.one_head.claim"]
    numbers = [int(x) for x in re.findall(r"\d+", claim)]
    expected = {"en": [90, 25, 100, 125, 100, 125, 0, 125, 150, 1, 150, 125, 125, 125],
                "zh": [25, 90, 100, 125, 0, 100, 125, 1, 125, 150, 150, 125, 125, 125]}
    assert numbers == expected[lang], numbers
    assert ("split the work" not in claim) if lang == "en" else ("分担工作" not in claim)


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
def test_the_encoder_self_attention_text_quotes_each_layers_largest_weights(lang):
    """trained.transformer.after: per layer of the shipped Transformer, on the sentence the page opens with, the
    mean largest weight of a row per head and in the mean-of-heads map the page draws."""
    from course.app import trained_ui
    from course.translation.checkpoint import load_checkpoint
    from course.translation.decoding import translate

    path = PROJECT_ROOT / "checkpoints" / "transformer.pt"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    loaded = load_checkpoint(path)
    result = translate(loaded.model, trained_ui.HEADS_SENTENCE, loaded.src_vocab, loaded.tgt_vocab)
    quoted = []
    for layer in range(3):
        maps = [demos.head_matrix(result, "encoder", layer, h)[0] for h in range(4)]  # (n, n) each
        mean = sum(maps) / 4  # what the page draws
        quoted.append((f"{sum(m.max(-1).mean() for m in maps) / 4:.2f}", f"{mean.max(-1).mean():.2f}"))
        if layer == 2:
            tops = [result.source_tokens[j] for j in mean.argmax(-1)]
    assert quoted == [("1.00", "0.45"), ("0.41", "0.34"), ("0.57", "0.52")], quoted
    assert tops.count(".") == 4 and len(tops) == 5
    after = texts(lang)["trained.transformer.after"]
    assert trained_ui.HEADS_SENTENCE in after and all(a in after and b in after for a, b in quoted)
    assert ("spread over the sentence and often" not in after) if lang == "en" else ("权重分散在整句上，\n而且" not in after)


@pytest.mark.parametrize("lang", LANGS)
def test_local_attention_predicts_its_centre_only_in_local_p_in_both_chapters(lang):
    c = texts(lang)
    for key in ("ch10.kinds.body", "ch08.timeline.global_local.detail"):
        assert "local-m" in c[key] and "local-p" in c[key] and "p_t = t" in c[key], key
    old = "first predicts a centre" if lang == "en" else "先预测一个中心"
    assert old not in c["ch10.kinds.body"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_luong_reading_names_equations_8_and_9_and_the_zh_causal_window_is_unambiguous(lang):
    luong = texts(lang)["ch08.papers.luong"]
    assert "3.1" in luong and ("Equation (8)" in luong and "equation (9)" in luong if lang == "en"
                               else "式 (8)" in luong and "式 (9)" in luong)
    assert "往后" not in texts("zh")["ch08.local.never_all"] and "之后的键" in texts("zh")["ch08.local.never_all"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_rotary_intro_says_the_code_uses_the_transpose_of_chapter_6s_matrices(lang):
    import numpy as np

    from course.lessons import ch10
    from course.lessons.ch06 import positions

    d, T = 8, 5
    X = np.random.default_rng(1).normal(size=(T, d))
    out = ch10.rope_by_rotation(X)
    transposed = np.stack([np.concatenate([positions.rotation(m, j, d).T @ X[m, 2 * j: 2 * j + 2]
                                           for j in range(d // 2)]) for m in range(T)])
    as_is = np.stack([np.concatenate([positions.rotation(m, j, d) @ X[m, 2 * j: 2 * j + 2]
                                      for j in range(d // 2)]) for m in range(T)])
    np.testing.assert_allclose(out, transposed, atol=1e-12)
    assert np.abs(out - as_is).max() > 0.1  # R_j(m) itself would turn the other way
    intro = texts(lang)["ch10.rope.intro"]
    assert "R_j(m)^\\top = R_j(-m)" in intro and ("transpose" in intro if lang == "en" else "转置" in intro)
    assert "(\\sin, \\cos)" in intro and "e^{i m \\omega_j}" in intro


def test_graph_diameter_by_hand():
    from course.lessons import ch08

    assert ch08.graph_diameter(((0, 1), (1, 2), (2, 3)), 4) == 3  # a path of four words
    assert ch08.graph_diameter(((0, 1), (0, 2), (0, 3)), 4) == 2  # a star: leaf, hub, leaf
    assert ch08.chain_arcs(4) == ((1, 0), (2, 1), (3, 2))
    with pytest.raises(ValueError, match="not connected"):
        ch08.graph_diameter(((0, 1),), 3)


@pytest.mark.parametrize("lang", LANGS)
def test_the_parse_needs_4_layers_because_its_diameter_is_4_and_a_chain_would_need_7(lang):
    from course.lessons import ch08
    from solutions.ex08_structured_masks import graph_mask

    n = len(ch08.TOKENS)
    claims = ch08.local_claims()
    assert (claims["parse_diameter"], claims["chain_diameter"]) == (4, 7)
    assert claims["graph_settle"] == claims["parse_diameter"]  # the layers the page counts are the diameter
    chain = graph_mask(ch08.tree_adjacency(n, ch08.chain_arcs(n)))
    assert int(chain.sum()) == claims["graph_kept"]  # as many scores as the parse
    assert ch08.layers_to_settle(chain) == 7 and not ch08.reach(chain, 6).all()
    hub = ch08.TOKENS.index("sat")
    assert ch08.reach(ch08.local_mask("graph"), 2)[hub].all()  # every word at most two edges from "sat"
    after = i18n.t("ch08.local.after", lang, **claims)
    assert "diameter" in after if lang == "en" else "直径" in after
    assert "4 edges" in after.replace("\n", " ") if lang == "en" else "4 条边" in after
    assert ("7, so it\nwould need 7 layers" in after) if lang == "en" else ("直径却是 7，因此要 7 层" in after)
    assert ("belong together" not in after) if lang == "en" else ("语法上相关的词" not in after)


def test_the_ex08_and_ex09_docstrings_match_between_stub_and_reference_and_say_what_the_checks_hold():
    import inspect

    import torch

    from exercises import ex08_structured_masks as stub08
    from exercises import ex09_rotary as stub09
    from grader.checks import ex09 as checks09
    from solutions import ex08_structured_masks as ref08
    from solutions import ex09_rotary as ref09

    for stub, ref in ((stub08.graph_mask, ref08.graph_mask), (stub09.RotaryEmbedding.__init__, ref09.RotaryEmbedding.__init__)):
        assert inspect.signature(stub) == inspect.signature(ref) and stub.__doc__ == ref.__doc__, stub.__qualname__
    assert "Do not modify adjacency in place" in ref08.graph_mask.__doc__
    adjacency = torch.tensor([[0, 1], [0, 0]])
    ref08.graph_mask(adjacency)
    assert adjacency.tolist() == [[0, 1], [0, 0]]  # the reference leaves it as it was

    doc = ref09.RotaryEmbedding.__init__.__doc__
    assert "any floating-point dtype" in doc and "float32" in doc and "float64" in doc
    tables = [c for c in checks09.build() if c.procedure == "construct" and "capture" in c.spec]
    built_in = {c.spec.get("dtype", torch.float32) for c in tables}  # the module is moved to this dtype first
    assert built_in == {torch.float32, torch.float64}
    assert all(c.tolerance_dtype == torch.float32 for c in tables)  # compared at float32 precision
    module = ref09.RotaryEmbedding(4, 6)
    assert module.cos.dtype == torch.float32 and module.to(torch.float64).cos.dtype == torch.float64


def test_the_ex11_docstrings_match_between_stub_and_reference_and_the_cache_layout_is_the_one_judged():
    import inspect

    from exercises import ex11_grouped_kv_cache as stub
    from grader.checks import ex11 as checks11
    from solutions import ex11_grouped_kv_cache as ref

    members = lambda m: (m, m.repeat_kv, m.GroupedQueryAttention, m.GroupedQueryAttention.__init__,  # noqa: E731
                         m.GroupedQueryAttention.forward, m.GroupedQueryAttention.step)
    for a, b in zip(members(stub)[1:], members(ref)[1:]):
        assert a.__doc__ == b.__doc__, a.__qualname__
        if callable(a) and not isinstance(a, type):
            assert inspect.signature(a) == inspect.signature(b), a.__qualname__
    assert inspect.signature(stub.GroupedQueryAttention) == inspect.signature(ref.GroupedQueryAttention)
    step_doc, forward_doc = ref.GroupedQueryAttention.step.__doc__, ref.GroupedQueryAttention.forward.__doc__
    assert "(B, num_kv_heads, t, d_head)" in step_doc and "axis 2" in step_doc
    assert "h // (num_heads // num_kv_heads)" in forward_doc and "n_k - n_q + i" in forward_doc
    # the property that judges the cache holds that layout: (B, num_kv_heads, positions so far, d_head)
    decode = next(c for c in checks11.build() if c.procedure == "kv_decode" and c.spec["chunks"] == [3, 1, 2, 1])
    assert decode.spec["init_kwargs"]["num_kv_heads"] == 4 and decode.spec["X"].shape == (2, 7, 16)
    judge = next(p for p in decode.properties if p.__name__ == "_cache_shapes")
    right = {f"cache_shape.{i}": f"(2, 4, {t}, 2), (2, 4, {t}, 2)" for i, t in enumerate((3, 4, 6, 7))}
    assert judge(right, decode.spec) is None
    heads_last = dict(right, **{"cache_shape.1": "(2, 4, 2, 4), (2, 4, 2, 4)"})
    assert judge(heads_last, decode.spec)[1]["step"] == 2


# ---- the fourth read: paths, hard attention ---------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_chapter_1_says_attention_makes_only_the_decoder_to_source_path_one_step(lang):
    """Between two source positions the recurrent encoder keeps its n - 1 steps; self-attention (chapter 6) is
    what makes that path one step."""
    from course.lessons import ch01

    steps = ch01.path_steps(40, 3, False)
    assert steps["rnn"] == 40 and steps["self-attention"] == 1
    body = " ".join(texts(lang)["ch01.grad_path.text"].split())
    assert "O(n)" in body and "6" in body
    if lang == "en":
        assert "Only a direct connection from the decoder" not in body
        assert "between two source positions still runs through the recurrent encoder" in body
    else:
        assert "只有让解码器直接连到每个编码器状态" not in body and "两个源位置之间的路径仍要穿过循环编码器" in body


@pytest.mark.parametrize("lang", LANGS)
def test_hard_attention_saves_the_read_of_the_values_not_the_scoring(lang):
    body = " ".join(texts(lang)["ch10.kinds.body"].split())
    if lang == "en":
        assert "saves the cost of reading everything" not in body
        assert "still scores every position" in body and "only the read of the values" in body
    else:
        assert "省去了读取全部内容的开销" not in body
        assert "仍要给每个位置打分" in body and "省下的只是读取值的开销" in body


def test_the_zh_texts_use_one_term_each_for_word_pieces_and_one_hot_and_no_doubled_punctuation():
    zh = texts("zh")
    for key, body in zh.items():
        assert "词片" not in body, key  # word pieces: 子词
        assert "one-hot" not in body.lower() and "one hot" not in body.lower(), key  # 独热
        assert not re.search("[。，；、][。，；、]", body), key  # e.g. an output's 。 followed by the sentence's ，
    assert "子词" in zh["demos.common.pieces_note"] and "独热" in zh["ch07.inside.saturated"]
    smoothing = zh["lab.ablations.label_smoothing.what"]
    assert "算术" in smoothing and "算法" not in smoothing  # chapter 7 gives the arithmetic (0.9 + 0.1 / 10)
    assert "“他的女儿已经成为了一个漂亮的女人。”，log P" in zh["decoding.beam.after"]
