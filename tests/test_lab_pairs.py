"""The training lab's sentence-pair task: the slice rule on hand-made pairs, padding, scoring and masking."""

from dataclasses import replace

import torch

from course.lessons import lab_tasks
from course.lessons import training_lab as tl
from course.translation import lab_pairs
from course.translation.data import Pair

TINY = tl.LabConfig(task="tatoeba", num_hiddens=16, num_heads=2, ffn_num_hiddens=32, seq_len=6, batch_size=8,
                    steps=30, warmup=5, log_every=10, snapshot_every=15)


def pairs_of(rows):
    return [Pair(en, zh, "", i + 1) for i, (en, zh) in enumerate(rows)]


def test_the_slice_keeps_short_pairs_in_file_order_and_holds_every_eleventh_out(monkeypatch):
    monkeypatch.setattr(lab_pairs, "TEST_EVERY", 3)
    rows = [("Hi.", "你好。"), ("This sentence has far too many English words in it.", "太长。"),
            ("Run!", "跑！"), ("I see.", "我明白了。"), ("Go.", "走。"), ("Wait.", "等等。"), ("Hi.", "嗨。")]
    data = lab_pairs.make_slice(pairs_of(rows), num=5)
    tokens = data["tokens"]
    assert tokens[:3] == ["<pad>", "<end>", "<unk>"]
    words = lambda ids: [tokens[i] for i in ids]  # noqa: E731
    assert [(words(s), words(t)) for s, t in data["train"]] == [
        (["hi", "."], ["你", "好", "。"]), (["run", "!"], ["跑", "！"]),
        (["go", "."], ["走", "。"]), (["wait", "."], ["等", "等", "。"])]
    (src, tgt), = data["test"]  # the third short pair; its unseen tokens are <unk>
    assert words(src) == ["<unk>", "<unk>", "."] and words(tgt) == ["<unk>"] * 4 + ["。"]
    assert "明" not in tokens  # the vocabulary comes from the training pairs only


SLICE = {"tokens": ["<pad>", "<end>", "<unk>", "a", "b", "c", "x", "y", "z"],
         "train": [[[3, 4], [6, 7]], [[4, 5, 3], [7, 8, 6]], [[5], [8]], [[3, 5], [6, 8]]],
         "test": [[[4, 3], [7, 6]]]}


def test_pairs_are_padded_closed_with_end_and_only_real_positions_are_scored():
    task = lab_tasks.task_data(TINY, SLICE)
    assert task.train_src[1].tolist() == [4, 5, 3, 0, 0, 0]
    assert task.train_tgt[1].tolist() == [7, 8, 6, 1, 0, 0]
    assert lab_tasks.scored(task, task.train_tgt[:1]).tolist() == [[True, True, True, False, False, False]]
    src, tgt = task.probe()
    assert src.tolist() == [[4, 5, 3, 0, 0, 0]]  # the longest training source
    try:
        lab_tasks.task_data(replace(TINY, seq_len=3), SLICE)
    except ValueError as err:
        assert "seq_len" in str(err)
    else:
        raise AssertionError("a pair longer than seq_len was accepted")


def test_padding_is_masked_in_the_encoder_and_the_cross_attention():
    torch.manual_seed(0)
    model = tl.LabTransformer(TINY, vocab_size=9, pad=0).eval()
    task = lab_tasks.task_data(TINY, SLICE)
    src, tgt = task.train_src[:2], task.train_tgt[:2]
    with torch.no_grad():
        model(src, tl.decoder_input(tgt, model.bos))
    maps = model.attention_maps()
    for kind in ("encoder", "cross"):
        assert float(maps[kind][:, 0, :, :, 2:].abs().max()) == 0  # the first source has 2 symbols
        assert float(maps[kind][:, 1, :, :, 3:].abs().max()) == 0  # the second, 3


def test_the_pairs_task_trains_and_fits_its_training_pairs():
    run = tl.train(replace(TINY, steps=120, lr=5e-3), pairs=dict(SLICE, test=SLICE["train"]))
    assert run["loss"][-1] < run["loss"][0] / 3, run["loss"]
    assert run["final_seq_acc"] == 1.0
    assert len(run["snapshots"][-1]["maps"]["cross"][0][0]) == TINY.seq_len


def test_the_pairs_task_without_its_slice_says_how_to_make_it():
    try:
        tl.train(TINY)
    except ValueError as err:
        assert "python -m course.translation.lab_pairs" in str(err)
    else:
        raise AssertionError("trained the pairs task without pairs")
