"""What a parser takes is capped (size, depth, terms), with a message, whatever the input:
a label map upload, a filter in a link or on the command line, a JSON Lines import. The
peak memory of refusing the worst inputs is measured here."""

from __future__ import annotations

import subprocess
import tracemalloc
from pathlib import Path

import pytest
from cli_support import run_cli
from conftest import DATA

from codec.errors import DecodeError
from codec.filters import (
    MAX_FILTER_CHARS,
    MAX_FILTER_DEPTH,
    MAX_FILTER_TERMS,
    FilterSyntaxError,
    compile_filter,
)
from codec.labelmap import MAX_LABEL_MAP_BYTES, MAX_LABEL_MAP_ITEMS, parse_label_map_bytes

REPO = Path(__file__).resolve().parent.parent


def _peak(fn) -> int:  # type: ignore[no-untyped-def]
    """The peak of memory allocated by Python while ``fn`` runs (bytes)."""
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_label_map_upload_of_braces_is_refused_in_little_memory() -> None:
    data = b"{" * MAX_LABEL_MAP_BYTES  # the largest upload taken: 16 MiB of '{'

    def parse() -> None:
        with pytest.raises(DecodeError, match=r"unexpected '\{' at 0"):
            parse_label_map_bytes(data)

    peak = _peak(parse)
    print(f"peak for 16 MiB of '{{': {peak / 2**20:.1f} MiB")
    assert peak < 3 * MAX_LABEL_MAP_BYTES  # the text once decoded, not a token per byte


def test_a_label_map_of_endless_nesting_is_refused_in_little_memory() -> None:
    data = b"item " + b"{ a " * (MAX_LABEL_MAP_BYTES // 4 - 8)

    def parse() -> None:
        with pytest.raises(DecodeError, match="more than 1,000,000 tokens"):
            parse_label_map_bytes(data)

    peak = _peak(parse)
    print(f"peak for 16 MiB of nested items: {peak / 2**20:.1f} MiB")
    assert peak < 3 * MAX_LABEL_MAP_BYTES


def test_a_label_map_of_too_many_classes_is_refused() -> None:
    data = b"".join(b"item { id: %d }\n" % i for i in range(MAX_LABEL_MAP_ITEMS + 5))
    with pytest.raises(DecodeError, match=f"more than {MAX_LABEL_MAP_ITEMS:,} classes"):
        parse_label_map_bytes(data)
    ok = parse_label_map_bytes(b'item { id: 1 name: "cat" }\nitem { id: 2 display_name: "dog" }')
    assert ok.names == {1: "cat", 2: "dog"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("(" * 300 + "a" + ")" * 300, f"nested more than {MAX_FILTER_DEPTH} deep"),
        ("not " * 400 + "a", f"nested more than {MAX_FILTER_DEPTH} deep"),
        ("any(" * 50 + "a" + ")" * 50, f"nested more than {MAX_FILTER_DEPTH} deep"),
        (" or ".join(["x == 1"] * (MAX_FILTER_TERMS + 1)), "names and calls"),
        ("a == 1 and " * 2400 + "a", f"at most {MAX_FILTER_CHARS:,} are read"),
    ],
    ids=["parentheses", "not", "any", "terms", "size"],
)
def test_a_filter_past_the_limits_is_a_syntax_error(text: str, says: str) -> None:
    with pytest.raises(FilterSyntaxError, match=says) as info:
        compile_filter(text)
    assert len(str(info.value)) < 2 * MAX_FILTER_CHARS + 200  # never the whole text echoed


def test_filters_within_the_limits_still_parse() -> None:
    compile_filter("(" * MAX_FILTER_DEPTH + "a" + ")" * MAX_FILTER_DEPTH)
    compile_filter(" or ".join(["x == 1"] * MAX_FILTER_TERMS))
    compile_filter("not " * (MAX_FILTER_DEPTH - 1) + "a")


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin=stdin, timeout=120)


def test_the_command_line_refuses_them_with_exit_2(tmp_path: Path) -> None:
    done = _cli("filter", str(DATA / "basic.tfrecord"), "(" * 300 + "a" + ")" * 300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "nested more than" in done.stderr
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"record": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    done = _cli("import", str(deep), str(tmp_path / "out.tfrecord"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "line 1" in done.stderr and "nested too deeply" in done.stderr
    assert not (tmp_path / "out.tfrecord").exists()


def test_an_example_of_many_features_imports_in_linear_time() -> None:
    """Reading a record's JSON checked each feature's name against a tuple of every name:
    80,000 features took 27.5 s. Doubling the features now doubles the work (counted in
    name comparisons, not timed)."""
    from codec import example as ex

    compared = [0]

    class Name(str):  # a feature name that counts the comparisons made with it
        __hash__ = str.__hash__

        def __eq__(self, other: object) -> bool:
            compared[0] += 1
            return str.__eq__(self, other)

    def record(n: int) -> dict:
        feats = {Name(f"f{i}"): {"int64List": {"value": [str(i)]}} for i in range(n)}
        return {"features": {"feature": feats}}

    counts = []
    for n in (1000, 2000):
        compared[0] = 0
        payload = ex.from_json(record(n), "example")
        assert len(ex.decode(payload).features) == n
        counts.append(compared[0])
    assert counts[1] <= 2 * counts[0] + 10, counts
