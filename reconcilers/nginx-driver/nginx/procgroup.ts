// nginx runs in its own process group (spawned detached: the master is the group leader, its workers inherit the
// group). Stopping "nginx" therefore means stopping the group: a master killed alone leaves its workers running
// the old configuration, still bound to the listeners — and with reuseport a new nginx would share the ports with
// them. These helpers find, signal and wait for the members of one group, from /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { sleep } from '../../../operator/backoff.ts';

/** Live (not zombie) processes whose process group is `pgid`. Zombies hold no sockets. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses, so parse after the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid) out.push(Number(e));
  }
  return out;
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* no member left */
  }
}

/** Resolves true once no live member of the group is left, false on timeout. */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (performance.now() >= end) return false;
    await sleep(10);
  }
}

/** The same, blocking the thread (start-up only: cleaning up after a previous controller process). */
export function waitGroupGoneSync(pgid: number, timeoutMs: number): boolean {
  const end = performance.now() + timeoutMs;
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (performance.now() >= end) return false;
    Atomics.wait(cell, 0, 0, 10);
  }
}

/** SIGKILL the whole group and wait until its members are gone (they free their listeners as they exit). */
export async function killGroup(pgid: number, timeoutMs = 5_000): Promise<boolean> {
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, timeoutMs);
}
