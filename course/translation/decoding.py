"""Greedy and beam-search decoding, and one-sentence translation for the demos.

All functions work on the uniform model interface of course.translation.models (encode,
decode_step, reorder_state). Decoding reads attention weights that the modules
keep as attributes, so a lock serialises it: concurrent users of one shared
model each get their own attention maps.

Two settings are chosen per model on the validation set by
course.translation.evaluate and stored in its checkpoint's metrics
(`beam_alpha`, `no_repeat_ngram`); load_checkpoint attaches them to the model
as `model.decoding_settings`, and translate() uses them unless told otherwise:
- beam search's length-penalty exponent alpha;
- the repetition guard: no n-gram of the output may occur twice (n-gram
  blocking) and no token may stand three times in a row; 0 turns both off.
  It stops loops such as 在在在 or digit runs.
"""

import threading
from dataclasses import dataclass, field

import torch

from .vocab import BOS_ID, EOS_ID, PAD_ID, UNK, UNK_ID, detokenize_zh, tokenize_en

_DECODE_LOCK = threading.RLock()
DEFAULT_ALPHA = 0.6  # GNMT's alpha, for a model whose checkpoint records none (translate() says so)


@dataclass(frozen=True)
class DecodingSettings:
    """How translate() decodes with one model."""

    beam_alpha: float = DEFAULT_ALPHA  # GNMT length-penalty exponent for beam search
    no_repeat_ngram: int = 0  # never emit an n-gram already in the output, nor a token 3 times in a row (0: off)
    # "validation": chosen on the validation set and stored in the checkpoint; "validation_edge": the same, but
    # the largest alpha tried, where validation BLEU was still rising (still_rising)
    source: str = "default"

    @classmethod
    def from_metrics(cls, metrics):
        """The settings a checkpoint's metrics record; defaults (source "default") where they record none."""
        metrics = metrics or {}
        if metrics.get("beam_alpha") is None:
            return cls(no_repeat_ngram=int(metrics.get("no_repeat_ngram") or 0))
        alpha = float(metrics["beam_alpha"])
        source = "validation_edge" if still_rising(metrics.get("valid_beam_bleu_by_alpha"), alpha) else "validation"
        return cls(alpha, int(metrics.get("no_repeat_ngram") or 0), source)


def still_rising(by_alpha, alpha):
    """Whether `alpha` is the largest length-penalty exponent in `by_alpha` (the [{"alpha", "bleu"}] validation
    scores a checkpoint records) and scored above the next smaller one: the search stopped at the edge of its
    grid while validation BLEU was still rising, so a larger alpha was never tried. False when fewer than two
    scores are recorded or they are not such records."""
    try:
        scores = sorted((float(r["alpha"]), float(r["bleu"])) for r in by_alpha or [])
    except (TypeError, KeyError, ValueError):
        return False
    return len(scores) >= 2 and scores[-1][0] == float(alpha) and scores[-1][1] > scores[-2][1]


def settings_of(model):
    """The model's DecodingSettings (attached by load_checkpoint), else the defaults."""
    return getattr(model, "decoding_settings", None) or DecodingSettings()


def _never_emit(logits):
    """Logits with <pad> and <bos> ruled out: they are never a next token."""
    logits = logits.clone()
    logits[:, [PAD_ID, BOS_ID]] = float("-inf")
    return logits


def block_repeats(logits, seqs, n):
    """Logits with -inf for every token that would complete an n-gram already in its row of seqs,
    or that would stand a third time in a row (在在在: a loop that n-gram blocking alone lets through).

    logits (R, V); seqs (R, t) the tokens emitted so far per row; n <= 0 blocks nothing.
    """
    t = seqs.shape[1]
    if n <= 0:
        return logits
    if t >= 2:
        last = seqs[:, -1]  # (R,)
        twice = last == seqs[:, -2]  # (R,): the last token already stands twice in a row
        logits = logits.scatter(1, last.masked_fill(~twice, PAD_ID)[:, None], float("-inf"))  # (R, V)
    if t < n:
        return logits
    if n == 1:
        banned = seqs  # (R, t): every emitted token
    else:
        windows = seqs.unfold(1, n, 1)  # (R, t-n+1, n)
        prefix = seqs[:, t - n + 1 :]  # (R, n-1): the last n-1 tokens
        match = (windows[:, :, :-1] == prefix[:, None, :]).all(dim=-1)  # (R, t-n+1)
        banned = windows[:, :, -1].masked_fill(~match, PAD_ID)  # (R, t-n+1); <pad> is never emitted anyway
    return logits.scatter(1, banned, float("-inf"))  # (R, V)


