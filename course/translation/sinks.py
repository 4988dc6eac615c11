"""Attention sinks and sliding windows on the shipped Transformer's decoder (chapter 13, StreamingLLM in miniature).

Streamlit-free. The decoder's self-attention is restricted by a `Window`: each
position sees only the last `size` positions (itself included), optionally
with the first `sinks` positions (`<bos>`) kept visible, or with `<bos>` alone
hidden. The mask goes into the key/value-cache forward (TransformerDecoder.forward_cached),
so teacher forcing and greedy decoding run the same code with the same mask.
The cache keeps every key and the mask hides the old ones: the attention is
what an evicting cache computes, but no memory is saved, and each position keeps
the positional encoding of its place in the sentence.

For each setting, on the held-out test split of the training data:
- the plain (unsmoothed) cross-entropy per target character, teacher-forced,
  and its perplexity;
- greedy BLEU as course.translation.evaluate computes it (sacrebleu, Chinese
  tokenisation, the checkpoint's repetition guard);
- the decoder self-attention weight on `<bos>`, per layer: mean over heads and
  over every real position after the first (position 0 sees only itself).

`python -m course.translation.sinks --data PATH` measures every setting of SETTINGS
and writes checkpoints/transformer.sinks.json, which the chapter page reads.
"""

import argparse
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from course.common.paths import atomic_write_text

from . import demos
from .data import encode_pairs, load_pairs, make_batch, prepare_splits, tokenize_pairs
from .evaluate import evaluate
from .vocab import PAD_ID

SIZES = tuple(range(1, 10))  # window sizes measured: the page's slider goes to 8; 9 is 8 plus one more key
BATCH_SIZE = 64


@dataclass(frozen=True)
class Window:
    """Which earlier positions the decoder's self-attention may see."""

    size: int | None = None  # the last `size` positions, the query's own included; None: all of them
    sinks: int = 0  # the first `sinks` positions stay visible to every later position, whatever the size
    evict_first: bool = False  # position 0 (<bos>) is hidden from every later position

    def __post_init__(self):
        if self.size is not None and (not isinstance(self.size, int) or self.size < 1):
            raise ValueError(f"a window size is a whole number of positions >= 1 (or None for all); got {self.size!r}")
        if not isinstance(self.sinks, int) or self.sinks < 0:
            raise ValueError(f"the number of sink positions is a whole number >= 0; got {self.sinks!r}")
        if self.evict_first and self.sinks:
            raise ValueError("a window cannot both keep the first positions (sinks > 0) and hide <bos> (evict_first)")

    @property
    def key(self):
        """A short name for the JSON file: 'full', 'no_bos', 'w4', 'w4_sink1', 'w4_no_bos'."""
        if self.size is None:
            return "no_bos" if self.evict_first else "full" if not self.sinks else f"full_sink{self.sinks}"
        return f"w{self.size}" + (f"_sink{self.sinks}" if self.sinks else "") + ("_no_bos" if self.evict_first else "")

    def mask(self, t0, T, device=None):
        """(T, t0+T) bool: which keys new positions t0..t0+T-1 see (the causal mask, then the window)."""
        queries = torch.arange(t0, t0 + T, device=device)[:, None]  # (T, 1)
        keys = torch.arange(t0 + T, device=device)[None, :]  # (1, t0+T)
        visible = keys <= queries  # (T, t0+T): causal
        if self.size is not None:
            visible &= (queries - keys < self.size) | (keys < self.sinks)  # (T, t0+T)
        if self.evict_first:
            visible &= (keys != 0) | (queries == 0)  # position 0 still sees itself: it has nothing else
        return visible


def settings(sizes=SIZES):
    """Every Window measured: all positions, <bos> hidden, then each size without and with <bos> kept."""
    out = [Window(), Window(evict_first=True)]
    for size in sizes:
        out += [Window(size), Window(size, sinks=1)]
    return out


class WindowedTranslator(nn.Module):
    """The shipped Transformer decoding with the key/value cache and its self-attention restricted to `window`:
    the encode / decode_step / reorder_state interface that greedy_decode and evaluate.evaluate use (eval only)."""

    def __init__(self, model, window):
        super().__init__()
        self.model, self.window = model, window

    def encode(self, src, src_valid_lens):
        """Source (B, T_src) -> a KVState with the cross-attention keys and values."""
        enc_outputs = self.model.encoder(src, src_valid_lens)  # (B, T_src, d)
        return self.model.decoder.start_cache(enc_outputs, src_valid_lens)

    def decode_step(self, tokens, state):
        """tokens (B, 1) -> logits (B, V), state, no attention maps."""
        logits, state = self.model.decoder.forward_cached(tokens, state, self.window.mask)  # (B, 1, V)
        return logits[:, -1], state, {}

    def reorder_state(self, state, index):
        """Keep batch rows `index` (beam search)."""
        return state.select(index)


@torch.no_grad()
def teacher_forced(model, batch, window):
    """One batch through the decoder with `window`, fed the reference: (summed plain cross-entropy over the real
    target characters and <eos>, their count, [summed weight on <bos> per decoder layer], the rows summed over:
    heads times real positions after the first)."""
    model.eval()
    state = model.decoder.start_cache(model.encoder(batch.src, batch.src_valid_lens), batch.src_valid_lens)
    logits, _ = model.decoder.forward_cached(batch.tgt_in, state, window.mask)  # (B, T, V)
    loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=PAD_ID, reduction="sum")
    T = batch.tgt_in.shape[1]
    positions = torch.arange(T)[None, :]  # (1, T)
    rows = (positions >= 1) & (positions < batch.tgt_valid_lens[:, None])  # (B, T): real positions after the first
    sink = []
    for w_self, _ in model.decoder.attention_weights:  # w_self (B, heads, T, T)
        sink.append(float((w_self[:, :, :, 0] * rows[:, None, :]).sum()))  # weight on key 0 over real rows
    heads = model.decoder.attention_weights[0][0].shape[1]
    return float(loss), int(batch.tgt_valid_lens.sum()), sink, int(rows.sum()) * heads


