"""Checks of a page as it first opens, run in tests/test_browser.py's one visit per page and language.

Every chart followed by its one-sentence summary and an expander with its numbers as a table, and named by its
title and where its summary is; the diagrams' text size and arrows; heatmap labels that fit and contrast with their own cell;
the Chinese UI in Chinese. They need the page as it opens (no widget moved), so the visit runs them before it
moves sliders; each was a test of its own that opened the page again (tests/test_browser_chart_text.py,
tests/test_browser_readable.py hold the checks that move widgets or the keyboard).
"""

from course.app import grading_client
from course.common.charts import contrast_ratio
from course.common.i18n import t
from tests.browser_support import heatmap_labels, main_text, rgb, wait_for, wait_for_text

MIN_CONTRAST = 4.5  # WCAG AA for text
# The pages that draw charts as they open (the tabs of ch03 and ch06 draw theirs when opened).
CHART_PAGES = ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch10", "ch11", "demo_translate",
               "demo_bottleneck", "demo_inside", "lab")

# For each visible chart: its title (none when drawn on a canvas), the caption and expander summary that follow
# it in its container, the summary's tab index, and the chart's accessible name (the spec's description).
CHART_TEXT_JS = """
const out = [];
for (const chart of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
  if (!chart.checkVisibility()) continue;
  let box = chart;
  while (box.parentElement && box.parentElement.children.length < 3) box = box.parentElement;
  const after = [...box.parentElement.children].slice([...box.parentElement.children].indexOf(box) + 1);
  const caption = after.length ? after[0].querySelector('[data-testid="stCaptionContainer"]') : null;
  const summary = after.length > 1 ? after[1].querySelector('[data-testid="stExpander"] summary') : null;
  const svg = chart.querySelector('svg'), title = svg && svg.querySelector('[aria-roledescription="title"]');
  out.push({title: title ? title.textContent : '', canvas: !svg, caption: caption ? caption.innerText : null,
            expander: summary ? summary.innerText : null, tabindex: summary ? summary.tabIndex : null,
            name: chart.getAttribute('aria-label')});
}
return out;
"""


def vega_charts(driver):
    """The page's Vega-Lite chart elements."""
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')


def drawn_charts(driver):
    """CHART_TEXT_JS's list, once every chart on the page has drawn its SVG and has its name."""
    from selenium.webdriver.common.by import By

    def drawn(d):
        charts = [c for c in vega_charts(d) if c.is_displayed()]
        return charts and all(c.find_elements(By.CSS_SELECTOR, "svg, canvas") for c in charts)  # big ones: canvas

    wait_for(driver, drawn, "the page's charts were not drawn")
    found = []

    def named(d):  # a chart's name is set after it draws (it lagged under load)
        found[:] = d.execute_script(CHART_TEXT_JS)
        return all(c["name"] for c in found)

    wait_for(driver, named, lambda: f"a chart has no accessible name: {[c for c in found if not c['name']]}", 30)
    return found


def check_chart_texts(driver, lang):
    """Every drawn chart is followed by its summary and an expander with its table, and its accessible name is its
    title and where its summary is (words that stay while a slider moves, so the chart updates in place)."""
    charts = drawn_charts(driver)
    prefix = t("charts.table", lang, title="")
    untitled = t("charts.untitled", lang)
    before, after = t("charts.name", lang, title="\0").split("\0")

    def named_by_its_title(c):  # "{title}: its summary ... follow": the title with which its summary begins
        name = c["name"] or ""
        title = name[len(before):len(name) - len(after)]
        return name.startswith(before) and name.endswith(after) and title and c["caption"].startswith(title)

    bad = [c for c in charts
           if not c["caption"] or not (c["canvas"] or c["caption"].startswith(c["title"] or untitled))
           or not c["expander"] or prefix.strip() not in c["expander"] or c["tabindex"] < 0
           or not named_by_its_title(c)]
    assert charts and bad == [], f"charts without their summary or table: {bad}"


def unreadable(labels):
    """The labels that overflow their cell or contrast less than MIN_CONTRAST with it."""
    bad = []
    for label in labels:
        if label["cell_fill"] is None:
            bad.append((label["text"], "not on a cell"))
            continue
        ratio = contrast_ratio(rgb(label["fill"]), rgb(label["cell_fill"]))
        if ratio < MIN_CONTRAST or label["width"] > label["cell_width"] - 2:
            bad.append((label["text"], label["fill"], label["cell_fill"], round(ratio, 2),
                        round(label["width"], 1), round(label["cell_width"], 1)))
    return bad


def check_heatmap_contrast(driver, lang):
    """Chapters 4 and 6: labels went white at ~0.17 on pale cells (a mean rule, not the cell's colour)."""
    def labelled(d):  # heatmaps: most labels sit on a cell (a bar chart's labels sit above its bars)
        charts = (heatmap_labels(d, c) for c in vega_charts(d))
        return [labels for labels in charts if labels and sum(x["cell_fill"] is not None for x in labels) > len(labels) / 2]

    found = wait_for(driver, labelled, "no heatmap with value labels")
    colours = {label["fill"] for labels in found for label in labels}
    assert len(colours) == 2, f"expected black and white labels, got {colours}"  # both rules were exercised
    assert [bad for labels in found for bad in unreadable(labels)] == []


