# style: preallocated output tensors filled per step
# bug: none
"""Exercise 4: the Bahdanau attention decoder (chapter 4)."""

import torch
from torch import nn

from .ex03_scoring import AdditiveAttention


class Seq2SeqAttentionDecoder(nn.Module):
    """GRU decoder that attends over the encoder outputs at each step."""

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

    def forward(self, X, state):
        enc_outputs, hidden, valid_lens = state
        B, T = X.shape
        T_src, H = enc_outputs.shape[1], enc_outputs.shape[2]
        emb = self.embedding(X)
        outs = emb.new_zeros(B, T, H)
        ctxs = emb.new_zeros(B, T, H)
        attn = emb.new_zeros(B, T, T_src)
        for t in range(T):
            q = hidden[-1].reshape(B, 1, H)
            c = self.attention(q, enc_outputs, enc_outputs, valid_lens)
            o, hidden = self.rnn(torch.cat((c, emb[:, t].unsqueeze(1)), dim=-1), hidden)
            outs[:, t] = o[:, 0]
            ctxs[:, t] = c[:, 0]
            attn[:, t] = self.attention.attention_weights[:, 0]
        self.attention_weights = attn
        logits = self.dense(torch.tanh(self.deep_output(torch.cat((outs, ctxs, emb), dim=-1))))
        return logits, (enc_outputs, hidden, valid_lens)
