# style: closed-form integer arithmetic, no search
# bug: none
"""Exercise 0: path lengths and receptive fields (chapter 1)."""

ARCHITECTURES = ("rnn", "cnn", "self-attention")


def receptive_field(kernel_size, num_layers, dilations=None):
    if kernel_size < 1:
        raise ValueError("kernel_size < 1")
    dilations = [1] * num_layers if dilations is None else list(dilations)
    if len(dilations) != num_layers:
        raise ValueError("len(dilations) != num_layers")
    return 1 + (kernel_size - 1) * sum(dilations)


def _ceil_div(a, b):
    return -(-a // b)


def max_path_length(architecture, n, kernel_size=3, dilated=False):
    if architecture not in ARCHITECTURES:
        raise ValueError("unknown architecture: %s" % architecture)
    if n < 1 or kernel_size < 2:
        raise ValueError("need n >= 1 and kernel_size >= 2")
    if n == 1:
        return 0
    if architecture == "rnn":
        return n - 1
    if architecture == "self-attention":
        return 1
    # need (kernel_size - 1) * S >= n - 1 with S the sum of the dilations
    need = _ceil_div(n - 1, kernel_size - 1)
    if not dilated:
        return need
    # dilations 1, 2, ..., 2**(L-1) sum to 2**L - 1
    L = 0
    while (1 << L) - 1 < need:
        L += 1
    return L
