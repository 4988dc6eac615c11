"""Small Streamlit helpers shared by every page: language, translated text, footers.

Imported by pages only (it imports Streamlit); texts come from course.common.i18n,
the learner's results and the pages of the mode from course.app.learner.
"""

import json

import streamlit as st

from course.app import learner
from course.common import exercise_index
from course.common.exercise_index import status_of
from course.common.i18n import LANG_NAMES, LANGS, lang_from_locale, t

LANG_KEY = "app_lang"
LANG_OPTIONS = ("zh", "en")  # the order shown in the switch


_PAGE_CACHES = {}  # (function, options) -> its st.cache_data wrapper, built once per process


def page_cache(func, **options):
    """st.cache_data(**options)(func), built once per server process. A page script runs again on every rerun,
    and building the wrapper anew reads and hashes the function's source each time (seven of them cost ch03 about
    3 ms a rerun); the wrapper finds its entries by that hash, so the one built first serves every later run."""
    key = (func, tuple(sorted(options.items())))
    if key not in _PAGE_CACHES:
        _PAGE_CACHES[key] = st.cache_data(**options)(func)
    return _PAGE_CACHES[key]


def browser_lang():
    """The language the browser's locale asks for ('en' when unknown)."""
    try:
        locale = st.context.locale
    except Exception:  # outside a browser session (bare mode, old Streamlit)
        locale = None
    return lang_from_locale(locale)


def root_page(first):
    """A hidden default page for the root URL that switches to `first`.

    Streamlit serves its default page at "/" only, so a bookmark of the first
    chapter's own URL (/seq2seq) would show "Page not found". With this page as
    the default, every listed page, the first included, keeps its own URL.
    """
    def open_first():
        st.switch_page(first, query_params=st.query_params.to_dict())

    return st.Page(open_first, title=first.title, url_path="start", default=True, visibility="hidden")


def current_lang():
    """The learner's chosen language; the browser's locale until they choose."""
    lang = st.session_state.get(LANG_KEY)
    if lang in LANGS:
        return lang
    return browser_lang()


def tr(key, **fields):
    """The text for `key` in the current language."""
    return t(key, current_lang(), **fields)


def labeler(key_template):
    """A format_func for option widgets: value -> text of key_template.format(value).

    The language is fixed when the widget is drawn, so the labels stay
    consistent even when Streamlit calls the function outside the script run.
    """
    lang = current_lang()
    return lambda value: t(key_template.format(value), lang)


def prose(*keys):
    """Render catalog texts in order: '*heading' keys as headers, '*formula*' as LaTeX, others as Markdown."""
    for key in keys:
        name = key.rsplit(".", 1)[-1]
        if name.startswith("heading"):
            st.header(tr(key))
        elif "formula" in name:
            st.latex(tr(key))
        else:
            st.markdown(tr(key))


LANG_COOKIE = "attention_lab_lang"  # this browser's chosen language, so that a reload keeps it


def saved_lang():
    """The language this browser chose before (its cookie), or None."""
    try:
        lang = st.context.cookies.get(LANG_COOKIE)
    except Exception:  # outside a browser session
        lang = None
    return lang if lang in LANGS else None


def language_switch():
    """The sidebar radio 中文 / English; app.py renders it on every page so it persists. A new session
    (a reload) starts in the language this browser chose last, else in its locale's."""
    if st.session_state.get(LANG_KEY) not in LANGS:
        st.session_state[LANG_KEY] = saved_lang() or browser_lang()
    lang = st.sidebar.radio(
        tr("app.language"), LANG_OPTIONS, key=LANG_KEY,
        format_func=LANG_NAMES.get, horizontal=True, persist_state="session",
    )
    # The browser's cookie follows the switch on every run (st.context.cookies is only the session's first
    # value, so comparing with it misses a switch back). A script runs when its element is mounted, not when
    # its text changes in place: the two languages put it at different depths, so each change mounts it anew.
    holder = st.sidebar.container(key="app_lang_cookie")
    if lang == LANGS[0]:
        holder = holder.container()
    holder.html(f'<script>document.cookie = "{LANG_COOKIE}={lang}; path=/; max-age=31536000; SameSite=Lax";</script>',
                unsafe_allow_javascript=True)  # lang is one of LANGS
    return current_lang()


# Streamlit Material icons (a web font Streamlit ships), coloured; emoji would need an emoji
# font, which Debian images and many learners' machines lack (they show as empty boxes).
STATUS_ICONS = {
    "passed": ":green[:material/check_circle:]",
    "failed": ":red[:material/cancel:]",
    "not_graded": ":gray[:material/radio_button_unchecked:]",
    "not_written": ":gray[:material/edit_note:]",
    "error": ":orange[:material/warning:]",
    "blocked": ":gray[:material/lock:]",
}
FAILED_CHECK_ICON = STATUS_ICONS["failed"]


