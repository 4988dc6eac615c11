# style: if/elif chain per architecture
# bug: max_path_length | self-attention returns 1 before the n == 1 case is considered, so n == 1 gives 1 instead of 0
# expect: max_path_length | n == 1 gives 0
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("wrong number of dilations")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if n < 1:
        raise ValueError("n must be >= 1")
    if kernel_size < 2:
        raise ValueError("kernel_size must be >= 2")
    if architecture == "self-attention":
        return 1
    elif architecture == "rnn":
        return max(n - 1, 0)
    elif architecture == "cnn":
        if n == 1:
            return 0
        layers = 1
        while receptive_field(kernel_size, layers,
                              [2 ** i for i in range(layers)] if dilated else None) < n:
            layers += 1
        return layers
    else:
        raise ValueError(f"unknown architecture {architecture}")
