# style: python lists per step, torch.cat along time
# bug: Seq2SeqAttentionDecoder.forward | GRU input concatenates the embedding before the context instead of (context, embedding)
# expect: Seq2SeqAttentionDecoder.forward | order
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
        """X (B, T_tgt) token ids -> (logits (B, T_tgt, vocab_size), new state).

        state is (enc_outputs (B, T_src, H), hidden_state (num_layers, B, H),
        enc_valid_lens (B,) or None). For each target step t:
          1. query   = top GRU layer's previous hidden state, shaped (B, 1, H)
          2. context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
          3. GRU input = torch.cat((context, embedding of X[:, t]), dim=-1), (B, 1, H + E)
          4. run one GRU step from hidden_state
        Then the deep output: concatenate, along the last dim, all step outputs
        (B, T_tgt, H), all step contexts (B, T_tgt, H) and the embeddings of X
        (B, T_tgt, E), in that order; logits = self.dense(torch.tanh(
        self.deep_output(that))). Store the weights of every step in
        self.attention_weights, shape (B, T_tgt, T_src), and return the new
        state (enc_outputs, new hidden_state, enc_valid_lens).
        """
        enc_outputs, hidden_state, enc_valid_lens = state
        embs = self.embedding(X)  # (B, T, E)
        step_outputs, step_contexts, step_weights = [], [], []
        for t in range(X.shape[1]):
            query = hidden_state[-1].unsqueeze(1)  # (B, 1, H)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)  # (B, 1, H)
            rnn_in = torch.cat((embs[:, t : t + 1, :], context), dim=-1)
            out, hidden_state = self.rnn(rnn_in, hidden_state)
            step_outputs.append(out)
            step_contexts.append(context)
            step_weights.append(self.attention.attention_weights)
        outputs = torch.cat(step_outputs, dim=1)
        contexts = torch.cat(step_contexts, dim=1)
        features = torch.cat((outputs, contexts, embs), dim=-1)
        logits = self.dense(torch.tanh(self.deep_output(features)))
        self.attention_weights = torch.cat(step_weights, dim=1)
        return logits, (enc_outputs, hidden_state, enc_valid_lens)
