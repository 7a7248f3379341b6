// echo: the test backend image. The same answers as the pod host's Node echo server (e2e/podhost/echo.ts), so
// tests can share their assertions whichever backend they run against:
//
//	HTTP (PORT / -port, default 8080): every request gets 200 and a JSON body
//	  {pod, namespace, ip, method, path, host, headers, remotePort, remoteAddr}
//	  where path is the raw request target (path and query, as sent), headers have lower-case names (repeated
//	  headers joined with ", ", cookies with "; ", as Node does) and ip is POD_IP or the address the request
//	  arrived on. ?status=NNN or the X-Echo-Status header sets the status (STATUS sets it for every request: a
//	  failing pod); ?delay=MS delays the answer (DELAY_MS for every request; at most 60 s). GET /healthz is 200 "ok".
//	TCP (TCP_PORT, off when unset): bytes are echoed back; with TCP_BANNER=1 the pod name and "\n" come first.
//	UDP (UDP_PORT, off when unset): each datagram is answered with the pod name, "\n", then the datagram.
//
// POD_NAME and POD_NAMESPACE name the pod (the kubelet's downward API). SIGTERM/SIGINT: the listeners close at
// once, in-flight HTTP requests may finish (SHUTDOWN_TIMEOUT, default 10s), then the process exits 0.
// It writes no file, so it runs as any uid with a read-only root filesystem.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type pod struct {
	name, namespace, ip string
	status              int
	delay               time.Duration
}

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			log.Fatalf("echo: %s=%q: not an integer", name, v)
		}
		return n
	}
	return def
}

func main() {
	log.SetFlags(0)
	port := flag.Int("port", envInt("PORT", 8080), "HTTP port (env PORT)")
	tcpPort := flag.Int("tcp-port", envInt("TCP_PORT", 0), "TCP echo port, 0 = off (env TCP_PORT)")
	udpPort := flag.Int("udp-port", envInt("UDP_PORT", 0), "UDP echo port, 0 = off (env UDP_PORT)")
	addr := flag.String("listen", os.Getenv("LISTEN_ADDRESS"), "address to bind (env LISTEN_ADDRESS; default all)")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println("portico-echo 1")
		return
	}
	grace, err := time.ParseDuration(envOr("SHUTDOWN_TIMEOUT", "10s"))
	if err != nil {
		log.Fatalf("echo: SHUTDOWN_TIMEOUT: %v", err)
	}
	p := pod{
		name: envOr("POD_NAME", hostname()), namespace: os.Getenv("POD_NAMESPACE"), ip: os.Getenv("POD_IP"),
		status: envInt("STATUS", 0), delay: time.Duration(envInt("DELAY_MS", 0)) * time.Millisecond,
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	hl, err := net.Listen("tcp", net.JoinHostPort(*addr, strconv.Itoa(*port)))
	if err != nil {
		log.Fatalf("echo: %v", err)
	}
	srv := &http.Server{Handler: handler(p), IdleTimeout: 65 * time.Second, ReadHeaderTimeout: 30 * time.Second}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("echo: http: %v", err)
		}
	}()
	log.Printf("echo: pod %s: http on %s", p.name, hl.Addr())

	var closers []io.Closer
	if *tcpPort > 0 {
		tl, err := net.Listen("tcp", net.JoinHostPort(*addr, strconv.Itoa(*tcpPort)))
		if err != nil {
			log.Fatalf("echo: %v", err)
		}
		closers = append(closers, tl)
		banner := os.Getenv("TCP_BANNER") == "1" || os.Getenv("TCP_BANNER") == "true"
		wg.Add(1)
		go func() { defer wg.Done(); serveTCP(tl, p, banner) }()
		log.Printf("echo: tcp on %s", tl.Addr())
	}
	if *udpPort > 0 {
		uc, err := net.ListenPacket("udp", net.JoinHostPort(*addr, strconv.Itoa(*udpPort)))
		if err != nil {
			log.Fatalf("echo: %v", err)
		}
		closers = append(closers, uc)
		wg.Add(1)
		go func() { defer wg.Done(); serveUDP(uc, p) }()
		log.Printf("echo: udp on %s", uc.LocalAddr())
	}

	<-ctx.Done()
	log.Printf("echo: stopping")
	for _, c := range closers {
		c.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	tcpConns.closeAll()
	wg.Wait()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func handler(p pod) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "ok\n")
			return
		}
		q := r.URL.Query()
		status := 200
		if p.status != 0 {
			status = p.status
		}
		if v := r.Header.Get("X-Echo-Status"); v != "" {
			status = atoiOr(v, 200)
		}
		if v := q.Get("status"); v != "" {
			status = atoiOr(v, 200)
		}
		if status < 100 || status > 599 {
			status = 200
		}
		delay := p.delay + time.Duration(atoiOr(q.Get("delay"), 0))*time.Millisecond
		if delay > 60*time.Second {
			delay = 60 * time.Second
		}

		ip := p.ip
		if ip == "" {
			if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
				ip, _, _ = net.SplitHostPort(a.String())
			}
		}
		remotePort := 0
		if _, ps, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			remotePort, _ = strconv.Atoi(ps)
		}
		// JSON as JSON.stringify writes it: no HTML escaping of <, > and &.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]any{
			"pod": p.name, "namespace": p.namespace, "ip": ip, "method": r.Method, "path": r.RequestURI,
			"host": r.Host, "headers": nodeHeaders(r), "remotePort": remotePort, "remoteAddr": r.RemoteAddr,
		})
		body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		// Read the whole request body first, as the Node server does, so the client never sees an early answer.
		io.Copy(io.Discard, r.Body)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		h.Set("X-Pod", p.name)
		w.WriteHeader(status)
		w.Write(body)
	})
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// nodeHeaders renders the request headers the way Node's req.headers does: lower-case names, the Host header
// included, repeated values joined.
func nodeHeaders(r *http.Request) map[string]string {
	out := map[string]string{}
	for k, vs := range r.Header {
		name := strings.ToLower(k)
		sep := ", "
		if name == "cookie" {
			sep = "; "
		}
		out[name] = strings.Join(vs, sep)
	}
	if r.Host != "" {
		out["host"] = r.Host
	}
	if len(r.TransferEncoding) > 0 {
		out["transfer-encoding"] = strings.Join(r.TransferEncoding, ", ")
	}
	return out
}

// tcpConns tracks open TCP echo connections so shutdown can close them (an idle echo peer would block forever).
var tcpConns = &connSet{m: map[net.Conn]struct{}{}}

type connSet struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

func (s *connSet) add(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.m[c] = struct{}{}
	return true
}

func (s *connSet) remove(c net.Conn) {
	s.mu.Lock()
	delete(s.m, c)
	s.mu.Unlock()
}

func (s *connSet) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.m {
		c.Close()
	}
}

func serveTCP(l net.Listener, p pod, banner bool) {
	for {
		c, err := l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				log.Printf("echo: tcp: %v", err)
			}
			return
		}
		if !tcpConns.add(c) {
			c.Close()
			return
		}
		go func() {
			defer func() { tcpConns.remove(c); c.Close() }()
			if banner {
				if _, err := io.WriteString(c, p.name+"\n"); err != nil {
					return
				}
			}
			io.Copy(c, c)
		}()
	}
}

func serveUDP(c net.PacketConn, p pod) {
	buf := make([]byte, 64*1024)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				log.Printf("echo: udp: %v", err)
			}
			return
		}
		reply := append([]byte(p.name+"\n"), buf[:n]...)
		if _, err := c.WriteTo(reply, from); err != nil {
			log.Printf("echo: udp: %v", err)
		}
	}
}
