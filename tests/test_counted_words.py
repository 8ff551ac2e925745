"""Counts in messages agree with their nouns and verbs: "1 record fails its CRC", never
"1 record fail their CRC" or "1 records".

Every f-string in the code is scanned for a number written straight before a plural noun
(``f"{n} records"``): such a message reads "1 records" when ``n`` is 1 and must use
:func:`codec.values.plural` instead. The few places where the number cannot be 1 (or is not a
number) are listed with the reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import DATA
from hypothesis import given
from hypothesis import strategies as hs

from browser_app.view import plural as view_plural
from browser_app.view.text import format_schema
from codec.schema import findings, infer_schema
from codec.values import plural

REPO = Path(__file__).resolve().parent.parent
NOUNS = (
    "records|files|features|changes|marks|values|pictures|boxes|rows|shards|problems"
    "|findings|matches|edits|members|streams|cells|columns|steps|pages|outputs|images"
    "|labels|classes|lines|entries|items"
)
_COUNTED = re.compile(rf"^\s+({NOUNS})\b")

# (file, expression) pairs whose number is never 1, or is not a count.
ALLOWED = {
    ("browser_app/cli/records.py", "len(rows)"): "only written for more than one file",
    ("browser_app/cli/records.py", "len(reports)"): "only written for more than one file",
    ("browser_app/export/base.py", "len(self.outputs)"): "only for more than one output",
    ("browser_app/paths.py", "len(skipped):,"): "the one-file case is spelt out",
    ("browser_app/view/text.py", "len(doc['files'])"): "only written for more than one file",
    ("browser_app/view/files.py", "int(n)"): "a shard set of at least two members",
    ("browser_app/ui/widgets/detail.py", "n:,"): "more values than the ones shown",
    ("browser_app/edits/commands.py", "feat.type"): "a type name, not a count",
    ("browser_app/edits/values.py", "', '.join(bad)"): "step numbers, not a count",
    ("codec/example.py", "type"): "a type name, not a count",
    ("codec/schema/drift.py", "name"): "a feature name, not a count",
    ("codec/expand.py", "n:,"): "a count of shards in a name@N spec, from its N",
    ("codec/locations.py", "n:,"): "a count of shards in a name@N spec of a URL, from its N",
    ("codec/tfds.py", "MAX_FEATURES:,"): "a cap, never 1",
    ("codec/tfds.py", "seen:,"): "the one-record case is spelt out",
    ("codec/tfds.py", "type_"): "a type name, not a count",
}


def _counted_fstrings() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted([*REPO.glob("codec/**/*.py"), *REPO.glob("browser_app/**/*.py")]):
        rel = path.relative_to(REPO).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.JoinedStr):
                continue
            for value, text in zip(node.values, node.values[1:]):
                if (
                    isinstance(value, ast.FormattedValue)
                    and isinstance(text, ast.Constant)
                    and isinstance(text.value, str)
                    and _COUNTED.match(text.value)
                ):
                    expr = ast.unparse(value.value)
                    if value.format_spec is not None:
                        expr += ":" + "".join(
                            str(v.value)
                            for v in value.format_spec.values  # type: ignore[attr-defined]
                            if isinstance(v, ast.Constant)
                        )
                    found.append((rel, expr, node.lineno))
    return found


def test_no_number_is_written_straight_before_a_plural_noun() -> None:
    wrong = [
        f"{rel}:{line}: {{{expr}}}"
        for rel, expr, line in _counted_fstrings()
        if (rel, expr) not in ALLOWED
    ]
    assert not wrong, "use plural(n, word) for these counts:\n" + "\n".join(wrong)


def test_the_allowed_list_has_no_stale_entries() -> None:
    seen = {(rel, expr) for rel, expr, _ in _counted_fstrings()}
    assert set(ALLOWED) <= seen, set(ALLOWED) - seen


@given(hs.integers(min_value=0, max_value=10**7))
def test_plural_agrees_with_its_count(n: int) -> None:
    text = plural(n, "record fails its CRC", "records fail their CRC")
    assert text.startswith(f"{n:,} ")
    assert text.endswith("record fails its CRC" if n == 1 else "records fail their CRC")
    assert view_plural(n, "box", "boxes") == plural(n, "box", "boxes")


@pytest.mark.parametrize("damaged", [1, 2, 1234])
def test_damaged_records_finding_agrees_with_its_count(damaged: int) -> None:
    doc = {"damaged": damaged, "damaged_records": list(range(min(damaged, 5)))}
    (finding,) = findings(doc)
    if damaged == 1:
        assert finding.message.startswith("1 record fails its CRC and is left out")
    else:
        assert finding.message.startswith(f"{damaged:,} records fail their CRC and are left")


def test_schema_text_agrees_with_one_damaged_record() -> None:
    schema = infer_schema(str(DATA / "corrupt_data_crc.tfrecord"))
    doc = schema.to_json()
    assert doc["damaged"] == 1
    text = format_schema(doc)
    assert "1 record fails its CRC" in text
    assert not re.search(r"\b1 (record fail\b|records\b)", text)
