// One static binary, two roles, for the real node (e2e/node) when dist/ has no images yet:
//   /pause  the pod sandbox process: sleeps until SIGTERM/SIGINT, reaps orphans (it is PID 1 of a shared PID ns);
//   /echo   an HTTP server on $PORT (default 8080): /healthz answers "ok", any other path a JSON description of the
//           request and of this pod (hostname, POD_NAME, POD_IP when set). SIGTERM stops it after $DRAIN_SECONDS
//           (default 0).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	role := filepath.Base(os.Args[0])
	if len(os.Args) > 1 {
		role = os.Args[1]
	}
	switch role {
	case "pause":
		pause()
	case "echo":
		echo()
	default:
		fmt.Fprintf(os.Stderr, "unknown role %q (pause|echo)\n", role)
		os.Exit(2)
	}
}

func pause() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}

func echo() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"host": host, "pod": os.Getenv("POD_NAME"), "podIP": os.Getenv("POD_IP"),
			"method": r.Method, "path": r.URL.Path, "remote": r.RemoteAddr, "requestHost": r.Host,
		})
	})
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
		<-sigs
		drain, _ := strconv.Atoi(os.Getenv("DRAIN_SECONDS"))
		time.Sleep(time.Duration(drain) * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
