"""Chapter 7 experiments: the Transformer's layout, LayerNorm vs BatchNorm, masks, incremental decoding.

Streamlit-free. The blocks and the masked softmax come from the reference solutions
(solutions.ex07_transformer, solutions.ex01_softmax), never from exercises/.
"""

import unicodedata

import numpy as np
import pandas as pd
import torch
from torch import nn

from course.common import charts
from course.common.i18n import t
from solutions.ex01_softmax import masked_softmax
from solutions.ex07_transformer import (
    AddNorm,
    PositionWiseFFN,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
)

NUM_FEATURES = 4  # width of the LayerNorm / BatchNorm demo batch
PITFALLS = ("add_pe", "scale_embedding", "valid_lens", "decoder_state")
MASK_USES = ("enc_self", "dec_self", "cross")


def _quote(text):
    """A DOT string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


DIAGRAM_FONT_PT = 11


def label_width_inches(text, font_pt=DIAGRAM_FONT_PT):
    """Width a node needs for `text`: the browser's Graphviz guesses Chinese characters too narrow
    (a label then overflows its box), so wide characters count a full em, others about half."""
    ems = sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.55 for c in str(text))
    return round(ems * font_pt / 72 + 0.35, 2)  # + the box's left and right margins


def two_lines(first, second):
    """A DOT label of two left-aligned lines."""
    return _quote(first)[:-1] + "\\l" + _quote(second)[1:-1] + '\\l"'


def transformer_dot(labels, num_layers):
    """Graphviz DOT of the encoder and decoder stacks; `labels` maps node names to text, `num_layers` the depth the
    stacks' label shows (a number, or "N" as in the paper's figure)."""
    box = 'shape=box, style="filled,rounded"'
    nodes = {
        "src": "shape=plaintext", "tgt": "shape=plaintext", "out": "shape=plaintext",
        "src_emb": f'{box}, fillcolor="#eeeeee"', "tgt_emb": f'{box}, fillcolor="#eeeeee"',
        "enc_attn": f'{box}, fillcolor="#dbe7f3"', "dec_self": f'{box}, fillcolor="#f8dcdc"',
        "dec_cross": f'{box}, fillcolor="#f6d7a7"', "linear": f'{box}, fillcolor="#eeeeee"',
        "enc_ffn": f'{box}, fillcolor="#dff0d8"', "dec_ffn": f'{box}, fillcolor="#dff0d8"',
    }
    norms = ("enc_an1", "enc_an2", "dec_an1", "dec_an2", "dec_an3")
    lines = ["digraph transformer {",
             f'rankdir=BT; node [fontname="Noto Sans CJK SC, sans-serif", fontsize={DIAGRAM_FONT_PT}];']

    def node(name, style=None):
        text = labels["add_norm"] if name in norms else labels[name]
        width = label_width_inches(text)
        lines.append(f"{name} [label={_quote(text)}, width={width}, {style or nodes.get(name, 'shape=box')}];")

    for name in ("src", "src_emb", "tgt", "tgt_emb", "linear", "out"):
        node(name)
    stack = labels["stack"].format(n=num_layers)
    # Stack names in two short lines at a corner (labelloc "b" is the top in a bottom-to-top layout), clear of
    # the arrows that enter and leave each stack in the middle.
    lines.append(f'subgraph cluster_enc {{ labeljust="l"; labelloc="b"; label={two_lines(labels["encoder"], stack)};'
                 ' color="#4c78a8";')
    for name in ("enc_attn", "enc_an1", "enc_ffn", "enc_an2"):
        node(name, None if name in nodes else 'shape=box, style=filled, fillcolor="#fff6bf"')
    lines.append("}")
    lines.append(f'subgraph cluster_dec {{ labeljust="l"; labelloc="b"; label={two_lines(labels["decoder"], stack)};'
                 ' color="#e45756";')
    for name in ("dec_self", "dec_an1", "dec_cross", "dec_an2", "dec_ffn", "dec_an3"):
        node(name, None if name in nodes else 'shape=box, style=filled, fillcolor="#fff6bf"')
    lines.append("}")
    flow = ["src -> src_emb -> enc_attn -> enc_an1 -> enc_ffn -> enc_an2",
            "tgt -> tgt_emb -> dec_self -> dec_an1 -> dec_cross -> dec_an2 -> dec_ffn -> dec_an3 -> linear -> out"]
    lines += [f"{f};" for f in flow]
    residual = 'style=dashed, color="#777777", constraint=false'
    for a, b in (("src_emb", "enc_an1"), ("enc_an1", "enc_an2"), ("tgt_emb", "dec_an1"),
                 ("dec_an1", "dec_an2"), ("dec_an2", "dec_an3")):
        lines.append(f"{a} -> {b} [{residual}];")
    lines.append('enc_an2 -> dec_cross [label="K, V", color="#b07c1f", penwidth=2];')
    lines.append("}")
    return "\n".join(lines)


def count_parameters(module):
    """Number of learnable parameters of a module."""
    return sum(p.numel() for p in module.parameters())


def block_parameters(num_hiddens, ffn_num_hiddens, num_heads):
    """Parameters of one encoder block, one decoder block and their parts, counted on real modules."""
    return {
        "encoder": count_parameters(TransformerEncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, 0.0)),
        "decoder": count_parameters(TransformerDecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, 0.0, 0)),
        "ffn": count_parameters(PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens)),
        "add_norm": count_parameters(AddNorm(num_hiddens, 0.0)),
    }


def ffn_positionwise_gap(num_hiddens=8, ffn_num_hiddens=16, num_steps=5, seed=0):
    """Largest |FFN(X)[:, t] - FFN(X[:, t])|: the FFN treats every position on its own."""
    torch.manual_seed(seed)
    ffn = PositionWiseFFN(num_hiddens, ffn_num_hiddens, num_hiddens)
    X = torch.randn(2, num_steps, num_hiddens)  # (B, T, d)
    with torch.no_grad():
        together = ffn(X)  # (B, T, d)
        alone = torch.stack([ffn(X[:, t]) for t in range(num_steps)], dim=1)  # (B, T, d)
    return float((together - alone).abs().max())


def norm_inputs(batch_size, scale, seed=0):
    """A seeded (batch_size, NUM_FEATURES) batch whose last feature is multiplied by `scale`."""
    X = torch.randn(batch_size, NUM_FEATURES, generator=torch.Generator().manual_seed(seed))  # (B, F)
    X[:, -1] *= scale
    return X


def layer_norm(X):
    """nn.LayerNorm over the features of each example (fresh, so weight 1 and bias 0)."""
    with torch.no_grad():
        return nn.LayerNorm(X.shape[-1])(X)  # (B, F)


def batch_norm(X):
    """nn.BatchNorm1d in training mode (batch statistics); None when the batch has one example."""
    if X.shape[0] < 2:
        return None  # torch refuses: a variance over one value per feature is meaningless
    with torch.no_grad():
        return nn.BatchNorm1d(X.shape[-1]).train()(X)  # (B, F)


def with_margins(matrix):
    """DataFrame of a (B, F) matrix with each row's and each column's mean and std (population)."""
    values = matrix.numpy().astype(float)  # (B, F)
    B, F = values.shape
    table = np.full((B + 2, F + 2), np.nan)
    table[:B, :F] = values
    table[:B, F], table[:B, F + 1] = values.mean(axis=1), values.std(axis=1)  # per row
    table[B, :F], table[B + 1, :F] = values.mean(axis=0), values.std(axis=0)  # per column
    index = [f"x{i}" for i in range(B)] + ["μ (column)", "σ (column)"]
    columns = [f"f{j}" for j in range(F)] + ["μ (row)", "σ (row)"]
    return pd.DataFrame(table.round(3) + 0.0, index=index, columns=columns)  # + 0.0 turns -0.0 into 0.0


MARGIN_KEYS = {"μ (row)": "row_mean", "σ (row)": "row_std", "μ (column)": "col_mean", "σ (column)": "col_std"}
DECODE_KEYS = {"t": "step", "input": "input", "cache": "cache", "max |Δ|": "max_diff"}  # incremental_check's columns


def margins_view(table, lang):
    """with_margins' table for display: margin labels in `lang`, numbers as text with three decimals,
    blank corner cells (a NaN cell would show "None")."""
    names = {label: t(f"ui.margins.{key}", lang) for label, key in MARGIN_KEYS.items()}
    return table.rename(index=names, columns=names).map(lambda v: "" if np.isnan(v) else f"{v:.3f}")


def decode_names(lang):
    """{incremental_check column: its header in `lang`}."""
    return {column: t(f"ui.decode.{key}", lang) for column, key in DECODE_KEYS.items()}


def batch_dependence(batch_size, scale, seed=0):
    """How much example 0's normalised output moves when the rest of the batch is redrawn."""
    X = norm_inputs(batch_size, scale, seed)  # (B, F)
    Y = X.clone()
    Y[1:] = norm_inputs(batch_size, scale, seed + 1)[1:]  # same example 0, other companions
    changes = {"layer": float((layer_norm(X)[0] - layer_norm(Y)[0]).abs().max())}
    if batch_size > 1:
        changes["batch"] = float((batch_norm(X)[0] - batch_norm(Y)[0]).abs().max())
    return changes