def status_label(status):
    """Icon and translated word for an exercise status, as Markdown (text, labels, metrics)."""
    return f"{STATUS_ICONS.get(status, '')} {tr('app.status.' + status)}".strip()


def status_text(status):
    """The translated word for an exercise status, for table cells (which draw no Markdown)."""
    return tr("app.status." + status)


def progress_summary():
    """Sidebar bar of the exercises the current learner passed -> (passed, total); a class visitor: None."""
    current = learner.current()
    if current.anonymous:
        return None
    results = current.results()
    total = len(exercise_index.EXERCISES)
    passed = sum(status_of(ex.id, results) == "passed" for ex in exercise_index.EXERCISES)
    st.sidebar.progress(passed / total, text=tr("app.progress", passed=passed, total=total))
    return passed, total


TOPICS = {  # a long chapter's topics, one tab each (catalog keys ui.tabs.<page>.<topic>)
    "ch03": ("mask", "allocation", "scorers", "scale"),
    "ch06": ("roles", "cost", "order", "encoding", "relative", "scale"),
}


def topic_tabs(page_key):
    """The translated tab labels of a long chapter's topics, in TOPICS order."""
    return [tr(f"ui.tabs.{page_key}.{topic}") for topic in TOPICS[page_key]]


def remembered_tabs(page_key):
    """st.tabs of a long chapter's topics, reopened on the topic last chosen (after another page, or a
    language switch: the topic is kept, not its label). Widget key `<page>_tab`."""
    topics, labels = TOPICS[page_key], topic_tabs(page_key)
    key, saved = f"{page_key}_tab", f"{page_key}_tab_topic"  # the second is plain session state, kept across pages

    def remember():
        if st.session_state.get(key) in labels:
            st.session_state[saved] = topics[labels.index(st.session_state[key])]

    topic = st.session_state.get(saved)
    default = labels[topics.index(topic)] if topic in topics else labels[0]
    return st.tabs(labels, default=default, key=key, on_change=remember)


def chapter_footer(*ex_ids):
    """End of a chapter page: each exercise's status for the current learner and a link to Practice."""
    st.divider()
    current = learner.current()
    results = current.results()
    practice = current.page("practice")
    for ex_id in ex_ids:
        exercise = exercise_index.get(ex_id)
        record = results.get(ex_id) or {}
        status = status_of(ex_id, results)
        st.markdown(tr(
            "app.footer", ex_id=ex_id, title=tr(f"exercises.{ex_id}.title"),
            file=f"exercises/{exercise.filename}", status=status_label(status),
        ))
        if status != "not_graded" and exercise_index.saved_score(record) is not None:
            st.caption(tr("app.footer_score", score=f"{100 * exercise_index.saved_score(record):.0f}"))
        st.page_link(
            practice.path, label=tr("app.footer_link", ex_id=ex_id),
            icon=":material/task_alt:", query_params={"ex": ex_id},
        )


def next_chapter(this_key, next_key):
    """A link to the next chapter's page, labelled by this chapter's `<this_key>.next` text."""
    st.page_link(learner.current().page(next_key).path, label=tr(f"{this_key}.next"), icon=":material/arrow_forward:")


# A focus ring on everything the keyboard reaches: Streamlit's own is a faint background on many
# widgets. Radios, checkboxes and toggles hide their <input>: their label carries the ring.
# No "<" inside the CSS: st.html's sanitiser drops a style block whose text looks like markup.
FOCUS_CSS = """<style>
:is(a, button, input, textarea, select, summary, [role="tab"], [role="slider"], [role="button"],
    [role="combobox"], [role="option"], [role="switch"], [tabindex]:not([tabindex="-1"])):focus-visible,
label:has(input:focus-visible), [data-testid="stSlider"] div:has(> input:focus-visible) {
  outline: 3px solid #1d4ed8 !important;
  outline-offset: 2px !important;
}
[role="tab"]:focus-visible { outline-offset: -3px !important; }  /* the tab bar clips what lies outside */
/* Text boxes clip the ring of their input field: draw it on the box around it instead. */
:is([data-baseweb="input"], [data-baseweb="textarea"], [data-baseweb="select"]):has(:is(input, textarea):focus-visible) {
  outline: 3px solid #1d4ed8 !important; outline-offset: 2px !important;
}
:is([data-baseweb="input"], [data-baseweb="textarea"], [data-baseweb="select"]) :is(input, textarea):focus-visible {
  outline: none !important;
}
[data-testid="stHeaderActionElements"] a:focus-visible {  /* a heading's link: shown at once when focused */
  opacity: 1 !important; transition: none !important;
}
/* Captions: Streamlit draws them at 60% opacity (contrast 2.7 on white); text needs 4.5 (WCAG AA): opaque, in a
   grey that keeps them quieter than the prose (6.4 on white). */
[data-testid="stCaptionContainer"] { opacity: 1 !important; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] :is(p, em, strong, li) { color: #5c5e68 !important; }
/* Page links in the main area (review cards, footers) wrap instead of ending in "…" mid-title. */
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] * {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
}
</style>"""

