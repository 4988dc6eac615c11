"""Heatmap labels readable on every cell, the ch07 masks laid out at full size, the diagrams' layout rules."""

import numpy as np
import pytest

from course.common import charts
from course.lessons import ch07

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
