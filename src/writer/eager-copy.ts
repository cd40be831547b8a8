import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';

/** What of pg-copy-streams' COPY stream this file builds on (its own methods, not in its types). */
interface CopyStreamInternals extends CopyStreamQuery {
  connection: { stream: NodeJS.WritableStream } | null | undefined;
  handleCopyInResponse(connection: unknown): void;
  flushChunk(chunk: Buffer): boolean;
  _final(callback: (error?: Error | null) => void): void;
  _destroy(error: Error | null, callback: (error?: Error | null) => void): void;
}

/** pg-copy-streams exports a function that makes its stream, not the class: its constructor, from one. */
const CopyStream = Object.getPrototypeOf(copyFrom('')).constructor as new (text: string) => CopyStreamInternals;

/**
 * `COPY … FROM STDIN` whose data follows its query at once, instead of after the server's
 * CopyInResponse: one round trip less per chunk, in which the server would wait for the
 * first bytes (a chunk's `BEGIN; COPY` and its data are sent back to back, and the server
 * finds the socket full when the COPY starts).
 *
 * The protocol allows it: a backend that is not in COPY mode accepts and ignores CopyData,
 * CopyDone and CopyFail ("per protocol spec; we probably got here because a COPY failed, and
 * the frontend is still sending data": PostgresMain, src/backend/tcop/postgres.c). So when
 * the COPY (or the BEGIN before it) fails, the bytes already sent are dropped by the server,
 * the error comes back as before (the stream fails), and the next query is read after them.
 * Everything else is pg-copy-streams' stream: CopyDone on `end()`, CopyFail on `destroy()`,
 * the row count from `COPY n`. After a failure nothing more is written (the connection is
 * the client's again).
 */
class EagerCopyStream extends CopyStream {
  private early = false;

  override submit(connection: Parameters<CopyStreamQuery['submit']>[0]): void {
    super.submit(connection);
    // as if the CopyInResponse had come: what is written from now on goes to the socket
    this.early = true;
    super.handleCopyInResponse(connection);
  }

  override handleCopyInResponse(connection: unknown): void {
    if (!this.early) super.handleCopyInResponse(connection);
  }

  override flushChunk(chunk: Buffer): boolean {
    return this.connection ? super.flushChunk(chunk) : true;
  }

  // After the COPY failed (its connection taken back: null; not yet submitted is undefined), nothing more to send:
  // no CopyDone, and no CopyFail.
  override _final(callback: (error?: Error | null) => void): void {
    if (this.connection === null) callback();
    else super._final(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.connection === null) callback(error);
    else super._destroy(error, callback);
  }
}

/** A `COPY … FROM STDIN` stream for `client.query`: write the data, `end()`; its `rowCount` once finished. */
export function copyFromStdin(sql: string): CopyStreamQuery {
  return new EagerCopyStream(sql);
}
