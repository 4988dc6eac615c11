"""Chapter 1: the maths in course/lessons/ch01/ (checked by hand) and the page's live numbers."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from app_helpers import errors_of, markdown_text, metric, open_page

from course.common.i18n import t
from course.lessons import ch01

pytestmark = pytest.mark.usefixtures("lab_home")  # progress and notes in a fresh folder per test

PAGE = "app_pages/ch01_seq2seq.py"


def layers_needed(distance, k, dilated):
    """Fewest layers whose receptive field covers distance + 1 positions (by direct search)."""
    layers, field, dilation = 0, 1, 1
    while field < distance + 1:
        field += (k - 1) * dilation
        layers += 1
        dilation = dilation * 2 if dilated else 1
    return layers


@pytest.mark.parametrize("distance", [1, 2, 8, 20, 63])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_path_steps(distance, k):
    plain = ch01.path_steps(distance, k, dilated=False)
    assert plain == {"rnn": distance, "cnn": math.ceil(distance / (k - 1)), "self-attention": 1}
    assert ch01.path_steps(distance, k, dilated=True)["cnn"] == layers_needed(distance, k, True)


def test_path_steps_hand_cases():
    assert ch01.path_steps(8, 3, True) == {"rnn": 8, "cnn": 3, "self-attention": 1}  # 1+2*(1+2+4)=15 >= 9
    assert ch01.path_steps(0, 3, False) == {"rnn": 0, "cnn": 0, "self-attention": 0}
    with pytest.raises(ValueError, match="non-negative"):
        ch01.path_steps(-1, 3, False)


def test_path_table_has_every_distance_and_architecture():
    table = ch01.path_table(10, 3, False)
    assert len(table) == 30
    assert table.query("architecture == 'rnn'")["steps"].tolist() == list(range(1, 11))


def test_receptive_field_worked_case_and_layers():
    per_layer = ch01.receptive_field_layers(3, [1, 1, 1, 1])
    assert per_layer["receptive_field"].tolist() == [3, 5, 7, 9]
    assert ch01.receptive_field_layers(3, [1, 2, 4, 8])["receptive_field"].tolist() == [3, 7, 15, 31]


def test_dilation_schedules_and_clear_errors():
    assert ch01.dilation_schedule("none", 3) == [1, 1, 1]
    assert ch01.dilation_schedule("doubling", 4) == [1, 2, 4, 8]
    assert ch01.dilation_schedule("custom", 3, "1, 3 ,9") == [1, 3, 9]
    with pytest.raises(ValueError, match="whole numbers"):
        ch01.parse_dilations("1, two", 2)
    with pytest.raises(ValueError, match="got 2 dilations for 3 layers"):
        ch01.parse_dilations("1 2", 3)
    with pytest.raises(ValueError, match="at least 1"):
        ch01.parse_dilations("1, 0", 2)
    with pytest.raises(ValueError, match="unknown schedule"):
        ch01.dilation_schedule("tripling", 2)


def test_receptive_cone_by_hand():
    # k=3, one layer with dilation 2: the output at position 4 reads 4, 2 and 0.
    assert ch01.receptive_cone(3, [2]).tolist() == [[0, 0, 0, 0, 1], [1, 0, 1, 0, 1]]
    # No dilation: every input position reaches the output; the top row only the last one.
    cone = ch01.receptive_cone(3, [1, 1, 1, 1])
    assert cone.shape == (5, 9) and cone[-1].sum() == 9 and cone[0].sum() == 1
    # k=2 with doubling dilations is a binary tree: 1, 2, 4, then all 8 inputs.
    assert ch01.receptive_cone(2, [1, 2, 4]).sum(axis=1).tolist() == [1, 2, 4, 8]


def test_the_gradient_bound_is_rho_to_the_distance():
    measured = pd.DataFrame({"distance": range(6), "norm": [1.0] * 6})
    long = ch01.gradient_curves(0.9, 2.0, measured, {"bound": "b", "w_bound": "w", "measured": "m"})
    assert np.allclose(long.loc[long["series"] == "b", "value"], [0.9**d for d in range(6)])


def test_one_step_tanh_rnn_gradient_by_hand():
    w, x, h0 = 0.5, 0.3, 0.2
    norms = ch01.jacobian_norms(torch.tensor([[w]]), torch.tensor([[x]]), torch.tensor([h0]))
    expected = abs(w * (1 - math.tanh(w * h0 + x) ** 2))  # d tanh(w h0 + x) / d h0
    assert norms[0] == pytest.approx(1.0)  # dh_1/dh_1
    assert norms[1] == pytest.approx(expected, rel=1e-6)


def test_two_step_tanh_rnn_gradient_by_hand():
    w, xs, h0 = -1.3, (0.1, -0.4), 0.7
    h1 = math.tanh(w * h0 + xs[0])
    h2 = math.tanh(w * h1 + xs[1])
    d21 = w * (1 - h2**2)
    d10 = w * (1 - h1**2)
    norms = ch01.jacobian_norms(torch.tensor([[w]]), torch.tensor([[xs[0]], [xs[1]]]), torch.tensor([h0]))
    assert norms == pytest.approx([1.0, abs(d21), abs(d21 * d10)], rel=1e-6)


def test_linear_rnn_jacobian_is_a_matrix_power():
    gen = torch.Generator().manual_seed(3)
    weight = torch.randn(4, 4, generator=gen, dtype=torch.float64) * 0.6
    inputs = torch.randn(5, 4, generator=gen, dtype=torch.float64)
    norms = ch01.jacobian_norms(weight, inputs, torch.zeros(4, dtype=torch.float64), activation=lambda z: z)
    w = weight.numpy()
    expected = [np.linalg.norm(np.linalg.matrix_power(w, d), 2) for d in range(6)]
    assert norms == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.5])
def test_measured_gradients_stay_under_the_weight_norm_bound(scale):
    table, w_norm = ch01.measured_gradients(scale, num_hiddens=8, num_steps=20, seed=1)
    weight, _, _ = ch01.random_rnn(scale, 8, 20, 1)
    assert w_norm == pytest.approx(np.linalg.norm(weight.numpy(), 2), rel=1e-5)
    bound = w_norm ** table["distance"].to_numpy()
    assert np.all(table["norm"].to_numpy() <= bound * (1 + 1e-4) + 1e-12)


def test_small_weights_make_gradients_vanish():
    table, _ = ch01.measured_gradients(0.5, num_hiddens=16, num_steps=40, seed=0)
    assert table["norm"].iloc[-1] < 1e-6 < table["norm"].iloc[1]


def test_gradient_curves_floor_zeros_for_the_log_axis():
    import pandas as pd

    measured = pd.DataFrame({"distance": [0, 1, 2], "norm": [1.0, 0.0, 0.25]})
    names = {"bound": "b", "w_bound": "w", "measured": "m"}
    long = ch01.gradient_curves(0.5, 2.0, measured, names)
    assert long.query("series == 'b'")["value"].tolist() == [1.0, 0.5, 0.25]
    assert long.query("series == 'w'")["value"].tolist() == [1.0, 2.0, 4.0]
    assert long.query("series == 'm'")["value"].tolist() == [1.0, ch01.LOG_FLOOR, 0.25]


def test_seq2seq_diagram_and_decoder_inputs():
    dot = ch01.seq2seq_dot({"encoder": "enc", "decoder": "dec", "context": 'c "q"'})
    assert 'label="c \\"q\\""' in dot
    assert "h4 -> c [" in dot and "c -> s1 -> s2 -> s3 -> s4 -> s5;" in dot  # one chain of states
    steps = range(1, len(ch01.TARGET_TOKENS) + 1)
    assert all(f"c{t} -> s{t}" in dot and f"in{t} -> s{t}" in dot for t in steps)  # every step gets c
    assert "dashed" not in dot and "constraint=false" not in dot  # no arrow runs back across the chain
    training, generation = ch01.decoder_inputs(("A", "B", "<eos>"))
    assert training == ["<bos>", "A", "B"]
    assert generation == ["<bos>", "ŷ1", "ŷ2"]


# --- the page, driven through AppTest ---------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_path_lengths_follow_the_sliders(lang):
    at = open_page(PAGE, lang=lang)
    assert errors_of(at) == []
    label = lambda arch: t("ch01.paths.steps_metric", lang, arch=t(f"ch01.paths.arch_{arch}", lang))  # noqa: E731
    assert [metric(at, label(a)) for a in ("rnn", "cnn", "attention")] == ["8", "4", "1"]
    at.slider(key="ch01_distance").set_value(20).run()
    assert [metric(at, label(a)) for a in ("rnn", "cnn", "attention")] == ["20", "10", "1"]
    at.slider(key="ch01_path_kernel").set_value(5).run()
    assert metric(at, label("cnn")) == "5"  # ceil(20 / 4)
    at.radio(key="ch01_path_dilation").set_value("doubling").run()
    assert metric(at, label("cnn")) == "3"  # 1 + 4 * (1 + 2 + 4) = 29 >= 21, two layers give 13


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_receptive_field_calculator(lang):
    at = open_page(PAGE, lang=lang)
    field = t("ch01.rf.metric", lang)
    assert metric(at, field) == "9"  # the worked case k=3, L=4
    at.slider(key="ch01_rf_kernel").set_value(5).run()
    assert metric(at, field) == str(1 + 4 * 4)
    at.slider(key="ch01_rf_layers").set_value(6).run()
    assert metric(at, field) == str(1 + 6 * 4)
    at.radio(key="ch01_rf_schedule").set_value("doubling").run()
    assert metric(at, field) == str(1 + 4 * (1 + 2 + 4 + 8 + 16 + 32))
    assert metric(at, t("ch01.rf.metric_plain", lang)) == "25"
    at.radio(key="ch01_rf_schedule").set_value("custom").run()
    at.text_input(key="ch01_rf_custom").set_value("1, 2").run()  # two dilations for six layers
    assert any("6 layers" in e.value for e in at.error)
    at.text_input(key="ch01_rf_custom").set_value("1,1,2,2,3,3").run()
    assert errors_of(at) == [] and metric(at, field) == str(1 + 4 * 12)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_gradient_experiment(lang):
    at = open_page(PAGE, lang=lang)
    bound_label = t("ch01.grad.bound_metric", lang, d=40)
    norm_label = t("ch01.grad.norm_metric", lang)
    assert metric(at, bound_label) == f"{0.9**40:.3g}"
    at.slider(key="ch01_rho").set_value(1.2).run()
    assert metric(at, bound_label) == f"{1.2**40:.3g}"
    at.slider(key="ch01_scale").set_value(2.0).run()
    weight, _, _ = ch01.random_rnn(2.0, 16, 40, 0)
    assert metric(at, norm_label) == f"{np.linalg.norm(weight.numpy(), 2):.3f}"
    assert errors_of(at) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_shows_the_teaching_text_and_formulas(lang):
    at = open_page(PAGE, lang=lang)
    text = markdown_text(at)
    assert t("ch01.bottleneck.body", lang)[:40] in text
    formulas = [latex.value.strip("$\n") for latex in at.latex]
    assert t("ch01.seq2seq.chain_rule_formula", lang) in formulas
    assert any("= 9" in f for f in formulas)  # R = 1 + (3-1)(1 + 1 + 1 + 1) = 9


def test_alignment_frame_marks_the_links():
    table = ch01.alignment_frame(("a", "b", "a"), ("x", "y"), {"x": (2,), "y": (0, 1)}, mark="1")
    assert list(table.columns) == ["1. a", "2. b", "3. a"] and list(table.index) == ["x", "y"]
    assert table.to_numpy().tolist() == [["", "", "1"], ["1", "1", ""]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_poses_the_framework_bidirectional_path_and_alignment(lang):
    at = open_page(PAGE, lang=lang)
    text = markdown_text(at)
    for key in ("ch01.framework.text", "ch01.bidir.text", "ch01.alignment.text"):
        assert t(key, lang)[:30] in text, key
    assert t("ch01.bidir.formula", lang) in [latex.value.strip("$\n") for latex in at.latex]
    assert t("ch01.grad_path.text", lang, d=40, steps=40) in text  # an RNN path of 40 steps at n - i = 40
    table = next(df.value for df in at.dataframe if list(df.value.index) == ["黑", "猫", "坐", "在", "垫子", "上"])
    links = {target: [col for col in table.columns if table.loc[target, col] == "●"] for target in table.index}
    assert links["垫子"] == ["7. mat"] and links["上"] == ["5. on"]  # 上 goes back to "on" after "mat"
    assert table.to_numpy().tolist().count(["●"] + [""] * 6) == 0  # "The" is linked to nothing
