// A read's three states in one place: loading, failed (with the problem's detail), or its data.
import type { ReactNode } from 'react';
import type { UseQueryResult } from '@tanstack/react-query';
import { Problem } from './Form.tsx';

export function Loaded<T>({
  query,
  children,
}: {
  query: UseQueryResult<T>;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <p className="muted">Loading…</p>;
  if (query.isError) return <Problem error={query.error} />;
  return <>{children(query.data)}</>;
}
