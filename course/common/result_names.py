"""What a grader report calls a result, in words: the one reading of a result key ('output', 'grad.queries',
'input_after.X') shared by the grader's messages and the app's views of a report (the words live under
`grader.compare.` in course/text/<lang>/grader.toml)."""

from course.common.i18n import catalog, t


def result_name(name, lang="en"):
    """A readable name for a result key: 'grad.queries' -> 'the gradient w.r.t. queries', 'output' -> its word
    in `lang`; a key the catalog does not know (a name in the learner's code) stays as it is."""
    if name.startswith("grad."):
        return t("grader.compare.grad_of", lang, name=name[5:])
    if name.startswith("input_after."):
        return t("grader.compare.input_after", lang, name=name[12:])
    head, dot, rest = name.partition(".")
    if f"grader.compare.field.{head}" in catalog(lang):  # a result, not a name in the learner's code
        return t(f"grader.compare.field.{head}", lang) + dot + rest
    return name
