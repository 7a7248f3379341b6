// The Node flags Portico's process runs with — in the image (Containerfile's and image/build-portico.sh's
// ENTRYPOINT) and in the benchmarks that start it as a process (e2e/bench). app/node-flags.test.ts checks they agree.
//
// --max-semi-space-size=8 (MB): V8 grows its young generation up to 64 MB per semi-space under allocation bursts
// (a start at 10,000 Ingresses parses tens of thousands of objects) and keeps it: 128 MB of the controller's RSS.
// Capped at 8 MB: RSS at 10,000 Ingresses 456 -> 313 MB, start-up not slower (4 MB: slower, more promoted garbage).
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];
