import type { TableColumn } from '../../src/core/table-columns.js';

/** A catalog column for unit tests that plan without a server: a plain text column, with what the test names. */
export function tableColumn(fields: Partial<TableColumn> & { readonly name: string }): TableColumn {
  return {
    attnum: 1,
    type: 'text',
    baseType: 'text',
    isArray: false,
    notNull: false,
    hasDefault: false,
    identity: false,
    identityAlways: false,
    generated: false,
    kind: 'scalar',
    elementJson: false,
    typname: 'text',
    category: 'S',
    storage: { oid: 25, typname: 'text', typmod: -1 },
    ...fields,
  };
}
