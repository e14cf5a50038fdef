#!/usr/bin/env python3
"""Rows for `strata write` memory runs (docs/BENCHMARKS.md): gen-input.py ROWS jsonl|csv FILE."""
import random, sys
n = int(sys.argv[1]); fmt = sys.argv[2]; out = sys.argv[3]
random.seed(1)
with open(out, "w") as f:
    if fmt == "csv":
        f.write("id,name,v\n")
    for i in range(n):
        k = random.randrange(1 << 40)
        if fmt == "csv":
            f.write('%d,name-%d,%d\n' % (k, i, i * 7))
        else:
            f.write('{"id":%d,"name":"name-%d","v":%d}\n' % (k, i, i * 7))
