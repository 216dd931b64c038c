#!/usr/bin/env python3
"""ratios.py A B DIR... : the bench figures of build A over build B, round by round.

For each figure both logs of a round report (as rounds.sh writes them, over any
number of directories), prints the median of A and of B over the rounds, the
median over the rounds of A/B within each round, and a 95% interval of that
median: the 2.5% and 97.5% points of the median of 4,000 resamples of the
rounds (a bootstrap; seeded, so the same logs print the same interval).
"""
import glob
import os
import random
import re
import statistics
import sys

FIGURES = [
    ("creates/s, protobuf", r"create, client-go protobuf.*?\*\*(\d+) creates/s\*\*"),
    ("CPU per create, protobuf (µs)", r"create, client-go protobuf.*?CPU (\d+) µs"),
    ("creates/s, JSON", r"create, client-go JSON.*?\*\*(\d+) creates/s\*\*"),
    ("CPU per create, JSON (µs)", r"create, client-go JSON.*?CPU (\d+) µs"),
    ("watch p50, 100 writes/s (ms)", r"100 writes/s; protobuf\): p50 ([\d.]+) ms"),
    ("watch p99, 100 writes/s (ms)", r"100 writes/s; protobuf\): p50 [\d.]+ ms, \*\*p99 ([\d.]+) ms"),
    ("CPU per update, 100 writes/s (ms)", r"100 writes/s; protobuf\):.*?CPU ([\d.]+) ms per update"),
    ("update request p99, 100 writes/s (ms)", r"100 writes/s; protobuf\):.*?update request p50 [\d.]+ ms p99 ([\d.]+) ms"),
    ("first watcher p99, 100 writes/s (ms)", r"100 writes/s; protobuf\):.*?first watcher p50 [\d.]+ ms p99 ([\d.]+) ms"),
    ("first to last p99, 100 writes/s (ms)", r"100 writes/s; protobuf\):.*?first to last p50 [\d.]+ ms p99 ([\d.]+) ms"),
    ("watch p99, back-to-back (ms)", r"back-to-back from one writer; protobuf\): p50 [\d.]+ ms, \*\*p99 ([\d.]+) ms"),
    ("CPU per update, back-to-back (ms)", r"back-to-back from one writer; protobuf\):.*?CPU ([\d.]+) ms per update"),
]


def figure(path, pattern):
    m = re.search(pattern, open(path, encoding="utf-8").read())
    return float(m.group(1)) if m else None


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    a, b, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rng = random.Random(1)
    for name, pattern in FIGURES:
        va, vb, ratio = [], [], []
        for d in dirs:
            for fa in sorted(glob.glob(os.path.join(d, "r*-%s.log" % a))):
                rnd = re.match(r"r(\d+)-", os.path.basename(fa)).group(1)
                fb = os.path.join(d, "r%s-%s.log" % (rnd, b))
                if not os.path.exists(fb):
                    continue
                xa, xb = figure(fa, pattern), figure(fb, pattern)
                if xa is None or xb is None:
                    continue
                va.append(xa)
                vb.append(xb)
                ratio.append(xa / xb)
        if not ratio:
            continue
        n = len(ratio)
        boot = sorted(statistics.median(rng.choices(ratio, k=n)) for _ in range(4000))
        print("%-40s %s %-8g %s %-8g %s/%s %.3f [%.3f, %.3f]  rounds %d" % (
            name, a, statistics.median(va), b, statistics.median(vb), a, b,
            statistics.median(ratio), boot[100], boot[3899], n))


if __name__ == "__main__":
    main()
