"""``tfrecord-browser show``: each record's main picture, its layers and its pictures, as JSON
lines, words, and PNGs drawn as the record view draws them, on generated datasets in the
public writers' layouts; run as a person runs it (a fresh process)."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import run_cli
from conftest import DATA
from PIL import Image

from browser_app import generators as gen
from browser_app.view.pictures import main_view_png
from codec import example as ex
from codec.layers import LayerOptions
from codec.tensor import parse_tensor

SIDE = 320  # pictures made smaller: the tests draw every one of them


def _json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def _show(*args: str | Path) -> tuple[int, str, str]:
    done = run_cli("show", *(str(a) for a in args))
    return done.returncode, done.stdout, done.stderr


def _photo(width: int, height: int) -> dict[str, Any]:
    return {"feature": "image/encoded", "index": 0, "format": "jpeg", "width": width,
            "height": height}  # fmt: skip


def _pictures(*entries: tuple[str, int, str]) -> list[dict[str, Any]]:
    return [{"feature": f, "index": i, "role": r} for f, i, r in entries]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("show")


@pytest.fixture(scope="module")
def coco_file(folder: Path) -> tuple[Path, list[bytes]]:
    """COCO with PNG masks and keypoints: the astronaut (a person with 11 labelled
    keypoints, an airplane), the coffee (3 objects, no person), and a picture of no object."""
    payloads = [
        gen.coco(0, photo="astronaut", max_side=SIDE),
        gen.coco(1, photo="coffee", max_side=SIDE),
        gen.coco(2, n_objects=0, photo="chelsea", max_side=SIDE),
    ]
    path = folder / "coco.tfrecord"
    gen.write(path, payloads)
    return path, payloads


@pytest.fixture(scope="module")
def predictions_file(folder: Path) -> tuple[Path, list[bytes]]:
    payloads = [gen.predictions(s, 20, max_side=SIDE) for s in range(3)]
    payloads.append(gen.predictions(3, 20, n_objects=0, max_side=SIDE))  # only false alarms
    path = folder / "predictions.tfrecord"
    gen.write(path, payloads)
    return path, payloads


def test_coco_with_masks_and_keypoints_json(coco_file) -> None:
    path, _ = coco_file
    code, out, err = _show(path, "--json")
    assert (code, err) == (0, "")
    masks = [("image/object/mask", i, "mask") for i in range(3)]
    assert _json_lines(out) == [
        {
            "index": 0,
            "path": str(path),
            "local": 0,
            "picture": _photo(320, 320),
            "layers": [
                {"kind": "masks", "source": "image/object/mask", "count": 2},
                {"kind": "boxes", "source": "image/object/", "count": 2},
                {"kind": "keypoints", "source": "image/object/keypoint/", "count": 11},
            ],
            "pictures": _pictures(("image/encoded", 0, "photo"), *masks[:2]),
        },
        {
            "index": 1,
            "path": str(path),
            "local": 1,
            "picture": _photo(320, 213),
            "layers": [
                {"kind": "masks", "source": "image/object/mask", "count": 3},
                {"kind": "boxes", "source": "image/object/", "count": 3},
                {"kind": "keypoints", "source": "image/object/keypoint/", "count": 0},
            ],
            "pictures": _pictures(("image/encoded", 0, "photo"), *masks),
        },
        {
            "index": 2,
            "path": str(path),
            "local": 2,
            "picture": _photo(320, 213),
            "layers": [
                {"kind": "boxes", "source": "image/object/", "count": 0},
                {"kind": "keypoints", "source": "image/object/keypoint/", "count": 0},
            ],
            "pictures": _pictures(("image/encoded", 0, "photo")),
        },
    ]
    code, out, err = _show(path)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "record 0: image/encoded jpeg 320×320 · 2 boxes · 2 masks · 11 keypoints"
        " · 3 pictures in all",
        "record 1: image/encoded jpeg 320×213 · 3 boxes · 3 masks · 4 pictures in all",
        "record 2: image/encoded jpeg 320×213",
    ]


def test_float_masks_are_a_layer_not_pictures(folder) -> None:
    path = folder / "float_masks.tfrecord"
    gen.write(path, [gen.coco_float_masks(0, photo="astronaut", max_side=SIDE)])
    code, out, _ = _show(path, "--json")
    assert code == 0
    [line] = _json_lines(out)
    assert line["layers"] == [
        {"kind": "masks", "source": "image/object/mask", "count": 2},
        {"kind": "boxes", "source": "image/object/", "count": 2},
        {"kind": "keypoints", "source": "image/object/keypoint/", "count": 11},
    ]
    assert line["pictures"] == _pictures(("image/encoded", 0, "photo"))


def _scores(payload: bytes) -> list[float]:
    return [float(v) for v in ex.decode(payload).features["image/detection/score"].values]


def _truth(payload: bytes) -> int:
    return len(ex.decode(payload).features["image/object/bbox/xmin"].values)


@pytest.mark.parametrize("threshold", [None, 0.0, 0.5, 1.0])
def test_predictions_count_what_the_threshold_keeps(predictions_file, threshold) -> None:
    path, payloads = predictions_file
    extra = [] if threshold is None else ["--score-threshold", str(threshold)]
    code, out, err = _show(path, "--json", *extra)
    assert (code, err) == (0, "")
    lines = _json_lines(out)
    assert [x["index"] for x in lines] == list(range(len(payloads)))
    t = 0.5 if threshold is None else threshold
    for line, payload in zip(lines, payloads):
        kept = sum(s >= t for s in _scores(payload))
        assert line["layers"] == [
            {
                "kind": "predictions",
                "source": "image/detection/",
                "count": kept,
                "total": 20,
                "threshold": t,
            },
            {"kind": "boxes", "source": "image/object/", "count": _truth(payload)},
        ]
    counts = [x["layers"][0]["count"] for x in lines]
    if t == 0.0:
        assert counts == [20] * len(payloads)
    if t == 1.0:
        assert counts == [0] * len(payloads)  # no model is that sure
    if t == 0.5:
        assert 0 < sum(counts) < 20 * len(payloads)
        assert counts[-1] == 0  # nothing in the picture: every detection a weak false alarm


def test_predictions_in_words(predictions_file) -> None:
    path, payloads = predictions_file
    code, out, _ = _show(path, "--score-threshold", "0.3")
    assert code == 0
    for i, (line, payload) in enumerate(zip(out.splitlines(), payloads)):
        kept = sum(s >= 0.3 for s in _scores(payload))
        assert line.startswith(f"record {i}: image/encoded jpeg ")
        assert f" · {kept} of 20 predictions ≥ 0.3" in line


def test_class_map_depth_and_a_plain_example(folder) -> None:
    seg = folder / "segmentation.tfrecord"
    gen.write(seg, [gen.segmentation(s, photo=p, max_side=SIDE) for s, p in enumerate(gen.PHOTOS)])
    code, out, _ = _show(seg, "--json")
    assert code == 0
    for s, (name, line) in enumerate(zip(gen.PHOTOS, _json_lines(out))):
        values = set(np.unique(gen.class_map(s, photo=name, max_side=SIDE)).tolist())
        w, h = gen.photo(name, SIDE).width, gen.photo(name, SIDE).height
        assert line["picture"] == _photo(w, h)
        assert line["layers"] == [
            {
                "kind": "class_map",
                "source": "image/segmentation/class/encoded",
                "count": len(values - {0}),  # void (255) is one of them
            }
        ]
        assert line["pictures"] == _pictures(
            ("image/encoded", 0, "photo"), ("image/segmentation/class/encoded", 0, "class_map")
        )

    depth = folder / "depth.tfrecord"
    gen.write(depth, [gen.depth(0, max_side=SIDE), gen.depth(1, depth_format="raw", max_side=SIDE)])
    code, out, _ = _show(depth, "--json")
    assert code == 0
    for s, line in enumerate(_json_lines(out)):
        h, w = gen.depth_map(s, max_side=SIDE).shape
        assert line["picture"] == _photo(w, h)
        assert line["layers"] == []  # a depth map is listed, never laid over the photo
        assert line["pictures"] == _pictures(
            ("image/encoded", 0, "photo"), ("image/depth/encoded", 0, "depth")
        )

    code, out, err = _show(DATA / "basic.tfrecord", "--json", "--records", "0:2")
    assert (code, err) == (0, "")
    assert [(x["index"], x["picture"], x["layers"], x["pictures"]) for x in _json_lines(out)] == [
        (0, None, [], []),
        (1, None, [], []),
    ]


def test_tensor_records_are_pictures(folder) -> None:
    payloads = gen.tensor_records(0)
    path = folder / "tensors.tfrecord"
    gen.write(path, payloads)
    code, out, _ = _show(path, "--json")
    assert code == 0
    lines = _json_lines(out)
    assert len(lines) == 4
    for line, payload in zip(lines, payloads):
        h, w = parse_tensor(payload).shape[:2]
        assert line["picture"] == {
            "feature": "",
            "index": 0,
            "format": "tensor",
            "width": w,
            "height": h,
        }
        assert line["layers"] == []
        assert line["pictures"] == _pictures(("", 0, "photo"))
    out_dir = folder / "tensor_pngs"
    code, out, _ = _show(path, "--out", out_dir)
    assert code == 0
    assert out.splitlines()[0].startswith("record 0: tensor ")
    assert sorted(p.name for p in out_dir.iterdir()) == ["0.png", "1.png", "2.png", "3.png"]
    rgb = np.asarray(Image.open(out_dir / "0.png").convert("RGB"))
    assert np.array_equal(rgb, parse_tensor(payloads[0]))  # drawn as stored, losslessly


def _decoded_png(path: Path) -> Image.Image:
    img = Image.open(path)
    img.load()
    assert img.format == "PNG"
    return img


def test_out_pngs_are_the_record_views(folder, coco_file, predictions_file) -> None:
    labels = folder / "label_map.pbtxt"
    labels.write_text(gen.coco_label_map())
    names = {int(k): v for k, v in gen.COCO_CATEGORIES.items()}
    for (path, payloads), extra in [
        (coco_file, []),
        (predictions_file, ["--score-threshold", "0.2", "--label-map", str(labels)]),
    ]:
        out_dir = folder / f"out_{path.stem}"
        code, out, err = _show(path, "--out", out_dir, "--json", *extra)
        assert (code, err) == (0, ""), err
        assert len(_json_lines(out)) == len(payloads)  # --json still prints with --out
        options = (
            LayerOptions(normalized=True)
            if not extra
            else LayerOptions(score_threshold=0.2, normalized=True, label_map=names)
        )
        for i, payload in enumerate(payloads):
            written = (out_dir / f"{i}.png").read_bytes()
            img = _decoded_png(out_dir / f"{i}.png")
            line = _json_lines(out)[i]
            assert img.size == (line["picture"]["width"], line["picture"]["height"])
            assert written == main_view_png(ex.decode(payload), options)
        assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]  # no temp left


def test_no_layers_is_the_plain_picture(folder, coco_file) -> None:
    path, payloads = coco_file
    out_dir = folder / "plain"
    code, out, _ = _show(path, "--out", out_dir, "--no-layers", "--json", "--records", "0")
    assert code == 0
    [line] = _json_lines(out)
    assert line["layers"] == [] and line["picture"] == _photo(320, 320)
    written = (out_dir / "0.png").read_bytes()
    assert written == main_view_png(ex.decode(payloads[0]), None)
    assert written != main_view_png(ex.decode(payloads[0]), LayerOptions(normalized=True))
    photo = ex.decode(payloads[0]).features["image/encoded"].values[0]
    plain = np.asarray(Image.open(io.BytesIO(photo)).convert("RGB"))
    assert np.array_equal(np.asarray(_decoded_png(out_dir / "0.png").convert("RGB")), plain)
    assert sorted(p.name for p in out_dir.iterdir()) == ["0.png"]  # --records 0 only


def test_a_record_without_a_picture_writes_nothing(folder) -> None:
    out_dir = folder / "made" / "on" / "demand"
    code, out, err = _show(DATA / "basic.tfrecord", "--records", "3", "--out", out_dir)
    assert code == 0
    assert out == "record 3: no picture\n"
    assert "record 3: no picture, no 3.png written" in err
    assert out_dir.is_dir() and not list(out_dir.iterdir())


def _flip_payload_byte(raw: bytes, record: int) -> bytes:
    """``raw`` (a TFRecord stream) with one byte of record ``record``'s payload changed."""
    pos = 0
    for _ in range(record):
        pos += 16 + int.from_bytes(raw[pos : pos + 8], "little")
    length = int.from_bytes(raw[pos : pos + 8], "little")
    at = pos + 12 + length // 2
    return raw[:at] + bytes([raw[at] ^ 0x40]) + raw[at + 1 :]


