//go:build !linux

package localsqstest

import "os/exec"

func setParentDeathSignal(*exec.Cmd) {}
