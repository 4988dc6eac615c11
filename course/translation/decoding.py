"""Greedy and beam-search decoding, and one-sentence translation for the demos.

All functions work on the uniform model interface of course.translation.models (encode,
decode_step, reorder_state). Decoding reads attention weights that the modules
keep as attributes, so a lock serialises it: concurrent users of one shared
model each get their own attention maps.
"""

import threading
from dataclasses import dataclass, field

import torch

from .vocab import BOS_ID, EOS_ID, PAD_ID, UNK, UNK_ID, detokenize_zh, tokenize_en

_DECODE_LOCK = threading.RLock()


def _never_emit(logits):
    """Logits with <pad> and <bos> ruled out: they are never a next token."""
    logits = logits.clone()
    logits[:, [PAD_ID, BOS_ID]] = float("-inf")
    return logits


def default_max_len(src_valid_lens):
    """Output length cap: twice the longest source plus 10 (Chinese runs longer in characters)."""
    return int(src_valid_lens.max()) * 2 + 10


@torch.no_grad()
def greedy_decode(model, src, src_valid_lens, max_len=None, keep_attention=False):
    """Batched greedy decoding -> (list of id lists without <eos>, per-step attention dicts)."""
    max_len = default_max_len(src_valid_lens) if max_len is None else max_len
    B = src.shape[0]
    with _DECODE_LOCK:
        state = model.encode(src, src_valid_lens)
        tokens = torch.full((B, 1), BOS_ID, dtype=torch.long, device=src.device)  # (B, 1)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
        steps, attention = [], []
        for _ in range(max_len):
            logits, state, attn = model.decode_step(tokens, state)  # (B, V)
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
def beam_search(model, src, src_valid_lens, beam_size=4, max_len=None, alpha=0.6):
    """Batched beam search; the best hypothesis per sentence by GNMT length-normalised log-probability.

    A hypothesis that ends keeps its slot among the `beam_size` (extended by
    <pad> at no cost) for as long as its log-probability stays among the best;
    the search stops when every slot has ended or at max_len, and the slots are
    then ranked by log-probability / length_penalty(length, alpha), the length
    counting the <eos>. (Setting ended hypotheses aside and refilling the slots,
    stopping once `beam_size` had ended, searched more widely but chose shorter
    outputs: validation BLEU at the best alpha fell from 35.5 to 34.6 for the
    2026-11-30 Transformer checkpoint; see checkpoints/README.md.)
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
            logp = torch.log_softmax(_never_emit(logits.float()), dim=-1).view(B, K, -1)  # (B, K, V)
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
            if bool(finished.all()):
                break
            tokens = tok.view(-1, 1)
        best = (scores / length_penalty(lengths, alpha)).argmax(dim=-1)  # (B,)
    chosen = seqs.view(B, K, -1)[torch.arange(B, device=device), best]  # (B, t)
    return [_strip(row) for row in chosen.tolist()]


@dataclass
class Translation:
    source_tokens: list  # English tokens as the model saw them (<unk> where unknown)
    tokens: list  # output Chinese characters, without <eos>
    text: str  # the output joined
    cross_attention: object = None  # (T_out, T_src): last layer, mean over heads for the Transformer
    cross_attention_heads: object = None  # Transformer: (layers, heads, T_out, T_src)
    decoder_self_attention: object = None  # Transformer: (layers, heads, T_out, T_out), causal
    encoder_self_attention: object = None  # Transformer: (layers, heads, T_src, T_src)
    top_next: list = field(default_factory=list)  # per step: [(token, probability)] best first


def source_tensor(sentence, src_vocab, device="cpu"):
    """English sentence -> (tokens shown, src (1, T), valid_lens (1,))."""
    tokens = tokenize_en(sentence)
    if not tokens:
        raise ValueError("the sentence has no words to translate; type some English")
    ids = src_vocab.encode(tokens)
    shown = [UNK if i == UNK_ID else tok for tok, i in zip(tokens, ids)]
    src = torch.tensor([ids], dtype=torch.long, device=device)  # (1, T_src)
    return shown, src, torch.tensor([len(ids)], device=device)


@torch.no_grad()
def translate(model, sentence, src_vocab, tgt_vocab, max_len=None, top_k=5, beam_size=1):
    """Translate one English sentence greedily (or by beam search) with attention maps."""
    was_training = model.training
    model.eval()
    try:
        device = next(model.parameters()).device
        shown, src, lens = source_tensor(sentence, src_vocab, device)
        max_len = default_max_len(lens) if max_len is None else max_len
        if beam_size > 1:
            ids = beam_search(model, src, lens, beam_size, max_len)[0]
            ids, steps, top_next, enc_attn = _trace(model, src, lens, top_k, forced=ids)
        else:  # greedy: one pass both chooses the tokens and records what the demos show
            ids, steps, top_next, enc_attn = _trace(model, src, lens, top_k, max_len=max_len)
        return _assemble(shown, ids, steps, top_next, enc_attn, tgt_vocab)
    finally:
        model.train(was_training)


def _trace(model, src, lens, top_k, forced=None, max_len=0):
    """Decode one sentence step by step, keeping each step's attention and top-k next tokens.

    With `forced` ids (a beam search's choice) the decoder is fed those;
    otherwise it picks greedily until <eos> or max_len tokens. Either way there
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
