"""Chapter 12's experiments on the shipped Transformer: three ways to decode, and shared key/value heads.

Streamlit-free. Three ways to compute the next token's logits, all from the same weights:

- "recompute": run the decoder over the whole prefix again at every step (no cache at all);
- "inputs": each decoder block keeps its inputs at the earlier positions and projects them to keys and values
  again at every step (exercise 7's `state[2]`; the cross-attention projects the encoder outputs every step);
- "kv": keep the projected keys and values (course.translation.transformer's `TransformerDecoder.start_cache` / `forward_cached`).

`decode_steps` runs greedy decoding with one of them and times every step; `step_logits` keeps the logits.

Grouped-query attention (Ainslie et al. 2023): `pool_heads` mean-pools the key and value projection heads of
each group of consecutive heads into one, as that paper does before it uptrains; here nothing is trained
afterwards. `GroupedKVTranslator` decodes the shipped model with its decoder self-attention (and optionally
its cross-attention) reading `num_kv_heads` cached key/value heads, each shared by num_heads / num_kv_heads
query heads. `grouped_bleu` scores it on the held-out test split with sacrebleu as evaluate.py does, and
`python -m course.translation.kv_study --data PATH` writes those scores to checkpoints/transformer.gqa.json.
"""

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch
from torch import nn

from . import demos
from .decoding import _DECODE_LOCK, settings_of
from .evaluate import corpus_bleu, decode_all
from .vocab import BOS_ID, EOS_ID, PAD_ID, detokenize_zh, normalize_zh, tokenize_en

STRATEGIES = ("recompute", "inputs", "kv")
SCOPES = ("self", "both")  # which decoder attentions share key/value heads: self-attention, or cross too
RESULTS_VERSION = 1
AGREEMENT_TOLERANCE = 1e-4  # the largest |logit difference| the page promises in float32 (seen: ~2e-5)


# --- three ways to decode -------------------------------------------------------------------------------------

def _first_state(model, strategy, src, src_valid_lens):
    """The decoder state a strategy starts from: encoder outputs (recompute, inputs) or a KVState (kv)."""
    enc_outputs = model.encoder(src, src_valid_lens)  # (B, T_src, d)
    if strategy == "kv":
        return model.decoder.start_cache(enc_outputs, src_valid_lens)
    return model.decoder.init_state(enc_outputs, src_valid_lens)


def _next_logits(model, strategy, prefix, state):
    """The logits (B, V) of the position after `prefix` (B, t), and the state for the next step."""
    decoder = model.decoder
    if strategy == "recompute":  # a fresh state every step: the whole prefix goes through every block again
        fresh = decoder.init_state(state[0], state[1])
        logits, _ = decoder(prefix, fresh)  # (B, t, V)
        return logits[:, -1], state
    if strategy == "inputs":
        logits, state = decoder(prefix[:, -1:], state)  # (B, 1, V): the blocks' input caches grow by one
        return logits[:, -1], state
    if strategy == "kv":
        logits, state = decoder.forward_cached(prefix[:, -1:], state)  # (B, 1, V): the key/value caches grow by one
        return logits[:, -1], state
    raise ValueError(f"strategy must be one of {STRATEGIES}; got {strategy!r}")