def test_damaged_records_exit_1_and_the_others_are_shown(folder, coco_file) -> None:
    code, out, err = _show(DATA / "corrupt_data_crc.tfrecord", "--json")
    assert code == 1
    indexes = [x["index"] for x in _json_lines(out)]
    assert 5 not in indexes and indexes == [i for i in range(len(indexes) + 1) if i != 5]
    assert "record 5" in err and "CRC" in err

    path, _ = coco_file
    bad = folder / "coco_damaged.tfrecord"
    bad.write_bytes(_flip_payload_byte(path.read_bytes(), 1))
    out_dir = folder / "damaged_out"
    code, out, err = _show(bad, "--out", out_dir)
    assert code == 1
    assert [x.split(":")[0] for x in out.splitlines()] == ["record 0", "record 2"]
    assert "record 1" in err
    assert sorted(p.name for p in out_dir.iterdir()) == ["0.png", "2.png"]


def test_a_picture_that_does_not_decode_exits_1(folder, coco_file) -> None:
    _, payloads = coco_file
    good = ex.decode(payloads[1]).features["image/encoded"].values[0]
    cut = ex.encode_example({"image/encoded": ("bytes", [good[: len(good) // 3]])})
    path = folder / "cut.tfrecord"
    gen.write(path, [payloads[0], cut])
    out_dir = folder / "cut_out"
    code, out, err = _show(path, "--out", out_dir, "--json")
    assert code == 1
    assert [x["index"] for x in _json_lines(out)] == [0, 1]  # the header still tells its size
    assert "record 1: cannot draw its picture" in err
    assert sorted(p.name for p in out_dir.iterdir()) == ["0.png"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--score-threshold", "2"], "--score-threshold: '2': give a score from 0 to 1"),
        (["--score-threshold", "-0.1"], "give a score from 0 to 1"),
        (["--score-threshold", "nan"], "give a score from 0 to 1"),
        (["--score-threshold", "high"], "'high' is not a number"),
        (["--records", "0:x"], "--records"),
    ],
)
def test_usage_errors_exit_2(coco_file, args, words) -> None:
    path, _ = coco_file
    code, out, err = _show(path, *args)
    assert code == 2 and out == ""
    assert words in err


def test_a_bad_label_map_or_out_exits_2(folder, coco_file) -> None:
    path, _ = coco_file
    broken = folder / "broken.pbtxt"
    broken.write_text("item { id: 1 name: 'a' ")
    for label_map in (broken, folder / "missing.pbtxt"):
        code, out, err = _show(path, "--label-map", label_map)
        assert code == 2 and out == ""
        assert err.startswith("tfrecord-browser: ") and label_map.name in err
    a_file = folder / "a_file"
    a_file.write_text("x")
    code, out, err = _show(path, "--out", a_file)
    assert code == 2 and "not a folder" in err


def test_global_numbers_over_shards(folder, coco_file) -> None:
    _, payloads = coco_file
    shards = folder / "shards"
    shards.mkdir()
    gen.write(shards / "part-0.tfrecord", payloads[:2])
    gen.write(shards / "part-1.tfrecord", payloads[2:] + payloads[:1])
    out_dir = folder / "shard_out"
    code, out, _ = _show(shards / "part-*", "--records", "1:", "--json", "--out", out_dir)
    assert code == 0
    lines = _json_lines(out)
    assert [(x["index"], Path(x["path"]).name, x["local"]) for x in lines] == [
        (1, "part-0.tfrecord", 1),
        (2, "part-1.tfrecord", 0),
        (3, "part-1.tfrecord", 1),
    ]
    assert sorted(p.name for p in out_dir.iterdir()) == ["1.png", "2.png", "3.png"]
    # Record 3 is record 0 again: the same picture.
    assert (out_dir / "3.png").read_bytes() == main_view_png(
        ex.decode(payloads[0]), LayerOptions(normalized=True)
    )
    code, out, _ = _show(shards / "part-*", "--records", "2")
    assert out.startswith("record 2 (") and "part-1.tfrecord record 0): image/encoded" in out


def test_feature_order_does_not_change_the_view(folder) -> None:
    """Another TensorFlow run writes each Example's map entries in another order: the same
    JSON, and the same PNG bytes."""
    rng = random.Random(25)
    payloads = [
        gen.coco(0, photo="astronaut", max_side=SIDE),
        gen.coco(4, n_objects=rng.randint(0, 12), max_side=SIDE),
        gen.coco_float_masks(5, max_side=SIDE),
        gen.pascal(6, max_side=SIDE),
        gen.predictions(7, 20, masks=True, keypoints=True, max_side=SIDE),
        gen.segmentation(8, max_side=SIDE),
        gen.depth(9, max_side=SIDE),
    ]
    shuffled = [gen.shuffled_features(p, rng) for p in payloads]
    assert all(a != b for a, b in zip(payloads, shuffled))
    views = []
    for name, records in (("ordered", payloads), ("shuffled", shuffled)):
        path = folder / f"{name}.tfrecord"
        gen.write(path, records)
        out_dir = folder / f"{name}_out"
        code, out, _ = _show(path, "--json", "--out", out_dir, "--score-threshold", "0.4")
        assert code == 0
        lines = [{k: v for k, v in x.items() if k != "path"} for x in _json_lines(out)]
        pngs = [(out_dir / f"{i}.png").read_bytes() for i in range(len(records))]
        views.append((lines, pngs))
    assert views[0][0] == views[1][0]
    assert views[0][1] == views[1][1]
    assert all(x["picture"]["feature"] == "image/encoded" for x in views[0][0])
