#!/usr/bin/env bash
# Set up Tumble in ./.venv on Debian 12 (as root, with only Python 3.11 to start from).
#   bash .ci/setup.sh           system libraries for the app + the package
#   bash .ci/setup.sh --test    also what the tests need (Xvfb, xdotool, GTK drag source) + [test]
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[ "${1:-}" = "--test" ] && with_tests=1

# OpenGL/EGL from Mesa (software rendering works without a GPU) and what pyglet loads at run time.
# libgomp1: the OpenMP runtime numba runs the engine's parallel kernels on (physics/runtime.py).
# fonts-droid-fallback: Chinese, Japanese and Korean glyphs for file names in the panel and the
# notifications (app/render/imgui_gl.py merges it behind the UI font).
packages="libgl1 libegl1 libegl-mesa0 libgl1-mesa-dri libglx-mesa0 libglu1-mesa libx11-6 libxext6 libgomp1"
packages="$packages fonts-droid-fallback"
if [ "$with_tests" = 1 ]; then
  packages="$packages xvfb xauth xdotool x11-utils python3-gi gir1.2-gtk-3.0"
fi
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c "import ensurepip" 2>/dev/null; then
  packages="$packages python3-venv"
fi
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing system packages:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "missing system packages:$missing — install them as root (apt-get install$missing)" >&2
    exit 1
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if [ "$with_tests" = 1 ]; then
  .venv/bin/python -m pip install -q -e ".[test]"
else
  .venv/bin/python -m pip install -q -e .
fi
# Compile the numba kernels now (about six minutes once, in two processes: physics/warmup.py) so
# the first start of the app or the tests is warm: the engine's, and the recorder's colour
# conversion (compiled when app.video.recorder is imported)
.venv/bin/python -m physics.warmup
.venv/bin/python -c "import app.video.recorder"
