// The caller's teams, with their role and member count, and a form to create one.
import { GroupsPage } from '../components/Groups.tsx';
import { TEAM } from '../data/groups.ts';

export const Teams = () => <GroupsPage kind={TEAM} title="Teams" />;
