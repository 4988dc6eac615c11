"""Why the lab's sort learns without positional encoding while copy and reverse cannot.

Streamlit-free, computed on the lab's own model and test sets:
- without positions the encoder's outputs are a set, so the whole model's output ignores the order of the
  source (`source_order_gap`); no such model can do better on copy than `order_free_bound`;
- the decoder still knows where it is, because its causal mask lets position t see t + 1 inputs: even
  identical inputs give different outputs at different positions (`causal_position_spread`).
"""

import math
from collections import Counter
from dataclasses import replace

import torch

from solutions.ex05_multihead import MultiHeadAttention

from .lab_tasks import DigitTask
from .training_lab import LabConfig, LabTransformer, decoder_input


def order_free_bound(config):
    """(token, sequence) accuracy the best order-blind model can reach on copy over config's test set.

    Such a model sees only which digits occur how often, and every ordering of them is equally likely, so
    at each position its best guess is the most frequent digit (right count_max / T of the time) and a whole
    sequence comes out right with probability prod(count!) / T!, one ordering of the multiset."""
    src, _ = DigitTask(replace(config, task="copy")).test_set()  # (N, T)
    T = src.shape[1]
    token, seq = [], []
    for row in src.tolist():
        counts = Counter(row).values()
        token.append(max(counts) / T)
        seq.append(math.prod(math.factorial(c) for c in counts) / math.factorial(T))
    return sum(token) / len(token), sum(seq) / len(seq)


@torch.no_grad()
def source_order_gap(positional, seed=0, config=None):
    """Largest |logits(src) - logits(permuted src)| of a seeded lab model, the decoder fed the same input."""
    c = replace(config or LabConfig(), positional=positional, seed=seed)
    torch.manual_seed(seed)
    model = LabTransformer(c).eval()
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, c.vocab_size, (4, c.seq_len), generator=gen)  # (B, T)
    perm = torch.randperm(c.seq_len, generator=gen)  # (T,)
    tgt_in = decoder_input(src.sort(dim=1).values, model.bos)  # (B, T): the same for both orders
    return float((model(src, tgt_in) - model(src[:, perm], tgt_in)).abs().max())


@torch.no_grad()
def causal_position_spread(num_steps=6, num_hiddens=32, num_heads=4, seed=0):
    """(causal, unmasked): largest difference between the self-attention outputs at positions 1..T-1 of a
    sequence <bos>, x, x, ..., x (all inputs after the first identical), with and without the causal mask.

    Without the mask every position sees the same set of inputs and gets the same output; with it position t
    sees <bos> and t copies of x, so a head's weight on <bos> (1/(t+1) for equal scores) tells t apart."""
    torch.manual_seed(seed)
    mha = MultiHeadAttention(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, 0.0).eval()
    bos, x = torch.randn(2, num_hiddens)  # (d,) each
    X = torch.cat((bos[None], x.expand(num_steps - 1, -1)))[None]  # (1, T, d)
    causal = torch.arange(1, num_steps + 1)[None]  # (1, T): position t sees 0..t

    def spread(valid_lens):
        out = mha(X, X, X, valid_lens)[0, 1:]  # (T - 1, d)
        return float((out - out[0]).abs().max())
    return spread(causal), spread(None)


def uniform_bos(num_steps):
    """[1/(t+1) for t < num_steps]: the weight equal scores put on <bos> at each decoder position."""
    return [1 / (t + 1) for t in range(num_steps)]


def shipped_bos_rows(results, task="sort", variant="no_pe", seed=0, layer=0):
    """Per decoder position, the mean over heads of the weight on <bos> (the start symbol) in the shipped
    run's last snapshot on the probe, layer `layer` (counting from 0); None without kept maps."""
    run = next((r for r in results["runs"] if (r["task"], r["variant"], r["seed"]) == (task, variant, seed)), None)
    if run is None or not run["snapshots"]:
        return None
    heads = run["snapshots"][-1]["maps"]["decoder"][layer]  # [heads][T][T]
    return [sum(head[t][0] for head in heads) / len(heads) for t in range(len(heads[0]))]
