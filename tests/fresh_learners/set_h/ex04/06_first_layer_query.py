# style: loop with index t, explicit layer index
# bug: Seq2SeqAttentionDecoder.forward | queries with hidden_state[0] (the bottom GRU layer) instead of the top layer hidden_state[-1]
# expect: Seq2SeqAttentionDecoder.forward | top layer hidden_state[-1]
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
        embs = self.embedding(X)
        T = X.shape[1]
        outputs, contexts, weights = [], [], []
        for t in range(T):
            query = hidden_state[0].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            out, hidden_state = self.rnn(torch.cat((context, embs[:, t:t + 1]), dim=-1), hidden_state)
            outputs.append(out)
            contexts.append(context)
            weights.append(self.attention.attention_weights)
        feats = torch.cat((torch.cat(outputs, 1), torch.cat(contexts, 1), embs), dim=-1)
        self.attention_weights = torch.cat(weights, 1)
        return self.dense(torch.tanh(self.deep_output(feats))), (enc_outputs, hidden_state, enc_valid_lens)