def default_max_len(src_valid_lens):
    """Output length cap: twice the longest source plus 10 (Chinese runs longer in characters)."""
    return int(src_valid_lens.max()) * 2 + 10


@torch.no_grad()
def greedy_decode(model, src, src_valid_lens, max_len=None, keep_attention=False, no_repeat_ngram=0):
    """Batched greedy decoding -> (list of id lists without <eos>, per-step attention dicts).

    no_repeat_ngram n > 0: never emit a token that repeats an n-gram of the output so far.
    """
    max_len = default_max_len(src_valid_lens) if max_len is None else max_len
    B = src.shape[0]
    with _DECODE_LOCK:
        state = model.encode(src, src_valid_lens)
        tokens = torch.full((B, 1), BOS_ID, dtype=torch.long, device=src.device)  # (B, 1)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
        steps, attention = [], []
        for _ in range(max_len):
            logits, state, attn = model.decode_step(tokens, state)  # (B, V)
            if no_repeat_ngram and steps:
                logits = block_repeats(logits, torch.stack(steps, dim=1), no_repeat_ngram)  # (B, V)
            next_ids = _never_emit(logits).argmax(dim=-1).masked_fill(done, PAD_ID)  # (B,)
            steps.append(next_ids)
            if keep_attention:
                attention.append({k: v.detach().float().cpu() for k, v in attn.items()})
            done |= next_ids == EOS_ID
            if bool(done.all()):
                break
            tokens = next_ids.unsqueeze(1)  # (B, 1)
    ids = torch.stack(steps, dim=1).tolist()  # (B, T_out)
    return [_strip(row) for row in ids], attention


def _strip(row):
    """Ids up to (not including) the first <eos>, without <pad>."""
    out = []
    for i in row:
        if i == EOS_ID:
            break
        if i != PAD_ID:
            out.append(i)
    return out


def length_penalty(length, alpha):
    """GNMT's length penalty ((5 + length) / 6) ** alpha; a hypothesis's log-probability is divided by it."""
    return ((5.0 + length) / 6.0) ** alpha


@torch.no_grad()
def beam_search(model, src, src_valid_lens, beam_size=4, max_len=None, alpha=DEFAULT_ALPHA, no_repeat_ngram=0,
                on_step=None):
    """Batched beam search; the best hypothesis per sentence by GNMT length-normalised log-probability.

    alpha is the length-penalty exponent (see length_penalty); no_repeat_ngram
    n > 0 keeps every hypothesis free of repeated n-grams. on_step, when given, is
    called after every step with the beam as it stands: (seqs (B*K, t), scores (B, K)
    log-probabilities, finished (B, K), lengths (B, K)); course.translation.beam_steps
    uses it to show the search.

    A hypothesis that ends keeps its slot among the `beam_size` (extended by
    <pad> at no cost) for as long as its log-probability stays among the best;
    the search stops when every slot has ended or at max_len, and the slots are
    then ranked by log-probability / length_penalty(length, alpha), the length
    counting the <eos>. (Setting ended hypotheses aside and refilling the slots,
    stopping once `beam_size` had ended, searched more widely but chose shorter
    outputs: validation BLEU at the best alpha fell from 35.5 to 34.6 for the
    2026-11-30 Transformer checkpoint; see docs/inside/checkpoints.md.)
    """
    max_len = default_max_len(src_valid_lens) if max_len is None else max_len
    B, K, device = src.shape[0], beam_size, src.device
    with _DECODE_LOCK:
        state = model.encode(src, src_valid_lens)
        state = model.reorder_state(state, torch.arange(B, device=device).repeat_interleave(K))  # B*K rows
        scores = torch.full((B, K), float("-inf"), device=device)  # (B, K)
        scores[:, 0] = 0.0  # one live beam at the start
        finished = torch.zeros(B, K, dtype=torch.bool, device=device)  # (B, K)
        lengths = torch.zeros(B, K, device=device)  # tokens counted for the length penalty
        seqs = torch.zeros(B * K, 0, dtype=torch.long, device=device)  # (B*K, t)
        tokens = torch.full((B * K, 1), BOS_ID, dtype=torch.long, device=device)
        for _ in range(max_len):
            logits, state, _ = model.decode_step(tokens, state)  # (B*K, V)
            logp = torch.log_softmax(_never_emit(logits.float()), dim=-1)  # (B*K, V)
            logp = block_repeats(logp, seqs, no_repeat_ngram).view(B, K, -1)  # (B, K, V)
            V = logp.shape[-1]
            # A finished beam may only extend with <pad> at no cost.
            pad_only = torch.full_like(logp[0, 0], float("-inf"))
            pad_only[PAD_ID] = 0.0
            logp = torch.where(finished.unsqueeze(-1), pad_only, logp)  # (B, K, V)
            cand = (scores.unsqueeze(-1) + logp).view(B, K * V)  # (B, K*V)
            scores, flat = cand.topk(K, dim=-1)  # (B, K)
            beam, tok = flat // V, flat % V  # (B, K)
            rows = (torch.arange(B, device=device).unsqueeze(1) * K + beam).view(-1)  # (B*K,)
            state = model.reorder_state(state, rows)
            seqs = torch.cat((seqs[rows], tok.view(-1, 1)), dim=1)  # (B*K, t+1)
            was_finished = finished.view(-1)[rows].view(B, K)
            lengths = lengths.view(-1)[rows].view(B, K) + (~was_finished).float()
            finished = was_finished | (tok == EOS_ID)
            if on_step is not None:
                on_step(seqs, scores, finished, lengths)
            if bool(finished.all()):
                break
            tokens = tok.view(-1, 1)
        best = (scores / length_penalty(lengths, alpha)).argmax(dim=-1)  # (B,)
    chosen = seqs.view(B, K, -1)[torch.arange(B, device=device), best]  # (B, t)
    return [_strip(row) for row in chosen.tolist()]


