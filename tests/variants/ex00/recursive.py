# style: recursion and a dictionary of handlers
"""Exercise 0, recursive."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    """Receptive field, one layer peeled off per call."""
    if kernel_size < 1:
        raise ValueError("kernel_size < 1")
    if dilations is None:
        dilations = (1,) * num_layers
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) != num_layers")
    if num_layers == 0:
        return 1
    return (kernel_size - 1) * dilations[-1] + receptive_field(kernel_size, num_layers - 1, dilations[:-1])


def _cnn_layers(n, k, dilated, dilations=()):
    if receptive_field(k, len(dilations), list(dilations)) >= n:
        return len(dilations)
    nxt = 2 ** len(dilations) if dilated else 1
    return _cnn_layers(n, k, dilated, dilations + (nxt,))


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    """Path length by architecture."""
    if architecture not in ARCHITECTURES or n < 1 or kernel_size < 2:
        raise ValueError(f"bad arguments: {architecture!r}, n={n}, kernel_size={kernel_size}")
    handlers = {
        "rnn": lambda: n - 1,
        "self-attention": lambda: 0 if n == 1 else 1,
        "cnn": lambda: _cnn_layers(n, kernel_size, dilated),
    }
    return handlers[architecture]()