# Streamlit's "Skip to main content" link (the first Tab stop) is in English only: give it the
# learner's language, and keep it so if Streamlit redraws it.
SKIP_LINK_JS = """<script>
(() => {
  const text = %s;
  const apply = () => {
    const link = document.querySelector('[data-testid="stSkipToContent"]');
    if (link && link.textContent !== text) { link.textContent = text; link.setAttribute('aria-label', text); }
    return link;
  };
  if (window.attentionLabSkip) window.attentionLabSkip.disconnect();
  window.attentionLabSkip = new MutationObserver(apply);
  window.attentionLabSkip.observe(document.body, {childList: true, subtree: true, characterData: true});
  apply();
})();
</script>"""


# Streamlit's own English on the page (the file uploader's button and size line, the heading links' names):
# each text node or aria-label that reads exactly one of them gets the learner's language, again whenever
# Streamlit redraws it. The text nodes are changed in place (nodeValue), so React keeps the node it owns.
STREAMLIT_TEXT_JS = """<script>
(() => {
  const words = %s, size = %s;
  const translate = text => {
    const trimmed = text.trim();
    if (words[trimmed] !== undefined) return words[trimmed];
    for (const [pattern, wanted] of size) {
      const match = trimmed.match(new RegExp(pattern));
      if (match) return trimmed.replace(match[0], wanted.replace('{size}', match[1]));
    }
    return null;
  };
  const apply = () => {
    for (const root of document.querySelectorAll('[data-testid="stFileUploader"]')) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement.closest('[data-testid="stWidgetLabel"], [data-testid="stFileUploaderFile"]')) continue;
        const wanted = translate(node.nodeValue);
        if (wanted !== null && wanted !== node.nodeValue) node.nodeValue = wanted;
      }
    }
    for (const el of document.querySelectorAll('[data-testid="stFileUploaderDropzoneInput"], a[aria-label]')) {
      const wanted = words[el.getAttribute('aria-label')];
      if (wanted !== undefined && wanted !== el.getAttribute('aria-label')) el.setAttribute('aria-label', wanted);
    }
  };
  if (window.attentionLabTexts) window.attentionLabTexts.disconnect();
  window.attentionLabTexts = new MutationObserver(apply);
  window.attentionLabTexts.observe(document.body, {childList: true, subtree: true, characterData: true,
                                                   attributes: true, attributeFilter: ['aria-label']});
  apply();
})();
</script>"""
STREAMLIT_WORDS = ("upload", "browse", "drag_drop", "file_input", "heading_link")


def streamlit_text_js(lang):
    """STREAMLIT_TEXT_JS for `lang`: Streamlit's English words -> the catalog's, and the size lines' patterns."""
    words = {t(f"app.streamlit.{key}", "en"): t(f"app.streamlit.{key}", lang) for key in STREAMLIT_WORDS}
    size = [["^" + t(f"app.streamlit.{key}", "en").replace("{size}", r"(\S+)"), t(f"app.streamlit.{key}", lang)]
            for key in ("limit_per_file", "per_file")]
    return STREAMLIT_TEXT_JS % (json.dumps(words, ensure_ascii=False), json.dumps(size, ensure_ascii=False))


def window_title(page_title):
    """The browser tab's title for a page: its own title, then the app's name."""
    return tr("app.window_title", page=page_title)


def keyboard_aids():
    """A visible focus ring and the skip link in the learner's language, on every page (app.py calls it)."""
    st.html(FOCUS_CSS)
    st.sidebar.html(SKIP_LINK_JS % json.dumps(tr("app.skip_to_content"), ensure_ascii=False),
                    unsafe_allow_javascript=True)
    if current_lang() != "en":  # Streamlit's own words are English already
        st.sidebar.html(streamlit_text_js(current_lang()), unsafe_allow_javascript=True)
