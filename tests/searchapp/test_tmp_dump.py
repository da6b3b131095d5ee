import pytest
from corpora import make_volcano
pytestmark = pytest.mark.django_db
def test_dump(client):
    v = make_volcano()
    for view in ("changes", "full", "shared"):
        r = client.get(f"/documents/{v.original.pk}/why/{v.corrected.pk}/?view={view}")
        open(f"/tmp/rd/why-{view}.html", "w").write(r.content.decode())
        print(view, r.status_code)
    r = client.get(f"/documents/{v.original.pk}/why/{v.corrected.pk}/?view=changes", HTTP_HX_REQUEST="true")
    open("/tmp/rd/why-frag.html", "w").write(r.content.decode())
    r = client.get(f"/documents/{v.original.pk}/why/{v.unrelated.pk}/")
    open("/tmp/rd/why-unrel.html", "w").write(r.content.decode())
def test_dump_compare(client):
    v = make_volcano(stories=12)
    r = client.get("/compare/?q=volcano")
    open("/tmp/rd/compare.html", "w").write(r.content.decode())
    r = client.get("/compare/?q=Grindavik")
    open("/tmp/rd/compare-g.html", "w").write(r.content.decode())
