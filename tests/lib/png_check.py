#!/usr/bin/env python3
"""Is a screenshot a picture?  Decodes an 8-bit RGB/RGBA PNG (zlib only, no
imaging library) and prints 'WIDTHxHEIGHT inked=F colours=N': F the share
of pixels unlike the top-left (background) pixel, N the distinct colours.
Exit 0 when inked >= MIN_INK (argv[2], default 0.05) and colours >= 8."""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6):
        raise ValueError("only 8-bit RGB/RGBA")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth(a, b, c))[f]) & 0xff
        rows.append(line)
        prev = line
    return w, h, bpp, rows


w, h, bpp, rows = decode(sys.argv[1])
bg = bytes(rows[0][:3])
inked, colours = 0, set()
for line in rows:
    for x in range(0, w * bpp, bpp):
        px = bytes(line[x:x + 3])
        colours.add(px)
        inked += px != bg
share = inked / float(w * h)
print("%dx%d inked=%.3f colours=%d" % (w, h, share, len(colours)))
min_ink = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
sys.exit(0 if share >= min_ink and len(colours) >= 8 else 1)
