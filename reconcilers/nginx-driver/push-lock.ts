// The push lock: both lanes push to Lua through it, one push at a time, in the order they asked. Each push computes
// endpoints from the model while it holds the lock, so the last push carries the newest endpoints whichever lane
// made it. A push that fails releases the lock like one that succeeds.
export class PushLock {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` once every push queued before it has finished. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
