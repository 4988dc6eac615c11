# style: compact batch-first loop, zipped lists
# bug: Seq2SeqAttentionDecoder.forward | the query is hidden_state[0] (a literal index: the bottom GRU layer) instead of hidden_state[-1] (the top layer); only right when num_layers == 1
# expect: Seq2SeqAttentionDecoder.forward | top layer hidden_state[-1]
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
        emb = self.embedding(X)
        steps = []
        for t in range(X.size(1)):
            query = hidden_state[0][:, None, :]
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            y, hidden_state = self.rnn(torch.cat((context, emb[:, t:t + 1]), -1), hidden_state)
            steps.append((y, context, self.attention.attention_weights))
        ys, cs, ws = zip(*steps)
        self.attention_weights = torch.cat(ws, 1)
        z = torch.cat((torch.cat(ys, 1), torch.cat(cs, 1), emb), -1)
        return self.dense(torch.tanh(self.deep_output(z))), (enc_outputs, hidden_state, enc_valid_lens)
