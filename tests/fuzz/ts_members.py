#!/usr/bin/env python3
"""ts_members.py MODEL.pt OUT - a TorchScript archive as the member list the
torchscript fuzz harness reads: [u16 name length][name][u32 length][data]
per member, names without the archive's top folder, debug pickles left out."""
import struct
import sys
import zipfile

with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    for info in z.infolist():
        name = info.filename.split("/", 1)[-1]
        if name.endswith(".debug_pkl"):
            continue
        data = z.read(info)
        b = name.encode()
        out.write(struct.pack("<H", len(b)) + b + struct.pack("<I", len(data)) + data)
