"""A GGUF model's skeleton, for timing generation where the model cannot travel (Gemma 3 270M Q4_K_M
is 253 MB; the GPU machine takes 64 MiB): its header, metadata (tokenizer included) and tensor table,
exactly as in the file, without the tensor data. `expand` rebuilds a file of the model's size whose
tensor data are zeros (sparse: nothing is written): llama.cpp loads it as the model and runs every
kernel on the same shapes and quantisation types, so tokens per second are the real model's; the
text it generates is meaningless. Standard library only.

Usage: gguf_skeleton.py cut GGUF_HEAD OUT.skeleton   (GGUF_HEAD: the file, or its first part)
       gguf_skeleton.py expand SKELETON SIZE OUT.gguf
"""

import json
import os
import struct
import sys

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return value

    def string(self):
        length = self.take("<Q")
        value = self.data[self.at : self.at + length].decode("utf-8", "replace")
        self.at += length
        return value

    def value(self, kind):
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item, count = self.take("<I"), self.take("<Q")
            return [self.value(item) for _ in range(count)]
        return self.take(SCALARS[kind])


def data_start(head):
    """Where the tensor data begin: after the metadata and the tensor table, aligned."""
    r = Reader(head)
    if r.take("<I") != 0x46554747:
        sys.exit("not a GGUF file")
    version, tensors, kvs = r.take("<I"), r.take("<Q"), r.take("<Q")
    alignment, architecture = 32, None
    for _ in range(kvs):
        key, kind = r.string(), r.take("<I")
        value = r.value(kind)
        if key == "general.alignment":
            alignment = value
        elif key == "general.architecture":
            architecture = value
    for _ in range(tensors):
        r.string()
        dims = r.take("<I")
        r.at += 8 * dims + 4 + 8  # dims, type, offset
    return (r.at + alignment - 1) // alignment * alignment, {
        "version": version,
        "tensors": tensors,
        "architecture": architecture,
    }


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "cut":
        head = open(sys.argv[2], "rb").read()
        start, info = data_start(head)
        with open(sys.argv[3], "wb") as out:
            out.write(head[:start])
        print(json.dumps({"name": "gguf_skeleton", "bytes": start, **info}))
    elif len(sys.argv) == 5 and sys.argv[1] == "expand":
        skeleton, size = open(sys.argv[2], "rb").read(), int(sys.argv[3])
        with open(sys.argv[4], "wb") as out:
            out.write(skeleton)
            out.truncate(size)
        print(json.dumps({"name": "gguf_expanded", "bytes": os.path.getsize(sys.argv[4]), "tensor_data": "zeros"}))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
