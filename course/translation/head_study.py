"""What the trained Transformer's heads rely on, measured on the test sentences its BLEU report ships.

Streamlit-free. Every figure is computed with the shipped checkpoint, teacher-forced
on the report's `examples` (held-out test pairs, so the page needs no data file):

- `saturation`: per layer and kind, the mean largest weight of a row (1.0 = one-hot);
- `bos_share`: the decoder self-attention weight on `<bos>`, against a uniform reader's 1/(t+1), and how much
  `<bos>`'s value differs from sentence to sentence in each layer (`bos_value_spread`);
- `score_gradients`: how much gradient reaches the attention scores (through the softmax) and the
  value and query projections of each layer, in the trained model and in a fresh one of its shape;
- `saturation` again for a fresh model whose embeddings start at N(0, 1/d) instead of N(0, 1) (`fresh_like`'s
  `unit_embeddings`): how much of layer 1's one-hot start comes from the embedding scale;
- `head_ablation`: token accuracy and loss with one head's output zeroed before W_o, one head at a time.
"""

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from . import data as D
from . import demos
from .checkpoint import load_checkpoint
from .decoding import source_tensor
from .models import build_model
from .vocab import PAD_ID, tokenize_zh

KINDS = ("encoder", "decoder", "cross")  # encoder self, decoder (causal) self, decoder-to-encoder


def report_pairs(report):
    """[(English, reference Chinese)] of a BLEU report's shipped test examples, in report order."""
    return [(ex["en"], ex["reference"]) for bucket in (report or {}).get("examples", {}).values() for ex in bucket]


def make_batch(pairs, src_vocab, tgt_vocab):
    """The pairs as one padded teacher-forcing Batch (English pieces, Chinese characters)."""
    examples = [(source_tensor(en, src_vocab)[1][0].tolist(), tgt_vocab.encode(tokenize_zh(zh))) for en, zh in pairs]
    return D.make_batch(examples)


def attention_modules(model):
    """{kind: [MultiHeadAttention per layer]} of a TransformerTranslator."""
    return {"encoder": [b.attention for b in model.encoder.blks],
            "decoder": [b.attention1 for b in model.decoder.blks],
            "cross": [b.attention2 for b in model.decoder.blks]}


def forward(model, batch):
    """Teacher-forced logits (B, T, V) through the blocks (their attention weights are kept)."""
    return model(batch.src, batch.src_valid_lens, batch.tgt_in)


def rows_of(batch, kind, weights, i):
    """Sentence i's real rows and keys of one (B, heads, n_q, n_k) map: (heads, n_q_i, n_k_i)."""
    src, tgt = int(batch.src_valid_lens[i]), int(batch.tgt_valid_lens[i])
    n_q, n_k = {"encoder": (src, src), "decoder": (tgt, tgt), "cross": (tgt, src)}[kind]
    return weights[i, :, :n_q, :n_k]


@torch.no_grad()
def saturation(model, batch):
    """Table (kind, layer, largest): the mean over heads and real rows of each row's largest weight."""
    model.eval()
    forward(model, batch)
    rows = []
    for kind, modules in attention_modules(model).items():
        for layer, mha in enumerate(modules):
            tops = [rows_of(batch, kind, mha.attention_weights, i).max(-1).values.flatten()
                    for i in range(batch.src.shape[0])]  # (heads * n_q_i,) each
            rows.append({"kind": kind, "layer": layer + 1, "largest": float(torch.cat(tops).mean())})
    return pd.DataFrame(rows)


def spread(vectors):
    """How much the rows of `vectors` (n, d) differ: their mean distance from their mean row over their mean
    length (0.0 when all rows are the same vector)."""
    center = vectors.mean(0)  # (d,)
    return float((vectors - center).norm(dim=-1).mean() / vectors.norm(dim=-1).mean())


@torch.no_grad()
def bos_value_spread(model, batch):
    """[spread of <bos>'s value over the sentences, per decoder layer]: the decoder self-attention's value
    projection W_v at position 0 of every sentence. Layer 1 reads the embedding of <bos> at position 0,
    the same in every sentence; a later layer reads a state that cross-attention has mixed with the source."""
    model.eval()
    found = {}
    modules = attention_modules(model)["decoder"]
    handles = [mha.W_v.register_forward_hook(lambda _m, _args, out, i=i: found.__setitem__(i, out[:, 0].clone()))
               for i, mha in enumerate(modules)]  # out (B, T, d): every sentence's values
    try:
        forward(model, batch)
    finally:
        for handle in handles:
            handle.remove()
    return [spread(found[i]) for i in range(len(modules))]


