import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Which device and filesystem a path lives on, as `df` would say. */
export interface FilesystemInfo {
  /** The path with symlinks followed. */
  readonly realPath: string;
  /** `stat().dev`: two paths with the same number share a filesystem. */
  readonly dev: number;
  /** From /proc/mounts (Linux); undefined elsewhere. */
  readonly device: string | undefined;
  readonly mountPoint: string | undefined;
  readonly fsType: string | undefined;
  readonly totalBytes: number | undefined;
  readonly freeBytes: number | undefined;
}

interface Mount {
  device: string;
  mountPoint: string;
  fsType: string;
}

/** /proc/mounts escapes spaces and friends as `\040`. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function parseMounts(text: string): Mount[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [device = '', mountPoint = '', fsType = ''] = l.split(' ');
      return { device: unescapeMount(device), mountPoint: unescapeMount(mountPoint), fsType };
    });
}

/** The mount holding `realPath`: the longest mount point that is a prefix of it (the last one mounted wins ties). */
export function mountFor(mounts: readonly Mount[], realPath: string): Mount | undefined {
  let best: Mount | undefined;
  for (const m of mounts) {
    const inside = m.mountPoint === '/' || realPath === m.mountPoint || realPath.startsWith(m.mountPoint.endsWith('/') ? m.mountPoint : `${m.mountPoint}/`);
    if (inside && (best === undefined || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

export async function filesystemInfo(p: string): Promise<FilesystemInfo> {
  const realPath = await fs.realpath(p);
  const st = await fs.stat(realPath);
  const mounts = await fs.readFile('/proc/mounts', 'utf8').then(parseMounts, () => [] as Mount[]);
  const mount = mountFor(mounts, realPath);
  const sf = await fs.statfs(realPath).catch(() => undefined);
  return {
    realPath,
    dev: st.dev,
    device: mount?.device,
    mountPoint: mount?.mountPoint,
    fsType: mount?.fsType,
    totalBytes: sf ? sf.blocks * sf.bsize : undefined,
    freeBytes: sf ? sf.bavail * sf.bsize : undefined,
  };
}

/** Total size and count of the regular files under `dir` (recursively). */
export async function directorySize(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = await directorySize(p);
      bytes += sub.bytes;
      files += sub.files;
    } else if (entry.isFile()) {
      bytes += (await fs.stat(p)).size;
      files += 1;
    }
  }
  return { bytes, files };
}
