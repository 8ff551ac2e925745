"""The Compare page through AppTest (no browser): two generated versions under the root, B
picked, both read as diff jobs; the records added, removed and changed, the features and the
new class shown, each figure a link to the records behind it (a record, or a filter the
sidebar applies) that finds exactly those records; another key; the page registered in the
Quality section."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlparse

import pytest
from app_support import no_crash, page_script, start_app

from browser_app.generators.versions import Versions, write_versions
from codec.example import decode
from codec.filters import run_filter


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    return write_versions(tmp_path_factory.mktemp("app-versions"), 100, added=6, max_side=32)


def _page(monkeypatch: pytest.MonkeyPatch, v: Versions):
    root = v.a.parent
    return start_app(monkeypatch, root, str(v.a), timeout=60, script=page_script("compare"))


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _links(text: str) -> list[tuple[str, str]]:
    return re.findall(r"\[([^\]]*)\]\((\./\?[^)\s]*)\)", text)


def test_the_changes_with_links_to_their_records(monkeypatch, versions: Versions) -> None:
    at = _page(monkeypatch, versions)
    no_crash(at)
    box = at.selectbox[0]
    assert box.value == "v2.tfrecord"
    text = _markdown(at)
    assert f"**Added** (in B only): [{len(versions.added)} records]" in text
    assert f"**Removed** (in A only): [{len(versions.removed)} records]" in text
    assert "Joined by **image/source\\_id**" in text  # escaped as Markdown
    links = _links(text)
    # every link names a file and either a record or a selection
    for _, url in links:
        q = parse_qs(urlparse(url).query)
        assert q["file"][0] in ("v1.tfrecord", "v2.tfrecord")
        assert "record" in q or q["sel"][0].startswith(("filter:", "damaged"))
    # the Added link selects exactly the added records of B
    added = next(url for label, url in links if label == f"{len(versions.added)} records")
    q = parse_qs(urlparse(added).query)
    assert q["file"] == ["v2.tfrecord"]
    expr = q["sel"][0].removeprefix("filter:")
    assert run_filter(versions.records_b, expr).matches == versions.added
    # the caption's changed records, in A and in B
    a_url = next(u for label, u in links if label == "in A" and "caption" not in u)
    assert a_url  # some link to A's changed records exists
    caption = next(line for line in text.splitlines() if line.startswith("- **caption** changed"))
    pair = _links(caption)
    expr_a = parse_qs(urlparse(pair[0][1]).query)["sel"][0].removeprefix("filter:")
    expr_b = parse_qs(urlparse(pair[1][1]).query)["sel"][0].removeprefix("filter:")
    assert run_filter(versions.records_a, expr_a).matches == [a for a, _ in versions.edited]
    assert run_filter(versions.records_b, expr_b).matches == [b for _, b in versions.edited]
    # the features: where the label's shares differ most, linked to the records holding it
    table = next(m.value for m in at.markdown if m.value.startswith("| Feature |"))
    label_row = next(r for r in table.splitlines() if r.startswith("| label |"))
    value = int(label_row.rsplit("|", 2)[-2].split(":")[0])
    share_links = [u for _, u in _links(label_row) if unquote(u).endswith(f"label == {value}")]
    assert len(share_links) == 2  # in A and in B
    for url, recs in zip(share_links, (versions.records_a, versions.records_b)):
        expr = parse_qs(urlparse(url).query)["sel"][0].removeprefix("filter:")
        want = [
            i for i, p in enumerate(recs) if list(decode(p).features["label"].values) == [value]
        ]
        assert run_filter(recs, expr).matches == want
    assert "| legacy/flag | gone from B |" in table
    assert "| image/quality | new in B |" in table
    assert "**label** new in B" in text


def test_another_key_joins_by_it(monkeypatch, versions: Versions) -> None:
    at = _page(monkeypatch, versions)
    key = next(s for s in at.selectbox if s.label == "Join records by")
    assert "image/filename" in key.options
    key.set_value("image/filename").run()
    no_crash(at)
    assert "Joined by **image/filename**" in _markdown(at)


def test_registered_in_the_quality_section() -> None:
    from browser_app.ui.app import PAGES

    spec = next(p for p in PAGES if p.url_path == "compare")
    assert spec.title == "Compare" and spec.section == "Quality"


def test_the_file_beside_the_open_one_is_offered_first(monkeypatch, tmp_path) -> None:
    """In a root holding many datasets (the sample), the Compare page opened on
    versions/v1.tfrecord offers versions/v2.tfrecord, the file beside it, first — not the
    first dataset of the root's listing."""
    from browser_app.sample_data import write_sample

    write_sample(tmp_path)
    at = start_app(
        monkeypatch,
        tmp_path,
        str(tmp_path / "versions" / "v1.tfrecord"),
        timeout=60,
        script=page_script("compare"),
    )
    no_crash(at)
    box = next(s for s in at.selectbox if s.label.startswith("Compare"))
    assert box.options[0] == "versions/v2.tfrecord", box.options[:3]
    assert box.value == "versions/v2.tfrecord"