@torch.no_grad()
def bos_share(model, batch):
    """Table (layer, bos, uniform, spread): decoder self-attention weight on <bos>, mean over heads and the rows
    t >= 1 (row 0 sees only <bos>), what equal weights over the t + 1 visible keys would give, 1/(t+1), and
    bos_value_spread's spread of <bos>'s value over the sentences."""
    model.eval()
    forward(model, batch)
    rows = []
    for layer, mha in enumerate(attention_modules(model)["decoder"]):
        shares, uniform = [], []
        for i in range(batch.src.shape[0]):
            w = rows_of(batch, "decoder", mha.attention_weights, i)  # (heads, T_i, T_i)
            shares.append(w[:, 1:, 0].flatten())  # (heads * (T_i - 1),)
            uniform += [1 / (t + 1) for t in range(1, w.shape[1])] * w.shape[0]
        rows.append({"layer": layer + 1, "bos": float(torch.cat(shares).mean()), "uniform": sum(uniform) / len(uniform)})
    out = pd.DataFrame(rows)
    out["spread"] = bos_value_spread(model, batch)
    return out


def plain_loss(logits, batch):
    """Mean cross-entropy over the real target characters and <eos> (no label smoothing)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.tgt_out.reshape(-1), ignore_index=PAD_ID)


def score_gradients(model, batch):
    """Table (kind, layer, largest, scores, W_q, W_v): the plain loss's gradient reaching each layer's
    attention scores (Frobenius norm of dL/dscores = a * (g - sum(a * g)), g = dL/da) and the norms of
    its query and value projections' weight gradients, with each layer's mean largest weight."""
    model.eval()
    model.zero_grad(set_to_none=True)
    modules = attention_modules(model)
    logits = forward(model, batch)  # (B, T, V)
    inner = {(k, i): m.attention.attention_weights for k, ms in modules.items() for i, m in enumerate(ms)}
    for a in inner.values():
        a.retain_grad()  # (B * heads, n_q, n_k): the weights the values were mixed with
    plain_loss(logits, batch).backward()
    rows = []
    for (kind, layer), a in inner.items():
        g = a.grad  # (B * heads, n_q, n_k)
        a = a.detach()
        scores = a * (g - (a * g).sum(-1, keepdim=True))  # (B * heads, n_q, n_k): through the softmax
        mha = modules[kind][layer]
        heads = mha.num_heads
        tops = [rows_of(batch, kind, a.reshape(-1, heads, *a.shape[1:]), i).max(-1).values.flatten()
                for i in range(batch.src.shape[0])]
        rows.append({"kind": kind, "layer": layer + 1, "largest": float(torch.cat(tops).mean()),
                     "scores": float(scores.norm()), "W_q": float(mha.W_q.weight.grad.norm()),
                     "W_v": float(mha.W_v.weight.grad.norm())})
    model.zero_grad(set_to_none=True)
    return pd.DataFrame(rows)


def fresh_like(loaded, unit_embeddings=False):
    """A newly initialised model of the checkpoint's shape, seeded with the checkpoint's seed (eval mode).

    unit_embeddings: draw both token embeddings from N(0, 1/d) instead of nn.Embedding's N(0, 1), as the
    decoder does with tie_embeddings, so that the forward's multiplication by sqrt(d) gives them unit scale."""
    torch.manual_seed(loaded.meta.get("seed", 0))
    model = build_model(loaded.name, type(loaded.model.config)(**loaded.meta["config"]))
    if unit_embeddings:
        for embedding in (model.encoder.embedding, model.decoder.embedding):
            nn.init.normal_(embedding.weight, 0.0, embedding.embedding_dim ** -0.5)
    return model.eval()


@torch.no_grad()
def token_scores(model, batch):
    """(token accuracy, mean plain loss) of teacher-forced prediction over the real target positions."""
    model.eval()
    logits = forward(model, batch)  # (B, T, V)
    real = batch.tgt_out != PAD_ID  # (B, T)
    right = (logits.argmax(-1) == batch.tgt_out)[real]
    return float(right.float().mean()), float(plain_loss(logits, batch))


