#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a PNG of `gpusandbox audit plot` as rendered by Chromium.

Usage: png_check.py FILE.png

Reads the PNG itself (zlib and the five row filters; 8-bit RGB or RGBA,
not interlaced: what Chromium writes) and looks, inside the first panel's
plot area (below its legend, right of its y axis), for:
- the quota line: a row where pixels of the quota's colour (#d62728)
  run across most of the plot's width;
- the refusal marks: pixels of the refusals' colour (#ff7f0e), at or
  above the quota line (a refusal asked for more than the quota).
Exit 0 when both are there, 1 (with what is missing) when not.
The colours and the geometry are review_plot.c's.
"""
import struct
import sys
import zlib

QUOTA = (0xd6, 0x27, 0x28)
REFUSAL = (0xff, 0x7f, 0x0e)
TOLERANCE = 40            # anti-aliasing blends the edges
PLOT_LEFT, PLOT_RIGHT = 100, 770   # MARGIN_L, PANEL_W - MARGIN_R
PLOT_TOP, PLOT_BOTTOM = 45, 255    # below the legend, MARGIN_T + PLOT_H
LINE_FRACTION = 0.6       # the quota line spans the plot's width
MIN_MARK_PIXELS = 30      # one dot of radius 6 is about 110 pixels


def read_png(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, header = 8, b'', None
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            header = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError('unsupported PNG: depth %d colour %d interlace %d' % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 0xff
            elif f == 2:
                line[x] = (line[x] + b) & 0xff
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xff
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pred) & 0xff
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def near(px, colour):
    return sum(abs(int(px[i]) - colour[i]) for i in range(3)) <= TOLERANCE


def main():
    width, height, bpp, rows = read_png(sys.argv[1])
    best_row, best = -1, 0
    marks = []
    for y in range(PLOT_TOP, min(PLOT_BOTTOM + 1, height)):
        n = 0
        for x in range(PLOT_LEFT, min(PLOT_RIGHT, width)):
            px = rows[y][x * bpp:x * bpp + 3]
            if near(px, QUOTA):
                n += 1
            elif near(px, REFUSAL):
                marks.append((x, y))
        if n > best:
            best_row, best = y, n
    ok = True
    span = PLOT_RIGHT - PLOT_LEFT
    if best < LINE_FRACTION * span:
        print('no quota line: at most %d of %d pixels in a row have its colour' % (best, span))
        ok = False
    else:
        print('quota line at y=%d: %d pixels' % (best_row, best))
    if len(marks) < MIN_MARK_PIXELS:
        print('no refusal marks: %d pixels of their colour in the plot' % len(marks))
        ok = False
    else:
        mean_y = sum(y for _, y in marks) / len(marks)
        print('refusal marks: %d pixels, mean y=%.0f' % (len(marks), mean_y))
        if ok and mean_y > best_row:
            print('refusal marks below the quota line: implausible')
            ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
