// The audit log's response and the paths it is read under. The path parameters are written
// here rather than taken from teams/ and projects/: every area records audit events, so audit
// sits below them and imports none of them.
import { Type } from 'typebox';
import { IdParam, ListOf, Nullable, Timestamp } from '../http/schemas.ts';

export const AuditEvent = Type.Object(
  {
    id: Type.String(),
    action: Type.String(),
    actor_id: Nullable(Type.String()),
    target_type: Type.String(),
    target_id: Type.String(),
    before: Type.Unknown(),
    after: Type.Unknown(),
    request_id: Nullable(Type.String()),
    at: Timestamp,
  },
  { title: 'AuditEvent' },
);
export const AuditList = ListOf(AuditEvent);

export const TeamAuditParams = Type.Object({ team_id: IdParam('team') });
export const OrgAuditParams = Type.Object({ org_id: IdParam('org') });
export const ProjectAuditParams = Type.Object({ project_id: IdParam('prj') });