def zero_head(mha, head):
    """Zero head `head`'s slice of the merged heads before W_o (a forward pre-hook); returns its handle."""
    size = mha.W_o.in_features // mha.num_heads

    def hook(module, args):
        X = args[0].clone()  # (B, T, heads * size)
        X[..., head * size:(head + 1) * size] = 0
        return (X,)
    return mha.W_o.register_forward_pre_hook(hook)


def head_ablation(model, batch):
    """Table (kind, layer, head, accuracy, loss, d_accuracy, d_loss): one head masked at a time,
    against the full model (accuracy in [0, 1], the loss per character)."""
    base_acc, base_loss = token_scores(model, batch)
    rows = []
    for kind, modules in attention_modules(model).items():
        for layer, mha in enumerate(modules):
            for head in range(mha.num_heads):
                handle = zero_head(mha, head)
                try:
                    acc, loss = token_scores(model, batch)
                finally:
                    handle.remove()
                rows.append({"kind": kind, "layer": layer + 1, "head": head + 1, "accuracy": acc, "loss": loss,
                             "d_accuracy": acc - base_acc, "d_loss": loss - base_loss})
    return pd.DataFrame(rows), base_acc, base_loss


def num_characters(batch):
    """How many target positions are scored (characters and each sentence's <eos>)."""
    return int(batch.tgt_valid_lens.sum())


def softmax_jacobian_norm(top, n):
    """Frobenius norm of the softmax Jacobian diag(a) - a a^T where one of n weights is `top` and the
    rest share 1 - top equally: how much a change of the scores can still move the weights."""
    a = torch.full((n,), (1 - top) / (n - 1), dtype=torch.float64)  # (n,)
    a[0] = top
    return float((torch.diag(a) - torch.outer(a, a)).norm())


def study(path, report):
    """Every table of this module for the checkpoint at `path`, on `report`'s shipped test examples.

    Loads its own copy of the model (hooks and gradients never touch a model that others decode with).
    {"pairs", "characters", "saturation", "bos", "gradients", "fresh_gradients", "fresh_unit_saturation",
    "ablation", "accuracy", "loss"}"""
    loaded = load_checkpoint(path)
    pairs = report_pairs(report)
    if not pairs:
        raise ValueError(f"the BLEU report of {path} ships no test examples to measure on")
    batch = make_batch(pairs, loaded.src_vocab, loaded.tgt_vocab)
    ablation, accuracy, loss = head_ablation(loaded.model, batch)
    return {"pairs": len(pairs), "characters": num_characters(batch), "saturation": saturation(loaded.model, batch),
            "bos": bos_share(loaded.model, batch), "gradients": score_gradients(loaded.model, batch),
            "fresh_gradients": score_gradients(fresh_like(loaded), batch),
            "fresh_unit_saturation": saturation(fresh_like(loaded, unit_embeddings=True), batch), "ablation": ablation,
            "accuracy": accuracy, "loss": loss}


TABLES = ("saturation", "bos", "gradients", "fresh_gradients", "fresh_unit_saturation", "ablation")


def to_json(found):
    """study()'s dict as plain JSON values (tables as lists of records, numbers to 6 significant digits)."""
    def plain(x):
        return float(f"{x:.6g}") if isinstance(x, float) else x
    return {k: ([{c: plain(v) for c, v in row.items()} for row in v.to_dict("records")] if k in TABLES else plain(v))
            for k, v in found.items()}


def from_json(data):
    """to_json's dict back with DataFrames."""
    return {k: (pd.DataFrame(v) if k in TABLES else v) for k, v in data.items()}


def shipped_path(name="transformer"):
    """Where the figures of checkpoint `name` are shipped: beside it, <name>.heads.json."""
    return demos.checkpoint_dir() / f"{name}.heads.json"


def load_shipped(name="transformer"):
    """The shipped figures (DataFrames), or None when the file is not there."""
    path = shipped_path(name)
    return from_json(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None


def main(argv=None):
    """Compute the figures for the shipped Transformer and write them beside it (atomically)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="default: checkpoints/transformer.heads.json")
    args = parser.parse_args(argv)
    out = args.out or shipped_path()
    start = time.perf_counter()
    found = study(demos.checkpoint_path("transformer"), demos.read_bleu_report("transformer"))
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(to_json(found), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    print(f"wrote {out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
