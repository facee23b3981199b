#!/usr/bin/env python3
"""tracecost.py DIR: what device-work tracing and the sandbox cost, from
gpu-check's tracecost stage (DIR/<traced|unaudited|unsandboxed>-<round>/<op>-<kernel>.json).

Per kernel and shape: the median over rounds of each mode's medians, the
cost of tracing (traced against unaudited, both sandboxed) and of the
sandbox (traced against unsandboxed, both traced), and how far each mode's
medians moved across rounds on their own (the noise a cost must exceed to
count). Writes DIR/summary.json and prints a markdown table."""
import glob
import json
import os
import statistics
import sys

MODES = ("traced", "unaudited", "unsandboxed")


def spread(v):
    return (max(v) - min(v)) / min(v) if len(v) > 1 else 0.0


def main():
    root = sys.argv[1]
    runs = {}  # (kernel, shape) -> mode -> [median_s]
    for path in sorted(glob.glob(os.path.join(root, "*-*", "*.json"))):
        mode = os.path.basename(os.path.dirname(path)).split("-")[0]
        try:
            d = json.load(open(path))
        except (OSError, ValueError):
            print(f"unreadable: {path}", file=sys.stderr)
            continue
        kern = os.path.basename(path)[: -len(".json")]
        for sh in d.get("shapes", []):
            t = sh.get("timing")
            if not t or not t.get("median_s") or sh.get("verdict") not in ("PASS", "NOISY"):
                continue
            key = (kern, "x".join(str(v) for v in sh.get("shape", [])))
            runs.setdefault(key, {}).setdefault(mode, []).append(t["median_s"])
    rows = []
    for (kern, shape), m in sorted(runs.items()):
        if not m.get("traced"):
            continue
        row = {"kernel": kern, "shape": shape, "rounds": min(len(m.get(mode, [])) for mode in MODES if m.get(mode))}
        for mode in MODES:
            if m.get(mode):
                row[mode + "_s"] = statistics.median(m[mode])
                row[mode + "_spread_pct"] = 100 * spread(m[mode])
        if "unaudited_s" in row:
            row["tracing_cost_pct"] = 100 * (row["traced_s"] / row["unaudited_s"] - 1)
        if "unsandboxed_s" in row:
            row["sandbox_cost_pct"] = 100 * (row["traced_s"] / row["unsandboxed_s"] - 1)
        rows.append(row)
    json.dump(rows, open(os.path.join(root, "summary.json"), "w"), indent=1)

    def us(r, k):
        return f"{r[k] * 1e6:.2f} us" if k in r else "-"

    def pct(r, k):
        return f"{r[k]:+.2f}%" if k in r else "-"

    print("| kernel | shape | traced | unaudited | unsandboxed | tracing costs | sandbox costs | same mode moved (max) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        moved = max(r.get(mode + "_spread_pct", 0) for mode in MODES)
        moved = f"{moved:.2f}% ({r['rounds']} rounds)" if r["rounds"] > 1 else "- (1 round)"
        print(f"| {r['kernel']} | {r['shape']} | {us(r, 'traced_s')} | {us(r, 'unaudited_s')} | {us(r, 'unsandboxed_s')} | "
              f"{pct(r, 'tracing_cost_pct')} | {pct(r, 'sandbox_cost_pct')} | {moved} |")
    for key, what in (("tracing_cost_pct", "tracing"), ("sandbox_cost_pct", "the sandbox")):
        have = [r for r in rows if key in r]
        if have:
            worst = max(have, key=lambda r: abs(r[key]))
            print(f"\n{what}: largest {worst[key]:+.2f}% ({worst['kernel']} at {worst['shape']}); "
                  f"median over rows {statistics.median(r[key] for r in have):+.2f}%")


if __name__ == "__main__":
    main()