@dataclass
class Translation:
    source_tokens: list  # English units as the model saw them: words or BPE pieces (<unk> where unknown)
    tokens: list  # output Chinese characters, without <eos>
    text: str  # the output joined
    cross_attention: object = None  # (T_out, T_src): last layer, mean over heads for the Transformer
    cross_attention_heads: object = None  # Transformer: (layers, heads, T_out, T_src)
    decoder_self_attention: object = None  # Transformer: (layers, heads, T_out, T_out), causal
    encoder_self_attention: object = None  # Transformer: (layers, heads, T_src, T_src)
    top_next: list = field(default_factory=list)  # per step: [(token, probability)] best first
    unknown_words: list = field(default_factory=list)  # source words with a unit outside the vocabulary (<unk>)
    source_words: list = field(default_factory=list)  # the English words (tokenize_en) the units were cut from
    source_word_index: list = field(default_factory=list)  # per source unit: index of its word in source_words
    decoding: dict = field(default_factory=dict)  # how it was decoded: method, beam size, alpha and its source, n


def source_tensor(sentence, src_vocab, device="cpu"):
    """English sentence -> (tokens shown, src (1, T), valid_lens (1,)).

    The tokens are the vocabulary's units: words, or BPE pieces ("##" continues
    a word) for a subword vocabulary; an unknown one is shown as <unk>.
    """
    return _source(sentence, src_vocab, device)[:3]


def _source(sentence, src_vocab, device):
    """source_tensor's result plus (the words, each unit's word index, the words with an <unk> unit)."""
    words = tokenize_en(sentence)
    if not words:
        raise ValueError("the sentence has no words to translate; type some English")
    units, word_of = src_vocab.pieces_by_word(words)
    ids = src_vocab.encode(units)
    shown = [UNK if i == UNK_ID else tok for tok, i in zip(units, ids)]
    unknown = sorted({word_of[k] for k, i in enumerate(ids) if i == UNK_ID})
    src = torch.tensor([ids], dtype=torch.long, device=device)  # (1, T_src)
    return shown, src, torch.tensor([len(ids)], device=device), (words, word_of, [words[k] for k in unknown])


