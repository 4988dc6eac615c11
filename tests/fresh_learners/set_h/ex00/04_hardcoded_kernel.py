# style: loop search reusing receptive_field
# bug: max_path_length | the cnn search calls receptive_field with a literal 3 instead of kernel_size
# expect: max_path_length | kernel_size
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size must be at least 1")
    if dilations is None:
        dilations = [1] * num_layers
    if len(dilations) != num_layers:
        raise ValueError("one dilation per layer")
    return 1 + (kernel_size - 1) * sum(dilations)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture")
    if n < 1 or kernel_size < 2:
        raise ValueError("bad n or kernel_size")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    layers = 1
    while True:
        dils = [2 ** i for i in range(layers)] if dilated else [1] * layers
        if receptive_field(3, layers, dils) >= n:
            return layers
        layers += 1
