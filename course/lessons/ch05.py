"""Chapter 5 experiments: multi-head attention's shapes, parameters and per-head weights.

Streamlit-free. The layers come from the reference solution of exercise 5
(solutions.ex05_multihead), never from exercises/.
"""

import zlib

import numpy as np
import pandas as pd
import torch

from course.common import charts
from course.common.arrow import arrow_spec, arrow_table
from course.common.i18n import t
from solutions.ex05_multihead import MultiHeadAttention, transpose_output, transpose_qkv

WORKED = {"batch": 2, "n_q": 4, "n_k": 6, "num_hiddens": 100, "num_heads": 5}  # the d2l-sized example
SENTENCE = "the cat sat on the mat"
MAX_TOKENS = 12


def build_layer(num_hiddens, num_heads, seed=0, input_size=None):
    """A seeded MultiHeadAttention (no dropout, eval mode); the module's own error on a bad head count."""
    torch.manual_seed(seed)
    size = input_size or num_hiddens
    return MultiHeadAttention(size, size, size, num_hiddens, num_heads, dropout=0.0).eval()


def valid_head_counts(num_hiddens):
    """Head counts that divide num_hiddens evenly (the ones the layer accepts)."""
    return [h for h in range(1, num_hiddens + 1) if num_hiddens % h == 0]


def trace_shapes(batch, n_q, n_k, num_hiddens, num_heads, seed=0):
    """Run the layer step by step on random tensors: (rows {tensor, step, shape}, max |steps - forward|).

    tensor and step are ids (the page translates them); shape is the tuple as text.

    Raises the module's ValueError when num_heads does not divide num_hiddens.
    """
    layer = build_layer(num_hiddens, num_heads, seed)
    gen = torch.Generator().manual_seed(seed)
    queries = torch.randn(batch, n_q, num_hiddens, generator=gen)  # (B, n_q, h)
    keys = torch.randn(batch, n_k, num_hiddens, generator=gen)  # (B, n_k, h)
    values = keys  # (B, n_k, h): keys and values from the same source, as in the worked case
    rows = [("queries", "input", queries.shape), ("keys_values", "input", keys.shape)]
    with torch.no_grad():
        q = layer.W_q(queries)  # (B, n_q, h)
        k = layer.W_k(keys)  # (B, n_k, h)
        v = layer.W_v(values)  # (B, n_k, h)
        rows += [("proj_q", "project", q.shape), ("proj_kv", "project", k.shape)]
        q, k, v = (transpose_qkv(x, num_heads) for x in (q, k, v))  # (B*heads, n, h/heads)
        rows += [("queries", "transpose_qkv", q.shape), ("keys_values", "transpose_qkv", k.shape)]
        heads = layer.attention(q, k, v)  # (B*heads, n_q, h/heads)
        rows += [("weights", "attention", layer.attention.attention_weights.shape),
                 ("heads", "attention", heads.shape)]
        merged = transpose_output(heads, num_heads)  # (B, n_q, h)
        output = layer.W_o(merged)  # (B, n_q, h)
        rows += [("concat", "transpose_output", merged.shape), ("output", "W_o", output.shape)]
        direct = layer(queries, keys, values)  # (B, n_q, h)
    table = [{"tensor": name, "step": step, "shape": str(tuple(shape))} for name, step, shape in rows]
    return table, float((direct - output).abs().max())


def count_parameters(module):
    """Number of learnable numbers in a module: sum of p.numel()."""
    return sum(p.numel() for p in module.parameters())


def parameter_table(num_hiddens, num_heads):
    """Parameters of each projection for num_heads heads and for one head of the same width."""
    multi, single = build_layer(num_hiddens, num_heads), build_layer(num_hiddens, 1)
    names = ("W_q", "W_k", "W_v", "W_o")
    return pd.DataFrame({
        "matrix": list(names) + ["total"],
        "multi": [count_parameters(getattr(multi, n)) for n in names] + [count_parameters(multi)],
        "single": [count_parameters(getattr(single, n)) for n in names] + [count_parameters(single)],
    })


class BadSentence(ValueError):
    """A sentence the heatmaps cannot show; `code` is 'empty' or 'long' (the page translates it)."""

    def __init__(self, code, count):
        self.code, self.count = code, count
        advice = "type at least one word" if code == "empty" else f"use at most {MAX_TOKENS} words"
        super().__init__(f"got {count} words; {advice}, separated by spaces")


def tokenize(text):
    """Whitespace tokens of the learner's sentence; BadSentence when empty or too long."""
    tokens = str(text).split()
    if not tokens:
        raise BadSentence("empty", 0)
    if len(tokens) > MAX_TOKENS:
        raise BadSentence("long", len(tokens))
    return tokens


def embed(tokens, num_hiddens, scale=1.0):
    """Random-but-seeded embeddings (T, num_hiddens): the same word always gets the same vector."""
    rows = []
    for word in tokens:
        gen = torch.Generator().manual_seed(zlib.crc32(word.lower().encode("utf-8")))
        rows.append(torch.randn(num_hiddens, generator=gen))  # (h,)
    return scale * torch.stack(rows)  # (T, h)


def head_weights(tokens, num_hiddens, num_heads, scale=1.0, seed=0):
    """Self-attention weights of every head for the sentence: (num_heads, T, T)."""
    layer = build_layer(num_hiddens, num_heads, seed)
    X = embed(tokens, num_hiddens, scale).unsqueeze(0)  # (1, T, h)
    with torch.no_grad():
        layer(X, X, X)
    return layer.attention_weights[0]  # (heads, T, T)


def head_labels(num_heads, template="head {}"):
    """Names of the heads for tables, numbered from 1 as everywhere in the course: template.format(i + 1)."""
    return [template.format(i + 1) for i in range(num_heads)]


