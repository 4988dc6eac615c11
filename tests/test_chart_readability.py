"""Heatmap labels readable on every cell, the ch07 masks laid out at full size, the diagrams' layout rules."""

import numpy as np
import pytest

from course.common import chart_text, charts
from course.lessons import ch02, ch07, ch10
from course.lessons.ch06 import positions

PALE_BLUE = (207, 225, 242)  # the lightest "blues" colour, #cfe1f2
DARK_BLUE = (10, 74, 144)  # the darkest, #0a4a90


def test_wcag_luminance_and_contrast_of_known_colours():
    assert charts.relative_luminance((255, 255, 255)) == pytest.approx(1.0)
    assert charts.relative_luminance((0, 0, 0)) == 0.0
    assert charts.contrast_ratio((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert charts.relative_luminance((118, 118, 118)) == pytest.approx(0.1812, abs=1e-3)  # #767676


def test_label_colour_follows_the_cells_luminance():
    assert charts.label_colour(PALE_BLUE) == "black"
    assert charts.label_colour(DARK_BLUE) == "white"
    assert charts.label_colour((118, 118, 118)) == "black"  # just above the crossing at luminance ~0.179
    assert charts.label_colour((110, 110, 110)) == "white"  # just below it


def test_the_blues_ramp_ends_are_vegas():
    assert charts.scheme_colour("blues", 0) == pytest.approx(PALE_BLUE)
    assert charts.scheme_colour("blues", 1) == pytest.approx(DARK_BLUE)
    with pytest.raises(ValueError, match="blues"):
        charts.scheme_colour("magma", 0.5)  # no such ramp: the message lists the known ones


def test_heatmaps_default_to_viridis_whose_ramp_ends_are_vegas():
    """Viridis: dark violet #440154 to yellow #fde725, lightness rising all the way (colour-blind safe)."""
    spec = charts.heatmap([[0.0, 1.0]], show_values=True, domain=[0, 1]).to_dict()
    assert spec["layer"][0]["encoding"]["color"]["scale"]["scheme"] == "viridis"
    assert charts.scheme_colour("viridis", 0) == pytest.approx((0x44, 0x01, 0x54))
    assert charts.scheme_colour("viridis", 1) == pytest.approx((0xfd, 0xe7, 0x25))
    lightness = [charts.relative_luminance(charts.scheme_colour("viridis", x / 20)) for x in range(21)]
    assert lightness == sorted(lightness)
    assert [row["label_colour"] for row in list(spec["datasets"].values())[0]] == ["white", "black"]


def test_pale_cells_get_black_labels_whatever_the_other_cells_hold():
    """0.15 and 0.17 are the same pale shade: one label colour for both (the mean rule flipped at ~0.17)."""
    colours = charts.cell_label_colours([[0.15, 0.17], [0.0, 1.0]], "blues", [0, 1])
    assert colours == ["black", "black", "black", "white"]
    alone = charts.cell_label_colours([[0.17, 0.17]], "blues", [0, 1])
    assert alone == ["black", "black"]


def test_every_heatmap_label_contrasts_at_least_4_5_with_its_cell():
    for scheme, domain in (("blues", [0, 1]), ("redblue", [-1, 1]), ("viridis", [0, 1])):
        low, high = domain
        for value in np.linspace(low, high, 101):
            background = charts.scheme_colour(scheme, (value - low) / (high - low))
            text = (0, 0, 0) if charts.cell_label_colours([value], scheme, domain) == ["black"] else (255, 255, 255)
            assert charts.contrast_ratio(background, text) >= 4.5, (scheme, value, background)


def test_the_heatmap_spec_carries_each_cells_label_colour():
    spec = charts.heatmap([[0.17, 1.0]], show_values=True, domain=[0, 1], scheme="blues").to_dict()
    datasets = list(spec["datasets"].values())
    assert [row["label_colour"] for row in datasets[0]] == ["black", "white"]
    assert "label_colour" in str(spec["layer"][1]["encoding"]["color"])


def test_ch07_masks_sit_side_by_side_only_while_their_cells_keep_full_size():
    assert ch07.masks_per_row(5) == 3
    assert ch07.masks_per_row(6) == 2 and ch07.masks_per_row(10) == 2
    for longest in range(1, 11):
        per_row = ch07.masks_per_row(longest)
        column = (ch07.MAIN_WIDTH_PX - 16 * (per_row - 1)) / per_row
        assert column >= ch07.CHART_OVERHEAD_PX + longest * ch07.MASK_CELL_PX
    assert ch07.masks_per_row(40) == 1


def test_transformer_diagram_labels_its_stacks_at_the_left():
    """The input arrows enter the stacks in the middle: the stack labels sit at the left, clear of them."""
    labels = {n: n for n in ("src", "tgt", "out", "src_emb", "tgt_emb", "enc_attn", "dec_self",
                                       "dec_cross", "linear", "enc_ffn", "dec_ffn", "add_norm", "encoder",
                                       "decoder", "stack")}
    dot = ch07.transformer_dot(labels, 6)
    assert dot.count('subgraph cluster_') == 2 and dot.count('labeljust="l"') == 2


def test_a_label_fits_its_cell_by_its_characters_widths():
    assert charts.label_width_px("0.25") == pytest.approx(11 * (3 * 0.56 + 0.28))
    assert charts.labels_fit([0.25, 1.0], ".2f", 28)  # 21.6 px wide
    assert not charts.labels_fit([-7.31], ".2f", 30)  # 27.9 px + margins
    assert charts.labels_fit([-7.31], ".2f", 36)
    assert not charts.labels_fit([0.5], ".2f", 40, cell_height=6)  # a 6 px row holds no 11 px text


def test_a_heatmap_too_small_for_its_values_prints_none_and_says_its_table_holds_them():
    values = np.linspace(0, 1, 30 * 30).reshape(30, 30)
    spec = charts.heatmap(values, show_values=True, domain=[0, 1]).to_dict()  # 30 columns in 640 px: 21 px each
    assert "layer" not in spec and chart_text.values_in_table(spec)
    assert "table below holds every one" in chart_text.summary(spec, "en")
    assert "表格" in chart_text.summary(spec, "zh")
    small = charts.heatmap(values[:3, :3], show_values=True, domain=[0, 1]).to_dict()
    assert "layer" in small and not chart_text.values_in_table(small)


def _printed_or_tabled(spec, values, data=None):
    """Assert a heatmap either prints every cell's value, readable (labels that fit, black or white by the
    cell), or says its values are in its table, which holds every one of them."""
    table = chart_text.table(spec, "en", data)
    assert table.shape == values.shape
    cells = np.array([[float(v.replace("–", "nan")) for v in row] for row in table.to_numpy()])
    np.testing.assert_allclose(cells, values, rtol=5e-3, atol=5e-4)  # 3 significant digits
    if chart_text.values_in_table(spec):
        for lang, said in (("en", "table below holds every one"), ("zh", "下方的表格")):
            assert said in chart_text.summary(spec, lang, data)
        return "table"
    texts = [layer for layer in spec.get("layer", []) if "text" in str(layer.get("mark"))]
    assert texts, "a heatmap that neither prints its values nor says they are in its table"
    rows = chart_text.records(data) if data is not None else list(spec["datasets"].values())[0]
    assert {row["label_colour"] for row in rows} <= {"black", "white"} and len(rows) == values.size
    n_q, n_k = values.shape
    plot_height = spec["height"] - (120 if "datasets" in spec else 0)  # charts.heatmap leaves 120 px for the rest
    assert charts.labels_fit(values, ".2f", spec["width"] / n_k, plot_height / n_q)
    return "printed"


def test_ch02s_50_by_50_weights_say_their_values_are_in_the_table():
    spec = ch02.weights_spec(1.0, "queries", "keys")
    data = ch02.default_data()
    weights = ch02.nw_predict(data, 1.0)[1].numpy()  # (50, 50)
    assert _printed_or_tabled(spec, weights) == "table"
    assert chart_text.table(spec, "en").index[0] == f"x = {float(data.x_test[0]):.2f}"  # rows named by their x


@pytest.mark.parametrize("length, num_hiddens, shown", [(8, 4, "printed"), (21, 16, "printed"), (22, 16, "table"),
                                                        (16, 20, "table"), (60, 32, "table"), (100, 128, "table")])
def test_ch06s_positional_encoding_prints_its_values_while_its_cells_can_hold_them(length, num_hiddens, shown):
    data, spec = positions.pe_heatmap("en", length, num_hiddens)
    assert _printed_or_tabled(spec, positions.module_table(length, num_hiddens), data) == shown


@pytest.mark.parametrize("scheme", ch10.POSITION_SCHEMES)
def test_ch10s_score_heatmaps_print_every_value(scheme):
    for d in (8, 16, 32, 64):
        for shift in (0, 40):
            spec = ch10.positions_view("en", scheme, d, shift)["spec"]
            scores = ch10.position_scores(scheme, d, shift)
            assert _printed_or_tabled(spec, scores) == "printed"
