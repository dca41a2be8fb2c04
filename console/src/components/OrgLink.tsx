// An organization by name, linked to its page when the caller is one of its members (anyone
// else would find no page there: the API answers 404 to non-members).
import { Link } from 'react-router';
import { useOrgs } from '../data/groups.ts';

export function OrgLink({ id, name = 'an organization' }: { id: string; name?: string }) {
  const mine = useOrgs().data?.find((o) => o.id === id);
  if (!mine) return <>{name}</>;
  return <Link to={`/console/orgs/${id}`}>{mine.name}</Link>;
}
