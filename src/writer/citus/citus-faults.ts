/**
 * Faults a test makes in a routed Citus load (test/citus/citus-route.test.ts), handed in
 * as `LoadOptions.faults`; a load without it has none. The CLI makes them from the
 * PGSURGE_FAULT_CITUS_* variables (src/cli/load-settings.ts) for tests that run it.
 */
export interface CitusFaults {
  /** pgsurge's first connection to each node goes to port 1 (where nothing listens), as a node it cannot reach. */
  readonly unreachableNodes?: boolean;
  /**
   * Called as each node's part of a chunk commits; with it, a chunk's parts commit one
   * after another (not in parallel), so that a hook that ends the process leaves a chunk
   * committed on some nodes and not others.
   */
  readonly partCommitted?: () => void;
}
