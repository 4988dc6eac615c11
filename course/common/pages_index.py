"""The ordered list of the app's pages: each mode's navigation (course.app.learner) starts from it.

Adding a chapter is one entry here, one page file under app_pages/, its logic in
course/lessons/chNN.py (or a package chNN/), its text in course/text/<lang>/chNN.toml,
its nav title in course/text/<lang>/nav.toml and, shown in tabs, its topics in
course.app.ui.TOPICS (README: "Adding a chapter"). Each page's `key` is also
the prefix of its widget keys (`ch01_...`) and the key of its note.
"""

from dataclasses import dataclass

from course.common.paths import PROJECT_ROOT

SECTIONS = ("course", "demos", "lab", "practice", "notes")


@dataclass(frozen=True)
class PageEntry:
    key: str  # "ch01": widget-key prefix and notes key
    path: str  # file under the project root, "app_pages/ch01_seq2seq.py"
    title_key: str  # catalog key of the nav title, "nav.ch01"
    section: str  # one of SECTIONS (class mode adds its own "class" section)
    url_path: str  # the page's URL, "seq2seq"
    icon: str  # a Material icon, ":material/route:"

    @property
    def file(self):
        """Absolute path of the page file."""
        return PROJECT_ROOT / self.path

    @property
    def heading_key(self):
        """Catalog key of the title a chapter page shows ("ch01.title"; the sidebar's, title_key, may be shorter);
        other pages show their nav title."""
        return f"{self.key}.title" if self.section == "course" else self.title_key

    @property
    def widget_prefix(self):
        """Every widget on the page has a key that starts with this."""
        return f"{self.key}_"


PAGES = (
    PageEntry("ch01", "app_pages/ch01_seq2seq.py", "nav.ch01", "course", "seq2seq", ":material/route:"),
    PageEntry(
        "ch02", "app_pages/ch02_attention_cues.py", "nav.ch02", "course",
        "attention-cues", ":material/visibility:",
    ),
    PageEntry("ch03", "app_pages/ch03_scoring.py", "nav.ch03", "course", "scoring", ":material/functions:"),
    PageEntry("ch04", "app_pages/ch04_bahdanau.py", "nav.ch04", "course", "bahdanau", ":material/translate:"),
    PageEntry("ch05", "app_pages/ch05_multihead.py", "nav.ch05", "course", "multi-head", ":material/view_column:"),
    PageEntry(
        "ch06", "app_pages/ch06_self_attention.py", "nav.ch06", "course",
        "self-attention", ":material/swap_horiz:",
    ),
    PageEntry("ch07", "app_pages/ch07_transformer.py", "nav.ch07", "course", "transformer", ":material/stacks:"),
    PageEntry("ch08", "app_pages/ch08_history.py", "nav.ch08", "course", "history", ":material/history_edu:"),
    PageEntry("ch09", "app_pages/ch09_review.py", "nav.ch09", "course", "review", ":material/fact_check:"),
    PageEntry("ch10", "app_pages/ch10_variants.py", "nav.ch10", "course", "variants", ":material/alt_route:"),
    PageEntry("ch11", "app_pages/ch11_flash.py", "nav.ch11", "course", "flash-attention", ":material/grid_view:"),
    PageEntry("ch12", "app_pages/ch12_kv_cache.py", "nav.ch12", "course", "kv-cache", ":material/memory:"),
    PageEntry("ch13", "app_pages/ch13_sinks.py", "nav.ch13", "course", "attention-sinks", ":material/anchor:"),
    PageEntry("ch14", "app_pages/ch14_sampling.py", "nav.ch14", "course", "sampling", ":material/casino:"),
    PageEntry("ch15", "app_pages/ch15_induction.py", "nav.ch15", "course", "induction-heads", ":material/repeat:"),
    PageEntry("demo_translate", "app_pages/demo_translate.py", "demos.nav.translate", "demos", "translate",
              ":material/g_translate:"),
    PageEntry("demo_bottleneck", "app_pages/demo_bottleneck.py", "demos.nav.bottleneck", "demos",
              "bottleneck-measured", ":material/bar_chart:"),
    PageEntry("demo_inside", "app_pages/demo_inside.py", "demos.nav.inside", "demos", "transformer-inside",
              ":material/layers:"),
    PageEntry("demo_decoding", "app_pages/demo_decoding.py", "demos.nav.decoding", "demos", "pieces-beams-bleu",
              ":material/scoreboard:"),
    PageEntry("demo_mine", "app_pages/demo_mine.py", "demos.nav.mine", "demos", "my-implementation",
              ":material/code:"),
    PageEntry("lab", "app_pages/lab.py", "nav.lab", "lab", "training-lab", ":material/model_training:"),
    PageEntry("practice", "app_pages/practice.py", "nav.practice", "practice", "practice", ":material/task_alt:"),
    PageEntry("notes", "app_pages/notes.py", "nav.notes", "notes", "notes", ":material/edit_note:"),
)

BY_KEY = {page.key: page for page in PAGES}


def get(key):
    """The page entry with this key; a clear error listing the valid keys otherwise."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise ValueError(f"unknown page {key!r}; use one of {', '.join(BY_KEY)}") from None


def chapters():
    """The course chapters, in order."""
    return [page for page in PAGES if page.section == "course"]


def by_section(pages=PAGES):
    """{section: [entries]} in SECTIONS order, leaving out empty sections."""
    grouped = {section: [p for p in pages if p.section == section] for section in SECTIONS}
    return {section: entries for section, entries in grouped.items() if entries}


SELF_STUDY_ONLY = ("demo_mine",)  # runs the local exercises/ folder: a class server leaves it out


def existing(pages=PAGES):
    """The entries whose page file exists (a chapter being written may not yet)."""
    return [page for page in pages if page.file.is_file()]
