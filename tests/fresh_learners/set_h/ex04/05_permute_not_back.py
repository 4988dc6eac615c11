# style: time-major embeddings (T, B, E) for the loop
# bug: Seq2SeqAttentionDecoder.forward | keeps the embeddings time-major (T_tgt, B, E) for the deep output concatenation, which crashes unless B == T_tgt and mixes examples when equal
# expect: Seq2SeqAttentionDecoder.forward | embeddings (B, T_tgt, E)
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
        X = self.embedding(X).permute(1, 0, 2)        # (T, B, E)
        outputs, contexts, weights = [], [], []
        for x in X:
            query = torch.unsqueeze(hidden_state[-1], dim=1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1)
            out, hidden_state = self.rnn(x, hidden_state)
            outputs.append(out)
            contexts.append(context)
            weights.append(self.attention.attention_weights)
        outputs = torch.cat(outputs, dim=1)
        contexts = torch.cat(contexts, dim=1)
        logits = self.dense(torch.tanh(self.deep_output(torch.cat((outputs, contexts, X), dim=-1))))
        self.attention_weights = torch.cat(weights, dim=1)
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
