// A table with its header row; `actions` adds a last column, named for screen readers only,
// for the row's buttons.
import type { ReactNode } from 'react';

export function Table({
  head,
  actions = false,
  children,
}: {
  head: string[];
  actions?: boolean;
  children: ReactNode;
}) {
  return (
    <table>
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
