#!/usr/bin/env python3
"""Renders pages of the built book in headless Chromium and checks what a reader would see: a
screenshot that is not blank (enough pixels unlike the background, several colours), and no
error in the page's console. Writes each screenshot next to the page's name in OUT.

    scripts/check_render.py CHROMIUM SITE OUT PAGE...   # PAGE: a path inside SITE
"""

import pathlib
import struct
import subprocess
import sys
import zlib


def png_pixels(path: pathlib.Path):
    """Width, height and rows of RGB(A) tuples of an 8-bit RGB or RGBA PNG (what Chromium
    writes), decoded with the standard library alone."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: PNG of depth {depth}, colour type {colour}: not handled")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def check(chromium: str, site: pathlib.Path, out: pathlib.Path, page: str) -> list[str]:
    target = (site / page).resolve()
    if not target.is_file():
        return [f"{page}: no such page"]
    shot = out / (page.replace("/", "_").removesuffix(".html") + ".png")
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1600",
            "--virtual-time-budget=3000",
            f"--screenshot={shot}",
            target.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    problems = []
    if run.returncode != 0 or not shot.is_file():
        return [f"{page}: chromium failed ({run.returncode}): {run.stderr[-2000:]}"]
    for line in run.stderr.splitlines():
        if "CONSOLE" in line and ("Uncaught" in line or "ERROR" in line.upper().split("CONSOLE")[0]):
            problems.append(f"{page}: console: {line.strip()}")
    width, height, channels, rows = png_pixels(shot)
    # Every fourth pixel of every fourth row; the background is the commonest colour.
    counts = {}
    for row in rows[::4]:
        for x in range(0, width * channels, channels * 4):
            px = tuple(row[x : x + 3])
            counts[px] = counts.get(px, 0) + 1
    sampled = sum(counts.values())
    background = max(counts.values()) if counts else 0
    colours = counts
    share = 1 - background / max(sampled, 1)
    print(f"{page}: {width}×{height}, {share:.1%} of the page unlike its background, {len(colours)} colours → {shot}")
    if share < 0.02 or len(colours) < 8:
        problems.append(f"{page}: the page looks blank ({share:.1%} drawn, {len(colours)} colours)")
    return problems


def main() -> int:
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    chromium, site, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    problems = []
    for page in sys.argv[4:]:
        problems += check(chromium, site, out, page)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
