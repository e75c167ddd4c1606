#!/usr/bin/env python3
"""Writes the DEFLATE and zip fixtures of Tests/AppleHealthImportTests/Fixtures with
Python's zlib and zipfile (the reference implementations our decoder is checked
against), plus manifest.tsv: name, kind, expected length, SHA-256 of the expected
bytes. Deterministic: run it again and nothing changes.

    python3 tools/make_deflate_fixtures.py
"""
import hashlib, io, os, random, struct, zipfile, zlib

out = os.path.join(os.path.dirname(__file__), "..", "Tests", "AppleHealthImportTests", "Fixtures")
os.makedirs(out, exist_ok=True)
rng = random.Random(20261129)

words = "Record type sourceName HKQuantityTypeIdentifierHeartRate count/min value startDate endDate 2021-02-06 +0100 device".split()
text = " ".join(rng.choice(words) for _ in range(10000)).encode()       # compressible, dynamic Huffman
noise = bytes(rng.getrandbits(8) for _ in range(70000))                  # incompressible: stored blocks
runs = b"A" * 5000 + b"AB" * 3000 + bytes(range(256)) * 40 + b"Z" * 70000  # distance 1, 2, 256, length 258
far = noise[:40000] + text[:5000] + noise[:40000][-32768:]                # distance 32768 back-references

manifest = []

def raw_deflate(data, level, strategy=zlib.Z_DEFAULT_STRATEGY):
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
    return c.compress(data) + c.flush()

def put(name, kind, blob, expected):
    with open(os.path.join(out, name), "wb") as f:
        f.write(blob)
    manifest.append((name, kind, len(expected), hashlib.sha256(expected).hexdigest()))

for level in (0, 1, 6, 9):
    put(f"text-level{level}.deflate", "deflate", raw_deflate(text, level), text)
put("text-fixed.deflate", "deflate", raw_deflate(text, 6, zlib.Z_FIXED), text)
put("noise.deflate", "deflate", raw_deflate(noise, 6), noise)
put("runs.deflate", "deflate", raw_deflate(runs, 9), runs)
put("far.deflate", "deflate", raw_deflate(far, 9), far)
put("empty.deflate", "deflate", raw_deflate(b"", 6), b"")
put("one-byte.deflate", "deflate", raw_deflate(b"x", 6), b"x")

# A zip with a deflated and a stored entry and a non-ASCII name (flagged UTF-8).
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    z.writestr(zipfile.ZipInfo("apple_health_export/导出.xml", (2023, 5, 13, 10, 36, 12)), text, compress_type=zipfile.ZIP_DEFLATED)
    z.writestr(zipfile.ZipInfo("apple_health_export/stored.bin", (2023, 5, 13, 10, 36, 12)), noise[:1000], compress_type=zipfile.ZIP_STORED)
blob = buf.getvalue()
put("two-entries.zip", "zip", blob, text)

# The same zip with the UTF-8 flag cleared (bit 11) in every header: some tools
# write UTF-8 names without it.
b = bytearray(blob)
for sig in (b"PK\x03\x04", b"PK\x01\x02"):
    i = 0
    while (i := b.find(sig, i)) >= 0:
        flag_at = i + (6 if sig == b"PK\x03\x04" else 8)
        flags = struct.unpack_from("<H", b, flag_at)[0] & ~0x0800
        struct.pack_into("<H", b, flag_at, flags)
        i += 4
put("utf8-unflagged.zip", "zip", bytes(b), text)

# ZIP64 records (force_zip64) on a small entry.
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", allowZip64=True) as z:
    with z.open(zipfile.ZipInfo("export.xml", (2023, 1, 1, 0, 0, 0)), "w", force_zip64=True) as f:
        f.write(runs)
put("zip64.zip", "zip", buf.getvalue(), runs)

with open(os.path.join(out, "manifest.tsv"), "w") as f:
    for row in manifest:
        f.write("\t".join(str(x) for x in row) + "\n")
print(f"wrote {len(manifest)} fixtures to {os.path.normpath(out)}")
