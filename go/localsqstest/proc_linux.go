package localsqstest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal asks Linux to send the server SIGTERM when the test binary dies without
// running its cleanups (a panic, go test's -timeout, a kill), so no server outlives its tests.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
