import type pg from 'pg';
import { connectionFailure } from '../core/load-error.js';
import { connect, type Target } from '../cluster/target.js';

/** Names the session; and no statement_timeout from the role or database: a batch of wait looks runs for half a second. */
function nameSession(client: pg.Client, name: string): Promise<unknown> {
  return client.query(`SET application_name = '${name.replaceAll("'", "''")}'; SET statement_timeout = 0`);
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

  /** Connects and names the session; a failure to connect says where it tried. */
  static async open(target: Target, name: string): Promise<SamplerConnection> {
    const client = await connect(target.config).catch((e: unknown) => {
      throw connectionFailure(e, target.description);
    });
    try {
      await nameSession(client, name);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return new SamplerConnection(client, target, name);
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
