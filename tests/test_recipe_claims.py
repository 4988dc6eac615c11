"""Claims of the training-recipe and trained-attention texts (chapter 7, the lab's no-PE, no-warmup and
label-smoothing runs): every figure is computed here, from the shipped results, the checkpoint and the
course's own functions, and looked up in both languages."""

import json
import re

import pytest

from course.common import i18n
from course.lessons import lab_symmetry, lab_views
from course.lessons.lab_tasks import DIGIT_TASKS
from course.lessons import training_lab as tl

LANGS = i18n.LANGS
SEP = {"en": ", ", "zh": "、"}  # how each language lists figures
SHIPPED = tl.load_results() if tl.RESULTS.is_file() else None
needs_results = pytest.mark.skipif(SHIPPED is None, reason="no shipped results file")


def text(key, lang):
    """One catalog string with its line breaks read as spaces (Markdown joins them)."""
    return " ".join(i18n.t(key, lang).split("\n"))


def pct(x, places=1):
    """100 * x with `places` decimals and no trailing .0 ('93.8%', '100%')."""
    out = f"{100 * x:.{places}f}"
    return (out.rstrip("0").rstrip(".") if "." in out else out) + "%"


def runs(task, variant):
    """The shipped runs of (task, variant), one per seed."""
    return [tl.find_run(SHIPPED, task, variant, s) for s in tl.SEEDS]


