import type pg from 'pg';
import { connectionFailure } from '../core/load-error.js';
import { connect, type Target } from '../cluster/target.js';

/** No statement_timeout from the role or database: a batch of wait looks runs for half a second. */
const SESSION_SQL = 'SET statement_timeout = 0';

/** Names the session (a fresh one, after a lost connection). */
function nameSession(client: pg.Client, name: string): Promise<unknown> {
  return client.query(`SET application_name = '${name.replaceAll("'", "''")}'; ${SESSION_SQL}`);
}

/**
 * One of the sampler's connections, named (`application_name`) so that it is told apart
 * from the load's workers. A query whose connection is gone runs again on a fresh one:
 * the server may restart under a load (a durability preset, a crash the load survives).
 */
export class SamplerConnection {
  private constructor(
    private client: pg.Client,
    private readonly target: Target,
    private readonly name: string,
  ) {}

  /**
   * Connects as `name` (application_name, in the startup packet) and runs `first` on the
   * session, handed the session's setting to send first (`sessionSql`, a statement without
   * parameters: it and the first query go in one simple query, one round trip); a failure
   * to connect says where it tried.
   */
  static async open<T>(target: Target, name: string, first: (c: pg.Client, sessionSql: string) => Promise<T>): Promise<{ connection: SamplerConnection; first: T }> {
    const client = await connect(target.config, name).catch((e: unknown) => {
      throw connectionFailure(e, target.description);
    });
    try {
      return { connection: new SamplerConnection(client, target, name), first: await first(client, SESSION_SQL) };
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  /** Runs `fn` on the connection, or, once, on a fresh one if that fails. */
  async run<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    try {
      return await fn(this.client);
    } catch (error) {
      const fresh = await connect(this.target.config).catch(() => undefined);
      if (fresh === undefined) throw error;
      await this.client.end().catch(() => undefined);
      this.client = fresh;
      await nameSession(fresh, this.name);
      return fn(fresh);
    }
  }

  async end(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}
