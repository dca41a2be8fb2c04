// One team: its members (roles changed or removed by admins), its invitations (sent, resent,
// revoked by admins), its name and slug, leaving it and, for its owner, deleting it.
import { useParams } from 'react-router';
import { GroupPage } from '../components/Group.tsx';
import { TEAM } from '../data/groups.ts';

export function Team() {
  const { teamId = '' } = useParams();
  return <GroupPage kind={TEAM} id={teamId} />;
}
