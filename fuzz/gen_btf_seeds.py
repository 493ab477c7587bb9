#!/usr/bin/env python3
"""Seeds for fuzz_btf from the running kernel's BTF: corpus/btf/real-first-N
(a valid blob of the kernel's first N types, their names re-packed into a
small string section), corpus/btf/real-truncated (that blob's first half:
the header promises more than there is) and corpus/btf/real-record-cut (a
consistent header whose type section ends inside a type record).
Usage: gen_btf_seeds.py [/sys/kernel/btf/vmlinux] [N]."""
import os, struct, sys

src = sys.argv[1] if len(sys.argv) > 1 else "/sys/kernel/btf/vmlinux"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 200
data = open(src, "rb").read()
magic, ver, flags, hlen, toff, tlen, soff, slen = struct.unpack_from("<HBBIIIII", data)
assert magic == 0xeB9F and ver == 1
types = data[hlen + toff: hlen + toff + tlen]
strs = data[hlen + soff: hlen + soff + slen]

def name(off):
    return strs[off: strs.index(b"\0", off)]

# Bytes of kind-specific data per kind (include/uapi/linux/btf.h).
def extra(kind, vlen):
    return {1: 4, 3: 12, 4: 12 * vlen, 5: 12 * vlen, 6: 8 * vlen, 13: 8 * vlen,
            14: 4, 15: 12 * vlen, 17: 4, 19: 12 * vlen}.get(kind, 0)

new_strs, index = bytearray(b"\0"), {b"": 0}
def intern(off):
    n = name(off)
    if n not in index:
        index[n] = len(new_strs)
        new_strs.extend(n + b"\0")
    return index[n]

out, pos = bytearray(), 0
for _ in range(N):
    name_off, info, size = struct.unpack_from("<III", types, pos)
    kind, vlen = (info >> 24) & 0x1f, info & 0xffff
    rec = bytearray(types[pos: pos + 12 + extra(kind, vlen)])
    struct.pack_into("<I", rec, 0, intern(name_off))
    if kind in (4, 5, 6, 13, 19):          # members, enumerators, params name strings too
        stride = 8 if kind in (6, 13) else 12
        for i in range(vlen):
            o = 12 + i * stride
            struct.pack_into("<I", rec, o, intern(struct.unpack_from("<I", rec, o)[0]))
    out += rec
    pos += len(rec)

hdr = struct.pack("<HBBIIIII", 0xeB9F, 1, 0, 24, 0, len(out), len(out), len(new_strs))
blob = hdr + bytes(out) + bytes(new_strs)
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "corpus", "btf"), exist_ok=True)
open(os.path.join(here, "corpus", "btf", "real-first-%d" % N), "wb").write(blob)
half = len(blob) // 2
open(os.path.join(here, "corpus", "btf", "real-truncated"), "wb").write(blob[:half])
cut = len(out) // 2 + 6                      # some bytes into a record
hdr = struct.pack("<HBBIIIII", 0xeB9F, 1, 0, 24, 0, cut, cut, len(new_strs))
open(os.path.join(here, "corpus", "btf", "real-record-cut"), "wb").write(
    hdr + bytes(out[:cut]) + bytes(new_strs))
print("real-first-%d: %d bytes, real-truncated: %d, real-record-cut: %d" %
      (N, len(blob), half, 24 + cut + len(new_strs)))
