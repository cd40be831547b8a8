import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pgsurgeHome, ROOT_HOME } from '../../../src/cluster/default-home.js';

describe('where the managed cluster lives by default', () => {
  const base = { env: {}, cwd: '/work/here', reachable: () => true };
  const cases: { name: string; facts: Parameters<typeof pgsurgeHome>[0]; expected: string }[] = [
    { name: 'a checkout: .pgsurge in the current folder', facts: { ...base, uid: 1000, checkout: true }, expected: '/work/here/.pgsurge' },
    { name: 'a checkout, as root, a folder postgres can reach', facts: { ...base, uid: 0, checkout: true }, expected: '/work/here/.pgsurge' },
    { name: 'a checkout, as root, under a 0700 parent', facts: { ...base, uid: 0, checkout: true, reachable: () => false }, expected: ROOT_HOME },
    { name: 'installed, as root', facts: { ...base, uid: 0, checkout: false }, expected: '/var/lib/pgsurge' },
    { name: 'installed, a user with XDG_DATA_HOME', facts: { ...base, uid: 1000, checkout: false, env: { XDG_DATA_HOME: '/home/me/.data', HOME: '/home/me' } }, expected: '/home/me/.data/pgsurge' },
    { name: 'installed, a user without it', facts: { ...base, uid: 1000, checkout: false, env: { HOME: '/home/me' } }, expected: '/home/me/.local/share/pgsurge' },
    { name: 'PGSURGE_HOME wins', facts: { ...base, uid: 0, checkout: false, env: { PGSURGE_HOME: 'rel/home' } }, expected: '/work/here/rel/home' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(pgsurgeHome(c.facts), c.expected));
});
