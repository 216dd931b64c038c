//go:build walkthrough

package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLocalLibRunning: deploy/local-lib.sh's running sees a daemon start
// has just forked as running, before it has exec'ed its command (make up
// asks at once, and once said "scheduler exited while starting" of a
// scheduler that was starting); a daemon that has exited, a pid that is
// gone and a pid that is not ours are not running.
func TestLocalLibRunning(t *testing.T) {
	script := `set -euo pipefail
export SKIFF_HOME="$(mktemp -d)"
trap 'rm -rf "$SKIFF_HOME"' EXIT
mkdir -p "$SKIFF_HOME/run" "$SKIFF_HOME/logs"
LOG_TAG=test
source deploy/local-lib.sh
missed=0
for i in $(seq 1 200); do
	start "d$i" sh -c 'sleep 1' "$SKIFF_HOME" >/dev/null
	running "d$i" || missed=$((missed + 1))
done
echo "missed $missed"
start gone sh -c 'exit 3' "$SKIFF_HOME" >/dev/null
wait "$(cat "$SKIFF_HOME/run/gone.pid")" || true
running gone && echo "exited: running" || echo "exited: not running"
echo 4194304 >"$SKIFF_HOME/run/nopid.pid"
running nopid && echo "no pid: running" || echo "no pid: not running"
echo 1 >"$SKIFF_HOME/run/init.pid"
running init && echo "foreign: running" || echo "foreign: not running"
wait
`
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"missed 0", "exited: not running", "no pid: not running", "foreign: not running"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
