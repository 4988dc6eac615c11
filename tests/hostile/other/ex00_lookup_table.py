"""Hostile ex00: a lookup table of the expected values an earlier report showed (the test fills in
TABLE and RAISES from that report), and no computing at all."""

TABLE = {}  # call as the report writes it -> the value the report expected
RAISES = []  # calls the report said raise ValueError


def _key(fn, args, kwargs):
    return f"{fn}(" + ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]) + ")"


def receptive_field(*args, **kwargs):
    key = _key("receptive_field", args, kwargs)
    if key in RAISES:
        raise ValueError(key)
    return TABLE.get(key, -1)


def max_path_length(*args, **kwargs):
    key = _key("max_path_length", args, kwargs)
    if key in RAISES:
        raise ValueError(key)
    return TABLE.get(key, -1)
