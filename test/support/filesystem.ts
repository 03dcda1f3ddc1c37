// Small real filesystems for full-disk tests: a tmpfs mount (needs root) and a filler file that
// takes every block left on it.
import { spawnSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Mounts a tmpfs of `size` ("24m") on `dir`; false where mount(8) is refused (not root). */
export function mountTmpfs(dir: string, size: string): boolean {
  return spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir]).status === 0;
}

/** Writes a file until the filesystem has no block left; returns its path. */
export function fillFilesystem(dir: string): string {
  const file = join(dir, "filler");
  const fd = openSync(file, "w");
  try {
    for (const size of [1 << 20, 4096, 512, 1]) {
      const chunk = new Uint8Array(size).fill(0x5a);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}
