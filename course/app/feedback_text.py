"""Grader feedback as Markdown: code names shown as code, so Markdown cannot eat their underscores.

`PositionalEncoding.__init__` written plainly in Markdown renders as a bold "init"; `num_hiddens and
valid_lens` as an italic "hiddens and valid". Pure text functions, used by the Practice page (the class
pages could use them too).
"""

import re

CODE_SPAN = re.compile(r"(`+)(.+?)\1|\$[^$]+\$", re.S)  # code and $formulas$ in the text stay as they are
# An ASCII name, dotted or a path: ex05_multihead.py, PositionalEncoding.__init__, self.W_q, exercises/ex01.py
NAME = re.compile(r"(?<![A-Za-z0-9_$\\])_*[A-Za-z][A-Za-z0-9_]*(?:[./]_*[A-Za-z0-9][A-Za-z0-9_]*)*(?![A-Za-z0-9_$])")


def _is_code(name):
    """A name Markdown would mangle or that reads as code: it has an underscore, or an inner dot or slash."""
    return "_" in name or "." in name or "/" in name


def code_names(text):
    """`text` with each code-like name outside existing code spans and formulas wrapped in backticks."""
    text = str(text)
    out, last = [], 0
    for span in CODE_SPAN.finditer(text):
        out.append(_wrap(text[last:span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(_wrap(text[last:]))
    return "".join(out)


def _wrap(plain):
    """Backticks around the code-like names of a stretch of text without code spans."""
    return NAME.sub(lambda m: f"`{m.group(0)}`" if _is_code(m.group(0)) else m.group(0), plain)