def head_differences(weights, template="head {}"):
    """Mean |w_a - w_b| between every pair of heads' weight matrices: (heads, heads) DataFrame."""
    w = torch.as_tensor(weights)  # (heads, T, T)
    diff = (w[:, None] - w[None, :]).abs().mean(dim=(-1, -2))  # (heads, heads)
    labels = head_labels(w.shape[0], template)
    return pd.DataFrame(diff.numpy(), index=labels, columns=labels)


def token_labels(tokens):
    """'0:the', '1:cat', ...: unique labels even for repeated words."""
    return [f"{i}:{w}" for i, w in enumerate(tokens)]


def most_attended(weights, tokens, template="head {}"):
    """For each head, the key each query reads most: DataFrame (query x head) of words."""
    top = np.asarray(torch.as_tensor(weights).argmax(dim=-1))  # (heads, T)
    labels = head_labels(top.shape[0], template)
    return pd.DataFrame({labels[h]: [tokens[j] for j in top[h]] for h in range(top.shape[0])},
                        index=token_labels(tokens))


# Display-ready views for the page (it caches them on plain values): text from the catalogs,
# tables as Arrow, charts as Vega-Lite dicts.

def tracer_view(lang, batch, n_q, n_k, num_hiddens, num_heads):
    """(shape table, max |steps - forward|) with translated names; the module's ValueError on bad heads."""
    rows, diff = trace_shapes(batch, n_q, n_k, num_hiddens, num_heads)
    frame = pd.DataFrame({
        t("ch05.col_tensor", lang): [t(f"ch05.tensor_{r['tensor']}", lang) for r in rows],
        t("ch05.col_step", lang): [t(f"ch05.step_{r['step']}", lang) for r in rows],
        t("ch05.col_shape", lang): [r["shape"] for r in rows],
    })
    return arrow_table(frame), diff


def params_view(lang, num_hiddens, num_heads):
    """(parameter table with translated headers, total of the multi-head layer)."""
    table = parameter_table(num_hiddens, num_heads)
    total = int(table["multi"].iloc[-1])
    table["matrix"] = table["matrix"].replace({"total": t("ch05.total", lang)})
    table = table.rename(columns={"matrix": t("ch05.col_matrix", lang), "single": t("ch05.col_single", lang),
                                  "multi": t("ch05.col_multi", lang, heads=num_heads)})
    return arrow_table(table), total


def heads_view(lang, tokens, num_hiddens, num_heads, scale, seed, head):
    """{'spec': heatmap of one head, 'top': most-attended table, 'diff': head differences} for a sentence."""
    weights = head_weights(list(tokens), num_hiddens, num_heads, scale, seed)  # (heads, T, T)
    labels, name = token_labels(tokens), t("ch05.head_name", lang)
    chart = charts.heatmap(weights[head].numpy(), labels, labels, t("ch05.heatmap_title", lang, head=head + 1),
                           x_title=t("ch05.axis_key", lang), y_title=t("ch05.axis_query", lang),
                           show_values=len(tokens) <= 8, domain=[0, 1], cell_size=44)
    return {"spec": arrow_spec(chart), "top": arrow_table(most_attended(weights, tokens, name), ""),
            "diff": arrow_table(head_differences(weights, name).round(3), "")}


# valid_lens in the tracer: one length per example, repeated for every head by the layer itself.

class BadLengths(ValueError):
    """valid_lens text the layer cannot use; `code` ('number', 'count', 'range') and `fields` let the page
    say it in the learner's language (catalog ch05.lens.bad_<code>)."""

    def __init__(self, code, message, **fields):
        self.code, self.fields = code, fields
        super().__init__(message)


def parse_valid_lens(text, batch, n_k):
    """Lengths from text like '3, 2': one per example, each 0..n_k; a BadLengths that says how to fix it."""
    parts = str(text).replace(",", " ").replace("，", " ").split()
    try:
        lens = [int(p) for p in parts]
    except ValueError:
        raise BadLengths("number", f"could not read {text!r} as whole numbers; write one length per example, "
                         "like '3, 2'", text=text) from None
    if len(lens) != batch:
        raise BadLengths("count", f"got {len(lens)} lengths for a batch of {batch}; give exactly one per example",
                         count=len(lens), batch=batch)
    if any(not 0 <= n <= n_k for n in lens):
        raise BadLengths("range", f"every length must be between 0 and n_k = {n_k}", n_k=n_k)
    return lens


def trace_valid_lens(batch, n_q, n_k, num_hiddens, num_heads, valid_lens, seed=0):
    """What the layer does with valid_lens (B,): the tensor its attention receives and the masked weights."""
    layer = build_layer(num_hiddens, num_heads, seed)
    gen = torch.Generator().manual_seed(seed)
    queries = torch.randn(batch, n_q, num_hiddens, generator=gen)  # (B, n_q, h)
    keys = torch.randn(batch, n_k, num_hiddens, generator=gen)  # (B, n_k, h)
    lens = torch.tensor(valid_lens)  # (B,)
    seen = {}
    hook = layer.attention.register_forward_pre_hook(lambda m, args: seen.update(lens=args[3]))
    try:
        with torch.no_grad():
            layer(queries, keys, keys, lens)
    finally:
        hook.remove()
    weights = layer.attention.attention_weights  # (B*heads, n_q, n_k)
    return {
        "input": lens.tolist(), "input_shape": tuple(lens.shape),
        "repeated": seen["lens"].tolist(), "repeated_shape": tuple(seen["lens"].shape),
        "weights_shape": tuple(weights.shape), "zero_weights": int((weights == 0).sum()),
    }