def sci(x):
    """'1.3e-5': two significant figures in the texts' notation."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


# ---- the lab: why sort learns without positions ------------------------------------------------------------


@needs_results
@pytest.mark.parametrize("lang", LANGS)
def test_the_no_pe_claim_quotes_the_order_free_bound_the_gaps_and_the_shipped_runs(lang):
    claim = text("lab.ablations.no_pe.claim", lang)
    bounds = [lab_symmetry.order_free_bound(tl.LabConfig(seed=s)) for s in tl.SEEDS]
    assert " / ".join(pct(b[0]) for b in bounds) == "29.8% / 29.5%"
    assert f"{100 * sum(b[1] for b in bounds) / len(bounds):.2f}%" == "0.02%"
    copy = runs("copy", "no_pe")
    assert all(r["final_token_acc"] <= b[0] and r["final_seq_acc"] == 0 for r, b in zip(copy, bounds))
    assert " / ".join(pct(r["final_token_acc"], 0) for r in copy) == "22% / 21%"
    assert lab_symmetry.source_order_gap(False) < 1e-6 and f"{lab_symmetry.source_order_gap(True):.2f}" == "0.05"
    sort, base = runs("sort", "no_pe"), runs("sort", "baseline")
    quoted = {"sort": " / ".join(pct(r["final_seq_acc"]) for r in sort),
              "base": " / ".join(pct(r["final_seq_acc"]) for r in base)}
    assert quoted == {"sort": "94.5% / 97.7%", "base": "93.8% / 100%"}
    causal, full = lab_symmetry.causal_position_spread()
    assert f"{causal:.2f}" == "0.33" and full < 1e-6
    rows = lab_symmetry.shipped_bos_rows(SHIPPED)[1:]  # positions 2..8
    uniform = lab_symmetry.uniform_bos(len(rows) + 1)[1:]
    for figure in ("29.8% / 29.5%", "0.02%", "22% / 21%", "1e-6", "0.05", quoted["sort"], quoted["base"], "0.33",
                   SEP[lang].join(f"{x:.2f}" for x in rows), SEP[lang].join(f"{x:.2f}" for x in uniform)):
        assert figure in claim, figure


# ---- the lab: no warmup, label smoothing ----------------------------------------------------------------


@needs_results
@pytest.mark.parametrize("lang", LANGS)
def test_the_no_warmup_claim_quotes_when_the_shipped_runs_pass_90_percent(lang):
    every = SHIPPED["config"]["snapshot_every"]
    steps = {}
    for task in DIGIT_TASKS:
        for seed in tl.SEEDS:
            fast, slow = (lab_views.first_step_reaching(tl.find_run(SHIPPED, task, v, seed))
                          for v in ("no_warmup", "baseline"))
            assert fast + every == slow, (task, seed)  # one greedy test sooner, every task and seed
            steps[(task, seed)] = (fast, slow)
        finals = [abs(a["final_seq_acc"] - b["final_seq_acc"]) for a, b in zip(runs(task, "no_warmup"),
                                                                                 runs(task, "baseline"))]
        assert max(finals) < 0.03, (task, finals)
    pairs = [abs(a["final_token_acc"] - b["final_token_acc"]) for a, b in zip(runs("tatoeba", "no_warmup"),
                                                                               runs("tatoeba", "baseline"))]
    assert max(pairs) < 0.02
    assert steps[("copy", 0)] == steps[("copy", 1)] and steps[("sort", 0)] == steps[("sort", 1)]  # "twice"
    listed = [*steps[("copy", 0)], *steps[("reverse", 0)], *steps[("reverse", 1)], *steps[("sort", 0)]]
    numbers = [int(x) for x in re.findall(r"\d+", text("lab.ablations.no_warmup.claim", lang))]
    head = {"en": [32, 90, every], "zh": [32, every, 90]}[lang]
    assert numbers == [*head, *listed, 3, 2], numbers


@needs_results
@pytest.mark.parametrize("lang", LANGS)
def test_the_label_smoothing_texts_quote_the_targets_the_reach_and_the_loss_floor(lang):
    from course.translation import recipe

    config = tl.variant_config("label_smoothing")
    target = recipe.smoothed_target(config.vocab_size, 1, config.label_smoothing)
    assert (f"{float(target[1]):.2f}", f"{float(target[0]):.2f}") == ("0.91", "0.01")
    what = text("lab.ablations.label_smoothing.what", lang)
    assert "0.91" in what and "0.01" in what
    for task in DIGIT_TASKS:
        for seed in tl.SEEDS:
            smooth, base = (tl.find_run(SHIPPED, task, v, seed) for v in ("label_smoothing", "baseline"))
            assert abs(smooth["final_seq_acc"] - base["final_seq_acc"]) < 0.03
            reach = (lab_views.first_step_reaching(smooth), lab_views.first_step_reaching(base))
            assert (reach == (150, 125)) if (task, seed) == ("sort", 1) else reach[0] == reach[1], (task, seed)
    quoted = {"copy": (0.095, 0.095), "reverse": (0.095, 0.095), "sort": (0.11, 0.097)}
    for task, figures in quoted.items():
        for run, figure in zip(runs(task, "label_smoothing"), figures):
            assert abs(run["final_loss"] - figure) < 0.0006, (task, run["final_loss"], figure)
    assert [r["final_loss"] for r in runs("copy", "baseline")] == [0.0025, 0.0028]
    floor = recipe.smoothing_losses(config.vocab_size, config.label_smoothing)
    assert (f"{floor['best'][0]:.3f}", f"{floor['best_p']:.2f}") == ("0.094", "0.91")
    claim = text("lab.ablations.label_smoothing.claim", lang)
    for figure in ("150", "125", "0.095 / 0.095", "0.11 / 0.097", "0.0025 / 0.0028", "0.91", "0.094"):
        assert figure in claim, figure


# ---- chapter 7: the recipe ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint():
    """The shipped Transformer's file (read-only), or a skip."""
    from course.translation import demos

    path = demos.checkpoint_path("transformer")
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    return path


