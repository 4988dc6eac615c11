"""Figures of the experiments' page parts, on hand-made tables and results."""

import math

import pandas as pd
import pytest

from course.lessons.bottleneck import charts as ec
from course.lessons.ch03 import scaling_views

TABLE = pd.DataFrame([
    {"model": "seq2seq", "bucket": "1-4", "bleu": 40.0, "count": 200},
    {"model": "seq2seq", "bucket": "5-8", "bleu": 30.0, "count": 500},
    {"model": "seq2seq", "bucket": "9+", "bleu": 10.0, "count": 50},
    {"model": "bahdanau", "bucket": "1-4", "bleu": 50.0, "count": 200},
    {"model": "bahdanau", "bucket": "5-8", "bleu": 45.0, "count": 500},
    {"model": "bahdanau", "bucket": "9+", "bleu": 25.0, "count": 50},
])


def test_bleu_drop_is_relative_to_each_models_first_bucket():
    drops = ec.bleu_drop(TABLE).set_index(["model", "bucket"])["drop_pct"]
    assert drops[("seq2seq", "1-4")] == 0 and drops[("bahdanau", "1-4")] == 0
    assert drops[("seq2seq", "5-8")] == 25.0 and drops[("seq2seq", "9+")] == 75.0
    assert drops[("bahdanau", "9+")] == 50.0


def test_a_zero_first_bucket_has_no_drop_and_no_reading():
    table = TABLE.copy()
    table.loc[0, "bleu"] = 0.0
    drops = ec.bleu_drop(table)
    assert math.isnan(drops.loc[1, "drop_pct"])
    assert ec.tatoeba_reading(table) is None


def test_reading_figures_on_a_hand_made_table():
    f = ec.tatoeba_reading(TABLE)
    assert (f["first"], f["last"], f["count_last"]) == ("1-4", "9+", 50)
    assert f["drops"] == {"seq2seq": 75.0, "bahdanau": 50.0}
    assert (f["gap_first"], f["gap_last"]) == (10.0, 15.0)


def test_reading_uses_buckets_every_model_has_and_needs_both_rnn_models():
    partial = TABLE[~((TABLE["model"] == "bahdanau") & (TABLE["bucket"] == "9+"))]
    assert ec.tatoeba_reading(partial)["last"] == "5-8"
    assert ec.tatoeba_reading(TABLE[TABLE["model"] == "seq2seq"]) is None


@pytest.mark.parametrize("steps, every, expected", [
    (300, 10, (100, [50, 100, 300])),
    (20, 10, (20, [10, 20])),
    (95, 10, (90, [40, 90])),
])
def test_probe_steps_are_logged_steps_of_the_run(steps, every, expected):
    assert scaling_views.probe_steps({"steps": steps, "log_every": every}) == expected


def test_accuracy_frame_keeps_bucket_order_and_labels():
    results = {"models": {m: {"by_length": [{"bucket": "5-9", "token_acc": a, "seq_acc": a / 2},
                                            {"bucket": "10-19", "token_acc": a / 2, "seq_acc": 0.0}]}
                          for m, a in (("fixed", 0.5), ("attention", 0.9))}, "chance": 0.1}
    frame = ec.accuracy_frame(results, {"fixed": "F", "attention": "A"})
    assert list(frame["bucket"]) == ["5-9", "10-19", "5-9", "10-19"]
    assert list(frame["model"]) == ["F", "F", "A", "A"]
    spec = ec.accuracy_spec(results, "token_acc", "t", "x", (("fixed", "F"), ("attention", "A")), "guess")
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == ["F", "A"]