@torch.no_grad()
def decode_steps(model, src, src_valid_lens, steps, strategy):
    """Greedy decoding for exactly `steps` tokens (the end token is never chosen, so the output reaches every
    position) with one strategy -> (token ids (B, steps), logits (B, steps, V), seconds of each step [steps])."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1; got {steps}")
    model.eval()
    with _DECODE_LOCK:
        state = _first_state(model, strategy, src, src_valid_lens)
        prefix = torch.full((src.shape[0], 1), BOS_ID, dtype=torch.long)  # (B, 1)
        all_logits, seconds = [], []
        for _ in range(steps):
            start = time.perf_counter()
            logits, state = _next_logits(model, strategy, prefix, state)  # (B, V)
            choice = logits.clone()
            choice[:, [PAD_ID, BOS_ID, EOS_ID]] = float("-inf")
            next_ids = choice.argmax(dim=-1, keepdim=True)  # (B, 1)
            seconds.append(time.perf_counter() - start)
            all_logits.append(logits)
            prefix = torch.cat((prefix, next_ids), dim=1)  # (B, t + 1)
    return prefix[:, 1:], torch.stack(all_logits, dim=1), seconds  # (B, steps), (B, steps, V), [steps]


def agreement(runs):
    """(same tokens, largest |logit difference| from "kv") of {strategy: (ids, logits)} runs of decode_steps."""
    ids, logits = runs["kv"]
    same = all(torch.equal(ids, other_ids) for other_ids, _ in runs.values())
    diff = max(float((other - logits).abs().max()) for _, other in runs.values())
    return same, diff


def measure(model, src, src_valid_lens, steps, repeats=3):
    """Time every strategy over `steps` greedy steps -> {"seconds": {strategy: [median seconds of step t over
    `repeats` runs, t = 1..steps]}, "same_tokens", "max_diff"} (agreement of the first runs). After one short
    warm-up run each, the strategies take turns run by run, so a burst of load slows all of them alike."""
    for strategy in STRATEGIES:
        decode_steps(model, src, src_valid_lens, min(steps, 4), strategy)  # warm-up
    runs, first = {strategy: [] for strategy in STRATEGIES}, {}
    for _ in range(repeats):
        for strategy in STRATEGIES:
            ids, logits, seconds = decode_steps(model, src, src_valid_lens, steps, strategy)
            runs[strategy].append(seconds)
            first.setdefault(strategy, (ids, logits))
    same, diff = agreement(first)
    seconds = {strategy: [statistics.median(column) for column in zip(*found)] for strategy, found in runs.items()}
    return {"seconds": seconds, "same_tokens": same, "max_diff": diff}


def source_batch(sentence, src_vocab):
    """One English sentence as (src (1, T_src), valid_lens (1,))."""
    ids = src_vocab.encode(src_vocab.segment_many([tokenize_en(sentence)])[0])
    if not ids:
        raise ValueError("the sentence has no words to translate")
    return torch.tensor([ids]), torch.tensor([len(ids)])  # (1, T_src), (1,)


# --- shared key/value heads ----------------------------------------------------------------------------------

def pool_heads(linear, num_heads, num_kv_heads):
    """A projection's output rows grouped by head and mean-pooled within each group of num_heads / num_kv_heads
    consecutive heads -> (weight (num_kv_heads * d_head, d_in), bias (num_kv_heads * d_head,) or None)."""
    if num_kv_heads < 1 or num_heads % num_kv_heads:
        raise ValueError(f"num_kv_heads must divide num_heads ({num_heads}); got {num_kv_heads}")
    d_out, d_in = linear.weight.shape
    d_head = d_out // num_heads
    group = num_heads // num_kv_heads
    weight = linear.weight.detach().reshape(num_kv_heads, group, d_head, d_in).mean(dim=1)  # (G, dh, d_in)
    bias = None
    if linear.bias is not None:
        bias = linear.bias.detach().reshape(num_kv_heads, group, d_head).mean(dim=1).reshape(-1)  # (G*dh,)
    return weight.reshape(num_kv_heads * d_head, d_in), bias  # (G*dh, d_in)


def _kv_heads(X, weight, bias, num_kv_heads):
    """(B, T, d) projected by a pooled weight -> (B, G, T, d_head)."""
    B, T, _ = X.shape
    Y = nn.functional.linear(X, weight, bias)  # (B, T, G*dh)
    return Y.reshape(B, T, num_kv_heads, -1).transpose(1, 2)  # (B, G, T, dh)


class GroupedKVTranslator(nn.Module):
    """The shipped Transformer decoding with num_kv_heads key/value heads in its decoder's self-attention
    (scope "self") or in its self- and cross-attention ("both"): the pooled projections of `pool_heads`, a cache
    of num_kv_heads heads. It decodes through the decoder's own forward_cached, whose only difference here is
    the self-attention's pooled key/value projection (and the pooled cross-attention cache `encode` makes). The
    translator's weights are shared, never changed. Eval decoding only (greedy_decode, beam_search);
    num_kv_heads == num_heads decodes exactly as forward_cached."""

    def __init__(self, model, num_kv_heads, scope="both"):
        super().__init__()
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {SCOPES}; got {scope!r}")
        self.model, self.num_kv_heads, self.scope = model, int(num_kv_heads), scope
        self.decoding_settings = settings_of(model)
        heads = model.config.num_heads
        self.pooled = []  # per block: {"self": (W_k, b_k, W_v, b_v), "cross": (...) or None}
        for blk in model.decoder.blks:
            pools = {}
            for kind, mha in (("self", blk.attention1), ("cross", blk.attention2)):
                if kind == "cross" and scope == "self":
                    pools[kind] = None
                    continue
                pools[kind] = (*pool_heads(mha.W_k, heads, self.num_kv_heads),
                               *pool_heads(mha.W_v, heads, self.num_kv_heads))
            self.pooled.append(pools)

    def encode(self, src, src_valid_lens):
        """Source (B, T_src) -> a KVState whose cross keys/values have num_kv_heads heads where shared."""
        enc_outputs = self.model.encoder(src, src_valid_lens)  # (B, T_src, d)
        state = self.model.decoder.start_cache(enc_outputs, src_valid_lens)  # every head
        for i, pools in enumerate(self.pooled):
            if pools["cross"] is not None:
                w_k, b_k, w_v, b_v = pools["cross"]
                state.cross[i] = (_kv_heads(enc_outputs, w_k, b_k, self.num_kv_heads),
                                  _kv_heads(enc_outputs, w_v, b_v, self.num_kv_heads))  # (B, G, T_src, dh) each
        return state

    def self_kv(self, i, X):
        """Block i's self-attention keys and values of the positions X (B, T, d) through the pooled projections:
        (B, num_kv_heads, T, d_head) each."""
        w_k, b_k, w_v, b_v = self.pooled[i]["self"]
        return _kv_heads(X, w_k, b_k, self.num_kv_heads), _kv_heads(X, w_v, b_v, self.num_kv_heads)

    def forward_tokens(self, X, state):
        """X (B, T) new target tokens -> logits (B, T, V); the state's caches grow by T: the decoder's own
        forward_cached, its self-attention keys and values projected by self_kv (and its cross-attention reading
        the pooled heads `encode` cached). forward_cached keeps the attention weights on the shared decoder, as
        every forward does."""
        return self.model.decoder.forward_cached(X, state, project_kv=self.self_kv)

    def decode_step(self, tokens, state):
        """tokens (B, 1) -> logits (B, V), state, {} (no attention maps are kept)."""
        logits, state = self.forward_tokens(tokens, state)  # (B, 1, V)
        return logits[:, -1], state, {}

    def reorder_state(self, state, index):
        """Keep batch rows `index` of every cached tensor (beam search)."""
        return state.select(index)


def cache_floats(state):
    """How many numbers a KVState's self-attention caches hold (keys and values, every block)."""
    return sum(k.numel() + v.numel() for k, v in state.self_kv)