@pytest.mark.parametrize("lang", LANGS)
def test_the_recipe_text_quotes_the_checkpoints_schedule_smoothing_and_average(lang, checkpoint):
    from course.translation import recipe, recipe_views
    from course.translation.checkpoint import read_checkpoint

    found = recipe_views.shipped_recipe(checkpoint)
    assert (found["lr"], found["warmup"], found["label_smoothing"], found["ema"]) == (1.4e-3, 400, 0.1, 0.998)
    frame = recipe.schedule_frame(found["lr"], found["warmup"], found["steps"])
    top = frame.loc[frame["lr"].idxmax()]
    assert int(top["step"]) == found["warmup"] - 1  # the last warmup step (counting from 0)
    assert f"{top['lr'] * 1e3:.2f}e-3" == "1.39e-3" and sci(frame["lr"].iloc[-1]) == "2.8e-5"
    assert abs(frame["lr"].iloc[-1] / found["lr"] - 0.02) < 1e-4 and found["steps"] == 7789
    small = recipe.smoothing_losses(recipe_views.SMOOTHING_CLASSES, found["label_smoothing"])
    figures = {"confident_plain": f"{small['confident'][0]:.3f}", "hedged_plain": f"{small['hedged'][0]:.3f}",
               "hedged_smooth": f"{small['hedged'][1]:.3f}", "confident_smooth": f"{small['confident'][1]:.3f}",
               "best": f"{small['best'][1]:.3f}", "best_p": f"{small['best_p']:.2f}"}
    assert figures == {"confident_plain": "0.010", "hedged_plain": "0.105", "hedged_smooth": "0.392",
                       "confident_smooth": "0.489", "best": "0.390", "best_p": "0.92"}
    assert small["hedged"][1] < small["confident"][1] and small["confident"][0] < small["hedged"][0]
    payload = read_checkpoint(checkpoint)
    characters = payload["config"]["tgt_vocab_size"]
    cap = recipe.smoothing_losses(characters, found["label_smoothing"])["best_p"]
    assert (f"{characters:,}", f"{cap:.2f}") == ("2,388", "0.90")
    metrics = payload["metrics"]
    ema = {"window": f"{recipe.ema_window(found['ema']):.0f}",
           "share": f"{100 * recipe.ema_recent_share(found['ema'], 500):.0f}%",
           "updates": f"{metrics['ema']['updates']:,}", "avg": f"{metrics['valid_loss']:.3f}",
           "raw": f"{metrics['valid_loss_raw']:.3f}"}
    assert ema == {"window": "500", "share": "63%", "updates": "3,933", "avg": "1.647", "raw": "1.648"}
    body = " ".join(text(f"ch07.recipe.{k}", lang) for k in ("schedule_after", "smoothing_after", "ema"))
    for figure in ("400", "1.39e-3", "1.4e-3", "2.8e-5", "7,789", *figures.values(), "2,388", "0.90",
                   *ema.values()):
        assert figure in body, figure


# ---- chapter 7: what the trained attention relies on ------------------------------------------------------


@pytest.fixture(scope="module")
def study():
    """The head study shipped beside the checkpoint (DataFrames), or a skip."""
    from course.translation import head_study

    found = head_study.load_shipped()
    if found is None:
        pytest.skip("no checkpoints/transformer.heads.json")
    return found


def by(table, kind, layer, column):
    """One value of a (kind, layer, ...) table."""
    return float(table[(table["kind"] == kind) & (table["layer"] == layer)][column].iloc[0])


