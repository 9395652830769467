"""The largest difference between the tensors of two safetensors files.

Prints the largest relative difference over all F32 tensors (each tensor's
max |a - b| over its max |a|, 0 for a tensor of zeros that stayed zero) and
exits 1 if it is above the bound given, or if the files do not have the same
tensors. `--same` asks for the same bits. Standard library only.
The optimizer's moments (adam.*, adadelta.*) are left out of the bounded
comparison: a second moment of a gradient near zero differs relatively much
while the weight it scales moves alike. `--same` compares every tensor.
`--except SUFFIX` (any number of times) leaves the tensors whose names end
with SUFFIX out of the bounded comparison: a Transformer's key biases
(`.b_k`) have a gradient of zero in exact arithmetic (the softmax over the
keys does not change when every score of a query moves by q . b_k), so
what they hold is rounding noise, which Adam magnifies into steps of the lr.
Usage: st_diff.py A B BOUND [--except SUFFIX]... | st_diff.py A B --same
"""
import array
import json
import struct
import sys


def tensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        begin, end = t["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        out[name] = raw
    return out


def main(a, b, bound, *rest):
    skip = tuple(rest[i + 1] for i in range(0, len(rest) - 1, 2) if rest[i] == "--except")
    ta, tb = tensors(a), tensors(b)
    if sorted(ta) != sorted(tb):
        print(f"different tensors: {sorted(set(ta) ^ set(tb))}")
        return 1
    if bound == "--same":
        diff = [k for k in ta if ta[k] != tb[k]]
        print("the same bits" if not diff else f"{len(diff)} tensors differ, e.g. {diff[0]}")
        return 1 if diff else 0
    worst, where = 0.0, ""
    for k in sorted(ta):
        if k.startswith(("adam.", "adadelta.")) or (skip and k.endswith(skip)):
            continue
        x, y = array.array("f"), array.array("f")
        x.frombytes(ta[k])
        y.frombytes(tb[k])
        scale = max((abs(v) for v in x), default=0.0)
        d = max((abs(p - q) for p, q in zip(x, y)), default=0.0)
        rel = d / scale if scale > 0 else d
        if rel > worst:
            worst, where = rel, k
    print(f"{worst:.3g} {where}")
    return 1 if worst > float(bound) else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
