"""Duplicate pictures in words: a search's summary, its groups as rows (source, record, file,
relation and distance), and the command line's report. Plain data for the app's page and the
``duplicates`` command alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from browser_app.edits import DELETE_RECORD, PASSED, Journal
from codec import duplicates as dup
from codec.jobs.duplicates import DuplicatesResult
from codec.values import plural

__all__ = [
    "KEPT_COMMENT",
    "GroupView",
    "MemberView",
    "duplicates_report",
    "embedding_features",
    "group_views",
    "keep_copy",
    "member_state",
    "relation_text",
    "search_text",
    "summary_text",
    "undo_drops",
]

MIN_EMBEDDING = 8  # a float list shorter than this is not offered as an embedding


def embedding_features(payloads: Iterable[bytes | None]) -> dict[str, int]:
    """The features the records ``payloads`` (the first of a dataset; None: damaged) hold as
    embeddings, with their length: float lists of one length, at least
    :data:`MIN_EMBEDDING`, in every record that has them. A record that does not decode
    says nothing."""
    from codec.errors import CodecError
    from codec.example import decode

    lengths: dict[str, set[int]] = {}
    for data in payloads:
        if data is None:
            continue
        try:
            record = decode(data)
        except CodecError:
            continue
        for name, feat in record.features.items():
            if feat.type == "float":
                lengths.setdefault(name, set()).add(len(feat.values))
    return {
        name: next(iter(n))
        for name, n in sorted(lengths.items())
        if len(n) == 1 and next(iter(n)) >= MIN_EMBEDDING
    }


_KIND_TEXT = {
    dup.IDENTICAL: "identical bytes",
    dup.PIXELS: "the same pixels",
    dup.NEAR: "near copies",
}


@dataclass(frozen=True)
class MemberView:
    """One record of a group as shown: its source (a split's name, a dataset), its number in
    that source, its file and index there, and how it relates to the group's first record."""

    record: int  # among every record of the search
    source: int
    source_label: str
    number: int
    file: str
    local: int
    relation: str  # "" for the first record
    text: str
    distance: int | float | None
    width: int
    height: int


@dataclass(frozen=True)
class GroupView:
    """One group as shown: its number (from 1), kind in words, the sources it spans and its
    members, the first one first."""

    number: int
    kind: str
    kind_text: str
    sources: tuple[str, ...]
    members: tuple[MemberView, ...]

    @property
    def leak(self) -> bool:
        """Whether the group spans two sources or more (the same picture in train and eval)."""
        return len(self.sources) > 1


def relation_text(m: dup.Member) -> str:
    """How a member relates to its group's first record, in words with the distance."""
    if not m.relation:
        return "first of the group"
    if m.relation == dup.IDENTICAL:
        return "identical bytes"
    if m.relation == dup.PIXELS:
        return "the same pixels (stored differently)"
    if m.cosine is not None:
        return f"near: cosine distance {m.cosine:.4f}"
    how = ", mirrored" if m.mirrored else ""
    return f"near: pHash {plural(m.phash or 0, 'bit')}, dHash {plural(m.dhash or 0, 'bit')}{how}"


def group_views(result: DuplicatesResult) -> list[GroupView]:
    """Every group of ``result`` as rows."""
    out = []
    fp = result.fingerprints
    for n, g in enumerate(result.groups, 1):
        members = []
        for m in g.members:
            src, file_no, local, number = result.where(m.record)
            members.append(
                MemberView(
                    m.record,
                    src,
                    result.sources[src].label,
                    number,
                    result.file_path(file_no),
                    local,
                    m.relation,
                    relation_text(m),
                    m.distance,
                    int(fp.size[m.record][0]),
                    int(fp.size[m.record][1]),
                )
            )
        labels = tuple(dict.fromkeys(mv.source_label for mv in members))
        out.append(GroupView(n, g.kind, _KIND_TEXT[g.kind], labels, tuple(members)))
    return out


def search_text(result: DuplicatesResult) -> str:
    """How the search compared pictures, in one phrase."""
    if result.embedding:
        return f"embedding {result.embedding!r}, cosine distance at most {result.cosine:g}"
    mirror = ", mirrored copies too" if result.mirror else ""
    return f"pHash and dHash within {plural(result.threshold, 'bit')}{mirror}"


def summary_text(result: DuplicatesResult) -> str:
    """One line: records searched, groups found, and of which kinds."""
    doc_kinds: dict[str, int] = {}
    for g in result.groups:
        doc_kinds[g.kind] = doc_kinds.get(g.kind, 0) + 1
    kinds = ", ".join(
        f"{plural(doc_kinds[k], 'group')} of {_KIND_TEXT[k]}"
        for k in (dup.IDENTICAL, dup.PIXELS, dup.NEAR)
        if k in doc_kinds
    )
    fingerprinted = int((result.fingerprints.status == dup.OK).sum())
    extra = sum(len(g.members) - 1 for g in result.groups)
    across = any(s.across for s in result.sources)
    what = "found in both sides" if across else "found"
    line = (
        f"{plural(result.records, 'record')} searched ({fingerprinted:,} with a picture);"
        f" {plural(len(result.groups), 'group')} {what}"
    )
    if result.groups:
        line += f", {plural(extra, 'copy', 'copies')} beyond the first of each ({kinds})"
    return line


def duplicates_report(result: DuplicatesResult) -> str:
    """The command line's text report: the search, the sources, every group with its
    records, then what was left out and why."""
    lines = [summary_text(result), f"compared by {search_text(result)}"]
    doc = result.to_json()
    for s in doc["sources"]:
        side = " (across)" if s["across"] else ""
        lines.append(f"  {s['label']}{side}: {plural(s['records'], 'record')}")
    for gv in group_views(result):
        lines.append("")
        spans = ", ".join(gv.sources)
        lines.append(f"group {gv.number}: {gv.kind_text} · {spans}")
        width = max(len(m.source_label) for m in gv.members)
        for m in gv.members:
            lines.append(
                f"  {m.source_label.ljust(width)}  record {m.number:<7,} {m.file}"
                f" [{m.local:,}]  {m.text}"
            )
    left = doc["records"]["left_out"]
    if left or doc["unreadable"]:
        lines.append("")
    for why, got in left.items():
        first = ", ".join(f"{r['source']} {r['record']:,}".lstrip() for r in got["first"])
        more = "" if got["count"] <= len(got["first"]) else ", …"
        lines.append(f"LEFT OUT: {plural(got['count'], 'record')}: {why} ({first}{more})")
    for u in doc["unreadable"]:
        lines.append(f"NOT READ: {u['path']}: {u['why']}")
    return "\n".join(lines) + "\n"


# -- keeping one copy ----------------------------------------------------------------------------

KEPT_COMMENT = "kept among duplicates"


def keep_copy(journals: Mapping[int, Journal], group: GroupView, keep: MemberView) -> int:
    """Keep ``keep`` of ``group`` and drop every other member through the edit journal of
    its source (``journals``, by source number): each drop is a ``delete_record`` change,
    undone like any other (:func:`undo_drops`, or the Changes page); the kept record is
    marked ``passed`` with a comment naming the copies dropped. A member already dropped is
    left as it is; the kept one, if dropped before, is brought back. Returns how many records
    this dropped. An export of the source then leaves the dropped ones out."""
    dropped = 0
    undo_drops(journals, group, only=(keep,))
    for m in group.members:
        if m == keep:
            continue
        j = journals[m.source]
        if j.is_deleted(m.number):
            continue
        j.delete_record(m.number)
        dropped += 1
    others = ", ".join(f"{m.source_label} {m.number}" for m in group.members if m != keep)
    journals[keep.source].set_mark(keep.number, PASSED, f"{KEPT_COMMENT}: dropped {others}")
    return dropped


def undo_drops(
    journals: Mapping[int, Journal], group: GroupView, only: Sequence[MemberView] | None = None
) -> int:
    """Undo the drops of ``group``'s members (of ``only`` those), and the mark of a copy kept
    among them; returns how many drops were undone."""
    undone = 0
    for m in only if only is not None else group.members:
        j = journals[m.source]
        for ch in reversed(j.changes_for(m.number)):
            if ch.op == DELETE_RECORD and not j.is_undone(ch.id):
                j.undo(ch.id)
                undone += 1
        if only is None:
            mark = j.marks().get(m.number)
            if mark is not None and mark.comment.startswith(KEPT_COMMENT):
                j.set_mark(m.number, None)
    return undone


def member_state(journals: Mapping[int, Journal], m: MemberView) -> str:
    """``"kept"``, ``"dropped"`` or ``""`` (not decided) for a member, from its journal."""
    j = journals.get(m.source)
    if j is None:
        return ""
    if j.is_deleted(m.number):
        return "dropped"
    mark = j.marks().get(m.number)
    if mark is not None and mark.comment.startswith(KEPT_COMMENT):
        return "kept"
    return ""
