"""The pieces behind chapter 7's recipe and head-study sections and the lab's no-PE explanation, on
hand-made inputs: schedule, smoothed targets, the softmax Jacobian, masking one head, the order-free bound."""

import math
from dataclasses import replace

import pytest
import torch

from course.lessons import lab_symmetry
from course.lessons.training_lab import LabConfig
from course.translation import head_study, recipe
from course.translation.training import lr_factor
from solutions.ex05_multihead import MultiHeadAttention


def test_the_schedule_is_lr_times_the_training_commands_factor_and_marks_the_end_of_warmup():
    frame = recipe.schedule_frame(1e-3, 50, 1000, points=11)
    assert 49 in set(frame["step"]) and frame["step"].iloc[0] == 0 and frame["step"].iloc[-1] == 999
    for step, lr in zip(frame["step"], frame["lr"]):
        assert lr == pytest.approx(1e-3 * lr_factor(step, 50, step / 1000))
    assert frame["lr"].iloc[0] == pytest.approx(1e-3 / 50 * 1.0, rel=1e-3)  # one step of 50, cosine still ~1


def test_the_smoothed_target_and_the_losses_by_hand():
    target = recipe.smoothed_target(4, 2, 0.2)
    assert target.tolist() == pytest.approx([0.05, 0.05, 0.85, 0.05]) and float(target.sum()) == pytest.approx(1)
    plain, smoothed = recipe.losses(torch.tensor([0.1, 0.1, 0.7, 0.1], dtype=torch.float64), 2, 0.2)
    assert plain == pytest.approx(-math.log(0.7), rel=1e-6)
    assert smoothed == pytest.approx(-(0.85 * math.log(0.7) + 0.15 * math.log(0.1)), rel=1e-6)
    with pytest.raises(ValueError, match="padding"):
        recipe.smoothing_table(5, 0.1, target=0)


def test_the_ema_window_and_share():
    assert recipe.ema_window(0.99) == pytest.approx(100)
    assert recipe.ema_recent_share(0.5, 2) == pytest.approx(0.75)


def test_the_softmax_jacobian_vanishes_at_one_hot_and_not_at_uniform():
    assert head_study.softmax_jacobian_norm(1.0, 5) == pytest.approx(0.0, abs=1e-12)
    uniform = head_study.softmax_jacobian_norm(0.2, 5)  # diag(1/5) - 1/25: norm sqrt(5 * (1/5)^2 - 5 * ...)
    a = torch.full((5,), 0.2, dtype=torch.float64)
    assert uniform == pytest.approx(float((torch.diag(a) - torch.outer(a, a)).norm()))
    assert uniform > 100 * head_study.softmax_jacobian_norm(0.999, 5)


def test_the_spread_is_the_mean_distance_from_the_mean_row_over_the_mean_length():
    same = torch.tensor([[0.5, -2.0, 1.0]] * 4)
    assert head_study.spread(same) == pytest.approx(0.0, abs=1e-7)
    # rows (3, 0) and (1, 0): mean (2, 0), each 1 away; lengths 3 and 1, mean 2: 1 / 2
    assert head_study.spread(torch.tensor([[3.0, 0.0], [1.0, 0.0]])) == pytest.approx(0.5)
    assert head_study.spread(torch.tensor([[0.0, 4.0], [0.0, -4.0]])) == pytest.approx(1.0)


def test_zero_head_removes_exactly_that_heads_share_of_the_output():
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 8, 8, 8, 2, 0.0).eval()
    X = torch.randn(1, 3, 8)  # (B, T, d)
    with torch.no_grad():
        full = mha(X, X, X)  # (1, 3, 8)
        merged = mha.W_o.weight  # (8, 8): columns 0-3 read head 1, 4-7 head 2
        handle = head_study.zero_head(mha, 1)
        try:
            masked = mha(X, X, X)
        finally:
            handle.remove()
        again = mha(X, X, X)
    torch.testing.assert_close(again, full)  # the hook is gone
    # what is left is head 1's part alone: the full output minus head 2's columns of W_o times its output
    heads = (full - masked) @ torch.linalg.pinv(merged.T)  # (1, 3, 8): the merged heads that were removed
    assert heads[..., :4].abs().max() < 1e-5 and heads[..., 4:].abs().max() > 1e-3


def test_the_order_free_bound_on_the_test_set_matches_counting_by_hand():
    config = replace(LabConfig(), eval_size=3, seq_len=4, vocab_size=10)
    token, seq = lab_symmetry.order_free_bound(config)
    from course.lessons.lab_tasks import DigitTask

    src, _ = DigitTask(replace(config, task="copy")).test_set()
    by_hand = []
    for row in src.tolist():
        counts = [row.count(d) for d in set(row)]
        by_hand.append((max(counts) / 4, math.prod(math.factorial(c) for c in counts) / 24))
    assert token == pytest.approx(sum(t for t, _ in by_hand) / 3) and seq == pytest.approx(sum(s for _, s in by_hand) / 3)


def test_the_causal_mask_separates_identical_inputs_and_no_mask_does_not():
    causal, full = lab_symmetry.causal_position_spread(num_steps=5, seed=3)
    assert causal > 1e-3 and full < 1e-5
    assert lab_symmetry.uniform_bos(3) == pytest.approx([1, 0.5, 1 / 3])


@pytest.mark.slow  # the app in AppTest, a rerun
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapter_7_draws_the_schedule_of_the_chosen_warmup_and_the_shipped_head_study(lang):
    from app_helpers import charts, errors_of, open_page

    from course.common import pages_index
    from course.common.i18n import t

    if head_study.load_shipped() is None:
        pytest.skip("no checkpoints/transformer.heads.json")
    at = open_page(pages_index.get("ch07").path, lang)
    assert errors_of(at) == []
    assert at.select_slider(key="ch07_warmup").value == 400  # the checkpoint's
    found = charts(at)
    schedule = found[t("ch07.recipe.chart_title", lang, warmup=400)][1][0]
    assert schedule["lr"].idxmax() == schedule.index[schedule["step"] == 399][0]
    assert t("ch07.inside.ablation_title", lang) in found
    at.select_slider(key="ch07_warmup").set_value(0).run()
    assert errors_of(at) == []
    schedule = charts(at)[t("ch07.recipe.chart_title", lang, warmup=0)][1][0]
    assert schedule["lr"].iloc[0] == schedule["lr"].max()  # no warmup: the peak at the first step


def test_a_checkpoint_without_recorded_settings_has_no_recipe(tmp_path):
    from demo_fixtures import write_tiny_checkpoints

    from course.translation import recipe_views

    folder = write_tiny_checkpoints(tmp_path, names=("transformer",), reports=False)
    assert recipe_views.shipped_recipe(folder / "transformer.pt") is None


@pytest.mark.slow  # tiny checkpoints, the app in AppTest
def test_chapter_7_with_a_checkpoint_that_records_nothing_says_so_in_both_new_sections(tiny_env):
    from app_helpers import errors_of, open_page

    from course.common import pages_index
    from course.common.i18n import t

    at = open_page(pages_index.get("ch07").path, "en")
    assert errors_of(at) == []
    infos = [i.value for i in at.info]
    assert t("ch07.recipe.unrecorded", "en") in infos and t("ch07.inside.missing", "en") in infos
