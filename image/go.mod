// Small Go programs for Portico's images: the OCI archive writer used by the daemonless build (cmd/ocipack) and
// the two test-node images (cmd/pause, cmd/echo). Standard library only, so `go build` never downloads a module.
module portico.dev/image

go 1.22
