"""Root confinement: what the app may open, and what it refuses (with a reason)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser_app.paths import (
    PathRefused,
    expand_inside,
    is_pattern,
    list_tfrecords,
    relative_inside,
    relative_to_root,
    resolve_inside,
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    for name in ("a.tfrecord", "sub/b.tfrecord", ".hidden/c.tfrecord", "notes.txt"):
        (root / name).write_bytes(b"")
    for k in range(3):
        (root / "sub" / f"train-{k:05d}-of-00003.tfrecord").write_bytes(b"")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.tfrecord").write_bytes(b"")
    os.symlink(outside / "secret.tfrecord", root / "link_out.tfrecord")
    os.symlink(outside, root / "dir_out")
    os.symlink(root / "a.tfrecord", root / "link_in.tfrecord")
    return root


def test_relative_and_absolute_paths_inside(tree):
    real = os.path.realpath(tree / "sub" / "b.tfrecord")
    assert resolve_inside(tree, "sub/b.tfrecord") == real
    assert resolve_inside(tree, str(tree / "sub" / "b.tfrecord")) == real
    assert resolve_inside(tree, "./sub//b.tfrecord") == real
    # A path need not exist to be inside.
    assert resolve_inside(tree, "new.tfrecord").endswith("new.tfrecord")


def test_symlink_inside_the_root_is_followed(tree):
    assert resolve_inside(tree, "link_in.tfrecord") == os.path.realpath(tree / "a.tfrecord")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside/secret.tfrecord", "'..'"),
        ("sub/../../outside/secret.tfrecord", "'..'"),
        ("sub/..", "'..'"),
        ("/etc/passwd", "outside the root"),
        ("link_out.tfrecord", "symlink"),
        ("dir_out/secret.tfrecord", "symlink"),
        ("", "no path"),
        ("a\x00b", "NUL"),
    ],
)
def test_refused(tree, path, reason):
    with pytest.raises(PathRefused, match=reason):
        resolve_inside(tree, path)


def test_absolute_path_of_a_sibling_folder_with_the_same_prefix(tree, tmp_path):
    sibling = tmp_path / "root2"
    sibling.mkdir()
    with pytest.raises(PathRefused, match="outside the root"):
        resolve_inside(tree, str(sibling / "x.tfrecord"))


def test_expand_inside_patterns(tree):
    shards = expand_inside(tree, "sub/train-*-of-00003.tfrecord")
    assert [Path(p).name for p in shards] == [f"train-{k:05d}-of-00003.tfrecord" for k in range(3)]
    assert [Path(p).name for p in expand_inside(tree, "sub/train.tfrecord@3")] == [
        f"train-{k:05d}-of-00003.tfrecord" for k in range(3)
    ]
    assert Path(expand_inside(tree, "a.tfrecord")[0]).name == "a.tfrecord"
    # A folder opens the TFRecord files in it.
    assert len(expand_inside(tree, "sub")) == 4


def test_expand_inside_refuses_escapes(tree):
    with pytest.raises(PathRefused, match="symlink"):
        expand_inside(tree, "link_out*.tfrecord")  # every match leads outside
    with pytest.raises(PathRefused):
        expand_inside(tree, "../outside/*.tfrecord")
    with pytest.raises(PathRefused):
        expand_inside(tree, "dir_out/*.tfrecord")
    with pytest.raises(FileNotFoundError, match="no file matches"):
        expand_inside(tree, "nothing-*.tfrecord")
    with pytest.raises(FileNotFoundError, match="no such file"):
        expand_inside(tree, "typo.tfrecord")


def test_is_pattern():
    assert is_pattern("a/*.tfrecord") and is_pattern("train@10") and is_pattern("x[0-3]")
    assert not is_pattern("plain/file.tfrecord") and not is_pattern("user@host.tfrecord")


def test_relative_to_root(tree, tmp_path):
    assert relative_to_root(tree, tree / "sub" / "b.tfrecord") == "sub/b.tfrecord"
    assert relative_to_root(tree, tree) == "."
    outside = tmp_path / "outside" / "secret.tfrecord"
    assert relative_to_root(tree, outside) == os.path.realpath(outside)


def test_relative_inside(tree, tmp_path):
    assert relative_inside(tree, tree / "sub" / "b.tfrecord") == "sub/b.tfrecord"
    assert relative_inside(tree, tree) == "."
    assert relative_inside(tree, tree / "link_in.tfrecord") == "a.tfrecord"
    assert relative_inside(tree, tree / "link_out.tfrecord") is None
    assert relative_inside(tree, tmp_path / "outside" / "secret.tfrecord") is None


def test_list_tfrecords(tree):
    entries, truncated = list_tfrecords(tree)
    names = [e.rel for e in entries]
    assert not truncated
    assert "a.tfrecord" in names and "sub/b.tfrecord" in names
    assert "link_in.tfrecord" in names
    assert "link_out.tfrecord" not in names  # leads outside the root
    assert not any(n.startswith(".hidden") for n in names)
    assert not any("dir_out" in n for n in names)  # symlinked folders are not walked
    assert "notes.txt" not in names
    assert names == sorted(names)


def test_list_tfrecords_search_and_limits(tree):
    entries, _ = list_tfrecords(tree, "TRAIN")
    assert len(entries) == 3
    entries, _ = list_tfrecords(tree, "sub/*-of-00003.tfrecord")
    assert len(entries) == 3
    entries, truncated = list_tfrecords(tree, limit=2)
    assert len(entries) == 2 and truncated
    entries, truncated = list_tfrecords(tree, max_visits=1)
    assert truncated


def _escaping_tree(tmp_path: Path, inside: int, outside: int) -> tuple[Path, Path]:
    """A root with ``inside`` shard files and ``outside`` links to files outside it, all
    matching ``data/part-*.tfrecord``; and the outside folder."""
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    secret = tmp_path / "secret-place"
    secret.mkdir()
    for k in range(inside):
        (root / "data" / f"part-{k:03d}.tfrecord").write_bytes(b"")
    for k in range(outside):
        target = secret / f"hidden-{k}.tfrecord"
        target.write_bytes(b"")
        os.symlink(target, root / "data" / f"part-{inside + k:03d}.tfrecord")
    return root, secret


@pytest.mark.parametrize(("inside", "outside"), [(1, 1), (3, 2), (2, 5)])
def test_a_glob_skips_escaping_links_with_a_note(tmp_path, inside, outside):
    root, secret = _escaping_tree(tmp_path, inside, outside)
    notes: list[str] = []
    for spec in ("data/part-*.tfrecord", "data"):
        notes.clear()
        files = expand_inside(root, spec, on_skip=notes.append)
        assert [Path(f).name for f in files] == [f"part-{k:03d}.tfrecord" for k in range(inside)]
        [note] = notes
        assert f"{outside} file" in note and "leads outside the root" in note
        assert "data/part-" in note  # the link is named...
        assert str(secret) not in note and "hidden" not in note  # ...never where it leads
    # Without a listener the links are still left out.
    assert len(expand_inside(root, "data/part-*.tfrecord")) == inside


def test_a_glob_of_escaping_links_only_is_refused_without_naming_the_targets(tmp_path):
    root, secret = _escaping_tree(tmp_path, 0, 3)
    for spec in ("data/part-*.tfrecord", "data", "data/part-001.tfrecord", "*/part-00[0-2]*"):
        with pytest.raises(PathRefused, match="outside the root") as caught:
            expand_inside(root, spec)
        assert str(secret) not in str(caught.value) and "hidden" not in str(caught.value)


def test_an_escaping_folder_link_in_the_middle_of_a_glob_is_skipped(tmp_path):
    root, secret = _escaping_tree(tmp_path, 2, 0)
    os.symlink(secret, root / "elsewhere")
    (secret / "hidden.tfrecord").write_bytes(b"")
    notes: list[str] = []
    files = expand_inside(root, "*/*.tfrecord", on_skip=notes.append)
    assert len(files) == 2 and len(notes) == 1
    assert "elsewhere/hidden.tfrecord" in notes[0] and str(secret) not in notes[0]


# -- URL roots ---------------------------------------------------------------------------------

URL_ROOT = "s3://bucket/data"


@pytest.mark.parametrize(
    ("spec", "url"),
    [
        ("train.tfrecord", "s3://bucket/data/train.tfrecord"),
        ("./sub//part-00000-of-00002", "s3://bucket/data/sub/part-00000-of-00002"),
        ("s3://bucket/data/x/y.tfrecord", "s3://bucket/data/x/y.tfrecord"),
        ("s3://bucket/data", "s3://bucket/data"),
        (".", "s3://bucket/data"),
    ],
)
def test_url_root_resolves_relative_specs_and_urls_inside(spec, url):
    assert resolve_inside(URL_ROOT, spec) == url


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("s3://bucket/data2/x.tfrecord", "outside the root s3://bucket/data"),
        ("s3://bucket/x.tfrecord", "outside the root"),
        ("s3://other/data/x.tfrecord", "outside the root"),
        ("gs://bucket/data/x.tfrecord", "outside the root"),
        ("s3://bucket/data/../secret/x", "'..'"),
        ("../x.tfrecord", "'..'"),
        ("/etc/passwd", "a local path"),
        ("file:///etc/passwd", "a local path"),
        ("", "no path"),
    ],
)
def test_url_root_refuses_what_lies_outside(spec, reason):
    with pytest.raises(PathRefused, match=reason):
        resolve_inside(URL_ROOT, spec)
    with pytest.raises(PathRefused, match=reason):
        expand_inside(URL_ROOT, spec)  # refused before anything is listed


@pytest.mark.parametrize(
    "pattern",
    ["s3://bucket/da*/x.tfrecord", "s3://bucket/*", "s3://bucket/dat?/x", "s3://bucket/data@4"],
)
def test_a_url_pattern_must_stay_inside_before_it_is_listed(pattern):
    """A wildcard in the part the root fixes could match beside the root: refused without
    listing (no server is running here: a listing would fail differently)."""
    with pytest.raises(PathRefused, match="outside the root"):
        expand_inside(URL_ROOT, pattern)


def test_a_local_root_refuses_urls_and_says_how_to_open_them(tree):
    for url in ("s3://bucket/x.tfrecord", "https://host/a.tfrecord?X-Amz-Signature=abc"):
        with pytest.raises(PathRefused) as caught:
            resolve_inside(tree, url)
        text = str(caught.value)
        assert "--root" in text and "URLs are not opened under the local root folder" in text
        assert "X-Amz-Signature" not in text and "abc" not in text
        with pytest.raises(PathRefused):
            expand_inside(tree, url)
    # file:// is a local path.
    assert resolve_inside(tree, f"file://{tree}/a.tfrecord") == os.path.realpath(
        tree / "a.tfrecord"
    )


def test_url_relative_forms():
    assert relative_inside(URL_ROOT, "s3://bucket/data/sub/x.tfrecord") == "sub/x.tfrecord"
    assert relative_inside(URL_ROOT, "s3://bucket/data/") == "."
    assert relative_inside(URL_ROOT, "s3://bucket/other/x") is None
    assert relative_inside("/tmp", "s3://bucket/data/x") is None
    # A signed URL keeps its query: it is never shortened into a form that loses it.
    signed = "https://host/data/x.tfrecord?X-Amz-Signature=abc"
    assert relative_inside("https://host/data", signed) is None
    assert relative_to_root("https://host/data", signed) == "https://host/data/x.tfrecord?…"
    assert relative_to_root(URL_ROOT, "s3://bucket/elsewhere/x") == "s3://bucket/elsewhere/x"


def test_url_patterns_and_queries():
    assert is_pattern("s3://bucket/data/train-*-of-00004") and is_pattern("gs://b/x@16")
    assert is_pattern("s3://bucket/data/x?.tfrecord")
    assert not is_pattern("https://host/x.tfrecord?sig=1&X-Amz-Date=2")
