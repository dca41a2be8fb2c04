// The caller's organizations, with their role and member count, and a form to create one.
import { GroupsPage } from '../components/Groups.tsx';
import { ORG } from '../data/groups.ts';

export const Orgs = () => <GroupsPage kind={ORG} title="Organizations" />;
