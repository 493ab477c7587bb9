#!/usr/bin/env python3
# Seeds for fuzz_hist_region: hist regions in the layout of src/analyze/hist_region.h,
# one table each (a real region has 64: too big for the fuzzer's inputs), some slots filled.
import os, struct, sys

FORMAT = (b"name: request\nID: 600\nformat:\n"
          b"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
          b"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
          b"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
          b"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
          b"\tfield:u64 route;\toffset:8;\tsize:8;\tsigned:0;\n"
          b"\tfield:u64 bytes;\toffset:16;\tsize:8;\tsigned:0;\n\n"
          b"print fmt: \"route=%llu bytes=%llu\", REC->route, REC->bytes\n")

def region(spec, nkeys, nvals, entries, state=2):
    event = b"app:request"
    bits = 7
    nslots, max_entries = 2 << bits, 1 << bits
    words = 3 + nvals + nkeys
    texts = event + spec + FORMAT
    tables_off = (96 + len(texts) + 63) // 64 * 64
    slots_off = tables_off + 32
    size = slots_off + nslots * words * 8
    hdr = struct.pack("<8sIIQIIIIIIIIIIQQQQ", b"TBHISTR\0", 1, 96, size, 1, 4242, 0, 1, nslots, words,
                      max_entries, len(event), len(spec), len(FORMAT), tables_off, slots_off, 3, 0)
    buf = bytearray(size)
    buf[0:96] = hdr
    buf[96:96 + len(texts)] = texts
    struct.pack_into("<IIQQQ", buf, tables_off, 0, 0, len(entries), 1, 0)
    for i, (key, hits, sums) in enumerate(entries):
        slot = [state, 1000 + i, hits] + sums + key
        struct.pack_into("<%dQ" % words, buf, slots_off + (i * 7 % nslots) * words * 8, *slot)
    return bytes(buf)

out = sys.argv[1] if len(sys.argv) > 1 else "corpus/hist_region"
os.makedirs(out, exist_ok=True)
seeds = {
    "route-bytes": region(b"keys=route:vals=bytes:sort=route:size=128", 1, 1,
                          [([r], 10 * r + 1, [100 * r]) for r in range(5)]),
    "compound": region(b"keys=route,bytes:vals=bytes:sort=bytes.descending:size=128", 2, 1,
                       [([r, r * 3], r + 1, [r * 3 * (r + 1)]) for r in range(9)]),
    "updating": region(b"keys=route.hex:size=128", 1, 0, [([7], 5, [])], state=3),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
