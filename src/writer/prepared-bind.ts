import type pg from 'pg';

/**
 * Runs an already prepared statement with parameters whose bytes pgsurge built itself:
 * one Bind (text format, unnamed portal) + Execute + Sync, written to the connection as
 * they are. node-postgres would otherwise turn every parameter into a string and encode
 * it again, one at a time — for a 1,000-row VALUES batch that is 16,000 parameters, most
 * of the client's time. The statement must have been prepared on this connection (the
 * first batch goes through `client.query` with its name, which parses it).
 *
 * Uses node-postgres's documented "submittable" interface (as pg-cursor and
 * pg-copy-streams do): the client hands the server's replies to the handle* methods.
 */
export function runPrepared(client: pg.Client, message: Buffer): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let rowCount = 0;
    const submittable = {
      submit(connection: { stream: NodeJS.WritableStream }): void {
        connection.stream.write(message);
      },
      handleCommandComplete(msg: { text: string }): void {
        // `INSERT 0 1000`
        const n = Number(/(\d+)$/.exec(msg.text)?.[1] ?? 0);
        rowCount += n;
      },
      // On an error the client drops this query at once (its ReadyForQuery then goes to no
      // one, and only after it does the client send the next query, e.g. ROLLBACK).
      handleError(e: unknown): void {
        reject(e);
      },
      handleReadyForQuery(): void {
        resolve(rowCount);
      },
      handleRowDescription(): void {},
      handleDataRow(): void {},
      handleEmptyQuery(): void {},
      handlePortalSuspended(): void {},
    };
    client.query(submittable as unknown as pg.QueryConfig);
  });
}

/**
 * Builds Bind + Execute + Sync for `statement` with `count` text parameters whose bytes
 * `writeParams` writes at `offset` (each as an Int32 length, then the bytes); `paramBytes`
 * is their total size including the lengths.
 */
export function bindMessage(statement: string, count: number, paramBytes: number, writeParams: (out: Buffer, offset: number) => number): Buffer {
  const name = Buffer.from(statement, 'utf8');
  // B: len, portal "\0", name "\0", Int16 0 format codes (all text), Int16 count, params, Int16 0 result formats
  const bindLength = 4 + 1 + name.length + 1 + 2 + 2 + paramBytes + 2;
  const out = Buffer.allocUnsafe(1 + bindLength + EXECUTE_SYNC.length);
  let n = 0;
  out[n++] = 0x42; // 'B'
  n = out.writeInt32BE(bindLength, n);
  out[n++] = 0; // unnamed portal
  n += name.copy(out, n);
  out[n++] = 0;
  n = out.writeInt16BE(0, n);
  n = out.writeUInt16BE(count, n);
  const end = writeParams(out, n);
  if (end !== n + paramBytes) throw new Error(`internal: Bind parameters took ${end - n} bytes, expected ${paramBytes}`);
  n = out.writeInt16BE(0, end);
  EXECUTE_SYNC.copy(out, n);
  return out;
}

// E: len 9, unnamed portal, no row limit; S: len 4.
const EXECUTE_SYNC = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0x53, 0, 0, 0, 4]);

/** Parse: prepares `text` as `statement` ("" = the unnamed statement), parameter types inferred. */
export function parseMessage(statement: string, text: string): Buffer {
  const name = Buffer.from(statement, 'utf8');
  const query = Buffer.from(text, 'utf8');
  const length = 4 + name.length + 1 + query.length + 1 + 2;
  const out = Buffer.alloc(1 + length);
  let n = 0;
  out[n++] = 0x50; // 'P'
  n = out.writeInt32BE(length, n);
  n += name.copy(out, n);
  out[n++] = 0;
  n += query.copy(out, n);
  out[n++] = 0;
  out.writeInt16BE(0, n);
  return out;
}

export const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
