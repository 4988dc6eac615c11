# style: loop, weights read from the attention module after the loop
# bug: Seq2SeqAttentionDecoder.forward | stores only the last step's weights (B, 1, T_src) from self.attention instead of every step's (B, T_tgt, T_src)
# expect: Seq2SeqAttentionDecoder.forward | weights of every step
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
        outputs, contexts = [], []
        for t in range(X.shape[1]):
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, embs[:, t:t + 1]), dim=-1)
            out, hidden_state = self.rnn(x, hidden_state)
            outputs.append(out)
            contexts.append(context)
        features = torch.cat((torch.cat(outputs, dim=1), torch.cat(contexts, dim=1), embs), dim=-1)
        logits = self.dense(torch.tanh(self.deep_output(features)))
        self.attention_weights = self.attention.attention_weights
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
