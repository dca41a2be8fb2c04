// Examples of the main records, shown by the OpenAPI document on their component schemas
// (test/http/openapi-conformance.test.ts checks that each is valid against its schema).
const at = '2026-03-02T09:30:00.000Z';
const later = '2026-03-09T09:30:00.000Z';
const usr = 'usr_01JNQ7M4Z8W2Y3X5V6T7S8R9QA';
const team = 'team_01JNQ7N2B3C4D5E6F7G8H9J0KA';
const prj = 'prj_01JNQ7P5Q6R7S8T9V0W1X2Y3ZA';
const spc = 'spc_01JNQ7Q8R9S0T1V2W3X4Y5Z6AB';
const frm = 'frm_01JNQ7R1S2T3V4W5X6Y7Z8A9BC';
const dep = 'dep_01JNQ7S4T5V6W7X8Y9Z0A1B2CD';
const sha = '9f2c4e1a7b3d5f60718293a4b5c6d7e8f9012345';

export const EXAMPLES: Record<string, unknown> = {
  Team: {
    id: team,
    name: 'Web team',
    slug: 'web-team',
    owner_id: usr,
    created_at: at,
    role: 'owner',
    member_count: 4,
  },
  Member: {
    user_id: usr,
    email: 'ada@example.com',
    name: 'Ada Lovelace',
    role: 'admin',
    joined_at: at,
  },
  Invitation: {
    id: 'inv_01JNQ7T7V8W9X0Y1Z2A3B4C5DE',
    team_id: team,
    email: 'grace@example.com',
    role: 'member',
    status: 'pending',
    invited_by: usr,
    created_at: at,
    expires_at: later,
  },
  Project: {
    id: prj,
    name: 'Shop',
    owner_id: usr,
    owner_kind: 'user',
    role: 'owner',
    created_at: at,
  },
  Grant: {
    id: 'grt_01JNQ7V0W1X2Y3Z4A5B6C7D8EF',
    team_id: team,
    project_id: prj,
    role: 'viewer',
    created_at: at,
  },
  Frame: {
    id: frm,
    project_id: prj,
    space_id: spc,
    name: 'web',
    hostname: 'web-z8a9bc.apps.example.com',
    url: 'https://web-z8a9bc.apps.example.com',
    owner_id: usr,
    git_repository: 'https://github.com/acme/shop.git',
    git_repository_name: 'shop',
    git_repository_owner: 'acme',
    git_repository_branch: 'main',
    port: 3000,
    health_check_path: '/healthz',
    replica_count: 2,
    status: 'Online',
    status_reason: null,
    desired_state: 'running',
    runtime: { kind: 'cloud' },
    agent_id: null,
    agent_online: true,
    agent_last_seen_at: at,
    backoff: {
      crash_streak: 0,
      threshold: 5,
      pulling_since: null,
      tripped_at: null,
      clears_on: [],
    },
    replicas: [
      { replica: 0, state: 'healthy', generation: 3, since: at },
      { replica: 1, state: 'healthy', generation: 3, since: at },
    ],
    latest_deployment: {
      id: dep,
      status: 'succeeded',
      trigger: 'push',
      commit_sha: sha,
      failure_reason: null,
      failure_message: null,
      created_at: at,
    },
    serving: { deployment_id: dep, commit_sha: sha },
    pending_changes: [],
    push_deploys: { enabled: true, paused_at: null, paused_by: null },
    previews: { enabled: false, ttl_days: 7, env_keys: [] },
    preview: null,
    generation: 3,
    version: 7,
    created_at: at,
    updated_at: at,
  },
  ProjectEvent: {
    id: 'evt_01JNQ7V1W2X3Y4Z5A6B7C8D9EF',
    type: 'stop',
    status: null,
    status_reason: null,
    detail: { noop: false },
    actor_id: usr,
    at,
    frame_id: frm,
    space_id: spc,
  },
};