@pytest.mark.parametrize("lang", LANGS)
def test_the_bos_and_saturation_texts_quote_the_shipped_study(lang, study):
    from course.translation import head_study

    bos = text("ch07.inside.bos", lang)
    shares = [f"{x:.2f}" for x in study["bos"]["bos"]]
    assert shares == ["0.32", "0.32", "0.39"] and f"{study['bos']['uniform'].iloc[0]:.2f}" == "0.16"
    assert all(b / u > 1.9 for b, u in zip(study["bos"]["bos"], study["bos"]["uniform"]))  # "twice"
    listed = {"en": "0.32, 0.32 and 0.39", "zh": "0.32、0.32 和 0.39"}[lang]
    assert listed in bos and "0.16" in bos
    sat, grads, fresh = study["saturation"], study["gradients"], study["fresh_gradients"]
    later = [by(sat, k, n, "largest") for k in ("encoder", "decoder") for n in (2, 3)]
    ratios = [by(grads, k, n, "scores") / by(grads, k, 1, "scores") for k in ("encoder", "decoder") for n in (2, 3)]
    figures = [f"{by(sat, 'encoder', 1, 'largest'):.3f}", f"{by(sat, 'decoder', 1, 'largest'):.3f}",
               f"{min(later):.2f}-{max(later):.2f}",
               f"{head_study.softmax_jacobian_norm(0.997, 8):.4f}", f"{head_study.softmax_jacobian_norm(0.5, 8):.2f}",
               sci(by(grads, "encoder", 1, "scores")), sci(by(grads, "decoder", 1, "scores")),
               f"{round(min(ratios), -1):.0f}", f"{round(max(ratios), -1):.0f}",
               sci(min(by(grads, k, n, "scores") for k in ("encoder", "decoder") for n in (2, 3))),
               sci(max(by(grads, k, n, "scores") for k in ("encoder", "decoder") for n in (2, 3))),
               f"{by(fresh, 'encoder', 1, 'largest'):.2f}", f"{by(fresh, 'decoder', 1, 'largest'):.2f}",
               f"{min(by(fresh, k, n, 'largest') for k in ('encoder', 'decoder') for n in (2, 3)):.2f}-"
               f"{max(by(fresh, k, n, 'largest') for k in ('encoder', 'decoder') for n in (2, 3)):.2f}"]
    assert figures == ["0.999", "0.999", "0.35-0.56", "0.0036", "0.34", "1.3e-5", "4.6e-5", "380", "730",
                       "6.2e-3", "1.9e-2", "0.98", "0.98", "0.14-0.28"], figures
    saturated = text("ch07.inside.saturated", lang)
    for figure in figures:
        assert figure in saturated, figure


@pytest.mark.parametrize("lang", LANGS)
def test_the_bos_value_is_the_same_in_every_sentence_only_in_layer_1(lang, study):
    """The spread of <bos>'s value over the test sentences, by decoder layer, as the text and the table say."""
    spreads = [float(x) for x in study["bos"]["spread"]]
    assert [f"{x:.3f}" for x in spreads] == ["0.000", "0.226", "0.639"], spreads
    assert spreads[0] < 1e-5 < 0.1 < spreads[1] < spreads[2]  # float rounding alone in layer 1
    assert study["pairs"] == 18
    bos = text("ch07.inside.bos", lang)
    listed = {"en": "0.000, 0.226 and 0.639", "zh": "0.000、0.226 和 0.639"}[lang]
    assert listed in bos and ("18 test sentences" if lang == "en" else "18 个测试句") in bos
    old = {"en": "it is the same in every sentence", "zh": "而且在每个句子里都一样"}[lang]
    assert old not in bos


@pytest.mark.parametrize("lang", LANGS)
def test_the_saturation_text_says_what_training_did_to_layer_1_and_its_value_gradients(lang, study):
    """Training made layer 1 more saturated and cut its score gradient 14-15 times; W_v's gradient in layer 1 is
    as large as in layers 2-3 in the encoder but about half in the decoder."""
    sat, grads, fresh = study["saturation"], study["gradients"], study["fresh_gradients"]
    fell = {k: by(fresh, k, 1, "scores") / by(grads, k, 1, "scores") for k in ("encoder", "decoder")}
    assert [f"{x:.0f}" for x in fell.values()] == ["14", "15"], fell
    assert all(by(fresh, k, 1, "largest") < by(sat, k, 1, "largest") for k in ("encoder", "decoder"))
    w_v = {(k, n): by(grads, k, n, "W_v") for k in ("encoder", "decoder") for n in (1, 2, 3)}
    assert [f"{w_v[k, n]:.2f}" for k in ("encoder", "decoder") for n in (1, 2, 3)] == \
        ["0.25", "0.25", "0.32", "0.31", "0.56", "0.61"], w_v
    assert w_v["encoder", 1] >= 0.75 * max(w_v["encoder", 2], w_v["encoder", 3])  # "as large as"
    assert 0.45 < w_v["decoder", 1] / ((w_v["decoder", 2] + w_v["decoder", 3]) / 2) < 0.6  # "about half"
    saturated = text("ch07.inside.saturated", lang)
    for figure in ("0.98", "0.999", "14", "15", sci(by(fresh, "encoder", 1, "scores")),
                   sci(by(fresh, "decoder", 1, "scores")), "0.25", "0.32", "0.31", "0.56", "0.61"):
        assert figure in saturated, figure
    listed = {"en": ["(0.25 and 0.32)", "(0.56 and 0.61)"], "zh": ["（0.25 和 0.32）", "（0.56 和 0.61）"]}[lang]
    assert all(pair in saturated for pair in listed)
    gone = {"en": ["not where training ended up", "(0.25 to 0.61)"], "zh": ["饱和不是训练的结果", "（0.25 到 0.61）"]}[lang]
    assert not any(phrase in saturated for phrase in gone)


