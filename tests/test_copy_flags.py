"""A class's similarity flags: which pairs, with which evidence, for whom (SQLite store, AppTest pages)."""

import pytest

from classroom.web import access
from classroom.analytics import copy_flags, similarity
from classroom.data.roster import user_by_email
from classroom.data.settings import set_setting
from classroom.data.variants import learner_variant
from classroom.analytics.disguise import disguise
from classroom.data.models import Job, Result, Submission, utcnow
from course.common.i18n import t
from tests.app_helpers import AppTest, errors_of, markdown_text
from tests.classroom_support import INSTRUCTOR, ROOT, session_token, solution, user_id

pytestmark = pytest.mark.slow  # fingerprints every reference and tests/variants file once per process (~3 s)

ANALYTICS = "classroom/app_pages/analytics.py"
PRACTICE = "classroom/app_pages/practice.py"
RARE = "auto:masked_softmax:12:Lt>LtE"
VALUES_CHECK = {"id": "ex05.MultiHeadAttention.1", "passed": False, "mistake": None,
                "weights": {"result": "attention_weights", "got": [[0.25, 0.75]], "got_value": 0.75}}


def add_submission(store, email, ex_id, source, status="passed", mistakes=(), checks=()):
    """A submission of `source` with a stored verdict (no grader run) -> its id."""
    now = utcnow()
    with store.session() as session:
        sub = Submission(user_id=user_by_email(store, email).id, exercise_id=ex_id, source=source,
                         kind=".py", filename=f"{ex_id}.py", created_at=now, status="done", late=False)
        session.add(sub)
        session.flush()
        job = Job(submission_id=sub.id, state="done", attempts=1, created_at=now)
        session.add(job)
        session.flush()
        session.add(Result(submission_id=sub.id, job_id=job.id, status=status, passed=status == "passed",
                           raw_score=float(status == "passed"), score=float(status == "passed"), summary="",
                           checks=list(checks), mistake_ids=list(mistakes), report={}, created_at=now))
        return sub.id


@pytest.fixture
def copied(class_store):
    """Ann writes the reference ex03, Bob hands in a disguised copy of it, Cy an independent einsum version;
    Ann and Bob share a rare slip and identical wrong values in ex05, everyone a common one in ex01."""
    add_submission(class_store, "ann@class.test", "ex03", solution("ex03"))
    add_submission(class_store, "bob@class.test", "ex03", disguise(solution("ex03"), seed=7))
    add_submission(class_store, "cy@class.test", "ex03", (ROOT / "tests/variants/ex03/einsum.py").read_text())
    for email in ("ann@class.test", "bob@class.test"):
        add_submission(class_store, email, "ex05", "# wrong", "failed", [RARE], [VALUES_CHECK])
    add_submission(class_store, "cy@class.test", "ex05", "# other", "failed")
    for email in ("ann@class.test", "bob@class.test", "cy@class.test"):
        add_submission(class_store, email, "ex01", "# wrong", "failed", ["softmax_wrong_axis"])
    return class_store


def test_only_the_copied_pair_is_flagged_with_its_rare_traces(copied):
    flags, thresholds = access.similarity_flags(copied, user_id(copied, INSTRUCTOR))
    assert [(f.ex_id, f.first.email, f.second.email) for f in flags] == [("ex03", "ann@class.test", "bob@class.test")]
    flag = flags[0]
    assert flag.score > thresholds["ex03"].value >= similarity.FLOOR
    traces = {(s.trace.ex_id, s.trace.kind, s.trace.detail) for s in flag.shared}
    assert traces == {("ex05", "mistake", RARE), ("ex05", "values", VALUES_CHECK["id"])}  # not the common ex01 one
    assert thresholds["ex03"].class_pairs == 0  # three learners: the class's own pairs are not a null yet


def test_a_learner_may_not_read_the_flags_but_a_ta_may(copied):
    with pytest.raises(access.AccessDenied):
        access.similarity_flags(copied, user_id(copied, "bob@class.test"))
    flags, _ = access.similarity_flags(copied, user_id(copied, "ta@class.test"))
    assert len(flags) == 1


