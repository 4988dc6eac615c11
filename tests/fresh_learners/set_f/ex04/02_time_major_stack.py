# style: time-major iteration over permuted embeddings, torch.stack of per-step tensors
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
        embedded = self.embedding(X).permute(1, 0, 2)  # (T_tgt, B, E)
        step_outputs, step_contexts, step_weights = [], [], []
        for x in embedded:  # x: (B, E)
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            rnn_in = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(rnn_in, hidden_state)
            step_outputs.append(out[:, 0])
            step_contexts.append(context[:, 0])
            step_weights.append(self.attention.attention_weights[:, 0])
        outputs = torch.stack(step_outputs, dim=1)  # (B, T_tgt, H)
        contexts = torch.stack(step_contexts, dim=1)  # (B, T_tgt, H)
        self.attention_weights = torch.stack(step_weights, dim=1)  # (B, T_tgt, T_src)
        deep = self.deep_output(torch.cat([outputs, contexts, embedded.permute(1, 0, 2)], dim=2))
        return self.dense(torch.tanh(deep)), (enc_outputs, hidden_state, enc_valid_lens)