def norm_tables(batch_size, scale, seed=0):
    """The demo's three tables (BatchNorm's is None for one example) and how far example 0's outputs move."""
    X = norm_inputs(batch_size, scale, seed)  # (B, F)
    bn = batch_norm(X)
    return {
        "input": with_margins(X), "layer": with_margins(layer_norm(X)),
        "batch": None if bn is None else with_margins(bn), "moved": batch_dependence(batch_size, scale, seed),
    }


def causal_valid_lens(batch_size, num_steps, num_earlier=0):
    """Decoder valid lengths (B, T): new position t sees keys 0 .. num_earlier + t, as the reference does."""
    lens = torch.arange(num_earlier + 1, num_earlier + num_steps + 1)  # (T,)
    return lens.repeat(batch_size, 1)  # (B, T)


def visible(n_q, n_k, valid_lens):
    """Weights masked_softmax gives to all-equal scores (n_q, n_k): 1/count where visible, 0 where masked."""
    return masked_softmax(torch.zeros(1, n_q, n_k), valid_lens)[0]  # (n_q, n_k)


def attention_masks(src_len, src_valid_len, tgt_len):
    """The three attention uses' weights on equal scores: {use: (n_q, n_k)} from the reference mask."""
    src_lens = torch.tensor([src_valid_len])  # (B,) = (1,): encoder padding lengths
    return {
        "enc_self": visible(src_len, src_len, src_lens),
        "dec_self": visible(tgt_len, tgt_len, causal_valid_lens(1, tgt_len)),  # (B, T) lengths
        "cross": visible(tgt_len, src_len, src_lens),
    }