DIAGRAM_JS = """
const svg = arguments[0].querySelector('svg');
const fonts = [...svg.querySelectorAll('text')].map(e => e.getBoundingClientRect().height);
const edges = [...svg.querySelectorAll('g.edge path')].map(p => {
  const length = p.getTotalLength(), matrix = p.getScreenCTM(), points = [];
  for (let i = 0; i <= 40; i++) {
    const q = p.getPointAtLength(length * i / 40);
    points.push([q.x * matrix.a + q.y * matrix.c + matrix.e, q.x * matrix.b + q.y * matrix.d + matrix.f]);
  }
  return points;
});
const clusters = [...svg.querySelectorAll('g.cluster')].map(c => {  // each stack's label: all its lines
  const boxes = [...c.querySelectorAll('text')].map(e => e.getBoundingClientRect());
  return [[...c.querySelectorAll('text')].map(e => e.textContent).join(' '),
          Math.min(...boxes.map(b => b.left)), Math.min(...boxes.map(b => b.top)),
          Math.max(...boxes.map(b => b.right)), Math.max(...boxes.map(b => b.bottom))]; });
return {fonts: fonts, edges: edges, clusters: clusters};
"""


def segments_cross(a, b, c, d):
    """True if segment ab properly crosses segment cd."""
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def crossings(edges, trim=3):
    """Pairs of edges (by index) whose polylines cross, away from their ends (edges meet at a node)."""
    found = []
    for i, first in enumerate(edges):
        for j in range(i + 1, len(edges)):
            second = edges[j]
            if any(segments_cross(first[k], first[k + 1], second[m], second[m + 1])
                   for k in range(trim, len(first) - 1 - trim) for m in range(trim, len(second) - 1 - trim)):
                found.append((i, j))
    return found


def diagram(driver, index=0):
    """Text heights, edge polylines and stack labels (DIAGRAM_JS) of the page's `index`-th Graphviz diagram."""
    from selenium.webdriver.common.by import By

    graphs = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="stGraphVizChart"] svg g.edge')
                      and d.find_elements(By.CSS_SELECTOR, '[data-testid="stGraphVizChart"]'), "no diagram drawn")
    return driver.execute_script(DIAGRAM_JS, graphs[index])


def check_diagram_text_and_arrows(driver, lang):
    """Chapter 1's diagram: text at least 12 px high (was ~8 px), and no two arrows cross."""
    drawn = diagram(driver)
    assert min(drawn["fonts"]) >= 12, f"diagram text {min(drawn['fonts']):.1f} px high"
    assert len(drawn["edges"]) >= 20 and crossings(drawn["edges"]) == []


def check_stack_labels_clear(driver, lang):
    """Chapter 7's diagram: no arrow runs through the label of either stack."""
    drawn = diagram(driver)
    assert len(drawn["clusters"]) == 2
    for text, left, top, right, bottom in drawn["clusters"]:
        through = [i for i, edge in enumerate(drawn["edges"])
                   if any(left - 2 <= x <= right + 2 and top - 2 <= y <= bottom + 2 for x, y in edge)]
        assert through == [], f"arrows {through} run through the label {text!r}"


def check_shape_table_language(driver, lang):
    """Chapter 4's shape table names its tensors in the learner's language."""
    wait_for_text(driver, t("ch04.tensor.deep_out", lang))
    text = main_text(driver)
    assert t("ch04.tensor.query", lang) in text and "s_{t-1}" not in text
    if lang == "zh":  # the table's old English entries (the prose may gloss 深输出 as "deep output")
        assert "GRU output" not in text and "deep output tanh" not in text


def check_upload_limit(driver, lang):
    """Practice's upload box says the grader's real limit, not Streamlit's 200MB."""
    from selenium.webdriver.common.by import By

    wait_for_text(driver, t("practice.upload_file", lang, limit=grading_client.MAX_UPLOAD_MB))
    box = driver.find_element(By.CSS_SELECTOR, '[data-testid="stFileUploader"]').text
    assert "200MB" not in box and "1MB" in box.replace(" ", ""), box


# page key -> (name, check(driver, lang)) run on the page as it opens
PAGE_CHECKS = {key: [("charts followed by their summary and table", check_chart_texts)] for key in CHART_PAGES}
PAGE_CHECKS["ch01"].append(("diagram text and arrows", check_diagram_text_and_arrows))
PAGE_CHECKS["ch07"].append(("stack labels without arrows", check_stack_labels_clear))
PAGE_CHECKS["ch04"] += [("heatmap label contrast", check_heatmap_contrast),
                        ("shape table in the learner's language", check_shape_table_language)]
PAGE_CHECKS["ch06"].append(("heatmap label contrast", check_heatmap_contrast))
PAGE_CHECKS["practice"] = [("the upload box's real limit", check_upload_limit)]
