"""The gradebook CSV for spreadsheets (BOM, no formulas, empty cells) and what counts as an attempt."""

import csv

from classroom.analytics import analytics, frames
from classroom import cli
from tests.classroom_support import add_graded


def test_a_blocked_submission_is_no_attempt(class_store):
    add_graded(class_store, "ann@class.test", "ex05", 0.0, "blocked", minutes=0)
    add_graded(class_store, "ann@class.test", "ex05", 1.0, "passed", minutes=1)
    add_graded(class_store, "bob@class.test", "ex05", 0.0, "blocked", minutes=0)
    frame = frames.submissions_frame(class_store)
    ex05 = analytics.exercise_summary(frame, ["ex05"]).set_index("exercise_id").loc["ex05"]
    assert (ex05["learners"], ex05["passed"], ex05["submissions"]) == (1, 1, 1)  # bob never got a verdict
    assert ex05["median_attempts_to_pass"] == 1.0 and ex05["submission_pass_rate"] == 1.0
    book = analytics.gradebook(frame, ["ex05"]).set_index("email")
    assert book["ex05"].isna()["bob@class.test"]  # blank, not a 0 he never earned


def test_the_export_opens_in_a_spreadsheet_as_text(class_store, sqlite_url, tmp_path):
    with class_store.session() as session:
        from classroom.data.models import User

        for user in session.query(User).filter(User.email.in_(["ann@class.test", "bob@class.test"])):
            user.name = {"ann@class.test": '=HYPERLINK("https://evil.test","x")',
                         "bob@class.test": "张伟"}[user.email]
    add_graded(class_store, "ann@class.test", "ex00", 1.0, "passed")
    out = tmp_path / "grades.csv"
    assert cli.main(["export", "--db", sqlite_url, "--out", str(out)]) == 0
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # Excel reads UTF-8 (the Chinese names) only with a BOM
    rows = {row["email"]: row for row in csv.DictReader(out.read_text(encoding="utf-8-sig").splitlines())}
    assert rows["ann@class.test"]["name"] == '\'=HYPERLINK("https://evil.test","x")'
    assert rows["bob@class.test"]["name"] == "张伟"
    assert rows["bob@class.test"]["ex00"] == "" and rows["ann@class.test"]["ex00"] == "1"
    assert "None" not in raw.decode("utf-8") and "nan" not in raw.decode("utf-8")


def test_every_formula_start_is_neutralised():
    for start in ("=", "+", "-", "@", "\t", "\r"):
        assert analytics.spreadsheet_safe(start + "1+1") == "'" + start + "1+1"
    assert analytics.spreadsheet_safe("Ann") == "Ann" and analytics.spreadsheet_safe(-0.5) == -0.5
