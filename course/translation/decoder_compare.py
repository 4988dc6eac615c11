"""The fixed-context decoder and the Bahdanau decoder side by side (chapter 4's comparison table).

Measured on random encoder outputs, so it needs no checkpoint; Streamlit-free.
"""

import torch

from course.translation.rnn import FixedContextDecoder
from solutions.ex04_bahdanau import Seq2SeqAttentionDecoder


def _context_inputs(decoder, tokens, state, start):
    """The context part of the GRU input at every step (columns start:start+H of the input)."""
    seen = []
    hook = decoder.rnn.register_forward_hook(lambda m, i, o: seen.append(i[0]))
    try:
        with torch.no_grad():
            decoder(tokens, state)
    finally:
        hook.remove()
    H = decoder.rnn.hidden_size
    return torch.cat(seen, dim=1)[..., start:start + H]  # (B, steps, H)


def decoder_comparison(batch=4, src_len=7, steps=5, num_hiddens=16, embed_size=8, vocab_size=50, seed=0):
    """Measured differences between the fixed-context decoder and the Bahdanau decoder of the course."""
    torch.manual_seed(seed)
    enc_outputs = torch.randn(batch, src_len, num_hiddens)  # (B, T, H)
    hidden = torch.randn(1, batch, num_hiddens)  # (L, B, H)
    tokens = torch.randint(0, vocab_size, (batch, steps))  # (B, steps)
    fixed = FixedContextDecoder(vocab_size, embed_size, num_hiddens, num_layers=1).eval()
    bahdanau = Seq2SeqAttentionDecoder(vocab_size, embed_size, num_hiddens, num_layers=1).eval()
    result = {}
    for name, decoder, start in (("fixed", fixed, embed_size), ("bahdanau", bahdanau, 0)):
        state = decoder.init_state((enc_outputs, hidden), None)
        contexts = _context_inputs(decoder, tokens, state, start)[0]  # (steps, H), first sentence
        kept = state[0]  # fixed: (B, H) context; Bahdanau: (B, T, H) encoder outputs
        result[name] = {
            "kept": tuple(kept.shape),
            "distinct_contexts": len({tuple(c.round(decimals=6).tolist()) for c in contexts}),
            "parameters": sum(p.numel() for p in decoder.parameters()),
        }
    result["attention_parameters"] = sum(p.numel() for p in bahdanau.attention.parameters())
    result["sizes"] = {"B": batch, "T": src_len, "steps": steps, "H": num_hiddens, "E": embed_size, "V": vocab_size}
    return result