@torch.no_grad()
def translate(model, sentence, src_vocab, tgt_vocab, max_len=None, top_k=5, beam_size=1, alpha=None,
              no_repeat_ngram=None):
    """Translate one English sentence greedily (or by beam search) with attention maps.

    alpha and no_repeat_ngram default to the model's settings_of(model): the
    ones chosen on the validation set when it came from a checkpoint.
    """
    settings = settings_of(model)
    alpha_source = "argument" if alpha is not None else settings.source
    alpha = settings.beam_alpha if alpha is None else float(alpha)
    n = settings.no_repeat_ngram if no_repeat_ngram is None else int(no_repeat_ngram)
    was_training = model.training
    model.eval()
    try:
        device = next(model.parameters()).device
        shown, src, lens, (words, word_of, unknown_words) = _source(sentence, src_vocab, device)
        max_len = default_max_len(lens) if max_len is None else max_len
        if beam_size > 1:
            ids = beam_search(model, src, lens, beam_size, max_len, alpha=alpha, no_repeat_ngram=n)[0]
            ids, steps, top_next, enc_attn = _trace(model, src, lens, top_k, forced=ids)
            decoding = {"method": "beam", "beam_size": beam_size, "alpha": alpha, "alpha_source": alpha_source}
        else:  # greedy: one pass both chooses the tokens and records what the demos show
            ids, steps, top_next, enc_attn = _trace(model, src, lens, top_k, max_len=max_len, no_repeat_ngram=n)
            decoding = {"method": "greedy"}
        result = _assemble(shown, ids, steps, top_next, enc_attn, tgt_vocab)
        result.unknown_words, result.source_words, result.source_word_index = unknown_words, words, word_of
        result.decoding = {**decoding, "no_repeat_ngram": n}
        return result
    finally:
        model.train(was_training)


def _trace(model, src, lens, top_k, forced=None, max_len=0, no_repeat_ngram=0):
    """Decode one sentence step by step, keeping each step's attention and top-k next tokens.

    With `forced` ids (a beam search's choice) the decoder is fed those;
    otherwise it picks greedily (without repeating an n-gram when
    no_repeat_ngram > 0) until <eos> or max_len tokens. Either way there
    is one step more than output tokens: the step that ends the sentence.
    Returns (ids without <eos>, per-step attention dicts, top-k lists, encoder attention).
    """
    with _DECODE_LOCK:
        state = model.encode(src, lens)
        enc_attn = model.encoder_attention()
        tokens = torch.tensor([[BOS_ID]], device=src.device)
        ids, steps, top_next = [], [], []
        limit = (len(forced) if forced is not None else max_len) + 1
        for t in range(limit):
            logits, state, attn = model.decode_step(tokens, state)  # (1, V)
            probs = torch.softmax(logits[0].float(), dim=-1)  # (V,)
            p, i = probs.topk(min(top_k, probs.shape[0]))
            top_next.append([(j, float(q)) for q, j in zip(p.tolist(), i.tolist())])  # ids; named later
            steps.append({k: v[0].float().cpu() for k, v in attn.items()})
            if forced is not None:
                next_id = forced[t] if t < len(forced) else EOS_ID
            else:
                if no_repeat_ngram and ids:
                    logits = block_repeats(logits, torch.tensor([ids], device=src.device), no_repeat_ngram)
                next_id = int(_never_emit(logits).argmax(dim=-1))
            if next_id == EOS_ID or t == limit - 1:
                break
            ids.append(next_id)
            tokens = torch.tensor([[next_id]], device=src.device)
    return ids, steps, top_next, enc_attn


def _assemble(shown, ids, steps, top_next, enc_attn, tgt_vocab):
    """A Translation from a traced decode: tokens, attention maps, named top-k tokens."""
    top_next = [[(tgt_vocab.itos[j], q) for j, q in row] for row in top_next]
    out_tokens = tgt_vocab.decode(ids)
    result = Translation(shown, out_tokens, detokenize_zh(out_tokens), top_next=top_next)
    if steps and "cross" in steps[0]:
        cross = torch.stack([s["cross"] for s in steps])  # (T_out, T_src) or (T_out, L, H, T_src)
        if cross.dim() == 2:
            result.cross_attention = cross.numpy()
        else:
            heads = cross.permute(1, 2, 0, 3)  # (L, H, T_out, T_src)
            result.cross_attention_heads = heads.numpy()
            result.cross_attention = heads[-1].mean(dim=0).numpy()  # (T_out, T_src)
    if steps and "self" in steps[0]:
        T = len(steps)
        L, H = steps[0]["self"].shape[:2]
        full = torch.zeros(L, H, T, T)  # (L, H, T_out, T_out)
        for t, s in enumerate(steps):
            full[:, :, t, : t + 1] = s["self"]
        result.decoder_self_attention = full.numpy()
    if enc_attn is not None:
        result.encoder_self_attention = enc_attn[0].float().cpu().numpy()  # (L, H, T_src, T_src)
    return result