def test_a_new_submission_is_compared_without_comparing_the_old_pairs_again(copied):
    instructor = user_id(copied, INSTRUCTOR)
    access.similarity_flags(copied, instructor)
    memory = copied.kept(copy_flags.KEPT).value
    before = dict(memory.scores)
    add_submission(copied, "cy@class.test", "ex03", disguise(solution("ex03"), seed=8))  # cy copies too now
    flags, _ = access.similarity_flags(copied, instructor)
    assert {k: memory.scores[k] for k in before} == before
    assert len(memory.scores) == len(before) + 2  # cy's new file against ann's and bob's
    assert {(f.first.email, f.second.email) for f in flags} == {
        ("ann@class.test", "bob@class.test"), ("ann@class.test", "cy@class.test"), ("bob@class.test", "cy@class.test")}


@pytest.fixture
def hosted(copied, sqlite_url, monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_CLASS_DB", sqlite_url)
    monkeypatch.setenv("ATTENTION_LAB_HOME", str(tmp_path))
    return copied


def _page(path, token, lang="en"):
    at = AppTest.from_file(str(ROOT / path), default_timeout=120)
    at.session_state["app_lang"] = lang
    at.session_state["class_session"] = token
    return at.run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_instructor_sees_the_flag_its_evidence_and_both_files(hosted, lang):
    at = _page(ANALYTICS, session_token(hosted, user_id(hosted, INSTRUCTOR)), lang)
    assert errors_of(at) == []
    assert t("classroom.similarity_title", lang) in [h.value for h in at.subheader]
    first = t("classroom.col_first", lang)
    assert not [d for d in at.dataframe if first in d.value.columns]  # nothing is compared until asked
    at = at.toggle(key="class_analytics_similarity_on").set_value(True).run()
    assert errors_of(at) == []
    first = t("classroom.col_first", lang)
    tables = [d.value for d in at.dataframe if first in d.value.columns]
    assert [table[first].tolist() for table in tables] == [["Ann <ann@class.test>"]]
    text = markdown_text(at)
    assert t("classroom.trace_values", lang, ex_id="ex05", check=VALUES_CHECK["id"], holders=2, learners=3) in text
    codes = [c.value.strip() for c in at.code]
    assert solution("ex03").strip() in codes and disguise(solution("ex03"), seed=7).strip() in codes  # side by side


def test_a_learner_never_sees_the_section(hosted):
    token = session_token(hosted, user_id(hosted, "bob@class.test"))
    for path in (ANALYTICS, PRACTICE):
        at = _page(path, token)
        assert t("classroom.similarity_title", "en") not in [h.value for h in at.subheader]
        assert "ann@class.test" not in markdown_text(at) + " ".join(c.value for c in at.code)


def test_the_classes_own_passing_pairs_join_the_null_once_enough_learners_passed(copied, monkeypatch):
    monkeypatch.setattr(similarity, "NULL_MIN_LEARNERS", 3)  # ann, bob and cy passed ex03
    flags, thresholds = access.similarity_flags(copied, user_id(copied, INSTRUCTOR))
    assert thresholds["ex03"].class_pairs == 3 and thresholds["ex05"].class_pairs == 0  # nobody passed ex05
    assert thresholds["ex03"].reference_pairs == len(similarity.reference_null("ex03"))
    assert [(f.first.email, f.second.email) for f in flags] == [("ann@class.test", "bob@class.test")]


def test_a_copy_with_the_copiers_own_variant_value_is_flagged_wherever_the_threshold_is(class_store, monkeypatch):
    """With variants on, Bob copies Ann's ex01 and writes his own temperature as its default (the one edit the
    Practice page asks for): flagged even at the CEILING, where a class's own pairs may put the threshold; Cy's
    independent file with his own value is not."""
    from tests.exercise_variant_support import personalise

    set_setting(class_store, "variants", 1)
    monkeypatch.setattr(similarity, "FLOOR", similarity.CEILING)  # every threshold at the ceiling
    files = {"ann@class.test": "fill_minus_1e6.py", "bob@class.test": "fill_minus_1e6.py", "cy@class.test": "where_inf.py"}
    written = {}
    for email, name in files.items():
        number = learner_variant(class_store, user_id(class_store, email), "ex01")
        written[email] = personalise((ROOT / "tests/variants/ex01" / name).read_text(), "ex01", number)
        add_submission(class_store, email, "ex01", written[email])
    assert len(set(written.values())) == 3  # each with their own value
    flags, thresholds = access.similarity_flags(class_store, user_id(class_store, INSTRUCTOR))
    assert thresholds["ex01"].value == similarity.CEILING
    assert [(f.ex_id, f.first.email, f.second.email) for f in flags] == [("ex01", "ann@class.test", "bob@class.test")]
