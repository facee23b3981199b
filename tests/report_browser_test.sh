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
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = pixels(sys.argv[1])
def near(px, rgb, tol=12):
    return all(abs(px[k] - rgb[k]) <= tol for k in range(3))
blue = orange = dark = nonwhite = 0
for row in rows:
    for x in range(w):
        px = row[x * bpp:x * bpp + 3]
        if px != b"\xff\xff\xff":
            nonwhite += 1
        if near(px, (0x1f, 0x77, 0xb4)): blue += 1
        elif near(px, (0xff, 0x7f, 0x0e)): orange += 1
        elif near(px, (0x22, 0x22, 0x22), 6): dark += 1
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
