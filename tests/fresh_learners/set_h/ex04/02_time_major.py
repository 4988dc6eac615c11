# style: time-major loop over permuted embeddings, stack along dim 1
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
        enc_outputs, hidden_state, enc_valid_lens = state
        embedded = self.embedding(X)                  # (B, T, E)
        step_outs, step_ctx, step_w = [], [], []
        for emb_t in embedded.permute(1, 0, 2):       # emb_t: (B, E)
            query = hidden_state[-1][:, None, :]
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)
            rnn_in = torch.cat((context, emb_t[:, None, :]), dim=-1)
            out, hidden_state = self.rnn(rnn_in, hidden_state)
            step_outs.append(out[:, 0])
            step_ctx.append(context[:, 0])
            step_w.append(self.attention.attention_weights[:, 0])
        outs = torch.stack(step_outs, dim=1)          # (B, T, H)
        ctxs = torch.stack(step_ctx, dim=1)           # (B, T, H)
        self.attention_weights = torch.stack(step_w, dim=1)  # (B, T, T_src)
        deep = torch.tanh(self.deep_output(torch.cat([outs, ctxs, embedded], dim=2)))
        return self.dense(deep), (enc_outputs, hidden_state, enc_valid_lens)