def test_examples(pairs, src_vocab, tgt_vocab):
    """The pairs as (source ids, target ids), tokenised and encoded as the training command does."""
    return encode_pairs(tokenize_pairs(pairs), src_vocab, tgt_vocab)


def loss_and_sink(model, examples, window, batch_size=BATCH_SIZE):
    """{"loss", "perplexity", "sink": [per layer]} of `window` over the examples, teacher-forced in
    length-sorted batches."""
    order = sorted(range(len(examples)), key=lambda i: len(examples[i][1]))
    loss = count = rows = 0
    sink = None
    for start in range(0, len(order), batch_size):
        batch = make_batch([examples[i] for i in order[start : start + batch_size]])
        b_loss, b_count, b_sink, b_rows = teacher_forced(model, batch, window)
        loss, count, rows = loss + b_loss, count + b_count, rows + b_rows
        sink = b_sink if sink is None else [a + b for a, b in zip(sink, b_sink)]
    mean = loss / count
    return {"loss": mean, "perplexity": math.exp(mean), "sink": [s / rows for s in sink]}


def greedy_bleu(model, pairs, src_vocab, tgt_vocab, window, no_repeat_ngram):
    """Greedy BLEU of the pairs decoded with `window` (course.translation.evaluate's computation)."""
    windowed = WindowedTranslator(model, window)
    return evaluate(windowed, pairs, src_vocab, tgt_vocab, methods=("greedy",), num_examples=0,
                    no_repeat_ngram=no_repeat_ngram)["bleu"]["greedy"]


def measure(loaded, pairs, window):
    """{"key", "size", "sinks", "evict_first", "loss", "perplexity", "sink", "bleu"} of one Window on the pairs."""
    model, src_vocab, tgt_vocab = loaded.model.eval(), loaded.src_vocab, loaded.tgt_vocab
    examples = test_examples(pairs, src_vocab, tgt_vocab)
    ngram = int(loaded.meta.get("metrics", {}).get("no_repeat_ngram") or 0)
    return {"key": window.key, "size": window.size, "sinks": window.sinks, "evict_first": window.evict_first,
            **loss_and_sink(model, examples, window),
            "bleu": greedy_bleu(model, pairs, src_vocab, tgt_vocab, window, ngram)}


def test_pairs(loaded, data):
    """The held-out test split the checkpoint's training command used (its seed and sizes) of the data file."""
    train = loaded.meta.get("train", {})
    return prepare_splits(load_pairs(data).pairs, loaded.meta["seed"], train.get("test_size", 1000),
                          train.get("valid_size", 500), train.get("max_pairs"), train.get("long_size", 0)).test


def target_lengths(loaded, pairs):
    """Each test pair's target length in characters (without <eos>)."""
    return [len(t) for _, t in test_examples(pairs, loaded.src_vocab, loaded.tgt_vocab)]


def sweep(loaded, pairs, windows=None):
    """The JSON the page reads: the test set's size and target lengths, and measure() of every setting."""
    lengths = target_lengths(loaded, pairs)
    return {"sentences": len(pairs), "characters": sum(lengths) + len(lengths),  # with each sentence's <eos>
            "mean_length": sum(lengths) / len(lengths), "max_length": max(lengths),
            "no_repeat_ngram": int(loaded.meta.get("metrics", {}).get("no_repeat_ngram") or 0),
            "settings": [measure(loaded, pairs, w) for w in (windows or settings())]}


def shipped_path(name="transformer"):
    """Where the sweep of checkpoint `name` is shipped: beside it, <name>.sinks.json."""
    return demos.checkpoint_dir() / f"{name}.sinks.json"


def load_shipped(name="transformer"):
    """The shipped sweep (a dict), or None when the file is not there; a ValueError saying how to write it again
    when it is not a sweep."""
    path = shipped_path(name)
    if not path.is_file():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(found, dict) or not isinstance(found.get("settings"), list):
            raise ValueError("it holds no list of settings")
    except (ValueError, UnicodeDecodeError) as error:  # json's decode error is a ValueError
        raise ValueError(f"{path} is not a sink sweep ({error}); write it again with "
                         f"python -m course.translation.sinks --data PATH") from None
    return found


def find(sweep_result, window):
    """The measured row of `window` in a sweep (KeyError naming it when it was not measured)."""
    for row in sweep_result["settings"]:
        if row["key"] == window.key:
            return row
    raise KeyError(f"the sweep has no setting {window.key!r}; run python -m course.translation.sinks again")


def main(argv=None):
    """Measure every setting on the shipped Transformer's test split and write the JSON beside it (atomically)."""
    from .checkpoint import load_checkpoint

    parser = argparse.ArgumentParser(prog="python -m course.translation.sinks", description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=demos.DATA_HINT, help="Tatoeba cmn-eng TSV file")
    parser.add_argument("--out", type=Path, default=None, help="default: checkpoints/transformer.sinks.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the same sums in the same order as the test that recomputes a point
    start = time.perf_counter()
    loaded = load_checkpoint(demos.checkpoint_path("transformer"))
    found = sweep(loaded, test_pairs(loaded, args.data))
    out = args.out or shipped_path()
    atomic_write_text(out, json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
