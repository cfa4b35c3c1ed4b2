#!/bin/sh
# Renders an lca HTML report in headless Chromium (Debian's `chromium`, installed here when
# missing) and writes a full-page screenshot, to look at the report as a person would:
#   tools/check-report.sh REPORT_DIR/index.html [SCREENSHOT.png]
# Builds the bundled fft2d report first when called without arguments.
set -eu
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
page=${1:-}
shot=${2:-report.png}
if [ -z "$page" ]; then
    dir=$(mktemp -d)
    cargo run --release -q -p lca -- model datasets/data/fft2d.dat --where impl=dp,role=model --out "$dir/dp.toml" >/dev/null
    cargo run --release -q -p lca -- model datasets/data/fft2d.dat --where impl=tp,role=model --out "$dir/tp.toml" >/dev/null
    cargo run --release -q -p lca -- report "$dir/dp.toml" "$dir/tp.toml" --data datasets/data/fft2d.dat --out "$dir/report"
    page="$dir/report/index.html"
fi
# A tall window: the screenshot shows the whole page; 1280 px wide is a laptop screen.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1280,2400 --screenshot="$shot" "file://$(realpath "$page")" 2>/dev/null
echo "screenshot: $shot"
