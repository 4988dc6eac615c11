"""Chapter 4 experiments: Bahdanau (additive) attention computed by hand.

Streamlit-free. Every number comes from the reference modules in solutions/
(AdditiveAttention, Seq2SeqAttentionDecoder, softmax), never from exercises/.
"""

import pandas as pd
import torch

from course.common import charts
from solutions.ex01_softmax import softmax
from solutions.ex03_scoring import AdditiveAttention
from solutions.ex04_bahdanau import Seq2SeqAttentionDecoder

SOURCE = ("The", "black", "cat", "sat", "on", "the", "mat")
TARGETS = ("黑", "猫", "坐", "在", "垫子", "上")
# Illustrative alignment scores e (one per source word) for each target word:
# chosen by hand to look like a trained model's, not produced by one.
SCORES = {
    "黑": (0.2, 3.5, 1.2, -0.3, -0.6, -0.2, -0.5),
    "猫": (0.3, 1.0, 3.8, 0.3, -0.8, -0.5, -0.9),
    "坐": (-0.4, 0.0, 1.1, 3.6, 0.8, -0.3, 0.1),
    "在": (-0.2, -0.5, 0.2, 1.4, 3.0, 0.1, 0.6),
    "垫子": (-0.3, -0.4, 0.1, 0.0, 0.6, 1.0, 3.9),
    "上": (-0.5, -0.6, -0.2, 0.4, 3.2, 0.3, 1.6),
}
# A hand-drawn word alignment of the example (target word -> linked source positions), the problem
# chapter 1 poses and attention answers softly: it is a human's reading, not a model's output.
ALIGNMENT = {"黑": (1,), "猫": (2,), "坐": (3,), "在": (4,), "垫子": (6,), "上": (4,)}

# The worked example: decoder state s, encoder states h1, h2, weights W_s, W_h, v.
EXAMPLE = {
    "s": (1.0, 0.0), "h1": (1.0, 0.0), "h2": (0.0, 2.0), "v": (1.0, 1.0),
    "W_s": ((1.0, 0.0), (0.0, 1.0)), "W_h": ((1.0, 0.0), (0.0, 1.0)),
}


class BadInput(ValueError):
    """An input the learner typed cannot be used; `name` says which one."""

    def __init__(self, name, message):
        super().__init__(f"{name}: {message}")
        self.name = name


def alignment_table(scores, words=SOURCE):
    """Columns word, e, exp(e - max e), alpha for one target word's scores."""
    e = torch.tensor([float(x) for x in scores], dtype=torch.float64)  # (n,)
    if len(e) != len(words):
        raise ValueError(f"need one score per source word ({len(words)}); got {len(e)}")
    if not torch.isfinite(e).all():
        raise BadInput("e", "every score must be a finite number; fill in the empty cells")
    return pd.DataFrame({
        "word": list(words), "e": e.numpy(),
        "exp(e - max e)": torch.exp(e - e.max()).numpy(),
        "alpha": softmax(e).numpy(),
    })


def _tensor(values, name):
    """A float tensor from nested numbers, with a clear error for empty or non-finite cells."""
    x = torch.tensor(values, dtype=torch.float32)
    if not torch.isfinite(x).all():
        raise BadInput(name, f"an entry is empty or not a number: {values}")
    return x


def additive_module(W_s, W_h, v):
    """The reference AdditiveAttention with W_q = W_s, W_k = W_h, w_v = v (no dropout)."""
    W_s, W_h, v = _tensor(W_s, "W_s"), _tensor(W_h, "W_h"), _tensor(v, "v")  # (h, d_q), (h, d_k), (h,)
    if W_s.shape[0] != W_h.shape[0] or v.shape != (W_s.shape[0],):
        raise BadInput("W_s, W_h, v", f"W_s and W_h need the same number of rows as v has entries; got "
                       f"{tuple(W_s.shape)}, {tuple(W_h.shape)}, {tuple(v.shape)}")
    attention = AdditiveAttention(W_h.shape[1], W_s.shape[1], v.shape[0], dropout=0.0).eval()
    with torch.no_grad():
        attention.W_q.weight.copy_(W_s)
        attention.W_k.weight.copy_(W_h)
        attention.w_v.weight.copy_(v[None, :])  # (1, h)
    return attention


