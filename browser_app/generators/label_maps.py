"""The class lists of the public layouts, and their ``label_map.pbtxt`` text.

- COCO 2017: the 80 object categories with their ids (1–90, with gaps), as in the Object
  Detection API's ``research/object_detection/data/mscoco_label_map.pbtxt`` (whose
  ``display_name`` is the COCO category name that ``create_coco_tf_record.py`` writes in
  ``image/object/class/text``).
- PASCAL VOC: the 20 classes, ids 1–20 in alphabetical order as in
  ``research/object_detection/data/pascal_label_map.pbtxt``; DeepLab's class maps use the
  same numbers with 0 for background and 255 for void.
"""

from __future__ import annotations

__all__ = [
    "COCO_CATEGORIES",
    "COCO_IDS",
    "VOC_CLASSES",
    "VOC_IDS",
    "coco_label_map",
    "voc_label_map",
]

COCO_CATEGORIES: dict[int, str] = {
    1: "person",
    2: "bicycle",
    3: "car",
    4: "motorcycle",
    5: "airplane",
    6: "bus",
    7: "train",
    8: "truck",
    9: "boat",
    10: "traffic light",
    11: "fire hydrant",
    13: "stop sign",
    14: "parking meter",
    15: "bench",
    16: "bird",
    17: "cat",
    18: "dog",
    19: "horse",
    20: "sheep",
    21: "cow",
    22: "elephant",
    23: "bear",
    24: "zebra",
    25: "giraffe",
    27: "backpack",
    28: "umbrella",
    31: "handbag",
    32: "tie",
    33: "suitcase",
    34: "frisbee",
    35: "skis",
    36: "snowboard",
    37: "sports ball",
    38: "kite",
    39: "baseball bat",
    40: "baseball glove",
    41: "skateboard",
    42: "surfboard",
    43: "tennis racket",
    44: "bottle",
    46: "wine glass",
    47: "cup",
    48: "fork",
    49: "knife",
    50: "spoon",
    51: "bowl",
    52: "banana",
    53: "apple",
    54: "sandwich",
    55: "orange",
    56: "broccoli",
    57: "carrot",
    58: "hot dog",
    59: "pizza",
    60: "donut",
    61: "cake",
    62: "chair",
    63: "couch",
    64: "potted plant",
    65: "bed",
    67: "dining table",
    70: "toilet",
    72: "tv",
    73: "laptop",
    74: "mouse",
    75: "remote",
    76: "keyboard",
    77: "cell phone",
    78: "microwave",
    79: "oven",
    80: "toaster",
    81: "sink",
    82: "refrigerator",
    84: "book",
    85: "clock",
    86: "vase",
    87: "scissors",
    88: "teddy bear",
    89: "hair drier",
    90: "toothbrush",
}
COCO_IDS: dict[str, int] = {name: i for i, name in COCO_CATEGORIES.items()}

VOC_CLASSES: tuple[str, ...] = (
    "aeroplane",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "bus",
    "car",
    "cat",
    "chair",
    "cow",
    "diningtable",
    "dog",
    "horse",
    "motorbike",
    "person",
    "pottedplant",
    "sheep",
    "sofa",
    "train",
    "tvmonitor",
)
VOC_IDS: dict[str, int] = {name: i for i, name in enumerate(VOC_CLASSES, start=1)}


def coco_label_map() -> str:
    """``label_map.pbtxt`` for the 80 COCO categories: ``name`` and ``display_name`` both the
    category name (the decoder looks ``image/object/class/text`` up in either)."""
    return "".join(
        f'item {{\n  name: "{name}"\n  id: {i}\n  display_name: "{name}"\n}}\n'
        for i, name in COCO_CATEGORIES.items()
    )


def voc_label_map() -> str:
    """``label_map.pbtxt`` for the 20 PASCAL VOC classes, laid out as
    ``pascal_label_map.pbtxt`` is (``id`` then a single-quoted ``name``)."""
    return "".join(f"item {{\n  id: {i}\n  name: '{name}'\n}}\n" for name, i in VOC_IDS.items())
