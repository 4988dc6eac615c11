"""Numbers that JSON has no literal for (NaN, inf, -inf): written as text, read back, shown.

A learner's wrong weights may hold NaN (a masked softmax that divides 0 by 0), and a report carries them (the
weights diff's `got_value`). Python's json writes `NaN`, which is not JSON: Postgres refuses it in a json column,
and so do strict readers. So every report, stored verdict and JSON file written from report data goes through
`json_ready` (grader/report.py ExerciseResult.to_dict, classroom/data/db.py's JSON columns, the grader's --json), which
writes such a number as the text "NaN", "Infinity" or "-Infinity"; `number` reads any of these forms back to a
float, and `number_text` shows one to a learner ("NaN", "inf", "-inf").
"""

import math
import numbers

AS_TEXT = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}  # how json_ready writes them


def _text_of(value):
    """The text json_ready writes for a non-finite float."""
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def json_ready(value):
    """`value` (dicts, lists, tuples, numbers, text, None, nested) as strict JSON can carry it -> a new value:
    NaN, inf and -inf become "NaN", "Infinity" and "-Infinity", any other non-integer real number (a numpy
    float, say) a Python float, a tuple a list; the rest is kept as it is."""
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, (str, bool, int)) or value is None:
        return value
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else _text_of(value)
    return value


def number(value):
    """A report's number as a float: a number as it is, "NaN" / "Infinity" / "-Infinity" (json_ready's texts) as
    the float they stand for, None (a weights cell that was NaN, grader/weight_diff.py) as NaN. Anything else
    raises ValueError."""
    if value is None:
        return math.nan
    if isinstance(value, str):
        if value in AS_TEXT:
            return AS_TEXT[value]
        raise ValueError(f"{value!r} is not a number of a report")
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"{value!r} is not a number of a report")


def number_text(value, spec=".4g"):
    """A report's number (any form `number` reads) as a learner reads it: format(value, spec), or "NaN", "inf",
    "-inf"."""
    value = number(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, spec)