def bahdanau_step(s, hs, W_s, W_h, v):
    """e, alpha, context c and output distribution p = softmax(I c) for one decoder step."""
    attention = additive_module(W_s, W_h, v)
    captured = {}
    hook = attention.w_v.register_forward_hook(lambda m, i, out: captured.update(e=out.squeeze(-1)))
    query = _tensor(s, "s")[None, None, :]  # (1, 1, d)
    states = _tensor(hs, "h")[None]  # (1, n, d)
    try:
        with torch.no_grad():
            c = attention(query, states, states)  # (1, 1, d)
    finally:
        hook.remove()
    c = c[0, 0]  # (d,)
    return {
        "e": captured["e"][0, 0],  # (n,)
        "alpha": attention.attention_weights[0, 0],  # (n,)
        "c": c,
        "p": softmax(c),  # toy output layer: logits = I c
    }


def gradient_paths(s, hs, W_s, W_h, v, target):
    """Gradient of -log p[target] reaching each h_i through the values and through the scores."""
    attention = additive_module(W_s, W_h, v)
    states = _tensor(hs, "h")  # (n, d)
    keys = states.clone()[None].requires_grad_(True)  # (1, n, d): the score path
    values = states.clone()[None].requires_grad_(True)  # (1, n, d): the value path
    c = attention(_tensor(s, "s")[None, None, :], keys, values)[0, 0]  # (d,)
    loss = -torch.log(softmax(c)[target])
    loss.backward()
    return {"value": values.grad[0], "score": keys.grad[0], "loss": float(loss.detach())}


def step_shapes(batch=4, src_len=7, num_hiddens=16, embed_size=8, vocab_size=50, seed=0):
    """[(step, tensor id, shape)] of the real tensors in one step of the reference Bahdanau decoder.

    The ids name catalog texts ch04.tensor.<id>: the page shows them in the learner's language.
    """
    torch.manual_seed(seed)
    decoder = Seq2SeqAttentionDecoder(vocab_size, embed_size, num_hiddens, num_layers=1).eval()
    enc_outputs = torch.randn(batch, src_len, num_hiddens)  # (B, T, H)
    hidden = torch.randn(1, batch, num_hiddens)  # (L, B, H)
    seen = {}
    hooks = [
        decoder.attention.W_q.register_forward_hook(lambda m, i, o: seen.update(query=i[0], proj_q=o)),
        decoder.attention.W_k.register_forward_hook(lambda m, i, o: seen.update(keys=i[0], proj_k=o)),
        decoder.attention.w_v.register_forward_hook(lambda m, i, o: seen.update(features=i[0], e=o)),
        decoder.attention.register_forward_hook(lambda m, i, o: seen.update(c=o)),
        decoder.rnn.register_forward_hook(lambda m, i, o: seen.update(rnn_in=i[0], rnn_out=o[0])),
        decoder.deep_output.register_forward_hook(lambda m, i, o: seen.update(deep_in=i[0], deep_out=o)),
        decoder.dense.register_forward_hook(lambda m, i, o: seen.update(logits=o)),
    ]
    tokens = torch.zeros(batch, 1, dtype=torch.long)  # (B, 1): one target step
    with torch.no_grad():
        decoder(tokens, decoder.init_state((enc_outputs, hidden), None))
    for hook in hooks:
        hook.remove()
    alpha = decoder.attention_weights  # (B, 1, T)
    rows = [  # (step, tensor id: its name is the catalog text ch04.tensor.<id>, tensor)
        ("project", "query", seen["query"]), ("project", "keys", seen["keys"]),
        ("project", "proj_q", seen["proj_q"]), ("project", "proj_k", seen["proj_k"]),
        ("project", "features", seen["features"]), ("project", "e", seen["e"].squeeze(-1)),
        ("softmax", "alpha", alpha), ("weighted_sum", "c", seen["c"]),
        ("decode", "rnn_in", seen["rnn_in"]), ("decode", "rnn_out", seen["rnn_out"]),
        ("decode", "deep_in", seen["deep_in"]), ("decode", "deep_out", seen["deep_out"]),
        ("decode", "logits", seen["logits"]),
    ]
    return [(step, name, tuple(t.shape)) for step, name, t in rows]


def alignment_spec(alphas, x_title):
    """Bar chart dict of the weights of the seven source words (cacheable on a tuple of floats)."""
    bars = pd.DataFrame({"word": [f"{i + 1}. {w}" for i, w in enumerate(SOURCE)],
                         "alpha": [round(float(a), 3) for a in alphas]})
    return charts.bar_chart(bars, "word", "alpha", x_title=x_title, y_title="α").to_dict()
