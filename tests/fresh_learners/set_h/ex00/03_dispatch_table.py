# style: dict dispatch with small helper functions, running sum
# bug: none
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError(f"kernel_size must be >= 1, got {kernel_size}")
    if dilations is None:
        dilations = tuple(1 for _ in range(num_layers))
    elif len(dilations) != num_layers:
        raise ValueError(f"{len(dilations)} dilations for {num_layers} layers")
    total = 1
    for d in dilations:
        total += (kernel_size - 1) * d
    return total


def _cnn_layers(n, kernel_size, dilated):
    field, layers, dilation = 1, 0, 1
    while field < n:
        field += (kernel_size - 1) * dilation
        layers += 1
        if dilated:
            dilation *= 2
    return layers


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    rules = {
        "rnn": lambda: n - 1,
        "cnn": lambda: _cnn_layers(n, kernel_size, dilated),
        "self-attention": lambda: 1,
    }
    if architecture not in rules:
        raise ValueError(f"unknown architecture {architecture}")
    if n < 1:
        raise ValueError("n must be >= 1")
    if kernel_size < 2:
        raise ValueError("kernel_size must be >= 2")
    if n == 1:
        return 0
    return rules[architecture]()
