import pytest
pytestmark = pytest.mark.browser
def test_shots(new_page, live_server, volcano_corpus):
    v = volcano_corpus
    for name, vp in (("desk", {"width": 1366, "height": 900}), ("phone", {"width": 390, "height": 844})):
        page = new_page(viewport=vp)
        for view in ("changes", "full", "shared"):
            page.goto(f"{live_server.url}/documents/{v.original.pk}/why/{v.corrected.pk}/?view={view}")
            page.screenshot(path=f"/tmp/rd/{name}-why-{view}.png", full_page=True)
        page.goto(f"{live_server.url}/documents/{v.evil.pk}/why/{v.evil_copy.pk}/?view=full")
        page.screenshot(path=f"/tmp/rd/{name}-why-evil.png", full_page=True)
        page.goto(f"{live_server.url}/compare/?q=volcano")
        print(name, page.evaluate("document.documentElement.scrollHeight"))
        page.screenshot(path=f"/tmp/rd/{name}-compare.png", full_page=True)
