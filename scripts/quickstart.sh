#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/quickstart.sh - the main job on a fresh Debian machine: install the
# dependencies, build, start the trace server (kept running in the
# background), capture the example PyTorch training run with every layer on,
# upload it, wait until the server has ingested it, and print the URL where
# it can be seen.  Idempotent: a server
# already answering on the port is reused.
#   PORT (default 8080), NX_DATA (default ~/.local/share/neuron-explorer)
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
scripts/install-deps.sh
scripts/build.sh _build
nx="$top/_build/neuron-explorer"
port=${PORT:-8080}
data=${NX_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/neuron-explorer}
url="http://127.0.0.1:$port"
mkdir -p "$data/runs"

if curl -fsS "$url/healthz" >/dev/null 2>&1; then
	echo "quickstart: server already running at $url/"
else
	nohup "$nx" serve --listen "127.0.0.1:$port" --data "$data" --web "$top/web" \
		>"$data/serve.log" 2>&1 &
	echo $! >"$data/serve.pid"
	i=0
	until curl -fsS "$url/healthz" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "quickstart: server did not start, see $data/serve.log" >&2; exit 1; }
		sleep 0.1
	done
	echo "quickstart: server started at $url/ (pid $(cat "$data/serve.pid"), log $data/serve.log)"
fi

run="$data/runs/train-$(date +%Y%m%d-%H%M%S).ntff"
echo "quickstart: capturing examples/train.py (PyTorch profiler + kernel layer) into $run"
"$nx" capture --env "$top/env/full.env" --set NX_RUN_NAME=quickstart-train \
	--upload "$url" --wait -o "$run" -- /usr/bin/python3 "$top/examples/train.py"
echo
echo "quickstart: open $url/ in a browser (the run is in the library, ingested)."
echo "quickstart: stop the server with: kill \$(cat $data/serve.pid)"
