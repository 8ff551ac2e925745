"""Write the photographs the dataset generators use into browser_app/generators/photos/.

python scripts/make_photos.py [FOLDER]

The pictures are scikit-image's sample photographs (``skimage.data``, public domain or
CC0/CC-BY as its documentation lists): JPEG at quality 85, the longer side at most 640 px
(480 px for the stereo pair).
``stereo_motorcycle`` (Middlebury 2014) gives its left view as a JPEG and its disparity map
losslessly, KITTI style: a 16-bit grayscale PNG of round(disparity × 256), 0 where the
disparity is unknown. Resizing scales the disparity by the same factor as the width (it is a
horizontal distance in pixels) and takes the nearest pixel, so no unknown value leaks into its
neighbours.

scikit-image is needed only here (the ``test`` extra); the generators read the files written.
The annotations beside them (``annotations.json``) are drawn by hand on these exact sizes.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "browser_app" / "generators" / "photos"
LONGEST = 640
# The stereo pair is smaller: its 16-bit disparity map hardly compresses (every low bit is
# data), and the photographs together stay under 400 KB.
STEREO_LONGEST = 480
QUALITY = 85
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")


def _fit(img: Image.Image, resample: Image.Resampling, longest: int = LONGEST) -> Image.Image:
    w, h = img.size
    scale = min(1.0, longest / max(w, h))
    if scale == 1.0:
        return img
    return img.resize((round(w * scale), round(h * scale)), resample)


def _jpeg(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=QUALITY, optimize=True)
    return out.getvalue()


def _disparity_png(disparity: np.ndarray, size: tuple[int, int]) -> bytes:
    """``disparity`` (float, inf or NaN where unknown) resized to ``size`` as KITTI's 16-bit
    PNG: round(d × 256), 0 = unknown."""
    d = np.where(np.isfinite(disparity), disparity, 0.0).astype(np.float32)
    w0 = d.shape[1]
    small = np.asarray(Image.fromarray(d, mode="F").resize(size, Image.Resampling.NEAREST))
    small = small * (size[0] / w0)
    coded = np.clip(np.rint(small * 256.0), 0, 65535).astype(np.uint16)
    coded[small <= 0] = 0
    out = io.BytesIO()
    Image.fromarray(coded).save(out, format="PNG", optimize=True)
    return out.getvalue()


def write_photos(target: Path) -> list[Path]:
    from skimage import data  # only this script needs scikit-image

    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in PHOTOS:
        img = _fit(Image.fromarray(getattr(data, name)()).convert("RGB"), Image.Resampling.LANCZOS)
        path = target / f"{name}.jpg"
        path.write_bytes(_jpeg(img))
        written.append(path)
    left, _right, disparity = data.stereo_motorcycle()
    img = _fit(Image.fromarray(left).convert("RGB"), Image.Resampling.LANCZOS, STEREO_LONGEST)
    path = target / "motorcycle.jpg"
    path.write_bytes(_jpeg(img))
    written.append(path)
    path = target / "motorcycle_disparity.png"
    path.write_bytes(_disparity_png(np.asarray(disparity), img.size))
    written.append(path)
    return written


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else TARGET
    files = write_photos(target)
    for f in files:
        with Image.open(f) as im:
            print(f"{f.name}  {im.size[0]}x{im.size[1]} {im.mode}  {f.stat().st_size:,} bytes")
    print(f"{len(files)} files, {sum(f.stat().st_size for f in files):,} bytes in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
