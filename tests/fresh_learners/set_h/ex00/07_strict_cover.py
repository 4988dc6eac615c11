# style: while loop with running receptive field
# bug: max_path_length | stops only when the receptive field is strictly larger than n, one layer too many when it equals n
# expect: max_path_length | receptive field covers n
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be >= 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("need num_layers dilations")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture")
    if n < 1:
        raise ValueError("n < 1")
    if kernel_size < 2:
        raise ValueError("kernel_size < 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    layers, field, dilation = 0, 1, 1
    while field <= n:
        field += (kernel_size - 1) * dilation
        layers += 1
        if dilated:
            dilation *= 2
    return layers
