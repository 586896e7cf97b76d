# figures.sh — every post-processing script turns a (small) results file into a PNG.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
P="$SOURCE_DIR/postproc"
is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
"$T" run "$CONFIGS/smoke.yaml" -o smoke.h5 --set ensemble.members=50 --set integrator.t_end=0.5 --quiet
"$T" run "$CONFIGS/wheel-fig5.yaml" -o f5.h5 --set ensemble.members=8 --set integrator.t_end=100 \
  --set output.trajectory_samples=100 --quiet
"$T" run "$CONFIGS/wheel-fig4.yaml" -o f4.h5 --set map.x.points=30 --set map.y.points=20 --quiet
"$T" run "$CONFIGS/logistic-scan.yaml" -o scan.h5 --set scan.x.points=50 --quiet
"$PYTHON" "$P/ensemble_figure.py" smoke.h5 smoke.png >/dev/null
"$PYTHON" "$P/scan_figure.py" scan.h5 scan.png >/dev/null
"$PYTHON" "$P/wheel_fig5.py" f5.h5 f5.png >/dev/null
"$PYTHON" "$P/wheel_fig4.py" f4.h5 f4.png >/dev/null
for f in smoke.png f5.png f4.png scan.png; do is_png "$f" && pass "$f" || fail "$f not written"; done
finish
