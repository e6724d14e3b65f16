"""store_diff.py A.dump B.dump [--apart-from-measurements]: compares two
`mdb_dump -a` outputs table by table and prints the first difference (exit 1)
or nothing (exit 0).  With --apart-from-measurements the values of what a
machine measures are not compared, only that the same keys are there, for
the profiles (times, and flags judged against the machine's roofline), and
the meta keys "calibration" and "machine/*" (one per node that measured) are
left out; every other byte must be equal.
"""
import sys

MEASURED_META = (b"calibration", b"machine/")


def read_dump(path):
    """{table: [(key, value), ...]} in the dump's order (LMDB's key order)."""
    tables, name, pairs, in_data = {}, None, None, False
    with open(path, encoding="ascii") as f:
        lines = [line.rstrip("\n") for line in f]
    i = 0
    while i < len(lines):
        line = lines[i]
        if not in_data:
            if line.startswith("database="):
                name = line[len("database="):]
            elif line == "HEADER=END":
                in_data, pairs = True, []
            i += 1
        elif line == "DATA=END":
            tables[name] = pairs
            name, in_data = None, False
            i += 1
        else:
            pairs.append((bytes.fromhex(line[1:]), bytes.fromhex(lines[i + 1][1:])))
            i += 2
    return tables


def measured(table, key):
    return table == "profiles" or (table == "meta" and key.startswith(MEASURED_META))


def measurements_blanked(table, pairs):
    """The profiles without their values; meta without the machines, whose
    ids and number depend on the nodes that measured."""
    if table == "meta":
        return [(k, v) for k, v in pairs if not measured(table, k)]
    return [(k, None if measured(table, k) else v) for k, v in pairs]


def first_difference(a, b, apart_from_measurements):
    if sorted(a) != sorted(b):
        return "tables differ: %s against %s" % (sorted(a), sorted(b))
    for table in sorted(a):
        pa, pb = a[table], b[table]
        if apart_from_measurements:
            pa = measurements_blanked(table, pa)
            pb = measurements_blanked(table, pb)
        if pa == pb:
            continue
        for (ka, va), (kb, vb) in zip(pa, pb):
            if ka != kb:
                return "%s: key %s against key %s" % (table, ka.hex(), kb.hex())
            if va != vb:
                return "%s: key %s has other bytes" % (table, ka.hex())
        return "%s: %d records against %d" % (table, len(pa), len(pb))
    return None


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    loose = "--apart-from-measurements" in sys.argv[1:]
    if len(args) != 2:
        sys.exit("usage: store_diff.py A.dump B.dump [--apart-from-measurements]")
    diff = first_difference(read_dump(args[0]), read_dump(args[1]), loose)
    if diff:
        print(diff)
        sys.exit(1)


if __name__ == "__main__":
    main()
