# style: preallocated result tensors filled step by step, helper for one step
# bug: none
"""Exercise 4: the Bahdanau attention decoder (chapter 4, "Bahdanau attention,
computed by hand").

The encoder (course.translation.rnn.Seq2SeqEncoder, given) turns a source sentence
into outputs (B, T_src, H) and a final hidden state (num_layers, B, H).
At every target step this decoder asks "which source words matter now?".
"""

import torch
from torch import nn

from .ex03_scoring import AdditiveAttention


class Seq2SeqAttentionDecoder(nn.Module):
    """GRU decoder that attends over the encoder outputs at each step.

    temperature is handed to AdditiveAttention (ex03), which divides every
    score by it; 1.0 in the published exercise.
    """

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, temperature=1.0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, num_hiddens, num_hiddens, dropout, temperature)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True
        )
        self.deep_output = nn.Linear(2 * num_hiddens + embed_size, num_hiddens)
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens):
        """Decoder state from the encoder: (outputs, hidden, valid_lens). Given."""
        outputs, hidden_state = enc_outputs  # (B, T_src, H), (num_layers, B, H)
        return (outputs, hidden_state, enc_valid_lens)

    def _step(self, emb_t, hidden, memory, lens):
        """One decoding step: emb_t (B, 1, E), hidden (L, B, H)."""
        query = hidden[-1:].transpose(0, 1)                       # (B, 1, H)
        context = self.attention(query, memory, memory, lens)     # (B, 1, H)
        out, hidden = self.rnn(torch.cat([context, emb_t], dim=2), hidden)
        return out, context, hidden

    def forward(self, X, state):
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state).

        Deep output: tanh(deep_output([outputs, contexts, embeddings])) -> dense.
        """
        memory, hidden, lens = state
        B, T = X.shape
        H = self.dense.in_features
        emb = self.embedding(X)
        outs = emb.new_zeros(B, T, H)
        ctxs = emb.new_zeros(B, T, H)
        attn = emb.new_zeros(B, T, memory.shape[1])
        for t in range(T):
            out, ctx, hidden = self._step(emb[:, t].unsqueeze(1), hidden, memory, lens)
            outs[:, t] = out[:, 0]
            ctxs[:, t] = ctx[:, 0]
            attn[:, t] = self.attention.attention_weights[:, 0]
        self.attention_weights = attn
        logits = self.dense(torch.tanh(self.deep_output(torch.cat([outs, ctxs, emb], dim=-1))))
        return logits, (memory, hidden, lens)