def held_out_test(loaded, data_path):
    """(English sentences, reference Chinese) of the held-out test split the checkpoint was evaluated on
    (the training command's seed and sizes, as `python -m course.translation.evaluate` recomputes it)."""
    from .data import load_pairs, prepare_splits

    train = loaded.meta.get("train", {})
    splits = prepare_splits(load_pairs(data_path).pairs, loaded.meta["seed"], train.get("test_size", 1000),
                            train.get("valid_size", 500), train.get("max_pairs"), train.get("long_size", 0))
    return [p.en for p in splits.test], [normalize_zh(p.zh) for p in splits.test]


def grouped_bleu(loaded, sentences, references, num_kv_heads, scope="both", batch_size=64):
    """Greedy corpus BLEU (sacrebleu, "zh") of the shipped model with shared key/value heads, decoding with the
    repetition guard its checkpoint records, as evaluate.py scores the shipped models."""
    model = GroupedKVTranslator(loaded.model, num_kv_heads, scope)
    src_ids = [loaded.src_vocab.encode(u) for u in loaded.src_vocab.segment_many([tokenize_en(s) for s in sentences])]
    ids = decode_all(model, src_ids, "greedy", batch_size=batch_size,
                     no_repeat_ngram=model.decoding_settings.no_repeat_ngram)
    hyps = [normalize_zh(detokenize_zh(loaded.tgt_vocab.decode(row))) for row in ids]
    return corpus_bleu(hyps, references)


