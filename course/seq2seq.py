"""The GRU encoder that the Bahdanau decoder (exercise 4) reads from."""

from torch import nn


class Seq2SeqEncoder(nn.Module):
    """Embed source tokens and run a multi-layer GRU over them."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout, batch_first=True)

    def forward(self, X, *args):
        """X (B, T_src) token ids -> (outputs (B, T_src, H), hidden (num_layers, B, H))."""
        embs = self.embedding(X)  # (B, T_src, E)
        outputs, hidden_state = self.rnn(embs)  # (B, T_src, H), (L, B, H)
        return outputs, hidden_state
