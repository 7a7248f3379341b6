// pause: the sandbox ("infra") container of the test node's pods. As PID 1 of the pod's PID namespace it holds
// the namespaces open, does nothing, reaps any orphan that is re-parented to it (SIGCHLD), and exits 0 on
// SIGTERM or SIGINT. The kernel delivers no signal to a PID 1 without a handler, so both are handled explicitly.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("portico-pause 1")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	reap() // children that died before the handler was installed
	for s := range sigs {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child; SIGCHLD is not queued, so one signal may stand for several exits.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