MASK_CELL_PX = 32  # a heatmap cell: wide enough for its label "0.33" at 11 px
MAIN_WIDTH_PX = charts.MAIN_WIDTH_PX
CHART_OVERHEAD_PX = 130  # a heatmap's axis title and labels, and its colour legend, beside the cells


def masks_per_row(longest, main_width=MAIN_WIDTH_PX, gap=16):
    """How many of the three mask heatmaps fit side by side with `longest` cells across at full size."""
    for per_row in (3, 2):
        if (main_width - gap * (per_row - 1)) / per_row >= CHART_OVERHEAD_PX + longest * MASK_CELL_PX:
            return per_row
    return 1


def mask_spec(use, src_len, src_valid_len, tgt_len, title, x_title, y_title):
    """Heatmap dict of one attention use's weights on equal scores (cached by the page)."""
    weights = attention_masks(src_len, src_valid_len, tgt_len)[use]  # (n_q, n_k)
    rows = [f"{'x' if use == 'enc_self' else 'y'}{i}" for i in range(weights.shape[0])]
    cols = [f"{'y' if use == 'dec_self' else 'x'}{j}" for j in range(weights.shape[1])]
    return charts.heatmap(weights.numpy(), rows, cols, title, x_title=x_title, y_title=y_title,
                          show_values=True, domain=[0, 1], cell_size=MASK_CELL_PX).to_dict()


def incremental_check(num_steps, num_hiddens=16, num_heads=4, seed=0):
    """Teacher-forced (all positions at once) vs step-by-step decoding with the cache, per step."""
    torch.manual_seed(seed)
    block = TransformerDecoderBlock(num_hiddens, 2 * num_hiddens, num_heads, 0.0, 0).eval()
    enc_outputs = torch.randn(2, 5, num_hiddens)  # (B, T_src, d)
    enc_valid_lens = torch.tensor([5, 3])  # (B,)
    X = torch.randn(2, num_steps, num_hiddens)  # (B, T, d): the target inputs
    rows = []
    with torch.no_grad():
        full, _ = block(X, [enc_outputs, enc_valid_lens, [None]])  # (B, T, d)
        state = [enc_outputs, enc_valid_lens, [None]]
        for t in range(num_steps):
            step, state = block(X[:, t:t + 1], state)  # (B, 1, d)
            rows.append({"t": t, "input": str(tuple(X[:, t:t + 1].shape)), "cache": int(state[2][0].shape[1]),
                         "max |Δ|": float((full[:, t] - step[:, 0]).abs().max())})
    return pd.DataFrame(rows)