@pytest.mark.parametrize("lang", LANGS)
def test_the_saturation_text_blames_the_embedding_scale_with_the_fresh_models_figures(lang, study, checkpoint):
    """A fresh model with N(0, 1/d) embeddings starts spread out in layer 1: the one-hot start is the N(0, 1)
    embeddings times sqrt(d), the course's initialisation."""
    import torch

    from course.translation.checkpoint import read_checkpoint
    from course.translation.models import build_model

    unit = study["fresh_unit_saturation"]
    firsts = [f"{by(unit, k, 1, 'largest'):.2f}" for k in ("encoder", "decoder")]
    assert firsts == ["0.16", "0.30"], firsts
    laters = [{f"{by(unit, k, n, 'largest'):.2f}" for n in (2, 3)} for k in ("encoder", "decoder")]
    assert laters == [{"0.14"}, {"0.27"}], laters
    d = read_checkpoint(checkpoint)["config"]["num_hiddens"]
    assert d == 256 and "√256 = 16" in text("ch07.inside.saturated", lang)
    torch.manual_seed(0)
    model = build_model("transformer", {"src_vocab_size": 500, "tgt_vocab_size": 400, "num_hiddens": d})
    assert 0.95 < float(model.encoder.embedding.weight.std()) < 1.05  # N(0, 1): nn.Embedding's default
    tied = build_model("transformer", {"src_vocab_size": 500, "tgt_vocab_size": 400, "num_hiddens": d,
                                       "tie_embeddings": True})
    assert abs(float(tied.decoder.embedding.weight.std()) * d ** 0.5 - 1) < 0.05  # N(0, 1/d) when tied
    saturated = text("ch07.inside.saturated", lang)
    for figure in ("N(0, 1)", "N(0, 1/d)", *firsts, "0.14", "0.27"):
        assert figure in saturated, figure


@pytest.mark.parametrize("lang", LANGS)
def test_the_head_ablation_text_quotes_the_shipped_study(lang, study):
    table, chars = study["ablation"], study["characters"]
    assert chars == 270 and f"{100 / chars:.2f}" == "0.37"
    worst_acc = table["d_accuracy"].abs().max()
    assert f"{100 * worst_acc:.1f}" == "1.9" and round(worst_acc * chars) == 5
    worst = table.loc[table["d_loss"].idxmax()]
    assert (worst["kind"], worst["layer"], worst["head"], f"{worst['d_loss']:.3f}") == ("cross", 3, 4, "0.075")
    assert f"{100 * worst['d_loss'] / study['loss']:.0f}%" == "3%"
    costliest = table.sort_values("d_loss", ascending=False)
    top8, ninth = costliest.head(8), costliest.iloc[8]
    assert set(top8["kind"]) <= {"decoder", "cross"} and set(top8["layer"]) <= {2, 3}
    assert f"{top8['d_loss'].min():.3f}" == "0.029" and ninth["d_loss"] < 0.029
    first = table[(table["kind"] == "encoder") & (table["layer"] == 1)]
    assert first["d_loss"].abs().max() < 0.003
    after = text("ch07.inside.heads_after", lang)
    for figure in ("36", "1.9", "5", "0.075", "3%", "0.029", "0.003", "270", "0.37"):
        assert figure in after, figure


