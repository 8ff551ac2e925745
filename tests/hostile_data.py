"""A dataset whose every text is markup: feature names and values, class texts, file and folder
names, label-map names, review comments and edits. The app must show all of it as text.

``payloads(port)`` are the strings planted; each would, if rendered as Markdown or HTML, make
the browser fetch from ``127.0.0.1:port`` (a server the tests run and count), restyle the page
(``:red[…]``, KaTeX, headings) or reverse the app's own text (a right-to-left override).
``unescaped(text)`` finds a payload that arrives at Markdown unescaped.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from PIL import Image

import codec
from browser_app.edits import Journal
from codec import example as ex

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE


def payloads(port: int) -> list[str]:
    here = f"http://127.0.0.1:{port}"
    return [
        f"![x]({here}/md.png)",
        f'<img src="{here}/html.png">',
        f"[hostile-link]({here}/link)",
        ":red[RED] :material/bolt: $x^2$",
        "# heading\n- item **bold**",
        f"{RLO}txet desrever",
        f"<style>body{{background:url({here}/css.png)}}</style>",
    ]


def name_payloads() -> list[str]:
    """Payloads that can be file or folder names (no slash, no NUL)."""
    return [":red[F] $y$ **b** <b>x", f"{RLO}gpj.tfrecord", "![n](x) #h"]


# Markdown source that still means markup: not preceded by a backslash.
_LIVE = [
    re.compile(r"(?<!\\)!(?<!\\)\[[^\]]*(?<!\\)\]\("),
    re.compile(r"(?<!\\)<(img|style|b)\b"),
    re.compile(r"(?<!\\):red(?<!\\)\["),
    re.compile(r"(?<!\\)\$x\^2"),
    re.compile(r"(?<!\\)\[hostile-link(?<!\\)\]"),
    re.compile(RLO),
]


_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def unescaped(text: str) -> list[str]:
    """The live markup in ``text`` (Markdown source as the app hands it to Streamlit);
    code spans show their content as it is, so they are left out."""
    text = _CODE_SPAN.sub("", text)
    return [m.group(0) for rx in _LIVE for m in rx.finditer(text)]


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 100, 50)).save(out, format="JPEG")
    return out.getvalue()


def write_hostile_root(root: Path, port: int, cache: Path) -> dict[str, str]:
    """Write the hostile dataset under ``root`` (its edit journal in the cache folder
    ``cache``, where the app must look: ``TFRECORD_BROWSER_CACHE``); return the files by role
    (``main``: the dataset, relative to the root; ``named``: one with a hostile file name in
    a hostile folder)."""
    texts = payloads(port)
    pic = _jpeg()
    records = []
    for i in range(12):
        feats: dict[str, tuple[str, list[object]]] = {
            "image/encoded": ("bytes", [pic]),
            "image/height": ("int64", [24]),
            "image/width": ("int64", [32]),
            "image/object/bbox/xmin": ("float", [0.1]),
            "image/object/bbox/ymin": ("float", [0.1]),
            "image/object/bbox/xmax": ("float", [0.6 if i % 4 else 1.5]),
            "image/object/bbox/ymax": ("float", [0.6]),
            "image/object/class/text": ("bytes", [texts[i % len(texts)].encode()]),
            "image/object/class/label": ("int64", [1 + i % 2]),
            "caption": ("bytes", [texts[(i + 1) % len(texts)].encode()]),
            "notes": ("bytes", [t.encode() for t in texts]),
        }
        feats[texts[3] + " picture"] = ("bytes", [pic])  # a picture's name is its caption
        for t in texts:  # every payload as a feature name, in most records (drift)
            if i % 5:
                feats[t] = ("int64" if i % 3 else "float", [i])
        records.append(ex.encode_example(feats))
    main = root / "hostile.tfrecord"
    codec.write_records(str(main), records)
    (root / "label_map.pbtxt").write_text(
        "\n".join(
            f'item {{ id: {k} name: "{t}" }}'.replace("\n", " ")
            for k, t in ((1, texts[0].replace('"', "'")), (2, texts[3]))
        )
    )
    folder = root / name_payloads()[0]
    folder.mkdir()
    named = folder / (name_payloads()[1] + ".tfrecord")
    codec.write_records(str(named), records[:3])
    (folder / name_payloads()[2]).mkdir()
    # Edits and review marks whose texts are payloads too.
    with codec.TFRecordDataset([str(main)]) as ds:
        j = Journal(ds, cache_dir=cache)
        try:
            j.set_values(0, "caption", texts[1])
            j.add_feature(0, texts[0], "bytes", [texts[4].encode()])
            j.set_mark(2, "flagged", texts[0] + " " + texts[5])
            j.set_mark(3, "passed", texts[3])
        finally:
            j.close()
    return {"main": main.name, "named": str(named.relative_to(root))}
