# style: compact one-expression returns
# bug: receptive_field | checks len(dilations) before filling in the None default, so dilations=None raises TypeError
# expect: receptive_field | dilations None
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1 or len(dilations) != num_layers:
        raise ValueError("kernel_size < 1 or wrong number of dilations")
    dilations = dilations or [1] * num_layers
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError(architecture)
    if n < 1 or kernel_size < 2:
        raise ValueError("n >= 1 and kernel_size >= 2 required")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    L = 1
    while receptive_field(kernel_size, L, [2 ** i if dilated else 1 for i in range(L)]) < n:
        L += 1
    return L