def divisors(n):
    """The divisors of n, ascending: the key/value head counts a model with n heads can share into."""
    return [g for g in range(1, n + 1) if n % g == 0]


def study(loaded, data_path, threads=1):
    """{"num_heads", "num_sentences", "threads", "bleu": {scope: {str(num_kv_heads): BLEU}}} for every divisor."""
    sentences, references = held_out_test(loaded, data_path)
    heads = loaded.model.config.num_heads
    torch.set_num_threads(threads)
    full = grouped_bleu(loaded, sentences, references, heads)  # every head kept: the same for both scopes
    bleu = {scope: {str(g): full if g == heads else grouped_bleu(loaded, sentences, references, g, scope)
                    for g in divisors(heads)} for scope in SCOPES}
    return {"version": RESULTS_VERSION, "num_heads": heads, "num_sentences": len(sentences), "threads": threads,
            "no_repeat_ngram": settings_of(loaded.model).no_repeat_ngram, "bleu": bleu}


def shipped_path(name="transformer"):
    """checkpoints/<name>.gqa.json beside the checkpoint."""
    return demos.checkpoint_path(name).with_name(f"{name}.gqa.json")


def read_results(path=None):
    """The shipped grouped-head BLEU results, checked: every divisor of num_heads, each score a number in
    [0, 100]; ValueError naming what is wrong and the command that rewrites them."""
    path = Path(path or shipped_path())
    command = "course.translation.kv_study --data PATH"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"grouped-head results: {path} cannot be read ({err}); rerun python -m {command}") from None
    heads = found.get("num_heads") if isinstance(found, dict) else None
    if found.get("version") != RESULTS_VERSION or not isinstance(heads, int) or heads < 1:
        raise ValueError(f"grouped-head results: {path} has no version {RESULTS_VERSION} header; rerun python -m {command}")
    wanted = {str(g) for g in divisors(heads)}
    for scope in SCOPES:
        scores = found.get("bleu", {}).get(scope)
        if not isinstance(scores, dict) or set(scores) != wanted or not all(
                isinstance(v, (int, float)) and 0 <= v <= 100 for v in scores.values()):
            raise ValueError(f"grouped-head results: {path} bleu.{scope} must give a BLEU in [0, 100] for each of "
                             f"{sorted(wanted, key=int)} key/value heads; rerun python -m {command}")
    return found


def main(argv=None):
    """Compute the grouped-head BLEU of the shipped Transformer and write it beside the checkpoint (atomically)."""
    from .checkpoint import load_checkpoint

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="Tatoeba cmn-eng TSV file (the training data)")
    parser.add_argument("--out", type=Path, default=None, help="default: checkpoints/transformer.gqa.json")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    out = args.out or shipped_path()
    start = time.perf_counter()
    found = study(load_checkpoint(demos.checkpoint_path("transformer")), args.data, args.threads)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    print(json.dumps(found["bleu"]), f"-> {out} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
