// The Node flags Portico's process runs with — in the image (Containerfile's and image/build-portico.sh's
// ENTRYPOINT) and in the benchmarks that start it as a process (e2e/bench). app/node-flags.test.ts checks they agree.
//
// --max-semi-space-size=8 (MB): V8 grows its young generation up to 64 MB per semi-space under allocation bursts
// (a start at 10,000 Ingresses parses tens of thousands of objects) and keeps it: 128 MB of the controller's RSS.
// Capped at 8 MB: RSS at 10,000 Ingresses 456 -> 313 MB, start-up not slower (4 MB: slower, more promoted garbage).
//
// --expose-gc: operator/memory.ts's settler runs one full collection once the controller is quiet after a burst, which
// returns the burst's heap to the system (idle RSS at 10,000 Ingresses after reloads and scrapes: see README).
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--expose-gc'];

// The environment Portico's process runs with (the image's ENV, the process benchmarks). MALLOC_ARENA_MAX=2: glibc
// gives every thread that allocates its own malloc arena (Node runs libuv's pool and V8's platform threads), and each
// keeps what it once held: about 34 MB of an idle controller's RSS at 1,000 Ingresses; 2 arenas: -14 MB. The
// controller's work is one JavaScript thread, so the threads rarely contend for the two.
export const NODE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };
