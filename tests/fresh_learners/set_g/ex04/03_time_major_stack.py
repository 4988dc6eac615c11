# style: time-major permute, iterate over embeddings, torch.stack
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
        embedded = self.embedding(X).permute(1, 0, 2)  # time-major (T, B, E)
        outs, ctxs, ws = [], [], []
        for x_t in embedded:  # (B, E)
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)
            step_in = torch.cat((context, torch.unsqueeze(x_t, dim=1)), dim=-1)
            out, hidden_state = self.rnn(step_in, hidden_state)
            outs.append(out.squeeze(1))
            ctxs.append(context.squeeze(1))
            ws.append(self.attention.attention_weights.squeeze(1))
        self.attention_weights = torch.stack(ws, dim=1)
        deep_in = torch.cat(
            (torch.stack(outs, dim=1), torch.stack(ctxs, dim=1), embedded.permute(1, 0, 2)), dim=-1
        )
        logits = self.dense(torch.tanh(self.deep_output(deep_in)))
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
