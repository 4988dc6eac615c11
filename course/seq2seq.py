"""The GRU encoder that the Bahdanau decoder (exercise 4) reads from."""

from torch import nn


class Seq2SeqEncoder(nn.Module):
    """Embed source tokens and run a multi-layer GRU over them.

    With bidirectional=True (the encoder of Bahdanau et al., 2014) each layer
    reads the sentence both ways with num_hiddens // 2 units per direction, and
    the two halves are concatenated: the outputs and the final state keep the
    shapes of the one-way encoder, so the decoder cannot tell the difference,
    but every output now summarises the words on both sides of its position.
    """

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0, bidirectional=False):
        super().__init__()
        if bidirectional and num_hiddens % 2:
            raise ValueError(f"a bidirectional encoder splits num_hiddens between two directions; "
                             f"num_hiddens={num_hiddens} is odd, use an even number")
        self.bidirectional = bidirectional
        per_direction = num_hiddens // 2 if bidirectional else num_hiddens
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, per_direction, num_layers, dropout=dropout, batch_first=True,
                          bidirectional=bidirectional)

    def merge_directions(self, hidden_state):
        """GRU final state (L * directions, B, H / directions) -> (L, B, H), forward half first."""
        if not self.bidirectional:
            return hidden_state  # (L, B, H)
        two_l, batch, half = hidden_state.shape
        halves = hidden_state.reshape(two_l // 2, 2, batch, half)  # (L, 2, B, H/2)
        return halves.permute(0, 2, 1, 3).reshape(two_l // 2, batch, 2 * half)  # (L, B, H)

    def forward(self, X, *args):
        """X (B, T_src) token ids -> (outputs (B, T_src, H), hidden (num_layers, B, H))."""
        embs = self.embedding(X)  # (B, T_src, E)
        outputs, hidden_state = self.rnn(embs)  # (B, T_src, H), (L * directions, B, H / directions)
        return outputs, self.merge_directions(hidden_state)  # (B, T_src, H), (L, B, H)
