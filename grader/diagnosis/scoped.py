"""Name a slip from the checks of the first failing function alone, when no mutant explains every failing check.

A learner's file may differ from the reference outside the slip: a function that computes a part inline
(so a slip in the part's own function does not reach it), or a branch written twice (the slip in one copy
only), or another choice downstream (a -1e6 fill where the reference fills -inf) that changes how the slip
shows later. Then no mutant fails exactly the learner's failing checks, but one may still explain the
checks of the function that fails first: the mutant's slip lives in that function, and on its checks

- it fails exactly the learner's failing checks and agrees with the learner's values there (`exact`), or
- it fails them and more of them, agreeing with the learner's values on each one the learner fails
  (`wider`: the learner has the slip in some of the function's cases only).

Other functions' checks are not read; when the first failing function uses a part that fails its own checks,
the part's checks are read instead (the difference starts there). As in explain (whose matching and naming
it is given), only one slip (or one line wrong in a few ways) is named, and only when the learner's values
(not only an error) agree on at least one check.
"""

from . import substeps


def _owner(name):
    """The function or class a check's target or a mutant's function belongs to ('MultiHead' for its forward)."""
    return name.split(".")[0]


def _first_owner(ex_id, failing, checks):
    """The function whose checks are read: the first failing check's, or a part it uses (in the reference) that
    fails its own checks, where the difference starts (the first such in check order)."""
    owner = _owner(checks[failing[0]].target)
    parts = substeps.uses(ex_id).get(owner, set())
    return next((_owner(checks[i].target) for i in failing if _owner(checks[i].target) in parts), owner)


def _agreeing(explains, entry, indexes, checks, references, records):
    """Does the mutant fail every check in `indexes` the learner's way (values, or the same error)?"""
    fails = entry["fails"]
    return all(i in fails for i in indexes) and explains(
        dict(entry, fails={i: fails[i] for i in indexes}), list(indexes), checks, references, records)


def diagnose(ex_id, entries, failing, checks, references, records, lang, explains, named):
    """(index, hint, mistake id) for the one slip of the first failing function that explains its own failing
    checks (exactly, else in some of its cases), or None. explains and named: explain's matching and naming
    (passed in, so that this module does not import explain)."""
    if not failing or not len(checks) == len(records) > failing[-1]:
        return None
    owner = _first_owner(ex_id, failing, checks)
    own = {i for i, c in enumerate(checks) if _owner(c.target) == owner}
    learner = [i for i in failing if i in own]
    if not any(isinstance(records[i], dict) and "ok" in records[i] for i in learner):
        return None  # only errors: a mutant raising the same says little about where
    exact, wider = [], []
    for entry in entries:
        if _owner(entry["function"]) != owner:
            continue
        theirs = {i for i in entry["fails"] if i in own}
        if not theirs >= set(learner) or not _agreeing(explains, entry, learner, checks, references, records):
            continue
        (exact if theirs == set(learner) else wider).append(entry)
    return named(exact, failing, lang) or named(wider, failing, lang)
