# style: d2l-like, time-major embeddings, iterate over x in X, permute back at the end
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
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state)."""
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)            # (T_tgt, B, E)
        outputs, ctxs, self._attention_weights = [], [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x, hidden_state)
            outputs.append(out.squeeze(1))
            ctxs.append(context.squeeze(1))
            self._attention_weights.append(self.attention.attention_weights.squeeze(1))
        outputs = torch.stack(outputs, dim=1)
        ctxs = torch.stack(ctxs, dim=1)
        self.attention_weights = torch.stack(self._attention_weights, dim=1)
        feats = torch.cat((outputs, ctxs, X.permute(1, 0, 2)), dim=-1)
        logits = self.dense(torch.tanh(self.deep_output(feats)))
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
