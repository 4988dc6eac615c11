"""The Chinese catalogs use one term for each idea and leave no English table header.

Terms: 教师强制 (not 强制教学), 热力图 (not 热图), 堆叠 for a stack of layers (not 堆栈),
Chinese quotation marks “ ” around Chinese text, and d2l's own term named once in brackets
where ours differs (层归一化 / 层规范化, 掩码 / 掩蔽).
"""

import re

from course.common import i18n

BANNED = {
    "强制教学": "教师强制",
    "热图": "热力图",
    "热度图": "热力图",
    "堆栈": "堆叠",
}
D2L_ONCE = {"层规范化": "层归一化", "掩蔽": "掩码"}  # d2l's term: ours
# Straight quotes whose quoted text starts or ends with a Chinese character (quotes around code such
# as register_buffer("P", ...) next to Chinese prose are fine).
STRAIGHT_QUOTED_CHINESE = re.compile(r'"(?=[\u4e00-\u9fff])[^"\n]*"|"[^"\n]*(?<=[\u4e00-\u9fff])"')
HEADER_KEY = re.compile(r"(^|[._])(col|cols|column|columns|header|legend)([._]|$)|_title$|^ui\.")
ENGLISH_WORD = re.compile(r"\b[A-Za-z]{3,}\b")
SAME_IN_BOTH = {"softmax", "queries", "keys", "values", "valid_lens", "num_hiddens", "BLEU", "Transformer",
                "RNN", "CNN", "max", "exp", "tanh", "LayerNorm", "BatchNorm", "Seq2Seq",
                "Attention", "Lab"}  # names, not words (Attention Lab is the course's name)


def zh_texts():
    """{key: text} of the Chinese catalogs (strings only)."""
    return {k: v for k, v in i18n.catalog("zh").items() if isinstance(v, str)}


def banned_terms(texts):
    """[(key, term, preferred)] for every banned term found."""
    return [(k, term, good) for k, v in texts.items() for term, good in BANNED.items() if term in v]


def straight_quotes(texts):
    """[(key, quoted text)] of Chinese text between straight double quotes."""
    return [(k, m.group(0)) for k, v in texts.items() for m in STRAIGHT_QUOTED_CHINESE.finditer(v)]


def english_headers(zh, en):
    """[(key, text)] of table headers, axis and legend titles left in English in the Chinese catalog."""
    found = []
    for key, text in zh.items():
        if not HEADER_KEY.search(key) or text != en.get(key):
            continue
        words = set(ENGLISH_WORD.findall(re.sub(r"\{[^}]*\}", "", text))) - SAME_IN_BOTH  # placeholders are no words
        if words:
            found.append((key, text))
    return found


def d2l_terms_not_named_once(texts):
    """[(d2l term, keys that use it)] of the d2l terms not named exactly once, in brackets after ours."""
    found = []
    for d2l, ours in D2L_ONCE.items():
        hits = [(k, v) for k, v in texts.items() if d2l in v]
        if len(hits) != 1 or not re.search(f"{ours}[^（]{{0,12}}（[^）]*“?{d2l}", hits[0][1]):
            found.append((d2l, [k for k, _ in hits]))
    return found


def test_the_checks_can_fail():
    sample = {"a": "训练时用强制教学", "b": '把"头"挪进批量维', "c": "两个堆栈", "d": "热图"}
    assert {term for _, term, _ in banned_terms(sample)} == {"强制教学", "堆栈", "热图"}
    assert straight_quotes(sample) == [("b", '"头"')]
    assert straight_quotes({"e": '用 register_buffer("P", P) 注册，再调用 f("x")。'}) == []
    assert english_headers({"x.col_model": "model", "x.col_bleu": "BLEU"},
                           {"x.col_model": "model", "x.col_bleu": "BLEU"}) == [("x.col_model", "model")]
    named = {"p": "层归一化（d2l 译作“层规范化”）", "q": "掩码（d2l：掩蔽）", "r": "再说一次掩蔽"}
    assert d2l_terms_not_named_once(named) == [("掩蔽", ["q", "r"])]
    assert d2l_terms_not_named_once({"p": "层规范化"}) == [("层规范化", ["p"]), ("掩蔽", [])]


def test_chinese_catalogs_use_one_term_each():
    assert banned_terms(zh_texts()) == []


def test_chinese_text_is_quoted_with_chinese_quotation_marks():
    assert straight_quotes(zh_texts()) == []


def test_d2l_terms_are_named_once_in_brackets_next_to_ours():
    assert d2l_terms_not_named_once(zh_texts()) == [], "d2l terms not named once, in brackets after ours"


def test_no_english_table_headers_in_chinese():
    assert english_headers(zh_texts(), {k: v for k, v in i18n.catalog("en").items() if isinstance(v, str)}) == []


def test_alloc_header_says_the_same_in_both_languages():
    en, zh = i18n.t("ch03.alloc_header", "en"), i18n.t("ch03.alloc_header", "zh")
    assert "reading time" in en and "阅读时间" in zh
