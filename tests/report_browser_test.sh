#!/usr/bin/env bash
# report_browser_test.sh: kproof report's HTML page in a real browser.
# Chromium comes from the distribution's packages; when it is missing and
# cannot be installed, the test fails (it never skips).
# Usage: report_browser_test.sh BUILD_DIR SOURCE_DIR
set -u
B=$1
S=$2
K="$B/kproof"
F="$S/tests/fixtures"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}

browser() {
    for c in chromium chromium-browser google-chrome; do
        if command -v "$c" >/dev/null 2>&1; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

BR=$(browser)
if [ -z "$BR" ]; then
    echo "chromium is missing: installing it from the distribution's packages (apt-get install -y chromium)"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
            echo "FAIL cannot install chromium: not root and no sudo (install the chromium package)"
            exit 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { $SUDO apt-get install -y -o DPkg::Lock::Timeout=600 chromium >>"$T/apt.log" 2>&1; }
    apt_install || { $SUDO apt-get update -o DPkg::Lock::Timeout=600 >>"$T/apt.log" 2>&1 && apt_install; }
    BR=$(browser)
    if [ -z "$BR" ]; then
        echo "FAIL cannot install chromium (apt-get install -y chromium failed):"
        tail -n 20 "$T/apt.log"
        exit 1
    fi
fi
echo "browser: $("$BR" --version 2>/dev/null | head -n 1)"
# Root in a container has no user namespace sandbox; the page has no scripts.
FLAGS=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --disable-extensions
    --disable-background-networking "--user-data-dir=$T/profile")

# The page: a matmul run with cuBLAS baselines and a softmax run.
"$K" report "$F/matmul-bf16-03-wgmma.json" "$F/softmax-f32-10-a.json" -o "$T/report.html" 2>"$T/err"
check "report: exit 0" [ $? -eq 0 ]
check "report: wrote the page" [ -s "$T/report.html" ]
check "report: self-contained (no scripts, no remote URLs, no fonts)" \
    bash -c "! grep -Eiq '<script|<link|@import|@font-face|(src|href)=\"(https?:)?//|url\\((https?:)?//' '$T/report.html'"

# The console check must be able to fail: a page that logs an error does.
printf '<!DOCTYPE html><html><body><script>console.error("kp-control")</script></body></html>' >"$T/control.html"
timeout 120 "$BR" "${FLAGS[@]}" --enable-logging=stderr --v=0 --dump-dom "file://$T/control.html" \
    >"$T/control.dom" 2>"$T/control.err"
check "browser: a console error is seen (control page)" grep -q 'CONSOLE.*kp-control' "$T/control.err"

timeout 120 "$BR" "${FLAGS[@]}" --enable-logging=stderr --v=0 --dump-dom "file://$T/report.html" \
    >"$T/dom.html" 2>"$T/dom.err"
rc=$?
check "browser: loads the page (exit 0)" [ $rc -eq 0 ]
check "browser: no console messages or errors" bash -c "! grep -E ':CONSOLE|Uncaught|Failed to load' '$T/dom.err'"
check "DOM: the page rendered" grep -q "kproof report" "$T/dom.html"
check "DOM: two rooflines" [ "$(grep -o '<svg class="roofline"' "$T/dom.html" | wc -l)" -eq 2 ]
# matmul: 4 candidate points (one NOISY shape timed too) and 3 baselines; softmax: 3 candidates.
check "DOM: 7 candidate points" [ "$(grep -o 'class="pt cand"' "$T/dom.html" | wc -l)" -eq 7 ]
check "DOM: 3 baseline points" [ "$(grep -o 'class="pt base"' "$T/dom.html" | wc -l)" -eq 3 ]
check "DOM: points are labelled with shapes" grep -q '>4095x4095x4095 bf16-cublas<' "$T/dom.html"
check "DOM: the ceilings are drawn" [ "$(grep -o 'class="ceil"' "$T/dom.html" | wc -l)" -ge 4 ]

timeout 120 "$BR" "${FLAGS[@]}" --window-size=1100,1500 --screenshot="$T/shot.png" "file://$T/report.html" \
    >"$T/shot.out" 2>&1
check "browser: screenshot written" [ -s "$T/shot.png" ]
# The screenshot shows the chart: candidate blue and baseline orange in
# more pixels than the legends alone have, and the ceilings' dark lines.
python3 - "$T/shot.png" >"$T/png.txt" 2>&1 <<'EOF'
import struct, sys, zlib
from collections import Counter

def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = w * bpp
    # Byte-wise sums mod 256 of whole rows at once (carries kept inside each byte).
    lo = int.from_bytes(b"\x7f" * stride, "big")
    hi = int.from_bytes(b"\x80" * stride, "big")
    def add(a, b):
        x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
        return (((x & lo) + (y & lo)) ^ ((x ^ y) & hi)).to_bytes(stride, "big")
    prev = bytes(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        if f == 0:
            line = bytes(cur)
        elif f == 2:
            line = add(cur, prev)
        else:
            line = bytearray(cur)
            b = prev
            if f == 1:
                for i in range(bpp, stride):
                    line[i] = (line[i] + line[i - bpp]) & 255
            elif f == 3:
                for i in range(stride):
                    a = line[i - bpp] if i >= bpp else 0
                    line[i] = (line[i] + (a + b[i]) // 2) & 255
            elif f == 4:
                for i in range(stride):
                    if i >= bpp:
                        a, c = line[i - bpp], b[i - bpp]
                    else:
                        a = c = 0
                    bi = b[i]
                    pa, pb, pc = abs(bi - c), abs(a - c), abs(a + bi - 2 * c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else bi if pb <= pc else c)) & 255
            else:
                raise AssertionError("unknown PNG filter %d" % f)
            line = bytes(line)
        rows.append(line)
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = pixels(sys.argv[1])
# Every pixel's colour counted once (in C), then each colour classified.
colours = Counter()
for row in rows:
    colours.update(zip(row[0::bpp], row[1::bpp], row[2::bpp]))
def near(px, rgb, tol=12):
    return all(abs(px[k] - rgb[k]) <= tol for k in range(3))
blue = orange = dark = 0
nonwhite = w * h - colours[(255, 255, 255)]
for px, n in colours.items():
    if near(px, (0x1f, 0x77, 0xb4)): blue += n
    elif near(px, (0xff, 0x7f, 0x0e)): orange += n
    elif near(px, (0x22, 0x22, 0x22), 6): dark += n
print(f"{w}x{h}: nonwhite {nonwhite}, candidate blue {blue}, baseline orange {orange}, dark {dark}")
# A legend mark alone is about 80 blue or 100 orange pixels; the first
# chart (the one in view) adds at least two of each marker.
ok = nonwhite > 0.03 * w * h and blue > 150 and orange > 200 and dark > 1000
sys.exit(0 if ok else 1)
EOF
rc=$?
cat "$T/png.txt"
check "screenshot: the chart's points and ceilings are there" [ $rc -eq 0 ]
if [ -n "${KP_KEEP_SCREENSHOT:-}" ]; then cp "$T/shot.png" "$KP_KEEP_SCREENSHOT"; fi

[ $fail -eq 0 ] && echo "report_browser: all ok" || echo "report_browser: FAILED"
exit $fail
