// A table with its header row; `actions` adds a last column, named for screen readers only,
// for the row's buttons. A `stacked` table shows each row as a block at phone width, for rows
// whose cells are long (a wide table otherwise scrolls sideways).
import type { ReactNode } from 'react';

export function Table({
  head,
  actions = false,
  stacked = false,
  children,
}: {
  head: string[];
  actions?: boolean;
  stacked?: boolean;
  children: ReactNode;
}) {
  return (
    <table className={stacked ? 'stacked' : undefined}>
      <thead>
        <tr>
          {head.map((h) => (
            <th key={h}>{h}</th>
          ))}
          {actions && (
            <th>
              <span className="sr-only">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
