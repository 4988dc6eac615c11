"""Chapter 1 charts, built from plain values so that pages can cache their specs.

Each function takes numbers, strings and a dict of display texts and returns an
Altair chart; the page caches `chart.to_dict()` on those plain arguments.
"""

from course.common import charts
from course.lessons import ch01


def path_bars(distance, kernel_size, dilated, texts):
    """Bars: steps for each architecture at one distance.

    texts: arch names under "rnn", "cnn", "self-attention" and "title", "x", "y".
    """
    steps = ch01.path_steps(distance, kernel_size, dilated)
    return charts.bar_chart(ch01.named_steps(steps, texts), "architecture", "steps", title=texts["title"],
                            x_title=texts["x"], y_title=texts["y"])


def path_lines(max_distance, kernel_size, dilated, texts):
    """Lines: steps against distance for each architecture (texts as in path_bars, plus "distance")."""
    table = ch01.path_table(max_distance, kernel_size, dilated, texts)
    return charts.line_chart(table, "distance", "steps", "architecture", texts["title"],
                             x_title=texts["distance"], y_title=texts["y"], color_title=texts["x"])


def cone(kernel_size, dilations, texts):
    """Heatmap of the positions that reach the last output (texts: output, input, layer, title, position)."""
    layers = len(dilations)
    rows = [texts["output"]] + [texts["layer"].format(layer=n) for n in range(layers - 1, 0, -1)] + [texts["input"]]
    matrix = ch01.receptive_cone(kernel_size, list(dilations))  # (L + 1, R)
    return charts.heatmap(matrix, rows, list(range(matrix.shape[1])), texts["title"],
                          x_title=texts["position"], value_title="", cell_size=22, show_values=True, value_format=".0f")


def gradients(rho, w_norm, measured_rows, texts):
    """Log-scale lines: the two bounds and the measured norms (measured_rows: norms by distance).

    texts: "bound", "w_bound", "measured" (legend), "title", "x", "y", "series".
    """
    import pandas as pd

    measured = pd.DataFrame({"distance": range(len(measured_rows)), "norm": list(measured_rows)})
    long = ch01.gradient_curves(rho, w_norm, measured, texts)
    return charts.line_chart(long, "distance", "value", "series", texts["title"], log_y=True,
                             x_title=texts["x"], y_title=texts["y"], color_title=texts["series"])
