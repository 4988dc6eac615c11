# style: list comprehension of dilations, for-loop over layer counts
# bug: max_path_length | dilated layers use 2, 4, 8, ... (exponent starts at 1) instead of 1, 2, 4, ...
# expect: max_path_length | dilations 1, 2, 4
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        dilations = [1 for _ in range(num_layers)]
    if len(dilations) != num_layers:
        raise ValueError("dilations and num_layers disagree")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture " + str(architecture))
    if n < 1 or kernel_size < 2:
        raise ValueError("invalid n or kernel_size")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    for layers in range(1, n):
        if dilated:
            dils = [2 ** l for l in range(1, layers + 1)]
        else:
            dils = [1] * layers
        if receptive_field(kernel_size, layers, dils) >= n:
            return layers
    return n - 1
