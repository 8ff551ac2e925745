"""Small inputs that declare something huge: picture headers of every format, serialized
tensors, records with many features or one giant value. Used by the tests of bounded cost
and by ``benchmarks/bench_hostile.py``'s cost table."""

from __future__ import annotations

import struct
import zlib

from codec import example as ex
from codec.tensor import serialize_tensor


def png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


def jpeg_header(width: int, height: int, sof: int = 0xC0) -> bytes:
    frame = bytes([0xFF, sof]) + struct.pack(">HBHHB", 17, 8, height, width, 3) + bytes(9)
    return b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes(9) + frame


def gif_header(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0) + bytes(3 * 256)


def bmp_header(width: int, height: int) -> bytes:
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 14 + 40, 0, 0, 14 + 40) + info


def webp_header(width: int, height: int) -> bytes:
    vp8x = b"VP8X" + struct.pack("<I", 10) + bytes(4)
    vp8x += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x


def tiff_header(width: int, height: int) -> bytes:
    entries = [
        (256, 4, 1, width),
        (257, 4, 1, height),
        (258, 3, 1, 8),
        (259, 3, 1, 1),
        (262, 3, 1, 1),
        (273, 4, 1, 8),
        (277, 3, 1, 1),
        (278, 4, 1, height),
        (279, 4, 1, width * height & 0xFFFFFFFF),
    ]
    ifd = struct.pack("<H", len(entries))
    for tag, typ, count, value in entries:
        ifd += struct.pack("<HHII", tag, typ, count, value)
    return b"II*\x00" + struct.pack("<I", 8) + ifd + struct.pack("<I", 0)


GIANT_PICTURES: dict[str, bytes] = {
    "png 20000×20000": png_header(20000, 20000),
    "png 65535×65535": png_header(65535, 65535),
    "jpeg 65000×65000": jpeg_header(65000, 65000),
    "jpeg progressive 65000×65000": jpeg_header(65000, 65000, 0xC2),
    "gif 65535×65535": gif_header(65535, 65535),
    "bmp 100000×100000": bmp_header(100000, 100000),
    "webp 16384×16384": webp_header(16384, 16384),
    "tiff 100000×100000": tiff_header(100000, 100000),
}
"""Headers of a few hundred bytes at most that declare pictures of billions of pixels."""


DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7


def tensor_header(dtype_enum: int, shape: list[int]) -> bytes:
    """A TensorProto with a dtype, a shape and one value (TensorFlow repeats the last value
    to fill the shape): 30-odd bytes that declare ``prod(shape)`` elements."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    dims = b"".join(b"\x12" + varint(len(d)) + d for d in (b"\x08" + varint(n) for n in shape))
    value = {
        DT_FLOAT: b"\x2a\x04" + struct.pack("<f", 1.5),
        DT_DOUBLE: b"\x32\x08" + struct.pack("<d", 1.5),
        DT_STRING: b"\x42\x01x",
    }[dtype_enum]
    return b"\x08" + varint(dtype_enum) + b"\x12" + varint(len(dims)) + dims + value


HUGE_TENSORS: dict[str, bytes] = {
    "float 2^32 elements": tensor_header(DT_FLOAT, [1 << 16, 1 << 16]),
    "double 2^40 elements": tensor_header(DT_DOUBLE, [1 << 20, 1 << 20]),
    "string 2^31 elements": tensor_header(DT_STRING, [1 << 31]),
    "float 2^62 elements": tensor_header(DT_FLOAT, [1 << 31, 1 << 31]),
}
"""Serialized tensors of ~30 bytes whose shapes would take gigabytes to exabytes."""


def many_features(n: int = 20_000) -> bytes:
    """One Example with ``n`` small binary features."""
    return ex.encode_example(
        {f"blob/{i:05d}": ("bytes", [bytes([i % 256, 0, 255, 7])]) for i in range(n)}
    )


def big_value(size: int) -> bytes:
    """One Example with a text value of ``size`` bytes and a float list of ``size // 64``."""
    return ex.encode_example(
        {
            "text": ("bytes", [(b"lorem ipsum " * (size // 12 + 1))[:size]]),
            "numbers": ("float", [float(i) for i in range(size // 64)]),
        }
    )


def tensor_record(tensor: bytes) -> bytes:
    return ex.encode_example({"t": ("bytes", [tensor])})


def float_tensor(n: int) -> bytes:
    import numpy as np

    return serialize_tensor(np.arange(n, dtype=np.float32))