@pytest.mark.parametrize("lang", LANGS)
def test_the_chapter_5_heads_text_says_chapter_7_finds_the_work_shared_not_divided(lang, study):
    table = study["ablation"]
    assert len(table) == 36 and f"{100 * table['d_loss'].max() / study['loss']:.0f}%" == "3%"
    assert table["d_accuracy"].abs().max() < 0.02  # no head is indispensable
    after = text("trained.heads.after", lang)
    for figure in ("36", "3%", "7"):
        assert figure in after, figure
    old = {"en": "Nothing told the heads to divide the work", "zh": "没有人告诉这些头该如何分工"}[lang]
    assert old not in after and ("redundantly" in after if lang == "en" else "冗余" in after)


@pytest.mark.slow
def test_the_shipped_head_study_is_what_the_checkpoint_gives(checkpoint, study):
    """Recomputed from the checkpoint and its report (the command took 31 s at load 18): the shipped figures agree."""
    from course.translation import demos, head_study

    fresh = head_study.to_json(head_study.study(checkpoint, demos.read_bleu_report("transformer")))
    shipped = json.loads(head_study.shipped_path().read_text(encoding="utf-8"))
    assert fresh.keys() == shipped.keys()
    for key, value in shipped.items():
        if key in head_study.TABLES:
            for mine, theirs in zip(fresh[key], value, strict=True):
                for column, x in theirs.items():
                    y = mine[column]
                    assert y == x if isinstance(x, str) else y == pytest.approx(x, rel=1e-3, abs=1e-6), (key, column)
        else:
            assert fresh[key] == pytest.approx(value, rel=1e-4), key


@pytest.mark.parametrize("lang", LANGS)
def test_the_curves_caption_says_the_validation_loss_is_plain_and_the_training_loss_smoothed(lang, checkpoint):
    """The training command validates with sequence_loss's default (no smoothing) and trains with the recipe's."""
    import inspect

    from course.translation import training
    from course.translation.checkpoint import read_checkpoint

    assert inspect.signature(training.sequence_loss).parameters["label_smoothing"].default == 0.0
    assert "sequence_loss(model(batch.src, batch.src_valid_lens, batch.tgt_in), batch.tgt_out))" in \
        inspect.getsource(training.mean_loss)  # the validation loss: no smoothing passed
    assert "sequence_loss(logits, batch.tgt_out, args.label_smoothing)" in inspect.getsource(training.train)
    for name in ("seq2seq", "bahdanau", "transformer"):
        path = checkpoint.with_name(f"{name}.pt")
        if path.is_file():
            assert read_checkpoint(path)["train"]["label_smoothing"] == 0.1, name
    caption = text("trained.curves.caption", lang)
    assert ("no label smoothing" in caption and "label smoothing of 0.1" in caption) if lang == "en" else \
        ("不含标签平滑" in caption and "0.1 的标签平滑" in caption)


@pytest.mark.parametrize("lang", LANGS)
def test_the_chapter_10_strengths_section_quotes_chapter_7s_masking_and_points_at_each_chapter(lang, study):
    """The limits of reading weights: no head indispensable (at most 3% more loss), the four one-hot heads of the
    encoder's layer 1, the sharpest weights, each move the loss by less than 0.003."""
    from course.lessons import ch01

    table, sat = study["ablation"], study["saturation"]
    assert len(table) == 36 and f"{100 * table['d_loss'].max() / study['loss']:.0f}%" == "3%"
    first = table[(table["kind"] == "encoder") & (table["layer"] == 1)]
    assert len(first) == 4 and first["d_loss"].abs().max() < 0.003
    assert by(sat, "encoder", 1, "largest") == sat["largest"].max()  # the sharpest weights in the model
    steps = ch01.path_steps(10, 3, False)
    assert steps["rnn"] == 10 and steps["self-attention"] == 1  # n - 1 against one step
    body = " ".join(text("ch10.strengths.body", lang).split())
    for figure in ("36", "3%", "0.003", "$n - 1$", "$O(1)$", "$O(n)$", "$n^2$"):
        assert figure in body, figure
    chapter = "chapter {}" if lang == "en" else "第 {} 章"
    for n in (1, 2, 3, 4, 5, 6, 7):
        assert chapter.format(n) in body, n
    for page in ("bottleneck", "inside"):
        assert i18n.t(f"demos.nav.{page}", lang) in body, page
