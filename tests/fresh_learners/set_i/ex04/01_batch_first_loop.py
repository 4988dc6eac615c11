# style: batch-first loop over time steps, lists then torch.cat
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
    score by it; 1.0 in the published exercise. In a class your exercise
    variant gives you your own default (the Practice page and
    `python -m grader --variant N` show it): write it as the default here;
    the grader builds Seq2SeqAttentionDecoder without it.
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

    def forward(self, X, state):
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state)."""
        enc_outputs, hidden_state, enc_valid_lens = state
        embs = self.embedding(X)                               # (B, T_tgt, E)
        step_outputs, contexts, weights = [], [], []
        for t in range(X.shape[1]):
            query = hidden_state[-1].unsqueeze(1)              # (B, 1, H)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            rnn_in = torch.cat((context, embs[:, t:t + 1, :]), dim=-1)
            out, hidden_state = self.rnn(rnn_in, hidden_state)
            step_outputs.append(out)
            contexts.append(context)
            weights.append(self.attention.attention_weights)
        outputs = torch.cat(step_outputs, dim=1)               # (B, T_tgt, H)
        contexts = torch.cat(contexts, dim=1)                  # (B, T_tgt, H)
        self.attention_weights = torch.cat(weights, dim=1)     # (B, T_tgt, T_src)
        features = torch.cat((outputs, contexts, embs), dim=-1)
        logits = self.dense(torch.tanh(self.deep_output(features)))
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
